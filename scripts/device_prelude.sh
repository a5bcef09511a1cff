# Sourced by scripts/gpu_batch.sh and scripts/gpu_pils.sh on the GPU machine: installs the carried
# wheels (.whl), points the tools at the carried instances (.bench/instances), prepares
# $OUT and defines `step`, which logs a timestamped heading to $OUT/$1.log, and
# `run_suite NAME TIMEOUT`, which runs scripts/suites/NAME.toml on the GPU (SUITE_SEEDS,
# e.g. "1, 2, 3", replaces its seeds, to split a suite over calls) and copies its
# results.md and results.json to $OUT/NAME.md and .json; GPUS=k splits the suite over k
# GPUs (scripts/split_suite.py), part i's files as $OUT/NAME.part<i>.*.
. .whl/setup-device.sh || exit 1
# The wheels go in without bytecode and this machine's Python writes none, so every process
# compiled pyopencl and tspcl again (0.6 s of each run's start, measured), and numpy, typer
# and the standard library's modules have none either: compile every module a run imports
# once, into a cache of its own (the machine's site-packages are not ours to write), as pip
# and a Python install do on a user's machine.
export PYTHONPYCACHEPREFIX=/tmp/pycache
python3 -m compileall -q -j 0 /tmp/site tspcl > /dev/null 2>&1
python3 -c 'import sys, tspcl.cli, tspcl.run, tspcl.solvers.pils, tspcl.device, pyopencl, numpy
print("\n".join(m.__file__ for m in list(sys.modules.values())
                if (getattr(m, "__file__", None) or "").endswith(".py")))' \
  | xargs -r python3 -m compileall -q > /dev/null 2>&1
export TSPCL_SHARED_INSTANCES=$PWD/.bench/instances
OUT=${OUT:-/tmp/tspcl-out}
mkdir -p "$OUT"
LOG=$OUT/$1.log
step() { echo "== $* ($(date -u +%T))" | tee -a "$LOG"; }
run_suite() {
  local suite=$1 spec=scripts/suites/$1.toml
  step "suite $suite"
  if [ -n "${SUITE_SEEDS-}" ]; then
    sed "s/^seeds = .*/seeds = [$SUITE_SEEDS]/" "$spec" > "/tmp/$suite.toml" && spec=/tmp/$suite.toml
  fi
  if [ "${GPUS:-1}" -gt 1 ]; then   # one part per GPU (scripts/split_suite.py)
    python3 scripts/split_suite.py "$spec" "$GPUS" "/tmp/$suite-parts"
    for i in $(seq 0 $((GPUS - 1))); do
      CUDA_VISIBLE_DEVICES=$i timeout "$2" python3 -m tspcl bench "/tmp/$suite-parts/part$i.toml" \
          --device gpu --out "/tmp/$suite-$i" > "$OUT/$suite.part$i.progress.log" 2>&1 &
    done
    wait
    for i in $(seq 0 $((GPUS - 1))); do
      tail -1 "$OUT/$suite.part$i.progress.log" | tee -a "$LOG"
      cp "/tmp/$suite-$i/results.md" "$OUT/$suite.part$i.md" 2>/dev/null
      cp "/tmp/$suite-$i/results.json" "$OUT/$suite.part$i.json" 2>/dev/null
    done
    return
  fi
  timeout "$2" python3 -m tspcl bench "$spec" --device gpu --out "/tmp/$suite" \
      > "$OUT/$suite.progress.log" 2>&1; tail -2 "$OUT/$suite.progress.log" | tee -a "$LOG"
  cp "/tmp/$suite/results.md" "$OUT/$suite.md" 2>/dev/null
  cp "/tmp/$suite/results.json" "$OUT/$suite.json" 2>/dev/null
}
