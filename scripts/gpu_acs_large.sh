#!/usr/bin/env bash
# ACS-GPU-SPM on the paper's Table 10 instances (issue 5) on the GPU machine: for each
# instance in INSTANCES and seed in SEEDS, `tspcl solve --algo acs --variant spm --ants
# 256 --k 4` for TIME seconds or ITERATIONS iterations (the paper ran 1000 n / 256), with
# a run log (the best length each second, at most), so that the time to reach the
# paper's error can be read off.  Carry .whl and .bench; $OUT/acs_large/ holds the logs
# (written as the runs go, so a batch cut short keeps them), $OUT/acs_large.log their
# last lines, $OUT/acs_large.md the summary table
# (scripts/acs_large_summary.py: best and mean error, when each run reached the paper's).
set -uo pipefail
. scripts/device_prelude.sh acs_large
mkdir -p "$OUT/acs_large" /tmp/acs_large
for name in ${INSTANCES:-pcb3038 rl5915 pla7397 rl11849 usa13509 brd14051}; do
  for seed in ${SEEDS:-1 2}; do
    step "$name seed $seed, ${TIME:-120} s"
    python3 -m tspcl solve .bench/instances/tsplib/$name.tsp --algo acs --variant spm --ants 256 --k 4 \
        --iterations ${ITERATIONS:-100000000} --seed "$seed" --time-limit "${TIME:-120}" --device gpu -q \
        --log $OUT/acs_large/$name.$seed.log -o /tmp/acs_large/$name.$seed.tour
    tail -2 $OUT/acs_large/$name.$seed.log | head -1 | tee -a "$LOG"
  done
done
python3 scripts/acs_large_summary.py .bench/instances/optima.csv $OUT/acs_large/*.log \
    | tee "$OUT/acs_large.md"
step done
