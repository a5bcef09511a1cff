"""What every solver gets (SolveContext) and what it is registered with (SolverSpec)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..buffers import BufferPlan
from ..device import Runtime
from ..device_instance import DeviceInstance, instance_plan
from ..errors import UsageError
from ..instance import Instance
from ..neighbors import CandidateParams, Candidates, build_candidates, candidate_plan
from ..params import convert, typed_values
from ..stop import AnyOf

PUBLISH_S = 1.0   # a solver reads a better device tour back at most this often (publish_due)

# The bounds of solver parameters, checked by check_count when the parameters are made
# (SolverSpec.params_from, or a Params dataclass itself), before anything is allocated.
MAX_COUNT = 2**31 - 1   # iterations, ants, genes, tenure, ...: what a kernel's int holds
MAX_BATCH = 10_000      # steps (launch sequences) enqueued between two status reads
MAX_CANDIDATES = 1024   # candidate list lengths (kernels keep a city's list in private arrays)
MAX_SEED = 2**64 - 1    # seeds are two 32-bit Philox key words


def check_count(name: str, value: int, lo: int = 0, hi: int = MAX_COUNT, note: str = "") -> None:
    """The one check of a whole-number parameter: UsageError unless lo <= value <= hi
    (`note`, e.g. ", 0 for n", follows the range in the message)."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise UsageError(f"{name} must be {lo} to {hi}{note} (got {value!r})")


@dataclass
class Progress:
    """One improvement: seconds since the run began, iteration, best length."""

    elapsed: float
    iteration: int
    best_length: int


@dataclass
class SolveContext:
    """A solver's whole world: the device, the instance on it, the seed, when to stop.

    Solvers publish every new best tour with :meth:`improve`; the driver keeps it on
    the host so that a time limit or Ctrl-C can still write it out.  ``notes`` are lines
    a solver wants the user to see (e.g. the launch geometry thread control chose).
    """

    rt: Runtime
    dinst: DeviceInstance
    seed: int
    stop: AnyOf = field(default_factory=AnyOf)
    on_progress: Callable[[Progress], None] | None = None
    started: float = field(default_factory=time.perf_counter)
    best_order: np.ndarray | None = None
    best_length: int | None = None
    history: list = field(default_factory=list)
    kernel_seconds: float = 0.0
    iterations: int = 0
    notes: list = field(default_factory=list)
    time_cut: bool = False           # the run stopped where its time limit left no room
    _candidates: dict = field(default_factory=dict)
    _kept_at: float | None = None   # when improve last kept a tour (publish_due's clock)

    @property
    def inst(self) -> Instance:
        return self.dinst.inst

    def candidates(self, params: CandidateParams) -> Candidates:
        """Candidate lists, built once per parameters and shared by every phase."""
        if params not in self._candidates:
            cand = build_candidates(self.dinst, params)
            self.kernel_seconds += cand.kernel_seconds
            self._candidates[params] = cand
        return self._candidates[params]

    def timed(self, events) -> None:
        """Add finished OpenCL events' device time to the run's kernel seconds."""
        for e in events if isinstance(events, (list, tuple)) else [events]:
            e.wait()
            self.kernel_seconds += (e.profile.end - e.profile.start) * 1e-9

    def timed_span(self, first, last) -> None:
        """Add the device time from the start of event `first` to the end of `last`
        (a batch of many launches; reading every event's profile would cost more)."""
        last.wait()
        self.kernel_seconds += (last.profile.end - first.profile.start) * 1e-9

    def improve(self, order: np.ndarray, iteration: int, device_length: int | None = None,
                final: bool = False) -> bool:
        """Offer a tour (host copy, 0-based); keeps it if shorter, or with `final` (a run's
        last offer) if no longer: a search may end on another tour of the best length
        than the one read back earlier, and which one was read depends on when the reads
        came (publish_due), so the tour a run ends with is its last.  Length is exact.
        The history gets it unless :meth:`reached` already recorded its length.
        `device_length`, the length the device computed for it, must equal the exact one
        (RuntimeError otherwise: a kernel's sums went wrong)."""
        length = self.inst.tour_length(order)
        if device_length is not None and device_length != length:
            raise RuntimeError(f"the device's tour length {device_length} is not the tour's "
                               f"exact length {length}")
        self.iterations = max(self.iterations, iteration)
        if self.best_length is not None and (length > self.best_length
                                             or (length == self.best_length and not final)):
            return False
        self.best_order = np.asarray(order, np.int64).copy()
        self.best_length = length
        self._kept_at = time.perf_counter()
        self._record(length, iteration)
        return True

    def reached(self, length: int, iteration: int) -> None:
        """Record that the device holds a tour of `length` now, before its tour is read
        back (that waits for publish_due): `length` must be the device's exact integer
        sum, which the next :meth:`improve` of that tour recomputes on the host.  Lets
        the history (log, progress) say when a length was reached, to the batch, while
        the tour crosses the bus at most every PUBLISH_S seconds."""
        self._record(length, iteration)

    def _record(self, length: int, iteration: int) -> None:
        if self.history and length >= self.history[-1].best_length:
            return
        p = Progress(time.perf_counter() - self.started, iteration, length)
        self.history.append(p)
        if self.on_progress is not None:
            self.on_progress(p)

    def publish_due(self, length: int) -> bool:
        """Whether a device's best tour of `length` should be read back now: it is
        shorter than the best kept, and the last one was kept PUBLISH_S seconds ago (or
        the run began that long ago).  Between, a solver reads back only its status."""
        since = time.perf_counter() - (self._kept_at or self.started)
        return (self.best_length is None or length < self.best_length) and since >= PUBLISH_S

    def read_tour(self, buf) -> np.ndarray:
        return self.rt.read(buf, np.int32, self.inst.n).astype(np.int64)


