"""Time one full local-search evaluation pass (the paper's Table 1/2 measure).

    python scripts/bench_ls_pass.py INSTANCE... [--ls 3opt 2opt] [--device D] [--repeats 10]

For each instance: quadrant candidate lists (m = 40) and the NN tour, then the ls_eval
kernel alone (one work-item per (city, candidate); 3opt loops over the candidates of
pred c), timed with OpenCL profiling events: one warm-up, median of --repeats.  Prints a
markdown table (instance, n, ls, device, median ms).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tspcl.device import Runtime  # noqa: E402
from tspcl.device_instance import DeviceInstance  # noqa: E402
from tspcl.solvers import SolveContext  # noqa: E402
from tspcl.solvers import localsearch as ls  # noqa: E402
from tspcl.solvers.construct import NearestNeighborParams, run_nn  # noqa: E402
from tspcl.neighbors import CandidateParams  # noqa: E402
from tspcl.tsplib import read_problem  # noqa: E402


def pass_times(rt, inst, operators: str, repeats: int) -> list[float]:
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=1)
    run_nn(ctx, NearestNeighborParams())
    cand = ctx.candidates(CandidateParams("quadrant", 40))
    n, m = inst.n, cand.m
    use_2opt, use_oropt, use_3opt = ls.OPERATORS[operators]
    k = ctx.dinst.kernel("localsearch", "ls_eval", M=m, USE_2OPT=use_2opt,
                         USE_OROPT=use_oropt, USE_3OPT=use_3opt)
    wg = rt.work_group_size(k, ls.EVAL_GROUP)
    groups = -(-n * m // wg)
    order = ctx.best_order.astype(np.int32)
    pos = np.empty(n, np.int32)
    pos[order] = np.arange(n, dtype=np.int32)
    args = (*ctx.dinst.dist_args, cand.cities, rt.to_device(order), rt.to_device(pos),
            rt.to_device(np.zeros(ls.STATE_WORDS, np.int64)), rt.empty(8 * groups),
            rt.empty(8 * groups), rt.cl.LocalMemory(8 * wg), rt.cl.LocalMemory(8 * wg))
    times = []
    for r in range(repeats + 1):
        e = k(rt.queue, (groups * wg,), (wg,), *args)
        e.wait()
        if r:
            times.append((e.profile.end - e.profile.start) * 1e-9)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instances", nargs="+")
    ap.add_argument("--ls", nargs="+", default=["3opt", "2opt"])
    ap.add_argument("--device", default=None)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    rt = Runtime.from_spec(args.device)
    print("| instance | n | ls | device | median pass ms |")
    print("| --- | ---: | --- | --- | ---: |")
    for path in args.instances:
        inst = read_problem(path)
        for op in args.ls:
            t = statistics.median(pass_times(rt, inst, op, args.repeats))
            print(f"| {inst.name} | {inst.n} | {op} | {rt.name} | {1e3 * t:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
