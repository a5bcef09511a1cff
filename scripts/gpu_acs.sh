#!/usr/bin/env bash
# ACS batch on the GPU machine (issue 5): the tests on the GPU, then construction times
# per iteration (ants = n, k = 1) for the paper's Table 3 instances, every variant, then
# the suites in SUITES (default none; acs_table9 is the paper's Table 9 protocol,
# acs_large its Table 10 instances).  Carry .whl and .bench; results land in $OUT.
# TESTS=0 skips the tests; ITERATIONS (3) and BENCH_TIMEOUT (300) bound the timing run;
# SUITE_SEEDS (e.g. "1, 2, 3, 4, 5") replaces the suites' seeds (device_prelude.sh).
set -uo pipefail
. scripts/device_prelude.sh acs
T=.bench/instances/tsplib
if [ "${TESTS:-1}" = 1 ]; then
  step "acs tests on the GPU"
  TSPCL_TEST_DEVICE=gpu python3 -m pytest -q -p no:cacheprovider tests/test_acs.py tests/test_launches.py 2>&1 | tail -3 | tee -a "$LOG"
fi
step "construction ms per iteration, ants = n"
timeout ${BENCH_TIMEOUT:-300} python3 scripts/bench_acs.py $T/d198.tsp $T/a280.tsp $T/lin318.tsp \
    $T/pcb442.tsp $T/rat783.tsp $T/pr1002.tsp $T/nrw1379.tsp $T/pr2392.tsp --device gpu \
    --iterations ${ITERATIONS:-3} --warmup 1 2>&1 | tee -a "$LOG"
for suite in ${SUITES-}; do
  run_suite "$suite" "${SUITE_TIMEOUT:-500}"
done
step done
