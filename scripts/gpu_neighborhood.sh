#!/usr/bin/env bash
# Hill climbing / tabu search batch on the GPU machine (issue 7): the tests on the GPU,
# iteration times on the GPU and PoCL-16 (the speed-up table), then the tabu suite
# (10,000 iterations, tuned against the paper's launch, quality) and tabu_tuning (the
# paper's waves), and the reproducibility check of every algorithm on the GPU and PoCL-16.
# Carry .whl and .bench; results land in $OUT.  TESTS=0 / ITER=0 / SUITES="" / REPRO=0
# skip a part.
set -uo pipefail
. scripts/device_prelude.sh neighborhood
T=.bench/instances/tsplib
SUBSET="$T/eil101.tsp $T/d198.tsp $T/pcb442.tsp $T/rat783.tsp $T/d1291.tsp $T/pr2392.tsp $T/fnl4461.tsp $T/rl5915.tsp"
if [ "${TESTS:-1}" = 1 ]; then
  step "hc/tabu tests on the GPU"
  TSPCL_TEST_DEVICE=gpu python3 -m pytest -q -p no:cacheprovider tests/test_neighborhood.py 2>&1 | tail -3 | tee -a "$LOG"
fi
if [ "${ITER:-1}" = 1 ]; then
  step "iteration times, GPU and PoCL-16, the paper's launch"
  python3 scripts/bench_neighborhood.py $SUBSET --neighborhood swap 2opt --device gpu cpu \
      --iterations ${CPU_ITERATIONS:-5} --warmup 1 2>&1 | tee -a "$LOG"
  step "iteration times on the GPU alone, 200 iterations"
  python3 scripts/bench_neighborhood.py $SUBSET --neighborhood swap 2opt --device gpu \
      --iterations 200 --warmup 20 2>&1 | tee -a "$LOG"
fi
for suite in ${SUITES-tabu tabu_tuning}; do
  run_suite "$suite" "${SUITE_TIMEOUT:-400}"
done
if [ "${REPRO:-1}" = 1 ]; then
  step "reproducibility check, GPU and PoCL-16"
  timeout ${REPRO_TIMEOUT:-200} python3 scripts/repro_check.py --devices all > "$OUT/repro.log" 2>&1
  tail -4 "$OUT/repro.log" | tee -a "$LOG"
fi
step done
