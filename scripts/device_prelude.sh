# Sourced by the scripts/gpu_*.sh batches on the GPU machine: installs the carried
# wheels (.whl), points the tools at the carried instances (.bench/instances), prepares
# $OUT and defines `step`, which logs a timestamped heading to $OUT/$1.log.
. .whl/setup-device.sh || exit 1
export TSPCL_SHARED_INSTANCES=$PWD/.bench/instances
OUT=${OUT:-/tmp/tspcl-out}
mkdir -p "$OUT"
LOG=$OUT/$1.log
step() { echo "== $* ($(date -u +%T))" | tee -a "$LOG"; }
