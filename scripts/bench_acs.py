"""Time ACS solution construction per iteration (the paper's Table 3 measure).

    python scripts/bench_acs.py INSTANCE... [--variants gpu alt spm] [--device gpu]
        [--iterations 5] [--warmup 1] [--ants 0] [--k 1] [--reads fresh]

For each instance and variant: a colony with ants = n (or --ants), --warmup iterations,
then --iterations more; the construction of each (acs_construct, or for gpu the span
from acs_first to acs_close: every per-step launch with its local updates, enqueued as
a run does, without events) timed with OpenCL profiling events.  Then --iterations more
with an event for every launch: the median of the construction kernels' own times
summed (for gpu, what the span spends outside launch gaps).  Prints a markdown table of
the median ms per iteration, the kernels' ms, and solutions per second.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from tspcl.scripting import nn_context, open_runtime, run_script
from tspcl.solvers import acs
from tspcl.tsplib import read_problem


def construction_times(rt, inst, p: acs.AcsParams, warmup: int, iterations: int):
    ctx = nn_context(rt, inst)
    colony = acs.AcsColony(ctx, p)
    ctx.timed(colony.start(ctx.best_length))
    times, busy = [], []
    for it in range(warmup + 2 * iterations):
        # the timed iterations as a run enqueues them (gpu: the per-step launches
        # without events), then as many with every launch's event for the kernels' time
        timed = warmup <= it < warmup + iterations
        built = colony.construct(it, ctx.seed, step_events=it >= warmup + iterations)
        rest = colony.finish(it)
        rest[-1].wait()
        if timed:
            times.append((built[-1].profile.end - built[0].profile.start) * 1e-9)
        elif it >= warmup:
            busy.append(sum(e.profile.end - e.profile.start for e in built) * 1e-9)
    return times, busy, colony.ants


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances", nargs="+")
    ap.add_argument("--variants", nargs="+", default=list(acs.VARIANTS), choices=acs.VARIANTS)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--ants", type=int, default=0)
    ap.add_argument("--k", type=int, default=1)
    ap.add_argument("--reads", default="fresh", choices=list(acs.READS))
    args = ap.parse_args()
    rt = open_runtime(args.device)
    print("| instance | n | variant | ants | k | ms per iteration | kernels' ms | solutions/s |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for path in args.instances:
        inst = read_problem(path)
        for variant in args.variants:
            p = acs.AcsParams(variant=variant, ants=args.ants, local_update_every=args.k, reads=args.reads)
            try:
                times, busy, ants = construction_times(rt, inst, p, args.warmup, args.iterations)
            except Exception as e:  # noqa: BLE001 - a row says why it has no figure
                print(f"| {inst.name} | {inst.n} | {variant} | - | {args.k} | {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:80]} | - | - |", flush=True)
                continue
            med = statistics.median(times)
            print(f"| {inst.name} | {inst.n} | {variant} | {ants} | {args.k} | {med * 1e3:.3f} | "
                  f"{statistics.median(busy) * 1e3:.3f} | "
                  f"{ants / med:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
