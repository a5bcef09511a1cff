#!/usr/bin/env bash
# pils on the GPU beside Concorde's linkern on the same machine's CPU (issue 39).
# Carry .whl, .bench (instances + optima.csv) and .peers (../shared/peers).  linkern runs
# on cores 0-10 (one core per run; core 11 for a million cities), tspcl on cores 12-15 with the GPU.  RUNS lists the
# tspcl runs as "instance seconds seed [-p key=value ...]", one per line; PEER_SHORT and
# PEER_LONG name linkern's instances at 10 and 60 s (seeds 1-3; empty: none); PEERS=0 skips
# linkern; TESTS=0 skips the pils tests on the GPU; MILLION=1 first runs both on a
# million uniform cities (u1m.json, u1m.log, linkern1m.csv).  Results in $OUT: runs.jsonl (one
# --json line a run; each instance first runs WARM seconds untimed (default 5: a 1-s run
# does not reach every kernel a long run builds), so that kernel builds, which a fresh
# machine pays once, are cached as a user's second run finds them), logs.tgz (logs/*.log, progress; peers' logs; u1m.*), ttt.csv (time to 1/0.5/0.2 %),
# linkern*.csv.
set -uo pipefail
. scripts/device_prelude.sh pils
I=.bench/instances/tsplib
mkdir -p "$OUT/logs"
if [ "${TESTS:-1}" = 1 ]; then
  step "pils tests on the GPU"
  TSPCL_TEST_DEVICE=gpu timeout 120 python3 -m pytest -q -p no:cacheprovider tests/solvers/test_pils.py 2>&1 | tail -3 | tee -a "$LOG"
fi
if [ "${PEERS:-1}" = 1 ]; then
  short=${PEER_SHORT-pr1002 fnl4461 pr2392 rl5915} long=${PEER_LONG-d18512 pla33810 pla85900}
  step "linkern on cores 0-10: ${short:-none} at 10 s, ${long:-none} at 60 s"
  peers() {   # budget, csv, instances
    [ -n "$3" ] && taskset -c 0-10 ./run_peers.sh -o "$OUT/peers" -O ../.bench/instances/optima.csv \
        -L "$1" -K "" -s "1 2 3" -j 11 $(for i in $3; do echo ../$I/$i.tsp; done) > "$OUT/$2" 2> "$OUT/$2.err"
  }
  ( cd .peers && chmod +x run_peers.sh bin/* 2>/dev/null
    peers 10 linkern10.csv "$short"
    peers 60 linkern60.csv "$long" ) &
fi
step "warm the kernel cache (a fresh machine builds for about 8 s on a first run)"
for inst in $(echo "${RUNS:-pr1002 10 1}" | awk '{print $1}' | sort -u); do
  timeout 120 taskset -c 12-15 python3 -m tspcl solve "$I/$inst.tsp" --algo pils -d gpu -t "${WARM:-5}" -o /dev/null -q 2>> "$OUT/runs.err"
done
if [ "${MILLION:-0}" = 1 ]; then
  step "a million cities (tspcl gen uniform -n 1000000 --seed 1): linkern on core 11, pils 60 s"
  python3 -m tspcl gen uniform -n 1000000 --seed 1 -o /tmp/u1m.tsp
  ( cd .peers && taskset -c 11 ./run_peers.sh -o "$OUT/peers1m" -L "60" -K "" -s "1" /tmp/u1m.tsp \
      > "$OUT/linkern1m.csv" 2> "$OUT/linkern1m.err" ) &
  timev=$(command -v /usr/bin/time >/dev/null && echo "/usr/bin/time -v")
  $timev timeout 180 taskset -c 12-15 python3 -m tspcl solve /tmp/u1m.tsp --algo pils -d gpu -t 60 -s 1 \
      -o /dev/null --log "$OUT/u1m.log" --json -q > "$OUT/u1m.json" 2> "$OUT/u1m.err"
  grep -E "Maximum resident|Elapsed" "$OUT/u1m.err" | tee -a "$LOG"
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee -a "$LOG"
  wait
  cut -c1-200 "$OUT/linkern1m.csv" | tee -a "$LOG"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("pils u1m", r["length"], r["wall_s"], r["iterations"])' "$OUT/u1m.json" | tee -a "$LOG"
fi
step "tspcl pils runs on the GPU"
k=0
while read -r inst secs seed params; do
  [ -z "$inst" ] && continue
  k=$((k + 1))
  name="$k-$inst-$secs-$seed$(echo "$params" | tr -d ' =-' | tr -c 'a-zA-Z0-9_\n' '_')"
  timeout $((secs + 60)) taskset -c 12-15 python3 -m tspcl solve "$I/$inst.tsp" --algo pils -d gpu \
      -t "$secs" -s "$seed" $params -o /dev/null --log "$OUT/logs/$name.log" --json -q \
      >> "$OUT/runs.jsonl" 2>> "$OUT/runs.err"
  echo "$name: $(tail -1 "$OUT/runs.jsonl" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["gap_percent"], r["wall_s"], r["kernel_s"], r["iterations"])')" | tee -a "$LOG"
done <<< "${RUNS:-pr1002 10 1}"
python3 scripts/time_to_target.py --optima .bench/instances/optima.csv "$OUT"/logs/*.log > "$OUT/ttt.csv"
wait
cd "$OUT" && tar -czf logs.tgz logs peers* u1m.* 2>/dev/null; rm -rf logs peers* u1m.log u1m.err
step done
