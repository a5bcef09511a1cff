# Sourced by scripts/gpu_batch.sh for scripts/gpu/acs_large.steps.
acs_large_run() {   # NAME SEED: one run, its log in $OUT/acs_large/, its last line shown
  python3 -m tspcl solve "$T/$1.tsp" --algo acs --variant spm --ants 256 --k 4 \
      --iterations "${ITERATIONS:-100000000}" --seed "$2" --time-limit "${TIME:-120}" --device gpu -q \
      --log "$OUT/acs_large/$1.$2.log" -o "/tmp/acs_large/$1.$2.tour"
  echo "$1 seed $2: $(tail -2 "$OUT/acs_large/$1.$2.log" | head -1)"
}

acs_large_runs() {   # every (instance, seed); run i on GPU i mod GPUS, one at a time on each
  local runs=() name seed gpu i
  mkdir -p "$OUT/acs_large" /tmp/acs_large
  for name in ${INSTANCES:-pcb3038 rl5915 pla7397 rl11849 usa13509 brd14051}; do
    for seed in ${SEEDS:-1 2}; do runs+=("$name $seed"); done
  done
  echo "${#runs[@]} runs"
  for gpu in $(seq 0 $((${GPUS:-1} - 1))); do
    (for i in "${!runs[@]}"; do
       [ $((i % ${GPUS:-1})) -eq "$gpu" ] && CUDA_VISIBLE_DEVICES=$gpu acs_large_run ${runs[$i]}
     done) &
  done
  wait
}
