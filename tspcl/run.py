"""One solver run: plan memory, upload, run the solver, keep the best tour, summarise.

The CLI, the benchmark runner and the reproducibility check all go through
:func:`solve`, so a run means the same thing everywhere.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from .device import Runtime
from .device_instance import DeviceInstance
from .instance import Instance
from .interrupts import solving
from .optima import bhh_estimate, gap_percent, known_optimum
from .solvers import SolveContext, SolverSpec
from .solvers.base import Progress
from .stop import AnyOf, Deadline
from .version import version_string


STOP_REASONS = {
    "done": "the solver's own end (its budget, or a local optimum)",
    "time limit": "the time limit",
    "interrupted": "a signal (Ctrl-C)",
}


@dataclass
class Result:
    """What a run produced; ``length`` is recomputed exactly on the host."""

    instance: str
    n: int
    algorithm: str
    params: dict
    seed: int
    device: str
    order: np.ndarray
    length: int
    optimum: int | None
    wall_s: float
    kernel_s: float
    iterations: int
    history: list = field(default_factory=list)
    interrupted: bool = False
    notes: list = field(default_factory=list)
    bhh: float | None = None           # the BHH estimate, where no optimum is known
    chosen: str | None = None          # why --algo auto chose this algorithm
    stopped: str = "done"              # why it ended: STOP_REASONS
    version: str = field(default_factory=version_string)

    @property
    def tour(self) -> np.ndarray:
        """The tour: 0-based city numbers in visiting order (the same array as ``order``)."""
        return self.order

    @property
    def gap(self) -> float | None:
        return gap_percent(self.length, self.optimum)

    def summary(self) -> dict:
        """The JSON summary (`tspcl solve --json`) and benchmark row."""
        return {
            "instance": self.instance, "n": self.n, "algorithm": self.algorithm,
            "params": self.params, "seed": self.seed, "device": self.device,
            "length": self.length, "optimum": self.optimum,
            "gap_percent": None if self.gap is None else round(self.gap, 4),
            "bhh_estimate": None if self.bhh is None else round(self.bhh, 1),
            "bhh_gap_percent": None if self.bhh is None else round(100.0 * (self.length / self.bhh - 1.0), 4),
            "wall_s": round(self.wall_s, 6), "kernel_s": round(self.kernel_s, 6),
            "iterations": self.iterations, "interrupted": self.interrupted,
            "stopped": self.stopped, "notes": self.notes, "auto": self.chosen,
            "version": self.version,
        }


MAX_ITERATIONS = 2**63 - 1  # --iterations of a solver without a budget parameter


def solver_params(spec: SolverSpec, values: dict, iterations: str | None):
    """`spec`'s parameters from typed `values` (SolverSpec.typed) and an iteration budget
    (-i: a count, or for ils/pils a multiple of n such as 10n), which goes to the solver's
    budget parameter where it has one; returns (params, the run's own iteration budget or
    None)."""
    from .errors import UsageError

    values = dict(values)
    run_iterations = None
    if iterations is not None:
        if spec.budget_param:
            values.update(spec.typed({spec.budget_param: str(iterations)}))
        else:
            try:
                run_iterations = int(iterations)
            except ValueError:
                run_iterations = -1
            if not 0 <= run_iterations <= MAX_ITERATIONS:
                raise UsageError(f"--iterations takes a whole number from 0 to {MAX_ITERATIONS} "
                                 f"for {spec.name} (got {iterations!r})")
    return spec.params_type(**values), run_iterations


@dataclass(frozen=True)
class Setup:
    """What a run solves with: the solver, its parameters, the run's own iteration
    budget (None: the solver's), the time limit, and why --algo auto chose it (None for
    an algorithm named by the user)."""

    spec: SolverSpec
    params: object
    iterations: int | None
    time_limit: float | None
    chosen: str | None = None


def setup(algo: str, values_for, iterations: str | None, time_limit: float | None,
          inst: Instance | None = None, gpu: bool = False) -> Setup:
    """The run's Setup, the same for the CLI and the Python API: `algo` by name, or
    "auto" (tspcl.auto.choose: needs `inst` and whether the device is a GPU).
    `values_for(spec, base)` returns the solver's typed parameter values over `base`
    (auto's); `iterations` is -i."""
    from .solvers import get_solver

    if algo != "auto":
        spec = get_solver(algo)
        return Setup(spec, *solver_params(spec, values_for(spec, {}), iterations), time_limit)
    from .auto import choose

    choice = choose(inst, gpu, time_limit, iterations is not None)
    spec = get_solver(choice.algorithm)
    params, run_iterations = solver_params(spec, values_for(spec, spec.typed(choice.values)),
                                           iterations)
    return Setup(spec, params, run_iterations, choice.time_limit, choice.reason)


def params_dict(params) -> dict:
    return {k: v for k, v in dataclasses.asdict(params).items()} if dataclasses.is_dataclass(params) else {}


def stopping(deadline: float | None) -> AnyOf:
    """The host's stopping rules: the time limit (an iteration budget is the solver's
    own, SolverSpec.with_budget, counted on the device)."""
    crit = AnyOf()
    if deadline is not None:
        crit.criteria.append(Deadline(deadline))
    return crit


def plan_memory(rt: Runtime, inst: Instance, spec: SolverSpec, params) -> int:
    """The run's buffer plan on rt's device, checked against its memory before anything
    is allocated; returns the bytes it needs."""
    plan = spec.buffers(inst, params, rt.limits)
    options = f"{spec.memory_hint}, " if spec.memory_hint else ""
    rt.check_fits(plan.nbytes, plan.largest, f"{spec.name} on {inst.name} (n={inst.n})",
                  f"try {options}a smaller instance, or a device with more memory")
    return plan.nbytes


def unsolvable(inst: Instance, spec: SolverSpec) -> str | None:
    """Why `spec` cannot solve `inst` (the solver's own reason, or fixed edges, which no
    solver keeps yet), or None."""
    reason = spec.unsupported(inst)
    if reason or not len(inst.fixed_edges):
        return reason
    count = len(inst.fixed_edges)
    return (f"{inst.source} has {count} fixed edge{'s' if count > 1 else ''} "
            "(FIXED_EDGES_SECTION); tspcl's solvers cannot keep them yet: "
            "remove the section to solve without them")


def solve(inst: Instance, spec: SolverSpec, params, rt: Runtime, seed: int = 1,
          deadline: float | None = None, iterations: int | None = None,
          on_progress=None, started: float | None = None, chosen: str | None = None) -> Result:
    """Run ``spec`` on ``inst``; Ctrl-C (or another signal tspcl.interrupts handles)
    returns the best tour so far (interrupted=True), its length computed from the tour
    (a signal may stop SolveContext.improve between keeping the tour and its length).
    ``iterations`` replaces the solver's own budget (SolverSpec.with_budget): exact,
    whatever the timing; constructions have none.  ``chosen``: why --algo auto chose
    ``spec`` (kept in the result)."""
    from .errors import UsageError

    reason = unsolvable(inst, spec)
    if reason:
        raise UsageError(reason)
    if iterations is not None:
        params = spec.with_budget(params, iterations)
    plan_memory(rt, inst, spec, params)
    started = time.perf_counter() if started is None else started
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed, stopping(deadline),
                       on_progress, started=started)
    interrupted = False
    try:
        with solving(lambda: ctx.best_order is not None):
            spec.run(ctx, params)
    except KeyboardInterrupt:
        if ctx.best_order is None:
            raise
        interrupted = True
    optimum = known_optimum(inst)
    stopped = ("interrupted" if interrupted
               else "time limit" if ctx.time_cut or (deadline is not None and time.perf_counter() >= deadline)
               else "done")
    return Result(inst.name, inst.n, spec.name, params_dict(spec.effective(inst, params)), seed, rt.name,
                  ctx.best_order, inst.tour_length(ctx.best_order), optimum,
                  time.perf_counter() - started, ctx.kernel_seconds, ctx.iterations,
                  list(ctx.history), interrupted, list(ctx.notes),
                  bhh=bhh_estimate(inst) if optimum is None else None, chosen=chosen,
                  stopped=stopped)


__all__ = ["Progress", "Result", "STOP_REASONS", "Setup", "solve", "setup", "solver_params", "plan_memory"]
