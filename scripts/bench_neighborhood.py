"""Time tabu-search iterations over full neighbourhoods (the paper's Tables 6 and 7 measure).

    python scripts/bench_neighborhood.py INSTANCE... [--neighborhood swap 2opt]
        [--device gpu cpu] [--iterations 20] [--warmup 3] [--group 256] [--threads 0]

For each instance, neighbourhood and device: the NN tour (seed 1), then --warmup and
--iterations tabu-search iterations (tenure 10) with a fixed launch geometry (default:
the paper's 256 work-items per group and one work-item per move, capped at 2^26), each
iteration (nb_eval + nb_apply) timed with OpenCL profiling events.  Prints a markdown
table: median us per iteration, and the 10,000 iterations of the paper's runs as that
median times 10,000 (an iteration evaluates the whole neighbourhood, so its cost does not
change along the run).  With two devices, the speed-up of the first over the second.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from tspcl.scripting import nn_context, open_runtime, run_script
from tspcl.solvers import neighborhood as nbs
from tspcl.tsplib import read_problem

PAPER_ITERATIONS = 10_000


def iteration_times(rt, inst, p: nbs.TabuParams, warmup: int, iterations: int) -> list[float]:
    ctx = nn_context(rt, inst)
    search = nbs.DeviceNeighborhoodSearch(ctx, p, p.tenure)
    search.load(ctx.best_order, ctx.best_length, budget=warmup + iterations)
    config = search.control.current
    search.enqueue(warmup, config)
    events = search.enqueue(iterations, config)
    state = search.read_state()
    if state[nbs.StateWord.ITER] < warmup + iterations:
        raise SystemExit(f"{inst.name}: the search stopped after {state[nbs.StateWord.ITER]} iterations")
    return [(a.profile.end - e.profile.start) * 1e-9 for e, a in events]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances", nargs="+")
    ap.add_argument("--neighborhood", nargs="+", default=["swap"], choices=list(nbs.NEIGHBORHOODS))
    ap.add_argument("--device", nargs="+", default=["auto"])
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--group", type=int, default=nbs.DEFAULT_GROUP)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    runtimes = [open_runtime(d) for d in args.device]
    names = [rt.name.split(" (")[0] for rt in runtimes]
    head = " | ".join(f"{d} us/iter | {d} 10,000 iter s" for d in names)
    print(f"| instance | n | neighbourhood | moves | {head} |"
          + (" speed-up |" if len(runtimes) == 2 else ""))
    print("| --- | ---: | --- | ---: |" + " ---: | ---: |" * len(runtimes)
          + (" ---: |" if len(runtimes) == 2 else ""))
    for path in args.instances:
        inst = read_problem(path)
        for nb in args.neighborhood:
            p = nbs.TabuParams(neighborhood=nb, group=args.group, threads=args.threads)
            medians = [statistics.median(iteration_times(rt, inst, p, args.warmup, args.iterations))
                       for rt in runtimes]
            cells = " | ".join(f"{m * 1e6:.1f} | {m * PAPER_ITERATIONS:.3g}" for m in medians)
            up = f" {medians[1] / medians[0]:.1f} |" if len(runtimes) == 2 else ""
            print(f"| {inst.name} | {inst.n} | {nb} | {nbs.neighborhood_size(nb, inst.n)} | {cells} |{up}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
