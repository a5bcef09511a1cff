#!/usr/bin/env bash
# ACS-GPU-SPM on the paper's Table 10 instances (issue 5) on the GPU machine: for each
# instance in INSTANCES and seed in SEEDS, `tspcl solve --algo acs --variant spm --ants
# 256 --k 4` for TIME seconds or ITERATIONS iterations (the paper ran 1000 n / 256), with
# a run log (the best length each second, at most), so that the time to reach the
# paper's error can be read off.  Carry .whl and .bench; $OUT/acs_large_logs.tar holds
# the logs, $OUT/acs_large.log the final lines, $OUT/acs_large.md the summary table
# (scripts/acs_large_summary.py: best and mean error, when each run reached the paper's).
set -uo pipefail
. scripts/device_prelude.sh acs_large
mkdir -p /tmp/acs_large
for name in ${INSTANCES:-pcb3038 rl5915 pla7397 rl11849 usa13509 brd14051}; do
  for seed in ${SEEDS:-1 2}; do
    step "$name seed $seed, ${TIME:-120} s"
    python3 -m tspcl solve .bench/instances/tsplib/$name.tsp --algo acs --variant spm --ants 256 --k 4 \
        --iterations ${ITERATIONS:-100000000} --seed "$seed" --time-limit "${TIME:-120}" --device gpu -q \
        --log /tmp/acs_large/$name.$seed.log -o /tmp/acs_large/$name.$seed.tour
    tail -2 /tmp/acs_large/$name.$seed.log | head -1 | tee -a "$LOG"
  done
done
tar -C /tmp -cf "$OUT/acs_large_logs.tar" acs_large
python3 scripts/acs_large_summary.py .bench/instances/optima.csv /tmp/acs_large/*.log \
    | tee "$OUT/acs_large.md"
step done
