"""Time per generation of the genetic algorithm (the paper's Table 5 measure).

    python scripts/bench_ga.py INSTANCE... [--populations 128 256 2048] [--groups 1 8]
        [--crossover hybrid] [--device gpu] [--generations 5] [--warmup 1]

Kang et al. 2016, Table 5: for each instance, population and number of groups, a pool of
random genes (tspcl.solvers.ga.GenePool, the solver's own kernels and defaults), then
--warmup generations and --generations more, each timed from its first event's start to
its last one's end (OpenCL profiling events: competition, crossover, mutation, lengths,
the best, and a migration where one falls).  Prints a markdown table of the median ms
per generation.  A configuration that does not fit the device's memory gets a row that
says so.  The paper's GTX 980: e.g. 288.95 ms a generation for 2048 genes on 10,150
cities and 5514 ms on 100,000 (Table 5).
"""

from __future__ import annotations

import argparse
import statistics
import sys

from tspcl.device_instance import DeviceInstance
from tspcl.scripting import open_runtime, run_script
from tspcl.solvers import SolveContext, ga
from tspcl.tsplib import read_problem


def generation_times(dinst: DeviceInstance, p: ga.GaParams, warmup: int, generations: int) -> list[float]:
    """Seconds of each timed generation of one run (seed 1)."""
    ctx = SolveContext(dinst.rt, dinst, seed=1)
    pool = ga.GenePool(ctx, p)
    ctx.timed(pool.start(ctx.seed))
    times = []
    for gen in range(warmup + generations):
        events = pool.generation(gen, ctx.seed)
        events[-1].wait()
        if gen >= warmup:
            times.append((events[-1].profile.end - events[0].profile.start) * 1e-9)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances", nargs="+")
    ap.add_argument("--populations", nargs="+", type=int, default=[128, 256, 2048])
    ap.add_argument("--groups", nargs="+", type=int, default=[1, 8])
    ap.add_argument("--crossover", default="hybrid", choices=ga.CROSSOVERS)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--generations", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args()
    rt = open_runtime(args.device)
    print("| instance | n | genes | groups | crossover | ms per generation |")
    print("| --- | ---: | ---: | ---: | --- | ---: |")
    for path in args.instances:
        inst = read_problem(path)
        dinst = DeviceInstance(rt, inst)
        for population in args.populations:
            for groups in args.groups:
                row = f"| {inst.name} | {inst.n} | {population} | {groups} | {args.crossover} |"
                try:
                    p = ga.GaParams(crossover=args.crossover, population=population, groups=groups)
                    times = generation_times(dinst, p, args.warmup, args.generations)
                except Exception as e:  # noqa: BLE001 - a row says why it has no figure
                    print(f"{row} {type(e).__name__}: {str(e).splitlines()[0][:90]} |", flush=True)
                    continue
                print(f"{row} {statistics.median(times) * 1e3:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