def shared_plan(inst: Instance, *candidate_counts: int) -> BufferPlan:
    """The buffers every run shares with its solver's own: the instance's, and one
    candidate list for each of `candidate_counts` (cities a city) the solver builds."""
    plan = instance_plan(inst)
    for i, k in enumerate(candidate_counts):
        plan = plan.merge(candidate_plan(inst.n, k, f"candidates{i}"))
    return plan


@dataclass(frozen=True)
class SolverSpec:
    """A registered algorithm.

    ``buffers(instance, params, limits)`` is the run's `BufferPlan`: every device buffer
    it makes (the instance's, the candidate lists', the solver's own), from which the
    memory check adds up the bytes and the largest buffer before anything is allocated
    and the solver allocates its own; ``limits`` are the device's (`DeviceLimits`), or
    None for the largest plan any device would get (`tspcl info`).
    ``unsupported(instance)`` says why an instance cannot be solved, or None.
    ``deterministic`` solvers give the same tour on every device for the same seed.
    ``racy(params)`` says why runs with those parameters are not bit-reproducible even on
    one device (a paper's relaxed updates), or None; ``repro_params`` are the parameter
    sets that scripts/repro_check.py runs (default: the defaults alone);
    ``effective(instance, params)`` the parameters as a run on that instance uses them,
    defaults that depend on it filled in (ants = 0 is n ants, ...), which results,
    tours' COMMENT lines and benchmark rows report.  ``budget_param`` names the
    parameter that bounds the run's iterations (the device counts it, so a budget is
    exact whatever the timing): :func:`tspcl.run.solve`'s ``iterations`` goes there
    (:meth:`with_budget`); None for a solver without iterations (constructions).
    ``memory_hint`` says which of its options need less device memory, written as
    options (``-p key=value``, ``--flag value``) so that a test can try them; it ends
    the message of a run refused for memory.
    """

    name: str
    summary: str
    params_type: type
    run: Callable[[SolveContext, object], None]
    buffers: Callable[[Instance, object, object], BufferPlan]
    deterministic: bool = True
    unsupported: Callable[[Instance], str | None] = lambda inst: None
    racy: Callable[[object], str | None] = lambda params: None
    repro_params: tuple = ()
    effective: Callable[[Instance, object], object] = lambda inst, params: params
    budget_param: str | None = None
    memory_hint: str | None = None

    def has_param(self, name: str) -> bool:
        return any(f.name == name for f in dataclasses.fields(self.params_type))

    def typed(self, values: dict[str, str]) -> dict:
        """Field -> typed value of KEY=VALUE strings (:func:`tspcl.params.typed_values`)."""
        return typed_values(self.params_type, values, self.name)

    def params_from(self, values: dict[str, str]):
        """Parameters from KEY=VALUE strings, typed by the dataclass's defaults."""
        return self.params_type(**self.typed(values))

    def with_budget(self, params, iterations: int):
        """`params` with `iterations` as the run's budget (``budget_param``, checked as
        a value given with -p would be); unchanged for a solver without one."""
        if self.budget_param is None:
            return params
        value = convert(self.params_type, self.budget_param, str(iterations), "iterations")
        return dataclasses.replace(params, **{self.budget_param: value})
