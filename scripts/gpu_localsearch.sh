#!/usr/bin/env bash
# Local search / ILS batch on the GPU machine (issue 3): tests on the GPU, then the
# quality/speed suites.  Carry .whl and .bench; results land in $OUT.
set -uo pipefail
. .whl/setup-device.sh || exit 1
export TSPCL_SHARED_INSTANCES=$PWD/.bench/instances
OUT=${OUT:-/tmp/tspcl-out}
mkdir -p "$OUT"
LOG=$OUT/localsearch.log
step() { echo "== $* ($(date -u +%T))" | tee -a "$LOG"; }
step "local search tests on the GPU"
TSPCL_TEST_DEVICE=gpu python3 -m pytest -q -p no:cacheprovider tests/test_localsearch.py 2>&1 | tail -5 | tee -a "$LOG"
for suite in ls ils; do
  step "suite $suite"
  timeout ${SUITE_TIMEOUT:-280} python3 scripts/bench.py scripts/suites/$suite.toml --device gpu --out /tmp/$suite > "$OUT/$suite.progress.log" 2>&1; tail -2 "$OUT/$suite.progress.log" | tee -a "$LOG"
  cp /tmp/$suite/results.md "$OUT/$suite.md" 2>/dev/null; cp /tmp/$suite/results.csv "$OUT/$suite.csv" 2>/dev/null
done
step done
