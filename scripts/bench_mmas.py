"""Time MMAS solution construction per iteration (the paper's Tables 3-5 measure).

    python scripts/bench_mmas.py INSTANCE... [--variants rwm-lc ...] [--cl 0 32]
        [--device gpu] [--iterations 5] [--warmup 1] [--ants 0]

For each instance, variant and candidate list length: a colony with ants = n (or
--ants), --warmup iterations, then --iterations more, the aco_construct kernel of each
timed with OpenCL profiling events.  Prints a markdown table of the median ms per
iteration (construction kernel only, as the paper's times) and solutions per second.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from tspcl.scripting import nn_context, open_runtime, run_script
from tspcl.solvers import mmas
from tspcl.tsplib import read_problem


def construction_times(rt, inst, p: mmas.MmasParams, warmup: int, iterations: int):
    ctx = nn_context(rt, inst)
    colony = mmas.DeviceColony(ctx, p)
    ctx.timed(colony.start(ctx.best_length))
    times = []
    for it in range(warmup + iterations):
        events = colony.iteration(it, ctx.seed)
        events[-1].wait()
        if it >= warmup:
            times.append((events[0].profile.end - events[0].profile.start) * 1e-9)
    return times, colony.group, colony.ants


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances", nargs="+")
    ap.add_argument("--variants", nargs="+", default=mmas.VARIANTS, choices=mmas.VARIANTS)
    ap.add_argument("--cl", nargs="+", type=int, default=[0, 32])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--ants", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    rt = open_runtime(args.device)
    print("| instance | n | variant | cl | work-items per ant | ms per iteration | solutions/s |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for path in args.instances:
        inst = read_problem(path)
        for variant in args.variants:
            for cl in args.cl:
                p = mmas.MmasParams(variant=variant, candidates=cl, ants=args.ants, threads=args.threads)
                try:
                    times, group, ants = construction_times(rt, inst, p, args.warmup, args.iterations)
                except Exception as e:  # noqa: BLE001 - a row says why it has no figure
                    print(f"| {inst.name} | {inst.n} | {variant} | {cl} | - | {type(e).__name__}: "
                          f"{str(e).splitlines()[0][:80]} | - |", flush=True)
                    continue
                med = statistics.median(times)
                print(f"| {inst.name} | {inst.n} | {variant} | {cl} | {group} | {med * 1e3:.3f} | "
                      f"{ants / med:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
