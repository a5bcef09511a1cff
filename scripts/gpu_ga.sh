#!/usr/bin/env bash
# GA batch on the GPU machine (issue 6), each step bounded by a timeout:
#   tests      the GA tests on the GPU;
#   table2     the paper's Table 2 (scripts/ga_convergence.py, 20 runs, xqf131, xql662);
#   table5     Table 5 (scripts/bench_ga.py, ms per generation for 128/256/2048 genes in
#              1/8 groups on xqf131, a random 2071-city instance, xmc10150 and a random
#              100,000-city instance, on the GPU and on the machine's PoCL);
#   table4     Table 4 (xmc10150 from 2-opt local optima, 500 generations, 2048 genes in
#              1 and 8 groups, crossovers in CROSSOVERS (hybrid), seeds in SEEDS (1 2 3));
#   migration  Table 4's 8 groups, hybrid, for each migration interval in MIGRATIONS
#              (10 50 100 0), seeds in SEEDS, each run's log in $OUT;
#   million    a 1,000,000-city run (2048 genes, 8 groups, BIG_TIME seconds).
# STEPS picks the steps (default: tests table2 table5 table4 million).  Carry .whl and
# .bench; results land in $OUT.
set -uo pipefail
. scripts/device_prelude.sh ga
V=.bench/instances/vlsi
G=/tmp/ga-instances
mkdir -p $G
want() { [[ " ${STEPS:-tests table2 table5 table4 million} " == *" $1 "* ]]; }
if want tests; then
  step "ga tests on the GPU"
  TSPCL_TEST_DEVICE=gpu timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_ga.py \
      tests/test_ga_crossover.py 2>&1 | tail -2 | tee -a "$LOG"
fi
if want table2; then
  for i in xqf131 xql662; do
    step "Table 2: $i"
    timeout 400 python3 scripts/ga_convergence.py $V/$i.tsp --crossovers bcscx arx hybrid --runs 20 \
        --device gpu 2>/dev/null | tee -a "$LOG"
  done
  step "Table 2: xql662 ARX, 600 generations (the paper's 532 to reach 0.1)"
  timeout 300 python3 scripts/ga_convergence.py $V/xql662.tsp --crossovers arx --runs 20 \
      --generations 600 --device gpu 2>/dev/null | tee -a "$LOG"
fi
if want table5; then
  step "Table 5: instances"
  python3 -m tspcl gen uniform -n 2071 -s 1 -o $G/uniform2071.tsp
  python3 -m tspcl gen uniform -n 100000 -s 1 -o $G/uniform100000.tsp
  step "Table 5: GPU"
  timeout 500 python3 scripts/bench_ga.py $V/xqf131.tsp $G/uniform2071.tsp $V/xmc10150.tsp \
      $G/uniform100000.tsp --device gpu 2>/dev/null | tee -a "$LOG"
  step "Table 5: PoCL"
  timeout 500 python3 scripts/bench_ga.py $V/xqf131.tsp $G/uniform2071.tsp $V/xmc10150.tsp \
      --device cpu --generations 3 2>/dev/null | tee -a "$LOG"
fi
if want table4; then
  for crossover in ${CROSSOVERS:-hybrid}; do
    for groups in 1 8; do
      for seed in ${SEEDS:-1 2 3}; do
        step "Table 4: xmc10150, 2-opt start, $crossover, $groups group(s), seed $seed"
        timeout 400 python3 -m tspcl solve $V/xmc10150.tsp --algo ga --init 2opt --crossover $crossover \
            --groups $groups --generations 500 --seed $seed --device gpu -q --json | tee -a "$LOG"
      done
    done
  done
fi
if want migration; then
  for interval in ${MIGRATIONS:-10 50 100 0}; do
    for seed in ${SEEDS:-1 2 3}; do
      step "Migration: xmc10150, 2-opt start, hybrid, 8 groups, interval $interval, seed $seed"
      timeout 400 python3 -m tspcl solve $V/xmc10150.tsp --algo ga --init 2opt --groups 8 \
          --migration-interval $interval --generations 500 --seed $seed --device gpu -q --json \
          --log "$OUT/migration-$interval-$seed.log" | tee -a "$LOG"
    done
  done
fi
if want million; then
  step "1,000,000 cities: instance"
  python3 -m tspcl gen uniform -n 1000000 -s 1 -o $G/uniform1000000.tsp
  step "1,000,000 cities: 2048 genes, 8 groups, ${BIG_TIME:-540} s"
  timeout $(( ${BIG_TIME:-540} + 60 )) python3 -m tspcl solve $G/uniform1000000.tsp --algo ga \
      --groups 8 --generations 100000 --time-limit "${BIG_TIME:-540}" --device gpu -q --json \
      --log "$OUT/million.log" -o /tmp/million.tour | tee -a "$LOG"
fi
step done
