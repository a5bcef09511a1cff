#!/usr/bin/env bash
# The foundation batch on the GPU machine (see ../shared/device/README.md), one call:
#   kernel tests on the GPU, device == host distances on every instance (GPU and PoCL),
#   candidate-list and construction timings (GPU; PoCL baseline), reproducibility.
# Run from the project root with .whl and .bench (a copy of ../shared/instances under
# .bench/instances) carried along; results land in $OUT.
set -uo pipefail
. scripts/device_prelude.sh foundation

step devices
python3 -m tspcl devices 2>&1 | tee -a "$LOG"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee -a "$LOG"

step "kernel tests on the GPU"
TSPCL_TEST_DEVICE=gpu python3 -m pytest -q -p no:cacheprovider tests/test_distance_kernel.py \
    tests/test_neighbors.py tests/test_sort.py tests/test_construct.py 2>&1 | tail -15 | tee -a "$LOG"

step "device distances == host distances, every instance, every device"
python3 scripts/check_distances.py .bench/instances --devices all 2>&1 | tee -a "$LOG"

step "candidate lists and constructions, GPU"
python3 scripts/bench_candidates.py --n 100000 1000000 --k 16 --kind knn --repeats 5 \
    --device gpu --json "$OUT/candidates_gpu.json" 2>&1 | tee -a "$LOG"
step "candidate lists and constructions, PoCL (CPU baseline)"
python3 scripts/bench_candidates.py --n 100000 --k 16 --kind knn --repeats 3 \
    --device cpu --json "$OUT/candidates_cpu.json" 2>&1 | tee -a "$LOG"

step "construction suite, GPU"
python3 scripts/bench.py scripts/suites/construct.toml --device gpu --out /tmp/construct_gpu 2>&1 | tail -3 | tee -a "$LOG"
cp /tmp/construct_gpu/results.md "$OUT/construct_gpu.md"; cp /tmp/construct_gpu/results.csv "$OUT/construct_gpu.csv"

step "reproducibility, all devices"
python3 scripts/repro_check.py --devices all 2>&1 | tail -30 | tee -a "$LOG"
step done
