"""Segment-parallel iterated local search (`pils`): thousands of kicks at once.

The tour is cut into segments of consecutive cities; one work-group per segment runs a
whole iterated local search on it in local memory (kernels_cl/pils.cl: 2-opt, Or-opt and
Lin-Kernighan chains over the candidate lists, segment-swap kicks, a kicked path kept
when it is no longer), all segments at once, with no host round trip per kick; an
instance that fits one work-group runs as replicas of the whole tour instead.  A round is one such launch;
each round draws new boundaries (an offset), so every edge is inside some segment, and
every `polish_every` rounds the whole-tour local search (kernels_cl/localsearch.cl,
`polish` moves, every city queued) takes the moves between segments.  The host reads 8
bytes a round (the round's gain) and the tour only when it publishes a better one
(SolveContext.publish_due) and at the end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from ..instance import COORD_DIMS, Instance
from ..neighbors import CandidateParams, candidate_bytes
from .base import MAX_COUNT, SolveContext, SolverSpec, check_count
from .construct import GreedyParams, run_greedy
from .localsearch import (OPERATORS, S_CUR_LEN, S_DONE, DeviceSearch, LocalSearchParams,
                          kick_budget, reversal_problem)
from .localsearch import _memory as local_search_memory

WORK_GROUP = 64         # work-items per segment
QUEUE_SLOTS = 32        # cities a segment's local search evaluates at once (pils.cl QCAP)
MAX_MOVES = 256         # moves one segment search applies at most (pils.cl MAX_MOVES)
MIN_SEGMENT = 16        # the smallest segment worth a work-group
REPLICAS_PER_UNIT = 4   # small instances: replicas of the whole tour per compute unit
AUTO_KICKS_PER_CITY = 100  # kicks=auto without a time limit
POLISH_BATCH = 16       # local-search steps between two status reads while polishing
REPLICA_TOURS = 1024    # replicas' tours the memory plan allows for (4 per unit on 256 units)


@dataclass(frozen=True)
class SegmentIlsParams:
    """kicks: segment swaps in all, a count or a multiple of n ('100n'), or 'auto': until
    the time limit, or 100n without one; segment: cities per segment (0: as many as
    local memory holds); round_kicks: kicks per segment per round; window: positions a
    kick spans at most; depth: 2-opt steps of the segments' Lin-Kernighan chains (0:
    2-opt and Or-opt only); m: candidates per city in the segments' search; neighbors:
    quadrant or knn; polish: the whole-tour local search between rounds (2opt, oropt,
    2opt+oropt, 3opt, lk, or none), every `polish_every` rounds, over `polish_m`
    candidates."""

    kicks: str = "auto"
    segment: int = 0
    round_kicks: int = 64
    window: int = 50
    depth: int = 6
    m: int = 8
    neighbors: str = "quadrant"
    polish: str = "lk"
    polish_every: int = 1
    polish_m: int = 12

    def __post_init__(self):
        if self.kicks != "auto":
            kick_budget(self.kicks, 1)
        if self.segment:
            check_count("segment", self.segment, MIN_SEGMENT, 65535, note=", or 0 for auto")
        check_count("round_kicks", self.round_kicks, 1, 1 << 20)
        check_count("window", self.window, 3, 65535)
        check_count("depth", self.depth, 0, 16)
        check_count("m", self.m, 1, 16)
        check_count("polish_m", self.polish_m, 1, 50)
        check_count("polish_every", self.polish_every, 1)
        if self.polish != "none" and self.polish not in OPERATORS:
            raise UsageError(f"polish must be none or one of {', '.join(OPERATORS)} (got {self.polish!r})")
        self.candidates()   # validates the kind and the list length

    def budget(self, n: int, time_limited: bool) -> int:
        """The kicks to run: as given; 'auto': until the time limit (at most MAX_COUNT),
        AUTO_KICKS_PER_CITY * n without one."""
        if self.kicks != "auto":
            return kick_budget(self.kicks, n)
        return MAX_COUNT if time_limited else min(AUTO_KICKS_PER_CITY * n, MAX_COUNT)

    def candidates(self) -> CandidateParams:
        """One candidate list serves both searches (the segments read its first m)."""
        k = max(self.m, self.polish_m)
        return CandidateParams(self.neighbors, -(-k // 4) * 4 if self.neighbors == "quadrant" else k)

    def polish_params(self, m: int) -> LocalSearchParams:
        return LocalSearchParams(ls=self.polish if self.polish != "none" else "2opt",
                                 neighbors=self.neighbors, m=min(m, 50))


def local_bytes(length: int, m: int, local_xy: bool) -> int:
    """Local memory of one pils_round work-group (pils.cl's arrays)."""
    per_city = 4 + (16 if local_xy else 0) + 3 * 2 + 2 * m + 1
    return length * per_city + QUEUE_SLOTS * 6 + 8 * 4 + WORK_GROUP * 12


def longest_segment(m: int, local_mem: int, local_xy: bool) -> int:
    """The most cities one work-group's local memory holds (a multiple of 32): the
    kernels are built for it whatever the instance, so one build serves them all."""
    fits = 32
    while fits + 32 <= 65535 and local_bytes(fits + 32, m, local_xy) <= local_mem - 256:
        fits += 32
    return fits


def segment_count(p: SegmentIlsParams, n: int, fits: int) -> int:
    """How many segments the tour is cut into: segments of the asked length, or as long
    as local memory holds (`fits` cities; docs/notebook/pils.md: 1024 beat 128-162 on
    d18512 and pla85900), never shorter than MIN_SEGMENT.  1: the whole tour fits one
    work-group (replicas)."""
    if n <= fits and (not p.segment or p.segment >= n):
        return 1
    return max(2, min(-(-n // min(p.segment or fits, fits)), n // MIN_SEGMENT))


class DeviceSegments:
    """The device side of the rounds: the kernels, the next tour(s) and the gains.

    Segments: the tour is cut into `groups` segments, one work-group each.  Replicas
    (the whole tour fits one work-group): `groups` work-groups each search the whole
    tour from its own cut and draws, and the best of them is the round's tour."""

    def __init__(self, ctx: SolveContext, cand, p: SegmentIlsParams, search: DeviceSearch):
        rt, inst = ctx.rt, ctx.inst
        n = inst.n
        local_xy = inst.has_coords and COORD_DIMS.get(inst.weight_type) == 2 and inst.weight_type != "GEO"
        units = rt.limits.compute_units
        m = min(p.m, cand.m)
        fits = longest_segment(m, rt.limits.local_mem, local_xy)
        segments = segment_count(p, n, fits)
        self.replicas = segments == 1
        self.groups = min(REPLICAS_PER_UNIT * units, REPLICA_TOURS) if self.replicas else segments
        defines = {"M": m, "L_MAX": fits, "WG": WORK_GROUP, "QCAP": QUEUE_SLOTS,
                   "LOCAL_XY": int(local_xy), "MAX_MOVES": MAX_MOVES, "LK_DEPTH": p.depth}
        self.round_k = ctx.dinst.kernel("pils", "pils_round", **defines)
        self.positions_k = ctx.dinst.kernel("pils", "pils_positions", **defines)
        self.gain_k = ctx.dinst.kernel("pils", "pils_round_gain", **defines)
        self.gain_wg = rt.work_group_size(self.gain_k, 256)
        self.ctx, self.rt, self.n, self.cand, self.p, self.search = ctx, rt, n, cand, p, search
        self.next_tours = rt.empty(4 * n * (self.groups if self.replicas else 1))
        self.gains = rt.empty(8 * self.groups)
        self.round_gain = rt.empty(8)

    def run_round(self, round_no: int, offset: int, descend: bool, kicks: int) -> int:
        """One round of `kicks` kicks in all on the search's tour (its positions follow);
        returns the gain."""
        rt, cl, q, s, n = self.rt, self.rt.cl, self.rt.queue, self.search, np.int32(self.n)
        seed, groups, wg = self.ctx.seed, self.groups, self.gain_wg
        events = [self.round_k(
            q, (groups * WORK_GROUP,), (WORK_GROUP,), *self.ctx.dinst.dist_args,
            self.cand.cities, np.int32(self.cand.m), s.tour, s.pos, self.next_tours, self.gains,
            np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32), np.uint32(round_no),
            np.int32(offset), np.int32(groups), np.int32(self.replicas), np.int32(descend),
            np.int32(kicks // groups), np.int32(kicks % groups), np.int32(self.p.window))]
        events.append(self.gain_k(q, (wg,), (wg,), self.gains, np.int32(groups),
                                  np.int32(self.replicas), self.next_tours, s.tour, n,
                                  self.round_gain, cl.LocalMemory(8 * wg), cl.LocalMemory(4 * wg)))
        if not self.replicas:
            events.append(cl.enqueue_copy(q, s.tour, self.next_tours))
        events.append(self.positions_k(q, (min(self.n, 1 << 16),), None, s.tour, s.pos, n))
        gain = int(rt.read(self.round_gain, np.int64, 1)[0])
        self.ctx.timed_span(events[0], events[-1])
        return gain


def run_segment_ils(ctx: SolveContext, p: SegmentIlsParams) -> None:
    """Greedy start, whole-tour local search, then rounds of segment searches until the
    kick budget is spent or ctx.stop says so."""
    n = ctx.inst.n
    run_greedy(ctx, GreedyParams())
    if n < 8 or ctx.best_length == 0:
        return  # too small for the moves' assumptions, or optimal: greedy is the result
    cand = ctx.candidates(p.candidates())
    search = DeviceSearch(ctx, cand, p.polish_params(cand.m))
    search.load(ctx.best_order, ctx.best_length)
    length = _polish(ctx, search) if p.polish != "none" else ctx.best_length
    ctx.improve(ctx.read_tour(search.tour), 0)
    if n < MIN_SEGMENT:
        return
    segments = DeviceSegments(ctx, cand, p, search)
    budget = p.budget(n, ctx.stop.remaining() is not None)
    per_round = segments.groups * p.round_kicks
    draws = np.random.default_rng([ctx.seed, 0x70696C73])   # "pils": the rounds' offsets
    kicks, round_no, round_s = 0, 0, 0.0
    while kicks < budget and not ctx.stop(kicks):
        left = ctx.stop.remaining()
        if left is not None and round_no and round_s > left:
            break   # the next round would end past the time limit
        began = time.perf_counter()
        offset = int(draws.integers(n))
        count = min(per_round, budget - kicks)
        length -= segments.run_round(round_no, offset, round_no == 0, count)
        round_no += 1
        kicks += count
        if p.polish != "none" and round_no % p.polish_every == 0:
            search.restart(length)
            length = _polish(ctx, search, kicks)
        round_s = time.perf_counter() - began
        if ctx.publish_due(length):
            ctx.improve(ctx.read_tour(search.tour), kicks)
    ctx.improve(ctx.read_tour(search.tour), kicks)
    ctx.iterations = kicks


def _polish(ctx: SolveContext, search: DeviceSearch, kicks: int = 0) -> int:
    """The whole-tour local search to its local optimum, or until ctx.stop (the time
    limit: a million cities' first descent alone takes about a minute); returns the
    tour's length (every batch leaves a whole tour)."""
    state = search.run_batch(POLISH_BATCH)
    while not state[S_DONE] and not ctx.stop(kicks):
        if ctx.publish_due(int(state[S_CUR_LEN])):
            ctx.improve(ctx.read_tour(search.tour), kicks)
        state = search.run_batch(POLISH_BATCH)
    return int(state[S_CUR_LEN])


def _memory(inst: Instance, p: SegmentIlsParams) -> int:
    n = inst.n
    k = p.candidates().k
    # the whole-tour search's buffers, the next tour (replicas: one each, at most
    # REPLICA_TOURS) and one gain per work-group
    return (local_search_memory(inst, p.polish_params(k)) - candidate_bytes(n, min(k, 50))
            + candidate_bytes(n, k) + 4 * n * REPLICA_TOURS + 8 * (n // MIN_SEGMENT + REPLICA_TOURS))


SOLVERS = [
    SolverSpec("pils", "segment-parallel iterated local search: a work-group per tour "
               "segment (small tours: per replica) runs 2-opt/Or-opt/LK ILS in local memory",
               SegmentIlsParams, run_segment_ils, _memory,
               unsupported=lambda inst: reversal_problem(inst, "pils"),
               budget_param="kicks", memory_hint="fewer candidates (-p polish_m=8, -p m=4)"),
]
