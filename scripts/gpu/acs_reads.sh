# Sourced by scripts/gpu_batch.sh for scripts/gpu/acs_reads.steps.
acs_run() {  # INSTANCE VARIANT READS SEED SOLVE-OPTIONS...: one line: length, gap, iterations, wall s
  python3 -m tspcl solve "$T/$1.tsp" --algo acs --variant "$2" --ants 256 --k 4 -p reads="$3" --seed "$4" \
      --device gpu -q --json "${@:5}" | python3 -c "import sys, json; d = json.load(sys.stdin); \
print('$1 $2 $3 seed $4:', d['length'], d['gap_percent'], '%,', d['iterations'], 'iterations,', \
round(d['wall_s'], 2), 's')"
}
