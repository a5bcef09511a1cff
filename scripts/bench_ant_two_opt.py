"""Time the ants' 2-opt per iteration inside MMAS (the paper's Table 9 setting).

    python scripts/bench_ant_two_opt.py INSTANCE... [--iterations 30] [--ants 800]
        [--threads 128] [--split 8] [--memory auto] [--moves chunk best] [--device gpu]

For each instance and each (--threads, --split, --moves): MMAS-RWM-BT with candidate lists
of 32, rho 0.9 and 2-opt on every ant (section 5.7), --iterations iterations, every
kernel timed with OpenCL profiling events.  The 2-opt's work falls as the colony
converges, so the table gives its ms in iteration 0, the median over iterations 1-10
and over the last ten, next to the median construction and whole-iteration ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from tspcl.scripting import nn_context, open_runtime, run_script
from tspcl.solvers import mmas
from tspcl.solvers.best import BestWord
from tspcl.solvers.population_two_opt import MOVES, PopulationTwoOptParams
from tspcl.tsplib import read_problem


def ms(event) -> float:
    return (event.profile.end - event.profile.start) * 1e-6


def run(rt, inst, ants: int, iterations: int, ls: PopulationTwoOptParams):
    """Per iteration: (construction ms, 2-opt ms, whole iteration ms); the last best."""
    ctx = nn_context(rt, inst)
    p = mmas.MmasParams(variant="rwm-bt", candidates=32, ants=ants, persistence=0.9, ls="2opt")
    colony = mmas.DeviceColony(ctx, p, ls)
    ctx.timed(colony.start(ctx.best_length))
    rows = []
    for it in range(iterations):
        events = colony.iteration(it, ctx.seed)
        events[-1].wait()
        rows.append((ms(events[0]), ms(events[1]),
                     (events[-1].profile.end - events[0].profile.start) * 1e-6))
    return rows, colony.best.read()[BestWord.BEST], colony.ls.group, colony.ls.local_tour


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances", nargs="+")
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--ants", type=int, default=800)
    ap.add_argument("--threads", nargs="+", type=int, default=[PopulationTwoOptParams.threads])
    ap.add_argument("--split", nargs="+", type=int, default=[PopulationTwoOptParams.split])
    ap.add_argument("--memory", default="auto", choices=["auto", "global"])
    ap.add_argument("--moves", nargs="+", default=[PopulationTwoOptParams.moves], choices=MOVES)
    ap.add_argument("--device", default="auto")
    args = ap.parse_args()
    if args.iterations < 12:
        ap.error("--iterations must be at least 12 (iteration 0, 1-10 and the last ten)")
    rt = open_runtime(args.device)
    print("| instance | ants | threads | split | moves | tour in | 2-opt ms it 0 | it 1-10 | last 10 | "
          "construction ms | iteration ms | best after |")
    print("| --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for path in args.instances:
        inst = read_problem(path)
        for threads in args.threads:
            for split, moves in ((s, m) for s in args.split for m in args.moves):
                ls = PopulationTwoOptParams(threads=threads, split=split, memory=args.memory, moves=moves)
                rows, best, group, local = run(rt, inst, args.ants, args.iterations, ls)
                two = [r[1] for r in rows]
                print(f"| {inst.name} | {args.ants} | {group} | {split} | {moves} | {'local' if local else 'global'} | "
                      f"{two[0]:.2f} | {statistics.median(two[1:11]):.2f} | "
                      f"{statistics.median(two[-10:]):.2f} | {statistics.median(r[0] for r in rows):.3f} | "
                      f"{statistics.median(r[2] for r in rows[-10:]):.2f} | {best} ({args.iterations} it) |",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
