"""The host's loop over an iterating device solver (mmas, acs, ga, the local searches,
hill climbing and tabu search): steps enqueued in batches, a few bytes of status read
after each batch, the best tour read back only when SolveContext.publish_due says so and
at the end.  A solver's iteration budget is its own, counted on the device or by the
steps it enqueues (its status says when it is done); the loop stops early only for the
host's rules, time and interrupts (``ctx.stop``).

Under a time limit no step is started that would end past it, by the time the steps
before took; a run whose steps are made of `Launch`es of independent units (ants,
genes' crossovers, tours' 2-opt: a `SplitRun`) has the step whose time is not known yet
enqueued in slices of units, the clock read between them, so that not even the first
step can overrun the limit by more than a slice.

Also the one way status layouts reach the kernels: a layout is an IntEnum of word
positions, passed to every program that reads or writes those words as build defines
(:func:`word_defines`), so that host and kernels cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Callable, Protocol, runtime_checkable

from .base import SolveContext

LONG_MAX = 2**63 - 1    # a status length before any tour
SLICE_GROWTH = 4        # a step's slice holds at most this many times the units of the one before


def word_defines(prefix: str, words: type[IntEnum]) -> dict[str, int]:
    """Build defines naming each word of a status layout: prefix + name -> position."""
    return {prefix + w.name: int(w) for w in words}


@dataclass(frozen=True)
class LoopStatus:
    """What the loop reads after a batch: the device's best length (LONG_MAX while it has
    no tour), the iterations the solver reports (colony iterations, generations, kicks,
    moves), and whether the run is over on the device (budget spent, local optimum)."""

    best_length: int
    iterations: int
    done: bool


@dataclass(frozen=True)
class Launch:
    """One launch of a step over `units` independent units (the work-groups of an ant,
    a gene's crossover, a tour's 2-opt; acs-gpu's construction steps, each a launch):
    ``enqueue(first, count)`` enqueues units first to first + count - 1 and returns
    their events.  Enqueued in any slices, in order, the units do what one launch of
    them all does (kernels index a unit by common.h group_index, never by the slice)."""

    units: int
    enqueue: Callable[[int, int], list]

    @staticmethod
    def whole(enqueue: Callable[[], list]) -> "Launch":
        """A launch that is one unit: `enqueue()` enqueues it all."""
        return Launch(1, lambda first, count: enqueue())


def enqueue_whole(launches: list) -> list:
    """Enqueue every unit of `launches` at once (their events)."""
    return [e for launch in launches for e in launch.enqueue(0, launch.units)]


class DeviceRun(Protocol):
    """One iterating solver's device side, as the loop drives it."""

    def batch_size(self, status: LoopStatus) -> int:
        """The most steps the next batch may hold (at least 1)."""

    def enqueue(self, count: int) -> list:
        """Enqueue the next `count` steps; their events in order (at least one)."""

    def read_status(self) -> LoopStatus:
        """Read the status words back (blocking: the batch has run)."""

    def best_buffer(self, status: LoopStatus):
        """The device buffer holding the best tour that `status` tells of."""

    def after_batch(self, status: LoopStatus) -> None:
        """What the solver decides between batches (trail resets, thread control)."""


@runtime_checkable
class SplitRun(DeviceRun, Protocol):
    """A run whose step the loop may enqueue in slices of units."""

    def next_step(self) -> list:
        """The next step's launches (`Launch`), not yet enqueued; the step counts as
        done (its status says so) once they all are."""


def enqueue_sliced(ctx: SolveContext, launches: list) -> tuple[list, bool]:
    """Enqueue one step's launches in slices of units, waiting for each and reading the
    time limit's clock between them: a slice holds the units that fit in the time left
    at the time a unit of the slice before took (the first slice of a launch, one unit),
    at most SLICE_GROWTH times as many.  Returns the events and whether the step was
    enqueued whole (False: the time ran out first and the rest was not started)."""
    events = []
    for launch in launches:
        first, size, unit_s = 0, 0, None
        while first < launch.units:
            left = ctx.stop.remaining()
            if unit_s is None:
                size = 1
            else:
                fit = int(left / unit_s) if unit_s > 0 else launch.units
                size = min(launch.units - first, fit, SLICE_GROWTH * size)
            if size == 0 or left <= 0:
                return events, False
            events += launch.enqueue(first, size)
            ctx.rt.queue.finish()
            unit_s = (left - ctx.stop.remaining()) / size
            first += size
    return events, True


def run_device_loop(ctx: SolveContext, run: DeviceRun) -> None:
    """Run batches of steps until the device is done or ``ctx.stop``.

    After each batch the status is read and handed to ``run.after_batch``, the batch's
    device time is added, the device's best length goes into the history
    (``ctx.reached``: a log says when each length was reached, to the batch), and the
    best tour is published if ``ctx.publish_due``, its exact host length checked against
    the status's.  At the end the best tour, if the device has one, is published (kept
    when no longer than the one published before: the run's tour does not depend on
    when the earlier reads came), and
    ``ctx.iterations`` is set to the iterations the status reports.

    Under a time limit a batch holds only the steps that fit in the time left, each
    taken to last as long as one of the batch before did, and no step is started that
    would end past the limit: a step once enqueued runs to its end, so a whole batch of
    slow steps (PoCL, ants = n, 2-opt) would overrun the limit.  The first batch is one
    step; a `SplitRun`'s is enqueued in slices (:func:`enqueue_sliced`) and abandoned
    where the limit comes first, its status read again (mmas, acs and ga keep their best
    at a step's end, so the one before the step stands; pils' and its polish's slices
    leave a whole tour).
    Without a time limit the batches, and so the run, do not depend on time.
    """
    status = run.read_status()
    step_s = None   # how long a step of the last batch took, on the time limit's clock
    while not status.done and not ctx.stop(status.iterations):
        count = run.batch_size(status)
        left = ctx.stop.remaining()
        sliced = left is not None and step_s is None and isinstance(run, SplitRun)
        if sliced:
            events, whole = enqueue_sliced(ctx, run.next_step())
            ctx.timed(events)   # one by one: the slices' spans hold the host's waits
            if not whole:
                status = run.read_status()
                ctx.time_cut = True
                break
            count = 1
        else:
            if left is not None:
                if step_s is None:
                    fit = 1
                elif step_s > 0:
                    fit = int(left / step_s)
                else:   # a clock too coarse to see the batch
                    fit = count
                if fit == 0:
                    ctx.time_cut = True
                    break
                count = min(count, fit)
            events = run.enqueue(count)
        status = run.read_status()
        if left is not None:
            step_s = (left - ctx.stop.remaining()) / count
        run.after_batch(status)
        if not sliced:
            ctx.timed_span(events[0], events[-1])
        if status.best_length != LONG_MAX:
            ctx.reached(status.best_length, status.iterations)
        if ctx.publish_due(status.best_length):
            ctx.improve(ctx.read_tour(run.best_buffer(status)), status.iterations, status.best_length)
    if status.best_length != LONG_MAX:
        ctx.improve(ctx.read_tour(run.best_buffer(status)), status.iterations, status.best_length,
                    final=True)
    ctx.iterations = status.iterations
