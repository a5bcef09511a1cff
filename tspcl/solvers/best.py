"""The best tour of a batch of tours, kept on the device (kernels_cl/best.h), and the
device loop of the solvers whose every step ends with it (mmas, acs, ga): a colony's
ants or a pool's genes are measured, the batch's shortest and the global best kept with
their tours, and the host reads the status words only between batches of steps.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Callable

import numpy as np

from ..buffers import BufferPlan
from .base import SolveContext
from .device_loop import LONG_MAX, Launch, LoopStatus, enqueue_whole, word_defines


class BestWord(IntEnum):
    """The status words (long) of best.h keep_best, -D B_<NAME>."""

    ITER_BEST = 0      # the last batch's shortest length
    ITER_INDEX = 1     # and its tour's index (ant, gene)
    BEST = 2           # the global best length (LONG_MAX before the first)
    BEST_ITER = 3      # the iteration that found it
    RESTART_BEST = 4   # the best length since the last restart (mmas's trail reset)
    RESTART_ITER = 5   # the iteration that found it


BEST_DEFINES = word_defines("B_", BestWord)


def best_plan(n: int, restart: bool) -> BufferPlan:
    """BestOfBatch's buffers for tours of n cities: the best tour, with `restart` the
    best since the last restart too, and the status words."""
    plan = BufferPlan().add("best_tour", np.int32, n)
    if restart:
        plan = plan.add("best_restart_tour", np.int32, n)
    return plan.add("best_status", np.int64, len(BestWord))


class BestOfBatch:
    """The best tour and status of one run: ``enqueue`` keeps the best of `count` tours
    of n cities with kernels_cl/best.cl best_of_batch, or with `kernel` (built with
    BEST_DEFINES, its arguments best_of_batch's and then `extra`, mmas.cl mmas_best);
    `restart`: also keep the best tour since the last restart (``restart_tour``).  Its
    buffers are `best_plan`'s."""

    def __init__(self, ctx: SolveContext, count: int, restart: bool = False, kernel=None):
        rt, n = ctx.rt, ctx.inst.n
        self.rt, self.n, self.count = rt, n, count
        self.kernel = kernel or ctx.dinst.kernel("best", "best_of_batch", **BEST_DEFINES)
        self.group = rt.work_group_size(self.kernel, 256)
        bufs = best_plan(n, restart).allocate(rt)
        self.best_tour, self.status = bufs.best_tour, bufs.best_status
        self.restart_tour = bufs.best_restart_tour if restart else None
        self.status_host = np.zeros(len(BestWord), np.int64)

    def reset(self) -> None:
        """Enqueue the status of a run without a tour."""
        s = self.status_host
        s[:] = 0
        s[[BestWord.BEST, BestWord.RESTART_BEST]] = LONG_MAX
        s[[BestWord.BEST_ITER, BestWord.RESTART_ITER]] = -1
        self.rt.cl.enqueue_copy(self.rt.queue, self.status, s)

    def enqueue(self, lengths, tours, iteration: int, *extra):
        """Keep the best of the `count` tours (`tours`, their `lengths`) of `iteration`."""
        rt, b, lm = self.rt, self.group, self.rt.cl.LocalMemory
        return self.kernel(rt.queue, (b,), (b,), self.n, self.count, lengths, tours,
                           self.best_tour, self.restart_tour, self.status, iteration,
                           lm(8 * b), lm(4 * b), *extra)

    def forget_restart(self, iteration: int):
        """Enqueue a restart: the best since it is none yet, as of `iteration` (one copy
        of two words: RESTART_ITER follows RESTART_BEST)."""
        return self.rt.cl.enqueue_copy(self.rt.queue, self.status, np.array([LONG_MAX, iteration], np.int64),
                                       dst_offset=8 * BestWord.RESTART_BEST)

    def read(self) -> np.ndarray:
        self.rt.cl.enqueue_copy(self.rt.queue, self.status_host, self.status)
        return self.status_host.copy()


class StepRun:
    """The device loop's run (device_loop.SplitRun) of `steps` steps, each made of the
    launches (device_loop.Launch) that ``step(index, seed)`` returns and ending with
    `best`; at most `batch` steps between status reads.  ``plan(steps done, status
    words)`` runs after each batch (mmas picks its next trail reset there)."""

    def __init__(self, ctx: SolveContext, best: BestOfBatch, steps: int, batch: int,
                 step: Callable[[int, int], list], plan: Callable[[int, np.ndarray], None] | None = None):
        self.seed, self.best, self.steps, self.batch, self.step, self.plan = ctx.seed, best, steps, batch, step, plan
        self.done = 0
        self.words = best.status_host

    def batch_size(self, status: LoopStatus) -> int:
        return min(self.batch, self.steps - self.done)

    def enqueue(self, count: int) -> list:
        events = [e for j in range(count) for e in enqueue_whole(self.step(self.done + j, self.seed))]
        self.done += count
        return events

    def next_step(self) -> list:
        launches = self.step(self.done, self.seed)
        last = launches[-1]

        def last_counted(first: int, count: int) -> list:
            events = last.enqueue(first, count)
            if first + count == last.units:
                self.done += 1
            return events

        return launches[:-1] + [Launch(last.units, last_counted)]

    def read_status(self) -> LoopStatus:
        self.words = self.best.read()
        return LoopStatus(int(self.words[BestWord.BEST]), self.done, self.done >= self.steps)

    def best_buffer(self, status: LoopStatus):
        return self.best.best_tour

    def after_batch(self, status: LoopStatus) -> None:
        if self.plan is not None:
            self.plan(self.done, self.words)
