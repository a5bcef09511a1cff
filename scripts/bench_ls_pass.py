"""Time one full local-search evaluation pass (the paper's Table 1/2 measure).

    python scripts/bench_ls_pass.py INSTANCE... [--ls 3opt 2opt] [--device D [D2]]
                                    [--repeats 10] [--metric EUC_2D]

For each instance: quadrant candidate lists (m = 40) and the NN tour with every city in
the active queue, then the ls_eval kernel alone (work-items per (city, candidate); 3opt
extends the pairs with d(a,c) < d(a,b) by the candidates of pred c, both directions,
four ways), timed with OpenCL profiling events: one warm-up, median of --repeats.  Prints a
markdown table (instance, n, ls, device, median ms).
"""

from __future__ import annotations

import argparse
import statistics
import sys

from tspcl.neighbors import CandidateParams
from tspcl.scripting import nn_context, open_runtime, run_script
from tspcl.solvers import localsearch as ls
from tspcl.tsplib import read_problem


def pass_times(rt, inst, operators: str, repeats: int) -> list[float]:
    ctx = nn_context(rt, inst)
    cand = ctx.candidates(CandidateParams("quadrant", 40))
    search = ls.DeviceSearch(ctx, cand, ls.LocalSearchParams(ls=operators))
    search.load(ctx.best_order, ctx.best_length)  # every city queued
    kernel, gsize, lsize = search.launches()[0]   # ls_eval; it leaves the queue as it is
    times = []
    for r in range(repeats + 1):
        e = rt.cl.enqueue_nd_range_kernel(rt.queue, kernel, gsize, lsize)
        e.wait()
        if r:
            times.append((e.profile.end - e.profile.start) * 1e-9)
    return times


GROUPS = ((70, 400), (400, 2000), (2000, 18512))   # the paper's Table 1 size groups


def group_summary(rows: list, devices: list) -> None:
    """The paper's Table 1: per size group, mean pass time per device and the speed-up
    of the first device over the second (min, mean, max over the group's instances)."""
    print(f"\n| size group | problems | {devices[1]} mean ms | {devices[0]} mean ms "
          "| speed-up min | mean | max |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for lo, hi in GROUPS:
        g = [r for r in rows if lo <= r["n"] <= hi]
        if not g:
            continue
        up = [r[devices[1]] / r[devices[0]] for r in g]
        print(f"| {lo}-{hi} | {len(g)} | {1e3 * statistics.mean(r[devices[1]] for r in g):.3f} "
              f"| {1e3 * statistics.mean(r[devices[0]] for r in g):.3f} | {min(up):.1f} "
              f"| {statistics.mean(up):.1f} | {max(up):.1f} |", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances", nargs="+")
    ap.add_argument("--ls", nargs="+", default=["3opt", "2opt"])
    ap.add_argument("--device", nargs="+", default=[None],
                    help="one or more devices; with two, also the paper's Table 1 (size "
                         "groups, speed-up of the first over the second)")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--metric", default=None, help="only instances of this EDGE_WEIGHT_TYPE")
    args = ap.parse_args()
    runtimes = [open_runtime(d) for d in args.device]
    print("| instance | n | ls | device | median pass ms |")
    print("| --- | ---: | --- | --- | ---: |")
    rows = []
    for path in args.instances:
        inst = read_problem(path)
        if args.metric and inst.weight_type != args.metric:
            continue
        for op in args.ls:
            row = {"n": inst.n, "ls": op}
            for spec, rt in zip(args.device, runtimes):
                t = statistics.median(pass_times(rt, inst, op, args.repeats))
                row[spec] = t
                print(f"| {inst.name} | {inst.n} | {op} | {rt.name} | {1e3 * t:.3f} |", flush=True)
            rows.append(row)
    if len(args.device) == 2:
        for op in args.ls:
            print(f"\nls = {op}")
            group_summary([r for r in rows if r["ls"] == op], args.device)
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
