#!/usr/bin/env bash
# ACS trail reads on the GPU machine (issue 5): cached (the default: a line may stay in
# an SM's L1 while other SMs' ants update it) against fresh (from L2, as the paper's
# Kepler read them).  Construction times with fresh reads (ants = n, k = 1), then spm and
# alt on pr1002 with 256 ants and k = 4 after 1000 iterations and in Table 9's time
# limit (2.639 s), and spm on pr2392 in its limit (17.451 s).  Carry .whl and .bench.
set -uo pipefail
. scripts/device_prelude.sh acs_reads
T=.bench/instances/tsplib
step "construction ms per iteration, fresh reads"
python3 scripts/bench_acs.py $T/d198.tsp $T/pr1002.tsp $T/pr2392.tsp --variants alt spm --device gpu \
    --reads fresh --iterations 5 2>/dev/null | tee -a "$LOG"
run() {  # instance variant reads seed solve-options...
  python3 -m tspcl solve $T/$1.tsp --algo acs --variant $2 --ants 256 --k 4 -p reads=$3 --seed $4 \
      --device gpu -q --json "${@:5}" | python3 -c "import sys, json; d = json.load(sys.stdin); \
print('$1 $2 $3 seed $4:', d['length'], d['gap_percent'], '%,', d['iterations'], 'iterations,', \
round(d['wall_s'], 2), 's')" | tee -a "$LOG"
}
step "pr1002 spm, 1000 iterations"
for r in cached fresh; do for s in 1 2 3; do run pr1002 spm $r $s --iterations 1000; done; done
step "pr1002, Table 9 time limit"
for r in cached fresh; do for v in spm alt; do for s in 1 2 3 4 5; do
  run pr1002 $v $r $s --iterations 100000000 --time-limit 2.639
done; done; done
step "pr2392 spm, Table 9 time limit"
for r in cached fresh; do for s in 1 2 3; do run pr2392 spm $r $s --iterations 100000000 --time-limit 17.451; done; done
step done
