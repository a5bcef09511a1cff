#!/bin/bash
# A benchmark suite on a running Dask cluster of K workers on this machine, one per GPU
# (issue 42's scaling figure, "running cluster"): starts a scheduler and K workers (worker
# i pinned to OpenCL device 0:i, or every worker to DEVICE when it is not "gpu"), waits
# until all are connected, then times `tspcl bench SUITE --scheduler ...` alone, prints one
# JSON line and stops the cluster.  Needs tspcl[cluster].
#   bash scripts/bench_running_cluster.sh 4 scripts/suites/scale.toml /tmp/scale4 gpu
set -u
k=$1; suite=$2; out=$3; dev=${4:-gpu}
DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION=1.0 \
  python3 -m distributed.cli.dask_scheduler --host 127.0.0.1 --port 8786 \
    --dashboard-address 127.0.0.1:0 > "$out.sched.log" 2>&1 &
pids=$!
for i in $(seq 0 $((k - 1))); do
  d=$dev; [ "$dev" = "gpu" ] && d=0:$i
  TSPCL_DEVICE=$d python3 -m distributed.cli.dask_worker tcp://127.0.0.1:8786 --nworkers 1 \
      --nthreads 1 --dashboard-address 127.0.0.1:0 > "$out.worker$i.log" 2>&1 &
  pids="$pids $!"
done
python3 -c "
from distributed import Client
c = Client('tcp://127.0.0.1:8786', timeout='60s'); c.wait_for_workers($k, timeout=120); c.close()"
s=$(python3 -c "import time; print(time.time())")
python3 -m tspcl bench "$suite" --scheduler tcp://127.0.0.1:8786 --fresh --no-figure --out "$out" > "$out.log" 2>&1
e=$(python3 -c "import time; print(time.time())")
echo "{\"workers\": $k, \"mode\": \"running cluster\", \"wall_s\": $(python3 -c "print(round($e - $s, 2))"), \"runs\": $(grep -c '^\[' "$out.log")}"
kill $pids 2>/dev/null; wait 2>/dev/null
