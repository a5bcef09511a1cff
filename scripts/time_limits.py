#!/usr/bin/env python3
"""Whether every solver keeps its time limit: runs each algorithm of the registry
(constructions included) with ``--time-limit`` on the given instances through the CLI
and prints, per run, the wall time the CLI reports (``wall_s`` of ``--json``, counted
from the CLI's start), the subprocess's own wall clock (interpreter start and exit
included), the overrun of the latter past the limit, and whether it is within the
promise: max(0.5 s, 5 %) of the limit.

Each (algorithm, instance) pair runs once first with a short limit (``--warm``) and
its result is not counted: it builds the kernels into the driver's cache.  A cold
kernel build is not counted because a compile cannot be stopped once started: a run
whose programs are not cached yet spends their build time whatever its limit.

Example (PoCL):
    python scripts/time_limits.py -d cpu -t 2 -t 5 a280 pr1002 pr2392
    python scripts/time_limits.py -d cpu -t 60 -a ils -a pils pla85900
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tspcl.solvers import REGISTRY

SHARED = Path(os.environ.get("TSPCL_SHARED_INSTANCES",
                           Path(__file__).resolve().parent.parent.parent / "shared" / "instances"))
INSTANCES = SHARED / "tsplib"   # where a bare name is looked up


def promise(limit: float) -> float:
    """The overrun a time limit allows: max(0.5 s, 5 % of the limit)."""
    return max(0.5, 0.05 * limit)


def run_once(problem: Path, algo: str, limit: float, device: str, seed: int,
             extra: list[str]) -> tuple[float, float | None, str]:
    """One CLI run: (subprocess wall seconds, the CLI's wall_s or None, error text)."""
    cmd = [sys.executable, "-m", "tspcl", "solve", str(problem), "-a", algo,
           "--time-limit", str(limit), "-d", device, "-s", str(seed), "--json", "-q", *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        return wall, None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
    return wall, json.loads(proc.stdout)["wall_s"], ""


def resolve(name: str) -> Path:
    path = Path(name)
    if path.exists():
        return path
    return INSTANCES / f"{name}.tsp"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("instances", nargs="+", help="TSPLIB paths or names in ../shared/instances/tsplib")
    ap.add_argument("-t", "--time-limit", type=float, action="append", required=True,
                    help="limit in seconds (repeatable)")
    ap.add_argument("-a", "--algo", action="append", help="algorithms (default: the whole registry)")
    ap.add_argument("-d", "--device", default="auto")
    ap.add_argument("-s", "--seed", type=int, default=1)
    ap.add_argument("--warm", type=float, default=0.5,
                    help="time limit of the uncounted first run that fills the kernel cache")
    ap.add_argument("-x", "--extra", action="append", default=[],
                    help="one more CLI argument for every run (repeatable, e.g. --extra=-p --extra=ants=32)")
    args = ap.parse_args()
    algos = args.algo or list(REGISTRY)
    print(f"{'algo':7} {'instance':10} {'limit':>6} {'cli_s':>8} {'wall_s':>8} {'over_s':>7}  ok")
    failed = 0
    for name in args.instances:
        problem = resolve(name)
        for algo in algos:
            run_once(problem, algo, args.warm, args.device, args.seed, args.extra)
            for limit in args.time_limit:
                wall, cli_wall, error = run_once(problem, algo, limit, args.device, args.seed, args.extra)
                over = wall - limit
                ok = over <= promise(limit) and not error
                failed += not ok
                cli = "-" if cli_wall is None else f"{cli_wall:8.2f}"
                print(f"{algo:7} {problem.stem:10} {limit:6.1f} {cli:>8} {wall:8.2f} {over:7.2f}  "
                      f"{'yes' if ok else 'NO'}{'  ' + error if error else ''}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
