#!/usr/bin/env bash
# MMAS batch on the GPU machine (issue 4): the tests on the GPU, then construction times
# per iteration (ants = n) for the paper's instances, every variant, with and without
# candidate lists, then the suites in SUITES (default none; mmas_2opt is the paper's
# Table 9).  Carry .whl and .bench; results land in $OUT.  TESTS=0 skips the tests;
# ITERATIONS (3) and BENCH_TIMEOUT (300) bound the timing run; SUITE_SEEDS replaces the
# suites' seeds (device_prelude.sh).
set -uo pipefail
. scripts/device_prelude.sh mmas
T=.bench/instances/tsplib
if [ "${TESTS:-1}" = 1 ]; then
  step "mmas tests on the GPU"
  TSPCL_TEST_DEVICE=gpu python3 -m pytest -q -p no:cacheprovider tests/test_mmas.py 2>&1 | tail -3 | tee -a "$LOG"
fi
step "construction ms per iteration, ants = n"
timeout ${BENCH_TIMEOUT:-300} python3 scripts/bench_mmas.py $T/d198.tsp $T/pcb442.tsp $T/rat783.tsp \
    $T/pr1002.tsp $T/pcb1173.tsp $T/rl1889.tsp $T/pr2392.tsp $T/fl3795.tsp --device gpu \
    --iterations ${ITERATIONS:-3} --warmup 1 2>&1 | tee -a "$LOG"
for suite in ${SUITES-}; do
  run_suite "$suite" "${SUITE_TIMEOUT:-500}"
done
step done
