"""Convergence of the genetic algorithm per crossover (the paper's Table 2 measure).

    python scripts/ga_convergence.py INSTANCE [--crossovers bcscx arx hybrid] [--runs 20]
        [--generations 100] [--population 2048] [--groups 1] [--target 0.1]
        [--report-at 100] [--seed 1] [--optimum N] [--device auto] [-p KEY=VALUE ...]
        [--curves FILE.csv]

Kang et al. 2016, Table 2: for each crossover, `--runs` runs (seeds seed, seed + 1, ...)
of a pool of `--population` genes from random tours; after every generation the best
error eps = (best - optimum) / optimum (a fraction, eq. 3) is read back.  Prints a
markdown table with, per crossover, the mean number of generations until eps <= target
(0.1; runs that never get there within --generations are counted apart), the mean eps
after --report-at generations (100) with its min and max, and the mean seconds per
generation.  The runs drive tspcl.solvers.ga.GenePool itself (the solver's own kernels
and parameters, `-p` overriding any GaParams field), reading the few bytes of the
pool's status after each generation.  The optimum comes from --optimum or the optima
files tspcl knows (an optima.csv beside the problem or one directory up).

The paper: xqf131 (BCSCX / ARX / hybrid) 35.54 / 67.45 / 26.40 generations to 0.1 and
0.041 / 0.008 / 0.019 after 100; xql662 71.21 / 532.42 / 54.23 and 0.057 / 0.058 / 0.021
(2048 genes, 100 runs each; its xql662 ARX row contradicts itself, 0.058 after 100
generations but 532 to reach 0.1: give ARX --generations 600 to see the second).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import statistics
import sys
import time

from tspcl.device_instance import DeviceInstance
from tspcl.optima import known_optimum
from tspcl.scripting import open_runtime, run_script
from tspcl.solvers import SolveContext, ga
from tspcl.solvers.best import BestWord
from tspcl.tsplib import read_problem


def parse_overrides(items: list[str]) -> dict:
    """KEY=VALUE pairs typed like the GaParams field they set."""
    fields = {f.name: f for f in dataclasses.fields(ga.GaParams)}
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in fields:
            raise SystemExit(f"-p {item!r}: expected KEY=VALUE with KEY one of {', '.join(fields)}")
        kind = type(getattr(ga.GaParams(), key))
        out[key] = kind(value)
    return out


def errors_per_generation(dinst: DeviceInstance, p: ga.GaParams, seed: int, optimum: int):
    """One run: the best error after the initial pool (index 0) and after every
    generation, and the seconds the generations took."""
    ctx = SolveContext(dinst.rt, dinst, seed=seed)
    pool = ga.GenePool(ctx, p)
    ctx.timed(pool.start(seed))
    errors = [(int(pool.best.read()[BestWord.BEST]) - optimum) / optimum]
    started = time.perf_counter()
    for gen in range(p.generations):
        pool.generation(gen, seed)
        errors.append((int(pool.best.read()[BestWord.BEST]) - optimum) / optimum)
    return errors, time.perf_counter() - started


def first_at_or_below(errors: list[float], target: float) -> int | None:
    return next((g for g, e in enumerate(errors) if e <= target), None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instance")
    ap.add_argument("--crossovers", nargs="+", default=["bcscx", "arx", "hybrid"], choices=ga.CROSSOVERS)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--generations", type=int, default=100)
    ap.add_argument("--population", type=int, default=2048)
    ap.add_argument("--groups", type=int, default=1)
    ap.add_argument("--target", type=float, default=0.1)
    ap.add_argument("--report-at", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--optimum", type=int, default=None)
    ap.add_argument("--device", default="auto")
    ap.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--curves", default=None, help="write the mean error per generation to this CSV")
    args = ap.parse_args()

    inst = read_problem(args.instance)
    optimum = args.optimum if args.optimum is not None else known_optimum(inst)
    if not optimum:
        raise SystemExit(f"no known optimum for {inst.name}: give --optimum")
    rt = open_runtime(args.device)
    dinst = DeviceInstance(rt, inst)
    overrides = parse_overrides(args.param)
    report_at = min(args.report_at, args.generations)
    print(f"{inst.name} n={inst.n} optimum {optimum}; {args.runs} runs, "
          f"{args.population} genes, {args.groups} group(s), {args.generations} generations"
          + (f"; {' '.join(args.param)}" if args.param else ""), file=sys.stderr)
    print(f"| crossover | runs | generations to eps <= {args.target:g} (mean) | reached | "
          f"eps after {report_at} (mean) | min | max | s per generation |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    curves = {}
    for crossover in args.crossovers:
        p = ga.GaParams(**{"crossover": crossover, "population": args.population, "groups": args.groups,
                           "generations": args.generations, **overrides})
        reach, final, seconds, runs = [], [], [], []
        for r in range(args.runs):
            errors, spent = errors_per_generation(dinst, p, args.seed + r, optimum)
            runs.append(errors)
            g = first_at_or_below(errors, args.target)
            if g is not None:
                reach.append(g)
            final.append(errors[report_at])
            seconds.append(spent / max(1, p.generations))
            print(f"  {crossover} seed {args.seed + r}: reach {g}, eps after {report_at} "
                  f"{errors[report_at]:.4f}, final {errors[-1]:.4f}", file=sys.stderr, flush=True)
        curves[crossover] = [statistics.fmean(col) for col in zip(*runs)]
        mean_reach = f"{statistics.fmean(reach):.2f}" if reach else "-"
        print(f"| {crossover} | {args.runs} | {mean_reach} | {len(reach)}/{args.runs} | "
              f"{statistics.fmean(final):.4f} | {min(final):.4f} | {max(final):.4f} | "
              f"{statistics.fmean(seconds):.4f} |", flush=True)
    if args.curves:
        with open(args.curves, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["generation", *curves])
            for gen, row in enumerate(zip(*curves.values())):
                w.writerow([gen, *(f"{e:.5f}" for e in row)])
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
