"""2-opt on every tour of a population, one work-group per tour (kernels_cl/ant2opt.cl;
Skinderowicz 2020, section 5.7): the ants' tours of mmas and acs, the GA's initial genes
(init=2opt).  The tours are improved in place and their lengths written next to them.

The tour, its positions and the queue of cities to look at live in the work-group's
local memory as 16-bit cities when they fit (n < 65536 and 6n bytes beside the queue's
bits and the reduction), in global memory otherwise; the same kernel source serves
both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..buffers import BufferPlan
from ..device import DeviceLimits
from ..errors import UsageError
from ..neighbors import CandidateParams
from .base import SolveContext
from .device_loop import Launch

MOVES = ("chunk", "best")


@dataclass(frozen=True)
class PopulationTwoOptParams:
    """candidates: candidates per city (the paper's 32); threads: work-items per tour;
    split: work-items sharing one city's candidates (the paper gives a city a warp of
    32), so the group looks at threads / split cities at a time (128 and 4 were the
    fastest pair on the H100 for pr1002 and fl3795 with 800 ants, docs/notebook/mmas.md);
    memory: 'auto' keeps the tour in local memory when it fits, 'global' never does
    (the large-n path, forced to test it on small instances); moves: 'chunk' applies
    every move of a chunk of cities whose edges are still in the tour, 'best' only the
    chunk's best, as the paper's round does (section 5.7), the cities taken in tour
    order."""

    candidates: int = 32
    threads: int = 128
    split: int = 4
    memory: str = "auto"
    moves: str = "chunk"

    def __post_init__(self):
        if self.memory not in ("auto", "global"):
            raise ValueError(f"memory must be auto or global (got {self.memory!r})")
        if self.moves not in MOVES:
            raise ValueError(f"moves must be one of {', '.join(MOVES)} (got {self.moves!r})")


def local_args(n: int, threads: int, split: int, local_tour: bool) -> list[int]:
    """Bytes of the kernel's local arguments, in order: the tour, positions and queue
    (16-bit, when local), the queued bits, the reduction (a long, an int and four ints
    per work-item), the chunk's found-move bits."""
    return [6 * n if local_tour else 4, 4 * (-(-n // 32)), 8 * threads, 4 * threads,
            16 * threads, 4 * (-(-(threads // split) // 32))]


def local_bytes(n: int, threads: int, split: int, local_tour: bool) -> int:
    """Local memory of one tour's search, with the kernel's own variables."""
    return sum(local_args(n, threads, split, local_tour)) + 64


def tour_in_local(n: int, p: PopulationTwoOptParams, local_mem: int) -> bool:
    """Whether the search keeps a tour, its positions and queue in local memory (of
    `local_mem` bytes a work-group): p.memory 'auto', 16-bit cities, and room for them."""
    return p.memory == "auto" and n < 2**16 and local_bytes(n, p.threads, p.split, True) <= local_mem


def candidate_count(n: int, p: PopulationTwoOptParams) -> int:
    """Candidates per city the search builds and tries: p.candidates, at most n - 1."""
    return min(p.candidates, n - 1)


def two_opt_plan(n: int, count: int, p: PopulationTwoOptParams = PopulationTwoOptParams(),
                 limits: DeviceLimits | None = None) -> BufferPlan:
    """The search's buffer for `count` tours of n cities: every tour's positions and
    queue (two ints a city) in global memory, or one unused element where a device of
    `limits` keeps them in local memory (`tour_in_local`; None: the largest, global)."""
    local = limits is not None and tour_in_local(n, p, limits.local_mem)
    return BufferPlan().add("two_opt_work", np.int32, 0 if local else 2 * count * n)


class PopulationTwoOpt:
    """The compiled search for `count` tours of the context's instance, its buffer
    `two_opt_plan`'s."""

    def __init__(self, ctx: SolveContext, count: int, p: PopulationTwoOptParams):
        if not ctx.inst.symmetric:   # a reversal's gain assumes d(a, b) = d(b, a): it would not end
            raise UsageError("the 2-opt of the ants' and genes' tours reverses paths: symmetric "
                             "instances only (ATSP: ls=none, init=random)")
        rt, n = ctx.rt, ctx.inst.n
        self.ctx, self.n, self.count = ctx, n, count
        m = candidate_count(n, p)
        self.local_tour = tour_in_local(n, p, rt.limits.local_mem)
        self.split, self.best_move = p.split, p.moves == "best"
        self.kernel = self._build(ctx, m)
        self.group = rt.work_group_size(self.kernel, p.threads)
        if self.group < self.split:  # a device that runs fewer work-items per tour
            self.split = self.group
            self.kernel = self._build(ctx, m)
        cand = ctx.candidates(CandidateParams("knn", m))
        self.cand, self.cand_dist = cand.cities, cand.dists
        self.work = two_opt_plan(n, count, p, rt.limits).allocate(rt).two_opt_work  # positions, queue

    def _build(self, ctx: SolveContext, m: int):
        return ctx.dinst.kernel("ant2opt", "ant_two_opt", M=m, SPLIT=self.split,
                                LOCAL_TOUR=int(self.local_tour), BEST_MOVE=int(self.best_move))

    def enqueue(self, tours, lengths):
        """Improve the tours in place; their lengths go to `lengths` (the launch's event)."""
        return self._enqueue(tours, lengths, 0, self.count)

    def launch(self, tours, lengths) -> Launch:
        """The search as a launch of its tours, which the device loop may enqueue a
        slice of tours at a time (a tour's search does not depend on the others')."""
        return Launch(self.count, lambda first, count: [self._enqueue(tours, lengths, first, count)])

    def _enqueue(self, tours, lengths, first: int, count: int):
        rt, g = self.ctx.rt, self.group
        local = [rt.cl.LocalMemory(b) for b in local_args(self.n, g, self.split, self.local_tour)]
        return self.kernel(rt.queue, (count * g,), (g,), *self.ctx.dinst.dist_args, self.cand,
                           self.cand_dist, tours, self.work, lengths, *local,
                           global_offset=(first * g,) if first else None)
