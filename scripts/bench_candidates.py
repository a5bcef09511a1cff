"""Time candidate-list construction and the construction solvers on uniform instances.

    python scripts/bench_candidates.py [--n 100000 1000000] [--k 16] [--kind knn]
                                       [--repeats 5] [--device D] [--json OUT]

For each n: generate uniform n (tspcl.gen, seed 1), upload it, then build_candidates once
to warm up and ``--repeats`` times measured.  Reported: median kernel seconds (the
OpenCL profiling events, Candidates.kernel_seconds) and median wall seconds of
build_candidates end to end (grid bucketing on the host, upload of the grid, kernels,
queue finish).  Then nn, greedy, sfc and random through tspcl.run.solve (their own
candidate lists included; k as given), one warm-up and 3 measured runs each, median
kernel_s and wall_s; nn and greedy are skipped above 2,000,000 cities.  Prints a markdown
table (stdout) and writes JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from datetime import datetime, timezone

from tspcl.device import Runtime
from tspcl.device_instance import DeviceInstance
from tspcl.gen import generate
from tspcl.neighbors import CandidateParams, build_candidates
from tspcl.run import solve
from tspcl.scripting import open_runtime, run_script
from tspcl.solvers import REGISTRY
from tspcl.version import version_string

SOLVERS = ["nn", "greedy", "sfc", "random"]
SOLVER_REPEATS = 3
BIG = 2_000_000  # nn and greedy are skipped above this many cities


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def time_candidates(rt: Runtime, dinst: DeviceInstance, params: CandidateParams,
                    repeats: int) -> dict:
    build_candidates(dinst, params)  # warm-up: kernel build, first-touch allocations
    kernel, wall = [], []
    for _ in range(repeats):
        rt.queue.finish()
        t0 = time.perf_counter()
        cand = build_candidates(dinst, params)  # ends with queue.finish()
        wall.append(time.perf_counter() - t0)
        kernel.append(cand.kernel_seconds)
        del cand
    return {"what": f"candidates {params.kind} k={params.k}",
            "kernel_s": statistics.median(kernel), "wall_s": statistics.median(wall),
            "repeats": repeats}


def time_solver(rt: Runtime, inst, name: str, k: int) -> dict:
    spec = REGISTRY[name]
    values = {"candidates": str(k)} if spec.has_param("candidates") else {}
    params = spec.params_from(values)
    solve(inst, spec, params, rt, seed=1)  # warm-up
    runs = [solve(inst, spec, params, rt, seed=1) for _ in range(SOLVER_REPEATS)]
    label = f"{name} k={k}" if values else name
    return {"what": label, "kernel_s": statistics.median(r.kernel_s for r in runs),
            "wall_s": statistics.median(r.wall_s for r in runs), "repeats": SOLVER_REPEATS,
            "length": int(statistics.median(r.length for r in runs))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", nargs="+", type=int, default=[100_000, 1_000_000])
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--kind", default="knn", choices=["knn", "quadrant"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--device", "-d", default=None)
    ap.add_argument("--json", metavar="OUT", default=None)
    ap.add_argument("--no-solvers", action="store_true", help="time only the candidate lists")
    args = ap.parse_args(argv)
    rt = open_runtime(args.device)
    params = CandidateParams(args.kind, args.k)
    results = []
    for n in args.n:
        t0 = time.perf_counter()
        inst = generate("uniform", n, seed=1)
        log(f"uniform{n}: generated in {time.perf_counter() - t0:.1f} s")
        dinst = DeviceInstance(rt, inst)
        r = time_candidates(rt, dinst, params, args.repeats)
        results.append({"n": n, **r})
        log(f"  {r['what']}: kernel {r['kernel_s']:.4f} s, wall {r['wall_s']:.4f} s")
        del dinst
        if args.no_solvers:
            continue
        for name in SOLVERS:
            if name in ("nn", "greedy") and n > BIG:
                log(f"  {name}: skipped above {BIG:,} cities")
                continue
            s = time_solver(rt, inst, name, args.k)
            results.append({"n": n, **s})
            log(f"  {s['what']}: kernel {s['kernel_s']:.4f} s, wall {s['wall_s']:.4f} s, "
                f"length {s['length']}")
    command = shlex.join(["python", "scripts/bench_candidates.py",
                          *(sys.argv[1:] if argv is None else argv)])
    meta = {"device": rt.name, "version": version_string(),
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "command": command}
    lines = [f"Device: {meta['device']}; version: {meta['version']}; date: {meta['date']}; "
             f"command: `{command}`", "",
             "| n | what | median kernel s | median wall s | runs | median length |",
             "| ---: | --- | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(f"| {r['n']:,} | {r['what']} | {r['kernel_s']:.4f} | {r['wall_s']:.4f} "
                     f"| {r['repeats']} | {r.get('length', '–')} |")
    print("\n".join(lines))
    if args.json:
        from tspcl.output import write_atomic

        write_atomic(args.json, json.dumps({**meta, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
