"""Seeds reproduce: every registered algorithm run twice with the same seed gives
byte-identical tours, and deterministic ones give the same tour on every device present.

    python scripts/repro_check.py [--instances PATH ...] [--seeds 1 2]
                                  [--devices all|auto|P:D ...] [--iterations 50]

Default instances: a generated uniform 500 plus, when the shared instances are present,
tsplib berlin52 (EUC_2D), gr96 (GEO), bays29 (EXPLICIT) and atsp ftv33.  For each
algorithm in the registry (unsupported pairs skipped), each instance and each seed, the
algorithm runs twice on each device through tspcl.run.solve with an iteration limit, the
solver's own budget (SolverSpec.with_budget; never a time limit, which would make the work
done depend on the clock); the TSPLIB tour text
(tspcl.tsplib.format_tour) of the runs must be equal byte for byte, and for algorithms
registered as deterministic also equal to the first device's.  An algorithm runs with its
registered ``repro_params`` (default: its defaults); parameters its ``racy`` marks (a
paper's relaxed pheromone updates, acs alt and spm) are run twice for valid tours only
and reported as racy.  Prints one line per (algorithm, parameters, instance, seed,
device); exit status 0 when everything agrees, 1 when anything differs (listed at the
end), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
from dataclasses import dataclass

from tspcl.bench import shared_instances_dir
from tspcl.errors import DeviceMemoryError
from tspcl.run import solve
from tspcl.scripting import open_runtimes, run_script
from tspcl.solvers import REGISTRY
from tspcl.solvers.base import MAX_COUNT, MAX_SEED
from tspcl.tsplib import format_tour, read_problem

SHARED_DEFAULTS = ["tsplib/berlin52.tsp", "tsplib/gr96.tsp", "tsplib/bays29.tsp",
                   "atsp/ftv33.atsp"]


@dataclass(frozen=True)
class Mismatch:
    """Runs that should have given the same tour but did not (or a run that failed)."""

    algorithm: str
    instance: str
    seed: int
    device: str
    what: str

    def __str__(self) -> str:
        return f"{self.algorithm} on {self.instance}, seed {self.seed}, {self.device}: {self.what}"


@dataclass(frozen=True)
class Row:
    algorithm: str
    instance: str
    seed: int
    device: str
    status: str     # "ok", "DIFFERS", "racy: ...", "skipped: ...", "error: ..."
    digest: str     # first 12 hex digits of the tour text's sha256 ("" when none)
    params: str = ""  # the parameter set when the algorithm has several


def tour_text(res) -> bytes:
    return format_tour(res.order, res.instance).encode()


def run_checks(instances, seeds, runtimes, algorithms=None, iterations: int = 50,
               progress=None) -> tuple[list[Row], list[Mismatch]]:
    """Check every (algorithm, instance, seed) on every runtime; returns the table rows
    and the mismatches.  ``algorithms`` maps names to SolverSpecs (default: REGISTRY)."""
    algorithms = REGISTRY if algorithms is None else algorithms
    rows: list[Row] = []
    bad: list[Mismatch] = []

    def record(row: Row):
        rows.append(row)
        if progress is not None:
            progress(row)

    for name, spec in algorithms.items():
        for params in spec.repro_params or (spec.params_type(),):
            _check_params(name, spec, params, instances, seeds, runtimes, iterations, record, bad)
    return rows, bad


def _check_params(name, spec, params, instances, seeds, runtimes, iterations, record, bad):
    """The checks of one parameter set (see :func:`run_checks`)."""
    racy = spec.racy(params)
    label = _label(spec, params)

    def row(*fields) -> Row:
        return Row(*fields, params=label)

    for inst in instances:
        reason = spec.unsupported(inst)
        if reason:
            for seed in seeds:
                record(row(name, inst.name, seed, "-", f"skipped: {reason}", ""))
            continue
        for seed in seeds:
            reference = None  # (device name, text) of the first device
            for rt in runtimes:
                try:
                    a = tour_text(solve(inst, spec, params, rt, seed=seed, iterations=iterations))
                    b = tour_text(solve(inst, spec, params, rt, seed=seed, iterations=iterations))
                except DeviceMemoryError as e:
                    record(row(name, inst.name, seed, rt.name, f"skipped: {e.message}", ""))
                    continue
                except Exception as e:  # a crash is a failure of the check, not of the script
                    what = f"error: {type(e).__name__}: {e}"
                    bad.append(Mismatch(name, inst.name, seed, rt.name, what))
                    record(row(name, inst.name, seed, rt.name, what, ""))
                    continue
                if racy:  # solve() checked that both tours are permutations
                    record(row(name, inst.name, seed, rt.name, f"racy: {racy}",
                               hashlib.sha256(a).hexdigest()[:12]))
                    continue
                problems = []
                if a != b:
                    problems.append("two runs with the same seed gave different tours")
                if spec.deterministic:
                    if reference is None:
                        reference = (rt.name, a)
                    elif reference[1] != a:
                        problems.append(f"tour differs from the one on {reference[0]}")
                for p in problems:
                    bad.append(Mismatch(name, inst.name, seed, rt.name, p))
                record(row(name, inst.name, seed, rt.name,
                           "DIFFERS" if problems else "ok",
                           hashlib.sha256(a).hexdigest()[:12]))


def _label(spec, params) -> str:
    """The parameters that differ from the defaults, when the spec lists several sets."""
    if not spec.repro_params:
        return ""
    defaults = dataclasses.asdict(spec.params_type())
    changed = [f"{k}={v}" for k, v in dataclasses.asdict(params).items() if v != defaults[k]]
    return " ".join(changed) or "defaults"


def check(instances, seeds, runtimes, algorithms=None, iterations: int = 50) -> list[Mismatch]:
    """The mismatches (empty when every run reproduces); see :func:`run_checks`."""
    return run_checks(instances, seeds, runtimes, algorithms, iterations)[1]


def default_instances() -> list:
    from tspcl.gen import generate

    out = [generate("uniform", 500, seed=1)]
    shared = shared_instances_dir()
    for rel in SHARED_DEFAULTS:
        if (shared / rel).is_file():
            out.append(read_problem(str(shared / rel)))
        else:
            print(f"note: {shared / rel} not found; skipped", file=sys.stderr)
    return out


def whole_number(lo: int, hi: int):
    """An argparse type: an integer from lo to hi (else argparse's usage error, status 2)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{text} is not in {lo}..{hi}")
        return value
    return parse


def format_row(r: Row) -> str:
    algorithm = f"{r.algorithm} ({r.params})" if r.params else r.algorithm
    return f"| {algorithm} | {r.instance} | {r.seed} | {r.device} | {r.status} | {r.digest} |"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", nargs="+", metavar="PATH", help="problem files (default: see above)")
    ap.add_argument("--seeds", nargs="+", type=whole_number(0, MAX_SEED), default=[1, 2])
    ap.add_argument("--devices", nargs="+", default=["all"], help="all, auto, gpu, cpu or P:D (default all)")
    ap.add_argument("--iterations", type=whole_number(0, MAX_COUNT), default=50,
                    help="iteration limit of iterative solvers (default 50)")
    args = ap.parse_args(argv)
    instances = ([read_problem(p) for p in args.instances] if args.instances
                 else default_instances())
    runtimes = open_runtimes(args.devices)
    print(f"devices: {', '.join(rt.name for rt in runtimes)}")
    print(f"instances: {', '.join(f'{i.name} ({i.n}, {i.weight_type})' for i in instances)}")
    print(f"algorithms: {', '.join(REGISTRY)}; seeds: {' '.join(map(str, args.seeds))}\n")
    print("| algorithm | instance | seed | device | status | tour sha256 |")
    print("| --- | --- | ---: | --- | --- | --- |")
    rows, bad = run_checks(instances, args.seeds, runtimes, iterations=args.iterations,
                           progress=lambda r: print(format_row(r), flush=True))
    checked = sum(r.status in ("ok", "DIFFERS") for r in rows)
    if bad:
        print(f"\n{len(bad)} mismatch(es) in {checked} checks:")
        for m in bad:
            print(f"  {m}")
        return 1
    print(f"\nall {checked} checks agree")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
