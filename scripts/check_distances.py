"""Device distances == host distances, on every instance of a folder, on every device.

    python scripts/check_distances.py [INSTANCE_DIR ...] [--pairs 200000] [--devices all]

Draws random city pairs from each instance (all pairs when n <= 300, plus the edges of
the .opt.tour when one exists), computes them with the distance kernel and with the host
formulas, and prints one line per (device, folder): instances, pairs, mismatches.  Exit
status 1 when any pair differs.  The tests do the same on the test device; this script
is for recording the figure on the GPU (BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from tspcl.device import Runtime
from tspcl.device_instance import DeviceInstance
from tspcl.scripting import open_runtimes, run_script
from tspcl.tsplib import read_problem, read_tour

DEFAULT_DIRS = ["../shared/instances", ".bench/instances"]


def instance_files(dirs: list[str]) -> list[Path]:
    files = []
    for d in dirs:
        for ext in ("*.tsp", "*.atsp"):
            files += sorted(Path(d).rglob(ext))
    return files


def pairs_for(inst, path: Path, count: int, rng) -> tuple[np.ndarray, np.ndarray]:
    n = inst.n
    if n <= 300:
        a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        a, b = a.ravel(), b.ravel()
    else:
        a, b = rng.integers(0, n, count), rng.integers(0, n, count)
    opt = path.with_suffix(".opt.tour")
    if opt.is_file():
        t = read_tour(str(opt)).order
        a, b = np.concatenate([a, t]), np.concatenate([b, np.roll(t, -1)])
    return a, b


def check(rt: Runtime, files: list[Path], count: int) -> tuple[int, int, list[str]]:
    rng = np.random.default_rng(12345)
    pairs = 0
    bad = []
    for path in files:
        inst = read_problem(str(path))
        a, b = pairs_for(inst, path, count, rng)
        dev = DeviceInstance(rt, inst).pair_distances(a, b)
        host = inst.dist(a, b)
        wrong = int((dev != host).sum())
        pairs += len(a)
        if wrong:
            i = int(np.flatnonzero(dev != host)[0])
            bad.append(f"{path.name}: {wrong} pairs differ, e.g. ({a[i] + 1},{b[i] + 1}) "
                       f"device {dev[i]} host {host[i]}")
    return len(files), pairs, bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--pairs", type=int, default=200_000)
    ap.add_argument("--devices", default="all", help="all, or a --device spec")
    args = ap.parse_args()
    dirs = args.dirs or [d for d in DEFAULT_DIRS if Path(d).is_dir()][:1]
    files = instance_files(dirs)
    failed = False
    for rt in open_runtimes([args.devices]):
        n_inst, n_pairs, bad = check(rt, files, args.pairs)
        print(f"{rt.name}: {n_inst} instances, {n_pairs} pairs, {len(bad)} instances with mismatches")
        for line in bad:
            print("  " + line)
        failed |= bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(run_script(main))
