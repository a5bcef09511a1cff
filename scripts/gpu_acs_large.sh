#!/usr/bin/env bash
# ACS-GPU-SPM on the paper's Table 10 instances (issue 5) on the GPU machine: for each
# instance in INSTANCES and seed in SEEDS, `tspcl solve --algo acs --variant spm --ants
# 256 --k 4` for TIME seconds or ITERATIONS iterations (the paper ran 1000 n / 256), with
# a run log (the best length each second, at most), so that the time to reach the
# paper's error can be read off.  Carry .whl and .bench; $OUT/acs_large/ holds the logs
# (written as the runs go, so a batch cut short keeps them), $OUT/acs_large.log their
# last lines, $OUT/acs_large.md the summary table
# (scripts/acs_large_summary.py: best and mean error, when each run reached the paper's).
# GPUS=k spreads the runs over k GPUs of the machine, one run at a time on each.
set -uo pipefail
. scripts/device_prelude.sh acs_large
mkdir -p "$OUT/acs_large" /tmp/acs_large
one_run() {   # NAME SEED
  python3 -m tspcl solve .bench/instances/tsplib/$1.tsp --algo acs --variant spm --ants 256 --k 4 \
      --iterations ${ITERATIONS:-100000000} --seed "$2" --time-limit "${TIME:-120}" --device gpu -q \
      --log $OUT/acs_large/$1.$2.log -o /tmp/acs_large/$1.$2.tour
  echo "$1 seed $2: $(tail -2 $OUT/acs_large/$1.$2.log | head -1)" | tee -a "$LOG"
}
runs=()
for name in ${INSTANCES:-pcb3038 rl5915 pla7397 rl11849 usa13509 brd14051}; do
  for seed in ${SEEDS:-1 2}; do runs+=("$name $seed"); done
done
step "${#runs[@]} runs of ${TIME:-120} s on ${GPUS:-1} GPU(s)"
for gpu in $(seq 0 $((${GPUS:-1} - 1))); do   # GPUS=k: run i on GPU i mod k, one at a time each
  (for i in "${!runs[@]}"; do
     [ $((i % ${GPUS:-1})) -eq "$gpu" ] && CUDA_VISIBLE_DEVICES=$gpu one_run ${runs[$i]}
   done) &
done
wait
python3 scripts/acs_large_summary.py .bench/instances/optima.csv $OUT/acs_large/*.log \
    | tee "$OUT/acs_large.md"
step done
