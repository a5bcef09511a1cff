"""Segment-parallel iterated local search (`pils`): thousands of kicks at once.

Every round partitions the cities into cells (k-d cells of the plane, or runs of the
tour where there are no coordinates); one work-group per cell runs a whole iterated
local search on the pieces of the tour inside it, in local memory (kernels_cl/pils.cl:
2-opt, Or-opt between pieces and Lin-Kernighan chains over the candidate lists; kicks
are double bridges or chain moves whose cities random walks find, a kicked cell kept
when it is no longer), all cells at once, with no host round trip per kick.  Every move keeps the
ends of every piece, so the improvements of all cells are kept together; pils_place
lays the tour out again.  Every cell is searched by as many copies (own draws) as fill
the device, and the best copy of each is kept: a tour that fits one cell runs as
replicas of the whole tour.  Each round takes the next of PARTITIONS k-d partitions (and a new cut of
the tour), so borders move, and every `polish_every` rounds the whole-tour local search
(kernels_cl/localsearch.cl, `polish` moves, every city queued) takes the moves across
cells (for polish_steps steps).  The rounds run through the device loop
(device_loop.run_device_loop); the host reads 8 bytes a round (the round's gain) and
the search's state words, and the tour only when it publishes a better one
(SolveContext.publish_due) and at the end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import UsageError
from ..instance import COORD_DIMS, Instance
from ..neighbors import CandidateParams, candidate_bytes
from ..params import param
from .base import MAX_COUNT, SolveContext, SolverSpec, check_count
from .construct import GreedyParams, run_greedy
from .device_loop import LoopStatus, run_device_loop
from .localsearch import (OPERATORS, DeviceSearch, LocalSearchParams, StateWord,
                          kick_budget, reversal_problem)
from .localsearch import _memory as local_search_memory

QUEUE_SLOTS = 32        # cities a cell's local search evaluates at once (pils.cl QCAP)
MAX_MOVES = 256         # moves one cell's search applies at most (pils.cl MAX_MOVES)
BRIDGE_SCALE = 1 << 16  # pils.cl draws kicks as double bridges below bridges * this
CELLS = ("auto", "kd", "tour")
MIN_CELL = 16           # the smallest cell worth a work-group
PARTITIONS = 8          # k-d partitions drawn and kept, used in turn
SCAN_CHUNK = 4096       # pils.cl SCAN_CHUNK
SCAN_WG = 256           # work-items of the scan kernels (divides SCAN_CHUNK)
GROUPS_PER_UNIT = 4     # work-groups a round runs per compute unit (copies of cells)
AUTO_KICKS_PER_CITY = 100  # kicks=auto without a time limit
STAGING_CITIES = 1 << 24  # cities the copies' staging holds at most (256 MiB)
MOST_GROUPS = 1024      # the memory plan's bound on GROUPS_PER_UNIT x compute units


@dataclass(frozen=True)
class SegmentIlsParams:
    """The segment-parallel ILS: kicks and a Lin-Kernighan search inside many cells of
    the tour at once, the whole tour polished between rounds."""

    RENAMED: ClassVar[dict] = {"m": "candidates", "neighbors": "candidate_kind",
                               "polish_m": "polish_candidates"}

    kicks: str = param("auto", "kicks in all: a count, a multiple of n (100n), or auto (until "
                       "the time limit, else 100n)")
    cells: str = param("auto", "kd (k-d cells of the coordinates), tour (runs of the tour) or "
                       "auto (kd where there are coordinates)")
    cell: int = param(0, "cities per cell at most (0: as many as local memory holds)")
    round_kicks: int = param(64, "kicks per cell per round")
    bridges: float = param(0.0, "share of the kicks that are double bridges (four joins "
                           "change, which no single move undoes); the others move a chain next to "
                           "a city near it (finer).  0.5 is far better at the few kicks a CPU "
                           "runs, 0 as good or better at a GPU's")
    window: int = param(200, "cities a chain kick moves at most")
    walk: int = param(40, "steps of each random walk over the candidates that finds a kick's "
                      "cities (linkern's walk kick)")
    depth: int = param(6, "2-opt steps of the cells' Lin-Kernighan chains (0: 2-opt and Or-opt "
                       "only)")
    candidates: int = param(8, "candidates per city in the cells' search (1 to 16)")
    candidate_kind: str = param("quadrant", "candidate lists: quadrant or knn")
    polish: str = param("lk", "the whole-tour local search between rounds: 2opt, oropt, "
                        "2opt+oropt, 3opt, lk or none")
    polish_every: int = param(1, "rounds between two polishes")
    polish_candidates: int = param(12, "candidates per city of the polish (1 to 50)")
    polish_steps: int = param(64, "passes over the queued cities each polish takes, the first "
                              "descent from the greedy tour too (1 or more)")
    group: int = param(128, "work-items of a cell's work-group: 32, 64, 128 or 256")

    def __post_init__(self):
        if self.kicks != "auto":
            kick_budget(self.kicks, 1)
        if self.cells not in CELLS:
            raise UsageError(f"cells must be one of {', '.join(CELLS)} (got {self.cells!r})")
        if self.cell:
            check_count("cell", self.cell, MIN_CELL, 65535, note=", or 0 for auto")
        check_count("round_kicks", self.round_kicks, 1, 1 << 20)
        if not 0 <= self.bridges <= 1:
            raise UsageError(f"bridges must be a share from 0 to 1 (got {self.bridges})")
        check_count("window", self.window, 3, 65535)
        check_count("walk", self.walk, 1, 1000)
        check_count("depth", self.depth, 0, 16)
        check_count("candidates", self.candidates, 1, 16)
        check_count("polish_candidates", self.polish_candidates, 1, 50)
        check_count("polish_every", self.polish_every, 1)
        check_count("polish_steps", self.polish_steps, 1)
        if self.group not in (32, 64, 128, 256):
            raise UsageError(f"group must be 32, 64, 128 or 256 (got {self.group!r})")
        if self.polish != "none" and self.polish not in OPERATORS:
            raise UsageError(f"polish must be none or one of {', '.join(OPERATORS)} (got {self.polish!r})")
        self.candidate_params()   # validates the kind and the list length

    def budget(self, n: int, time_limited: bool) -> int:
        """The kicks to run: as given; 'auto': until the time limit (at most MAX_COUNT),
        AUTO_KICKS_PER_CITY * n without one."""
        if self.kicks != "auto":
            return kick_budget(self.kicks, n)
        return MAX_COUNT if time_limited else min(AUTO_KICKS_PER_CITY * n, MAX_COUNT)

    def candidate_params(self) -> CandidateParams:
        """One candidate list serves both searches (the cells read its first `candidates`)."""
        k = max(self.candidates, self.polish_candidates)
        return CandidateParams(self.candidate_kind,
                               -(-k // 4) * 4 if self.candidate_kind == "quadrant" else k)

    def polish_params(self, m: int) -> LocalSearchParams:
        return LocalSearchParams(ls=self.polish if self.polish != "none" else "2opt",
                                 candidate_kind=self.candidate_kind, candidates=min(m, 50))


def local_bytes(length: int, m: int, local_xy: bool, group: int) -> int:
    """Local memory of one pils_round work-group of `group` work-items (pils.cl's arrays)."""
    per_city = 8 + (16 if local_xy else 0) + 6 * 2 + 2 * m + 1
    return length * per_city + QUEUE_SLOTS * 6 + 4 * (8 + 2 * 16) + group * 12


def longest_cell(m: int, local_mem: int, local_xy: bool, group: int) -> int:
    """The most cities one work-group's local memory holds (a multiple of 32): the
    kernels are built for it whatever the instance, so one build serves them all."""
    fits = 32
    while fits + 32 <= 65535 and local_bytes(fits + 32, m, local_xy, group) <= local_mem - 256:
        fits += 32
    return fits


def cell_size(p: SegmentIlsParams, fits: int) -> int:
    """Cities per cell at most: as asked, or as many as local memory holds (`fits`)."""
    return min(p.cell or fits, fits)


def kd_cells(points: np.ndarray, size: int, rng: np.random.Generator):
    """A k-d partition of the points into cells of at most `size`: each cell is split
    across its wider side at a random fraction (0.4-0.6) of its cities, so partitions
    drawn one after the other put their borders in other places.  Returns (members,
    first, cell_of): cell g's cities are members[first[g]:first[g + 1]]."""
    n = len(points)
    members = np.arange(n, dtype=np.int32)
    pending, ranges = [(0, n)], []
    while pending:
        lo, hi = pending.pop()
        if hi - lo <= size:
            ranges.append(lo)
            continue
        part = points[members[lo:hi]]
        axis = int(np.argmax(part.max(axis=0) - part.min(axis=0)))
        k = int((hi - lo) * rng.uniform(0.4, 0.6))
        members[lo:hi] = members[lo:hi][np.argpartition(part[:, axis], k, kind="introselect")]
        pending += [(lo, lo + k), (lo + k, hi)]
    first = np.array(sorted(ranges) + [n], dtype=np.int32)
    cell_of = np.empty(n, dtype=np.int32)
    cell_of[members] = np.repeat(np.arange(len(first) - 1, dtype=np.int32), np.diff(first))
    return members, first, cell_of


class DeviceCells:
    """The device side of the rounds: the partitions, the kernels and the copies' staging.

    Each round takes a partition (k-d cells drawn on the host, PARTITIONS of them in
    turn; runs of the tour without coordinates; one cell when the tour fits one) and
    runs `copies` work-groups on every cell, each with its own draws, so that cells x
    copies fill about GROUPS_PER_UNIT work-groups per compute unit; pils_pick keeps the
    best copy of each cell and pils_place lays the tour out again."""

    def __init__(self, ctx: SolveContext, cand, p: SegmentIlsParams, search: DeviceSearch):
        rt, inst = ctx.rt, ctx.inst
        n = inst.n
        local_xy = inst.has_coords and COORD_DIMS.get(inst.weight_type) == 2 and inst.weight_type != "GEO"
        m = min(p.candidates, cand.m)
        self.group = min(p.group, rt.limits.max_work_group)
        fits = longest_cell(m, rt.limits.local_mem, local_xy, self.group)
        self.size = cell_size(p, fits)
        self.kd = (p.cells == "kd" or (p.cells == "auto" and inst.has_coords)) and n > self.size
        defines = {"M": m, "L_MAX": fits, "WG": self.group, "QCAP": QUEUE_SLOTS,
                   "LOCAL_XY": int(local_xy), "MAX_MOVES": MAX_MOVES, "LK_DEPTH": p.depth}
        kernel = lambda name: ctx.dinst.kernel("pils", name, **defines)  # noqa: E731
        names = ("pils_round", "pils_pick", "pils_round_gain", "pils_positions", "pils_tour_cells",
                 "pils_place", "pils_scan_sums", "pils_scan_chunks", "pils_scan_apply")
        self.k = {name: kernel(name) for name in names}
        most = rt.work_group_size(self.k["pils_round"], self.group)
        if most < self.group:
            raise UsageError(f"group {self.group}: this device runs pils_round with at most {most} work-items")
        self.gain_wg = rt.work_group_size(self.k["pils_round_gain"], 256)
        self.ctx, self.rt, self.n, self.cand, self.p, self.search = ctx, rt, n, cand, p, search
        self.points = inst.coords[:, :COORD_DIMS.get(inst.weight_type, 2)] if self.kd else None
        self.draws = np.random.default_rng([ctx.seed, 0x63656C6C])   # "cell": the partitions
        self.partitions: list = []
        self.target = min(GROUPS_PER_UNIT * rt.limits.compute_units, MOST_GROUPS)
        self.most_copies = max_copies(n, -(-n // self.size), self.target)
        if not self.kd:
            cells = -(-n // self.size)
            first = (np.arange(cells + 1, dtype=np.int64) * n // cells).astype(np.int32)
            self.tour_cells = (rt.empty(4 * n), rt.to_device(first), rt.empty(4 * n), cells)
        self.staging = [rt.empty(4 * n * self.most_copies) for _ in range(4)]   # + delta
        self.local_of, self.shift = rt.empty(4 * n), rt.empty(4 * n)
        self.sums = rt.empty(4 * -(-n // SCAN_CHUNK))
        most_cells = n // MIN_CELL + 1
        self.gains = rt.empty(8 * max(most_cells, self.target))   # cells x copies at most
        self.cell_gain, self.round_gain = rt.empty(8 * most_cells), rt.empty(8)

    def _partition(self, round_no: int):
        """Round `round_no`'s k-d partition on the device: drawn the first time its
        turn comes, kept for the turns after."""
        while len(self.partitions) <= round_no % PARTITIONS:
            members, first, cell_of = kd_cells(self.points, self.size, self.draws)
            self.partitions.append(tuple(self.rt.to_device(a) for a in (members, first, cell_of))
                                   + (len(first) - 1,))
        return self.partitions[round_no % PARTITIONS]

    def cells_of(self, round_no: int):
        """(members, first, cell_of, cells) of round `round_no` (without k-d cells, filled
        from the tour by run_round)."""
        return self._partition(round_no) if self.kd else self.tour_cells

    def run_round(self, round_no: int, offset: int, descend: bool, budget: int) -> tuple[int, int, list]:
        """One round on the search's tour (its positions follow): round_kicks kicks per
        work-group, `budget` at most; returns the gain, the kicks and the events."""
        rt, cl, q, s, n, k = self.rt, self.rt.cl, self.rt.queue, self.search, np.int32(self.n), self.k
        seed, wg, events = self.ctx.seed, self.gain_wg, []
        members, first, cell_of, cells = self.cells_of(round_no)
        if not self.kd:
            events.append(k["pils_tour_cells"](q, (min(self.n, 1 << 16),), None, s.tour, n,
                                               np.int32(offset), first, np.int32(cells),
                                               members, cell_of))
        copies = max(1, min(self.most_copies, self.target // cells))
        groups = cells * copies
        kicks = min(groups * self.p.round_kicks, budget)
        staging, base, index, delta = self.staging
        events.append(cl.enqueue_fill_buffer(q, delta, np.int32(0), 0, 4 * self.n))
        events.append(k["pils_round"](
            q, (groups * self.group,), (self.group,), *self.ctx.dinst.dist_args,
            self.cand.cities, np.int32(self.cand.m), s.pos, members, first, cell_of,
            self.local_of, staging, base, index, delta, self.gains,
            np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32), np.uint32(round_no),
            np.int32(offset), np.int32(copies), np.int32(descend),
            np.int32(kicks // groups), np.int32(kicks % groups), np.int32(self.p.window),
            np.int32(self.p.walk), np.uint32(round(self.p.bridges * BRIDGE_SCALE))))
        events.append(k["pils_pick"](q, (cells * wg,), (wg,), self.gains, np.int32(copies), first, n,
                                     staging, base, index, delta, self.cell_gain,
                                     cl.LocalMemory(8 * wg), cl.LocalMemory(4 * wg)))
        events.append(k["pils_round_gain"](q, (wg,), (wg,), self.cell_gain, np.int32(cells),
                                           self.round_gain, cl.LocalMemory(8 * wg)))
        chunks = -(-self.n // SCAN_CHUNK)
        events.append(k["pils_scan_sums"](q, (chunks * SCAN_WG,), (SCAN_WG,), delta, n, self.sums,
                                          cl.LocalMemory(8 * SCAN_WG)))
        events.append(k["pils_scan_chunks"](q, (1,), (1,), self.sums, np.int32(chunks)))
        events.append(k["pils_scan_apply"](q, (chunks * SCAN_WG,), (SCAN_WG,), delta, n, self.sums,
                                           self.shift, cl.LocalMemory(4 * SCAN_WG)))
        events.append(k["pils_place"](q, (min(self.n, 1 << 16),), None, staging, base, index,
                                      self.shift, n, np.int32(offset), s.tour))
        events.append(k["pils_positions"](q, (min(self.n, 1 << 16),), None, s.tour, s.pos, n))
        gain = int(rt.read(self.round_gain, np.int64, 1)[0])
        return gain, kicks, events


def max_copies(n: int, fewest_cells: int, target: int) -> int:
    """The most copies of a cell a round runs: enough to fill `target` work-groups with
    the fewest cells a partition has (cells hold at most n / fewest_cells cities), and
    the copies' staging (16 bytes a city each) within STAGING_CITIES."""
    return max(1, min(target // fewest_cells, STAGING_CITIES // n))


def run_segment_ils(ctx: SolveContext, p: SegmentIlsParams) -> None:
    """Greedy start, a bounded whole-tour local search, then rounds of cell searches
    (CellRounds, through the device loop) until the kick budget is spent or ctx.stop."""
    n = ctx.inst.n
    run_greedy(ctx, GreedyParams())
    if n < 8 or ctx.best_length == 0:
        return  # too small for the moves' assumptions, or optimal: greedy is the result
    cand = ctx.candidates(p.candidate_params())
    search = DeviceSearch(ctx, cand, p.polish_params(cand.m))
    search.load(ctx.best_order, ctx.best_length)
    length = ctx.best_length
    if p.polish != "none":
        length, events = _polish(search, p.polish_steps)
        ctx.timed_span(events[0], events[-1])
    ctx.improve(ctx.read_tour(search.tour), 0, length)
    if n < MIN_CELL:
        return
    rounds = CellRounds(ctx, p, DeviceCells(ctx, cand, p, search), search, length)
    run_device_loop(ctx, rounds)
    ctx.notes.append(rounds.summary())


class CellRounds:
    """The rounds as the device loop runs them (device_loop.DeviceRun): a step is one
    round of the cells and, every polish_every rounds, polish_steps steps of the
    whole-tour search; the status is the tour's exact length (the rounds' gains and the
    search's sums) and the kicks done."""

    def __init__(self, ctx: SolveContext, p: SegmentIlsParams, cells: DeviceCells,
                 search: DeviceSearch, length: int):
        self.ctx, self.p, self.cells, self.search, self.length = ctx, p, cells, search, length
        self.budget = p.budget(ctx.inst.n, ctx.stop.remaining() is not None)
        self.draws = np.random.default_rng([ctx.seed, 0x70696C73])   # "pils": the rounds' offsets
        self.kicks = self.rounds = 0
        self.spent = {"cells": [0, 0.0], "polish": [0, 0.0]}   # gain and seconds of each phase

    def batch_size(self, status: LoopStatus) -> int:
        return 1

    def enqueue(self, count: int) -> list:
        events = []
        for _ in range(count):
            began = time.perf_counter()
            offset = int(self.draws.integers(self.ctx.inst.n))
            gain, kicks, round_events = self.cells.run_round(self.rounds, offset, self.rounds == 0,
                                                             self.budget - self.kicks)
            events += round_events
            self.length -= gain
            self.kicks += kicks
            self.rounds += 1
            polish_began = time.perf_counter()
            _tally(self.spent["cells"], gain, polish_began - began)
            if self.p.polish != "none" and self.rounds % self.p.polish_every == 0:
                self.search.restart(self.length)
                polished, polish_events = _polish(self.search, self.p.polish_steps)
                events += polish_events
                _tally(self.spent["polish"], self.length - polished, time.perf_counter() - polish_began)
                self.length = polished
        return events

    def read_status(self) -> LoopStatus:
        return LoopStatus(self.length, self.kicks, self.kicks >= self.budget)

    def best_buffer(self, status: LoopStatus):
        return self.search.tour

    def after_batch(self, status: LoopStatus) -> None:
        pass

    def summary(self) -> str:
        cells, polish = self.spent["cells"], self.spent["polish"]
        return (f"pils: {self.rounds} rounds; the cells gained {cells[0]} in {cells[1]:.1f} s, "
                f"the polish {polish[0]} in {polish[1]:.1f} s")


def _tally(phase: list, gain: int, seconds: float) -> None:
    phase[0] += gain
    phase[1] += seconds


def _polish(search: DeviceSearch, steps: int) -> tuple[int, list]:
    """`steps` steps of the whole-tour local search (those after its local optimum do
    nothing); returns the tour's length and the events."""
    events = search.enqueue(steps)
    return int(search.read_words()[StateWord.CUR_LEN]), events


def _memory(inst: Instance, p: SegmentIlsParams) -> int:
    n = inst.n
    k = p.candidate_params().k
    # the whole-tour search's buffers, the copies' staging, the gains, the scan and the
    # partitions
    return (local_search_memory(inst, p.polish_params(k)) - candidate_bytes(n, min(k, 50))
            + candidate_bytes(n, k) + 16 * max(n, min(n * MOST_GROUPS, STAGING_CITIES))
            + 16 * (n // MIN_CELL + 1 + MOST_GROUPS) + 4 * n * (5 + 3 * PARTITIONS))


SOLVERS = [
    SolverSpec("pils", "segment-parallel iterated local search: work-groups run 2-opt/"
               "Or-opt/LK ILS on the tour's pieces in k-d cells, in local memory, all at once",
               SegmentIlsParams, run_segment_ils, _memory,
               unsupported=lambda inst: reversal_problem(inst, "pils"),
               budget_param="kicks", memory_hint="fewer candidates (-p polish_candidates=8, -p candidates=4)"),
]
