#!/usr/bin/env bash
# pils on the GPU beside Concorde's linkern on the same machine's CPU (issue 39).
# Carry .whl, .bench (instances + optima.csv) and .peers (../shared/peers).  RUNS lists the
# tspcl runs as "instance seconds seed [-p key=value ...]", one per line; RUNS1, where the
# machine has two GPUs, lists runs for the second GPU, run at the same time as RUNS on the
# first (a machine with one GPU stops at once, exit status 2).  linkern runs one core per run: on 16 cores linkern takes cores 0-10 (core 11 for a
# million cities) and tspcl 12-15; on 32 or more, linkern 0-21 (22), tspcl 24-27 on the
# first GPU and 28-31 on the second.  PEER_SHORT and PEER_LONG name linkern's instances at
# 10 and 60 s (seeds 1-3; empty: none); PEERS=0 skips linkern; TESTS=0 skips the pils tests
# on the GPU; MILLION=1 first runs both on a million uniform cities (u1m.json, u1m.log,
# linkern1m.csv; with RUNS1, at the head of the second GPU's runs).  Results in $OUT:
# runs.jsonl (one --json line a run; each instance first runs WARM seconds untimed, once
# with each of its runs' parameters (default 5: a 1-s run does not reach every kernel a long
# run builds), so that kernel builds, which a fresh machine pays once, are cached as a
# user's second run finds them), logs.tgz
# (logs/*.log, progress; peers' logs; u1m.*; *.err), ttt.csv (time to 1/0.5/0.2 %), linkern*.csv.
set -uo pipefail
. scripts/device_prelude.sh pils
I=.bench/instances/tsplib
mkdir -p "$OUT/logs"
RUNS1=${RUNS1-}
MILLION_GPU=0   # the GPU whose runs the million heads: the second where there are two lists
if [ -n "$RUNS1" ]; then
  if [ "$(nvidia-smi -L | wc -l)" -lt 2 ]; then
    echo "gpu_pils.sh: RUNS1 needs a second GPU; this machine has one" | tee -a "$LOG" >&2
    exit 2
  fi
  MILLION_GPU=1
fi
if [ "${TESTS:-1}" = 1 ]; then
  step "pils tests on the GPU"
  TSPCL_TEST_DEVICE=gpu timeout 120 python3 -m pytest -q -p no:cacheprovider tests/solvers/test_pils.py 2>&1 | tail -3 | tee -a "$LOG"
fi
if [ "$(nproc)" -ge 32 ]; then
  PEER_CORES=0-21 PEER_JOBS=22 MILLION_CORE=22 PILS_CORES=(24-27 28-31)
else
  PEER_CORES=0-10 PEER_JOBS=11 MILLION_CORE=11 PILS_CORES=(12-15 12-15)
fi
if [ "${PEERS:-1}" = 1 ]; then
  short=${PEER_SHORT-pr1002 fnl4461 pr2392 rl5915} long=${PEER_LONG-d18512 pla33810 pla85900}
  step "linkern on cores $PEER_CORES: ${short:-none} at 10 s, ${long:-none} at 60 s"
  peers() {   # budget, csv, instances
    [ -n "$3" ] && taskset -c $PEER_CORES ./run_peers.sh -o "$OUT/peers" -O ../.bench/instances/optima.csv \
        -L "$1" -K "" -s "1 2 3" -j $PEER_JOBS $(for i in $3; do echo ../$I/$i.tsp; done) > "$OUT/$2" 2> "$OUT/$2.err"
  }
  ( cd .peers && chmod +x run_peers.sh bin/* 2>/dev/null
    peers 10 linkern10.csv "$short"
    peers 60 linkern60.csv "$long" ) &
fi
million() {   # cores: pils 60 s on a million cities beside linkern on MILLION_CORE
  step "a million cities (tspcl gen uniform -n 1000000 --seed 1): linkern on core $MILLION_CORE, pils 60 s"
  python3 -m tspcl gen uniform -n 1000000 --seed 1 -o /tmp/u1m.tsp
  ( cd .peers && taskset -c $MILLION_CORE ./run_peers.sh -o "$OUT/peers1m" -L "60" -K "" -s "1" /tmp/u1m.tsp \
      > "$OUT/linkern1m.csv" 2> "$OUT/linkern1m.err" ) &
  local peer=$! timev
  timev=$(command -v /usr/bin/time >/dev/null && echo "/usr/bin/time -v")
  $timev timeout 180 taskset -c "$1" python3 -m tspcl solve /tmp/u1m.tsp --algo pils -d gpu -t 60 -s 1 \
      -o /dev/null --log "$OUT/u1m.log" --json -q > "$OUT/u1m.json" 2> "$OUT/u1m.err"
  grep -E "Maximum resident|Elapsed" "$OUT/u1m.err" | tee -a "$LOG"
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee -a "$LOG"
  wait $peer
  cut -c1-200 "$OUT/linkern1m.csv" | tee -a "$LOG"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("pils u1m", r["length"], r["wall_s"], r["iterations"])' "$OUT/u1m.json" | tee -a "$LOG"
}
pils_runs() {   # gpu, runs: warm the kernel cache for the runs' instances, then run them
  local gpu=$1 cores=${PILS_CORES[$1]} k=0 inst secs seed params name
  export CUDA_VISIBLE_DEVICES=$gpu
  step "GPU $gpu: warm the kernel cache (a fresh machine builds for about 8 s on a first run)"
  while read -r inst params; do   # each instance with each run's parameters (their builds differ)
    timeout 120 taskset -c "$cores" python3 -m tspcl solve "$I/$inst.tsp" --algo pils -d gpu -t "${WARM:-5}" $params \
        -o /dev/null -q 2>> "$OUT/runs.err"
  done < <(echo "$2" | awk 'NF { inst = $1; $1 = $2 = $3 = ""; print inst, $0 }' | sort -u)
  if [ "${MILLION:-0}" = 1 ] && [ "$gpu" = "$MILLION_GPU" ]; then
    million "$cores"
  fi
  step "GPU $gpu: tspcl pils runs"
  while read -r inst secs seed params; do
    [ -z "$inst" ] && continue
    k=$((k + 1))
    name="g$gpu-$k-$inst-$secs-$seed$(echo "$params" | tr -d ' =-' | tr -c 'a-zA-Z0-9_\n' '_')"
    timeout $((secs + 60)) taskset -c "$cores" python3 -m tspcl solve "$I/$inst.tsp" --algo pils -d gpu \
        -t "$secs" -s "$seed" $params -o /dev/null --log "$OUT/logs/$name.log" --json -q \
        >> "$OUT/runs$gpu.jsonl" 2>> "$OUT/runs.err"
    echo "$name: $(tail -1 "$OUT/runs$gpu.jsonl" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["gap_percent"], r["wall_s"], r["kernel_s"], r["iterations"])')" | tee -a "$LOG"
  done <<< "$2"
}
if [ -n "$RUNS1" ]; then
  pils_runs 1 "$RUNS1" &
fi
pils_runs 0 "${RUNS:-pr1002 10 1}"
wait
cat "$OUT"/runs[01].jsonl > "$OUT/runs.jsonl" && rm -f "$OUT"/runs[01].jsonl
python3 scripts/time_to_target.py --optima .bench/instances/optima.csv "$OUT"/logs/*.log > "$OUT/ttt.csv"
# at most 8 files come back from the device: the logs, the peers' logs, the million's and
# the error streams go in one archive
cd "$OUT" && tar -czf logs.tgz logs peers* u1m.* *.err 2>/dev/null; rm -rf logs peers* u1m.* *.err
step done
