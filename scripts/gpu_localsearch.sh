#!/usr/bin/env bash
# Local search / ILS batch on the GPU machine (issue 3): tests on the GPU, evaluation
# pass times (GPU and the PoCL CPU baseline), then quality/speed suites.
# Carry .whl and .bench; results land in $OUT.  SUITES overrides the suite list (empty:
# none); TESTS=0 / PASSES=0 skip the tests / the pass times; GPUS=k splits each suite
# over k GPUs.
set -uo pipefail
. scripts/device_prelude.sh localsearch
T=.bench/instances/tsplib
if [ "${TESTS:-1}" = 1 ]; then
  step "local search tests on the GPU"
  TSPCL_TEST_DEVICE=gpu python3 -m pytest -q -p no:cacheprovider tests/test_localsearch.py 2>&1 | tail -3 | tee -a "$LOG"
fi
if [ "${PASSES:-1}" = 1 ]; then
  step "one evaluation pass, GPU and PoCL: EUC_2D instances by the paper's size groups"
  python3 scripts/bench_ls_pass.py $T/*.tsp --metric EUC_2D --ls 3opt 2opt --device gpu cpu \
      --repeats 10 2>&1 | tee -a "$LOG"
  step "one evaluation pass, GPU and PoCL: pla33810, pla85900"
  python3 scripts/bench_ls_pass.py $T/pla33810.tsp $T/pla85900.tsp --ls 3opt 2opt \
      --device gpu cpu --repeats 10 2>&1 | tee -a "$LOG"
fi
for suite in ${SUITES-ls ils}; do
  run_suite "$suite" "${SUITE_TIMEOUT:-280}"
done
step done
