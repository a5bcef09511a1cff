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
(kernels_cl/localsearch.cl, `polish` moves) takes the moves across cells (for
polish_steps steps), from the cities whose edges the rounds changed since the last
polish and those it left queued (pils_touched; the first descent from every city).
The rounds run through the device loop (device_loop.run_device_loop); the host reads 8
bytes a round (the round's gain) and the search's state words (every POLISH_CHUNK
steps of a polish), and the tour only when it publishes a better one
(SolveContext.publish_due) and at the end.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from ..errors import UsageError
from ..instance import COORD_DIMS, Instance
from ..buffers import BufferPlan
from ..neighbors import CandidateParams
from ..params import auto_or_number, param
from .base import MAX_COUNT, SolveContext, SolverSpec, check_count, shared_plan
from .construct import SOLVERS as CONSTRUCTIONS, edge_keys, greedy_plan, qb_plan
from .device_loop import SLICE_GROWTH, Launch, LoopStatus, enqueue_whole, run_device_loop
from .localsearch import (LK_BREADTHS, LK_DEPTHS, OPERATORS, DeviceSearch, LocalSearchParams,
                          StateWord, kick_budget, reversal_problem, search_plan)

QUEUE_SLOTS = 32        # cities a cell's local search evaluates at once (pils.cl QCAP)
MAX_MOVES = 256         # steps one local search of a cell takes at most (pils_search.h MAX_MOVES)
BRIDGE_SCALE = 1 << 16  # pils.cl draws kicks as double bridges below bridges * this
CELLS = ("auto", "kd", "tour")
STARTS = {spec.name: spec for spec in CONSTRUCTIONS if spec.name in ("greedy", "qb")}  # init
COORDS = ("auto", "local", "global")
BALANCES = ("auto", "kicks", "steps")   # balance: what a round's work-groups share out
MIN_CELL = 16           # the smallest cell worth a work-group
PARTITIONS = 8          # k-d partitions drawn and kept, used in turn
SCAN_CHUNK = 4096       # entries a group of pils_scan_sums adds (a build define)
SCAN_WG = 256           # work-items of the scan kernels (divides SCAN_CHUNK)
SPAN_PIECES = 64        # pieces a span holds at most (a build define; joint[] numbers them in a uchar)
REJOIN_INTS = 1 + 3 * SPAN_PIECES   # a span's record (pils.cl REJOIN_INTS)
MOST_SPANS = 64         # spans a round at most
SPAN_SHARE = 8          # spans=auto: a span for every this many cells of a round
GROUPS_PER_UNIT = 4     # work-groups a round runs per compute unit (copies of cells)
POLISH_CHUNK = 8        # polish steps enqueued between two reads of the search's words
AUTO_KICKS_PER_CITY = 100  # kicks=auto without a time limit
AUTO_BRIDGES = {"span": 0.5, "replica": 0.5, "cell": 0.0}  # bridges=auto, by cell
STAGING_CITIES = 1 << 24  # cities the copies' staging holds at most (256 MiB)
MOST_GROUPS = 1024      # the memory plan's bound on GROUPS_PER_UNIT x compute units
QB_MOST = 200_000       # init=auto's most cities for qb: its scans for the cities whose
                        # candidate list is used up grow as n^2 (a million: 30 s, greedy 9 s)
LATTICE = 0.5           # init=auto: qb where this share of the cities, or more, have their
                        # two nearest cities exactly as near (docs/notebook/pils.md)


@dataclass(frozen=True)
class SegmentIlsParams:
    """The segment-parallel ILS: kicks and a Lin-Kernighan search inside many cells of
    the tour at once, the whole tour polished between rounds."""

    RENAMED: ClassVar[dict] = {"m": "candidates", "neighbors": "candidate_kind",
                               "polish_m": "polish_candidates"}

    kicks: str = param("auto", "kicks in all: a count, a multiple of n (100n), or auto (until "
                       "the time limit, else 100n)")
    init: str = param("auto", "start tour: greedy (greedy edge), qb (Quick-Boruvka, linkern's "
                      "start; needs coordinates) or auto (qb on a lattice: coordinates, at "
                      "most {:,} cities, and half of them or more with their two nearest "
                      "cities exactly as near; else greedy)".format(QB_MOST))
    cells: str = param("auto", "kd (k-d cells of the coordinates), tour (runs of the tour) or "
                       "auto (kd where there are coordinates)")
    cell: int = param(0, "cities per cell at most (0: as many as local memory holds)")
    round_kicks: int = param(64, "kicks per cell per round")
    balance: str = param("auto", "what a round's work-groups share out: kicks (each runs "
                         "round_kicks), steps (each kicks until its local searches have "
                         "taken as many steps as round_kicks kicks took a group on average "
                         "the round before, at most twice round_kicks, so that the groups, "
                         "whose kicks cost more in some cells than in others, end the round "
                         "together) or auto (kicks where the tour fits one cell, its "
                         "replicas; steps in cells)")
    copies: int = param(0, "work-groups searching each cell a round at most, each with its own "
                        "draws, the best kept (0: as many as fill the device)")
    spans: str = param("auto", "windows of the tour a round (k-d cells): in each, one cell's "
                       "pieces that lie inside it become one span, whose moves may change which "
                       "piece end joins which (the tour between them turns round or changes "
                       "places); elsewhere every piece keeps its ends' pairing.  A count (0: "
                       "none, at most {}, and one a cell at most) or auto (one for every {} "
                       "cells of the round, rounded, at least one)".format(MOST_SPANS, SPAN_SHARE))
    bridges: str = param("auto", "share of the kicks that are double bridges (four joins "
                         "change, which no single move undoes), from 0 to 1; the others move a "
                         "chain next to a city near it (finer).  In a cell with a span they "
                         "start in the span.  auto: 0.5 where the tour fits one cell (its "
                         "replicas) and in spans, where a double bridge changes the whole "
                         "tour's structure, else 0 (in cells it stays inside one piece).  0.5 "
                         "is also far better at the few kicks a CPU runs")
    window: int = param(200, "cities a chain kick moves at most")
    walk: int = param(40, "steps of each random walk over the candidates that finds a kick's "
                      "cities (linkern's walk kick; 0: any city of the cell)")
    depth: int = param(6, "2-opt steps of the cells' Lin-Kernighan chains (0: 2-opt and Or-opt "
                       "only)")
    candidates: int = param(8, "candidates per city in the cells' search (1 to 16)")
    step_moves: int = param(2, "moves a step of the cells' local search applies at most: the "
                            "work-group's best move, then the best ones clear of those applied "
                            "(1 to 8; 1: the best only)")
    coords: str = param("auto", "where the cells' search reads 2-D coordinates: local (in "
                        "local memory, the fastest distances), global (through the caches: 16 "
                        "bytes a city freed, so larger cells) or auto (global on a GPU, where "
                        "larger cells search better, local elsewhere)")
    candidate_kind: str = param("quadrant", "candidate lists: quadrant or knn")
    polish: str = param("lk", "the whole-tour local search between rounds: 2opt, oropt, "
                        "2opt+oropt, 3opt, lk or none")
    polish_every: int = param(1, "rounds between two polishes")
    polish_candidates: int = param(12, "candidates per city of the polish (1 to 50)")
    polish_depth: int = param(16, "polish=lk: 2-opt steps of a Lin-Kernighan chain at most ({} to "
                              "{})".format(*LK_DEPTHS))
    polish_breadth: int = param(1, "polish=lk: alternatives tried for a chain's second step ({} to "
                                "{})".format(*LK_BREADTHS))
    polish_steps: int = param(64, "passes over the queued cities each polish takes, the first "
                              "descent from the start tour too (1 or more)")
    group: int = param(128, "work-items of a cell's work-group: 32, 64, 128 or 256 (with "
                       "step_moves above 1 the tour depends on it)")

    def __post_init__(self):
        if self.kicks != "auto":
            kick_budget(self.kicks, 1)
        if self.init != "auto" and self.init not in STARTS:
            raise UsageError(f"init must be auto or one of {', '.join(STARTS)} (got {self.init!r})")
        if self.cells not in CELLS:
            raise UsageError(f"cells must be one of {', '.join(CELLS)} (got {self.cells!r})")
        if self.cell:
            check_count("cell", self.cell, MIN_CELL, 65535, note=", or 0 for auto")
        check_count("round_kicks", self.round_kicks, 1, 1 << 20)
        if self.balance not in BALANCES:
            raise UsageError(f"balance must be one of {', '.join(BALANCES)} (got {self.balance!r})")
        if self.copies:
            check_count("copies", self.copies, 1, MOST_GROUPS, note=", or 0 for auto")
        self.span_count(1)      # validate spans and bridges
        self.bridge_share("span")
        check_count("window", self.window, 3, 65535)
        check_count("walk", self.walk, 0, 1000)
        check_count("depth", self.depth, 0, 16)
        check_count("candidates", self.candidates, 1, 16)
        check_count("step_moves", self.step_moves, 1, 8)
        if self.coords not in COORDS:
            raise UsageError(f"coords must be one of {', '.join(COORDS)} (got {self.coords!r})")
        check_count("polish_candidates", self.polish_candidates, 1, 50)
        check_count("polish_every", self.polish_every, 1)
        check_count("polish_steps", self.polish_steps, 1)
        check_count("polish_depth", self.polish_depth, *LK_DEPTHS)
        check_count("polish_breadth", self.polish_breadth, *LK_BREADTHS)
        if self.group not in (32, 64, 128, 256):
            raise UsageError(f"group must be 32, 64, 128 or 256 (got {self.group!r})")
        if self.polish != "none" and self.polish not in OPERATORS:
            raise UsageError(f"polish must be none or one of {', '.join(OPERATORS)} (got {self.polish!r})")
        self.candidate_params()   # validates the kind and the list length

    def bridge_share(self, where: str) -> float:
        """The share of double bridges among the kicks of a cell `where` ("span": a cell
        with a span; "replica": the cells are replicas of the whole tour; "cell": other
        cells): as given; auto AUTO_BRIDGES[where] (docs/notebook/pils.md: pr1002 at 10 s
        on an H200, optimal on three seeds of three with 0.5 in replicas against
        0.36-0.43 % at 0; no gain in cells without spans, fnl4461, pr2392, rl5915; in spans
        d18512 and pla33810 gain; 1 there is no better at 60 s and worse on rl5915 at 10 s,
        thirteenth session)."""
        share = auto_or_number("bridges", self.bridges, float, 0, 1, "a share")
        return AUTO_BRIDGES[where] if share is None else share

    def balances_steps(self, replicas: bool) -> bool:
        """Whether a round's work-groups share out steps rather than kicks: as given; auto
        steps in cells, kicks in `replicas` of the whole tour (docs/notebook/pils.md,
        sixteenth session, two H200s: in cells, time to 1 % sooner on six runs of six of
        d18512, pla33810 and pla85900, the 60-s gaps within their spread; pr1002's
        replicas at 10 s optimal on five seeds of six with kicks, three with steps)."""
        return self.balance == "steps" or (self.balance == "auto" and not replicas)

    def span_count(self, cells: int) -> int:
        """The spans of a round of `cells` k-d cells: as given, auto one for every
        SPAN_SHARE cells (the nearest count, at least one), one a cell at most.  On the
        H200's cells (d18512 20-24, pla33810 38-41, pla85900 100-105) a span for every 8
        cells gave lower 60-s gaps than every 4 on 8 runs of 9; more spans gave higher ones,
        and so did one a round on d18512 (docs/notebook/pils.md, seventeenth session)."""
        spans = auto_or_number("spans", self.spans, int, 0, MOST_SPANS, "a count")
        auto = max(1, (cells + SPAN_SHARE // 2) // SPAN_SHARE)
        return min(auto if spans is None else spans, cells, MOST_SPANS)

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
        """The polish's search over lists of `m` candidates (fewer than asked where the
        instance has fewer other cities: a valid count is kept, the lists are what they are)."""
        count = min(m, 50)
        if self.candidate_kind == "quadrant":
            count = min(-(-count // 4) * 4, 48)
        return LocalSearchParams(ls=self.polish if self.polish != "none" else "2opt",
                                 candidate_kind=self.candidate_kind, candidates=count,
                                 depth=self.polish_depth, breadth=self.polish_breadth)


def local_bytes(length: int, m: int, local_xy: bool, group: int) -> int:
    """Local memory of one pils_round work-group of `group` work-items (pils.cl's arrays)."""
    per_city = 8 + (16 if local_xy else 0) + 6 * 2 + 2 * m + 2
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
    axes = np.ascontiguousarray(np.asarray(points).T)   # a row a coordinate: fast reductions
    members = np.arange(n, dtype=np.int32)
    pending, ranges = [(0, n)], []
    while pending:
        lo, hi = pending.pop()
        if hi - lo <= size:
            ranges.append(lo)
            continue
        part = axes[:, members[lo:hi]]
        axis = int(np.argmax([row.max() - row.min() for row in part]))
        k = int((hi - lo) * rng.uniform(0.4, 0.6))
        members[lo:hi] = members[lo:hi][np.argpartition(part[axis], k, kind="introselect")]
        pending += [(lo, lo + k), (lo + k, hi)]
    first = np.array(sorted(ranges) + [n], dtype=np.int32)
    cell_of = np.empty(n, dtype=np.int32)
    cell_of[members] = np.repeat(np.arange(len(first) - 1, dtype=np.int32), np.diff(first))
    return members, first, cell_of


def local_xy(inst: Instance) -> bool:
    """pils_round keeps the cell's 2-D coordinates in local memory (coordinate metrics
    other than GEO)."""
    return inst.has_coords and COORD_DIMS.get(inst.weight_type) == 2 and inst.weight_type != "GEO"


def cells_local_xy(inst: Instance, p: SegmentIlsParams, is_gpu: bool) -> bool:
    """Whether pils_round keeps the cell's coordinates in local memory: where it can
    (:func:`local_xy`) and ``coords`` asks for it (auto: not on a GPU)."""
    return local_xy(inst) and (p.coords == "local" or (p.coords == "auto" and not is_gpu))


@dataclass(frozen=True)
class CellLayout:
    """How pils lays out its cells on a device: `m`, the candidates a city the cells
    read (the kernels' M); `group`, the work-items of a cell's work-group (WG); `fits`,
    the most cities one work-group's local memory holds (L_MAX); `size`, the cities per
    cell; `kd`, k-d cells (else runs of the tour); `target`, the work-groups a round aims
    at; `most_copies`, the most copies of a cell a round runs; `local_xy`, whether the
    cells' coordinates are in local memory (:func:`cells_local_xy`)."""

    m: int
    group: int
    fits: int
    size: int
    kd: bool
    target: int
    most_copies: int
    local_xy: bool = False

    @classmethod
    def of(cls, inst: Instance, p: SegmentIlsParams, k: int, limits) -> "CellLayout":
        """The layout over candidate lists of k cities (the cells read their first
        `p.candidates`) on a device with `limits`; without limits (the memory check of
        `tspcl info`), the largest plan any device would get."""
        n, m = inst.n, min(p.candidates, k)
        kd = p.cells == "kd" or (p.cells == "auto" and inst.has_coords)
        if limits is None:
            return cls(m, p.group, 0, 0, kd, MOST_GROUPS, max_copies(n, 1, MOST_GROUPS, p.copies))
        in_local = cells_local_xy(inst, p, limits.is_gpu)
        group = min(p.group, limits.max_work_group)
        fits = longest_cell(m, limits.local_mem, in_local, group)
        size = cell_size(p, fits)
        target = min(GROUPS_PER_UNIT * limits.compute_units, MOST_GROUPS)
        return cls(m, group, fits, size, kd and n > size, target,
                   max_copies(n, -(-n // size), target, p.copies), in_local)

    def plan(self, n: int) -> BufferPlan:
        """DeviceCells' buffers: the copies' staging (cities, piece starts, indices in the
        piece) and the pieces' growth, `most_copies` n-sized each; the cities' local
        indices and shifts, the scan's chunk sums, the tour's neighbours at the last
        polish (two a city); the gains of every work-group (cells x
        copies, at most `target` or one a cell), of every cell and of the round (with
        its kicks and steps), each work-group's kicks and steps (`work`); the
        spans' windows (one a cell), records (a window's copies: at most `target`, or one
        a window) and scratch (n); and the cells: the PARTITIONS k-d partitions, or the
        tour's runs (members, first members, cell of each city)."""
        most_cells = n // MIN_CELL + 1
        i4, i8 = np.int32, np.int64
        plan = BufferPlan()
        for name in ("staging", "staging_base", "staging_index", "delta"):
            plan = plan.add(name, i4, n * self.most_copies)
        plan = (plan.add("local_of", i4, n).add("shift", i4, n).add("sums", i4, -(-n // SCAN_CHUNK))
                .add("neighbours", i4, 2 * n)
                .add("gains", i8, max(most_cells, self.target)).add("cell_gain", i8, most_cells)
                .add("round_gain", i8, 3).add("work", i4, 2 * max(most_cells, self.target))
                .add("window_of", i4, most_cells)
                .add("rejoin", i4, max(self.target, MOST_SPANS) * REJOIN_INTS).add("moved", i4, n)
                .add("rejoined", i4, 1))
        for cells in [f"partition{i}" for i in range(PARTITIONS)] if self.kd else ["tour_cells"]:
            plan = (plan.add(f"{cells}_members", i4, n).add(f"{cells}_first", i4, most_cells + 1)
                    .add(f"{cells}_cell_of", i4, n))
        return plan


class KdDraws:
    """A run's PARTITIONS k-d partitions (kd_cells), drawn in turn from its seed on a host
    thread, so that the device's work (the first descent) hides them: 24 ms each on
    pla85900, where the first eight rounds had waited for them.  `close` stops the
    drawing after the partition in hand (a run that ends before its rounds)."""

    def __init__(self, inst: Instance, size: int, seed: int):
        points = inst.coords[:, :COORD_DIMS.get(inst.weight_type, 2)]
        draws = np.random.default_rng([seed, 0x63656C6C])   # "cell"
        self._closed = threading.Event()

        def draw_all() -> list:
            drawn = []
            while len(drawn) < PARTITIONS and not self._closed.is_set():
                drawn.append(kd_cells(points, size, draws))
            return drawn

        pool = ThreadPoolExecutor(1)
        self._drawn = pool.submit(draw_all)
        pool.shutdown(wait=False)

    @classmethod
    def of(cls, ctx: SolveContext, layout: CellLayout) -> "KdDraws | None":
        """The draws of a run whose `layout` has k-d cells, else None."""
        return cls(ctx.inst, layout.size, ctx.seed) if layout.kd else None

    def take(self, i: int):
        """(members, first, cell_of) of the i-th partition, forgotten here (the device
        keeps it: a million cities' eight partitions are 64 MB on the host)."""
        drawn = self._drawn.result()
        partition, drawn[i] = drawn[i], None
        return partition

    def close(self) -> None:
        """Draw no partition after the one in hand."""
        self._closed.set()


class DeviceCells:
    """The device side of the rounds: the partitions, the kernels and the copies' staging.

    Each round takes a partition (k-d cells drawn on the host, PARTITIONS of them in
    turn: `draws`, KdDraws.of(layout) by default; runs of the tour without coordinates; one cell
    when the tour fits one) and runs `copies` work-groups on every cell, each with its
    own draws, so that cells x copies fill about GROUPS_PER_UNIT work-groups per compute
    unit; pils_pick keeps the best copy of each cell and pils_place lays the tour out
    again."""

    def __init__(self, ctx: SolveContext, cand, p: SegmentIlsParams, search: DeviceSearch,
                 layout: CellLayout, draws: KdDraws | None = None):
        rt, inst = ctx.rt, ctx.inst
        n = inst.n
        self.group, self.size, self.kd, self.target, self.most_copies = (
            layout.group, layout.size, layout.kd, layout.target, layout.most_copies)
        defines = {"M": layout.m, "L_MAX": layout.fits, "WG": self.group, "QCAP": QUEUE_SLOTS,
                   "LOCAL_XY": int(layout.local_xy), "MAX_MOVES": MAX_MOVES, "LK_DEPTH": p.depth,
                   "STEP_MOVES": p.step_moves, "SPAN_PIECES": SPAN_PIECES, "SCAN_CHUNK": SCAN_CHUNK}
        kernel = lambda name: ctx.dinst.kernel("pils", name, **defines)  # noqa: E731
        names = ("pils_round", "pils_pick", "pils_round_gain", "pils_positions", "pils_tour_cells",
                 "pils_place", "pils_scan_sums", "pils_scan_chunks", "pils_scan_apply",
                 "pils_neighbours", "pils_touched", "pils_windows", "pils_rejoin")
        self.k = {name: kernel(name) for name in names}
        most = rt.work_group_size(self.k["pils_round"], self.group)
        if most < self.group:
            raise UsageError(f"group {self.group}: this device runs pils_round with at most {most} work-items")
        self.gain_wg = rt.work_group_size(self.k["pils_round_gain"], 256)
        self.ctx, self.rt, self.n, self.cand, self.p, self.search = ctx, rt, n, cand, p, search
        self.step_balance = p.balances_steps(n <= self.size)
        self.steps_per_kick = 0.0    # the last round's local-search steps a kick (step_balance)
        self.draws = (draws or KdDraws.of(ctx, layout)) if self.kd else None
        # spans: in k-d cells (not in a tour of one piece or runs of it), unless spans=0
        self.has_spans = self.kd and p.span_count(MOST_SPANS) > 0
        # the kicks' double bridges: in replicas or other cells, and in cells with a span
        self.bridge_cut, self.span_cut = (round(p.bridge_share(where) * BRIDGE_SCALE)
                                          for where in ("replica" if n <= self.size else "cell",
                                                        "span"))
        self.partitions: list = []
        self.buf = layout.plan(n).allocate(rt)
        rt.cl.enqueue_fill_buffer(rt.queue, self.buf.rejoined, np.int32(0), 0, 4)
        if not self.kd:
            cells = -(-n // self.size)
            first = (np.arange(cells + 1, dtype=np.int64) * n // cells).astype(np.int32)
            rt.cl.enqueue_copy(rt.queue, self.buf.tour_cells_first, first)
            self.tour_cells = (self.buf.tour_cells_members, self.buf.tour_cells_first,
                               self.buf.tour_cells_cell_of, cells)

    def _partition(self, round_no: int):
        """Round `round_no`'s k-d partition on the device: copied from its draw the first
        time its turn comes, kept for the turns after."""
        while len(self.partitions) <= round_no % PARTITIONS:
            i = len(self.partitions)
            bufs = tuple(getattr(self.buf, f"partition{i}_{part}") for part in ("members", "first", "cell_of"))
            members, first, cell_of = self.draws.take(i)
            for buf, host in zip(bufs, (members, first, cell_of)):
                self.rt.cl.enqueue_copy(self.rt.queue, buf, host)
            self.partitions.append(bufs + (len(first) - 1,))
        return self.partitions[round_no % PARTITIONS]

    def copies(self, cells: int) -> int:
        """The copies of each cell a round of `cells` cells runs: as many as fill `target`
        work-groups, most_copies at most, at least one."""
        return max(1, min(self.most_copies, self.target // cells))

    def rejoined(self) -> int:
        """How many spans joined their pieces' ends otherwise so far."""
        return int(self.rt.read(self.buf.rejoined, np.int32, 1)[0]) if self.has_spans else 0

    def cells_of(self, round_no: int):
        """(members, first, cell_of, cells) of round `round_no` (without k-d cells, filled
        from the tour by round_launches)."""
        return self._partition(round_no) if self.kd else self.tour_cells

    def run_round(self, round_no: int, offset: int, descend: bool, budget: int) -> tuple[int, int, list]:
        """One round on the search's tour (its positions follow): round_kicks kicks per
        work-group, `budget` at most; returns the gain, the kicks and the events."""
        done = []
        events = enqueue_whole(self.round_launches(round_no, offset, descend, self.p.round_kicks, budget,
                                                   lambda gain, kicks: done.append((gain, kicks)),
                                                   record=False))
        return (*done[0], events)

    def round_launches(self, round_no: int, offset: int, descend: bool, round_kicks: int, budget: int,
                       finished: Callable[[int, int], None], record: bool) -> list:
        """One round on the search's tour as launches (device_loop.Launch): the cells
        (runs of the tour without k-d cells) and the cleared shifts; the cells' searches,
        `round_kicks` kicks per work-group and `budget` in all at most, a unit a
        work-group (each searches its own copy of a cell with its own draws, common.h
        group_index, and writes only its staging), which a time limit may stop between
        two; then each cell's best copy, the tour laid out again and its positions, after
        which `finished` gets the round's gain and kicks.  record: first the tour's
        neighbours go to `neighbours` (for `queue_touched`, after a polish).  `offset`,
        the tour position the cells' runs and the layout count from, is below n (the
        kernels index with it unchecked)."""
        rt, cl, q, s, n, k = self.rt, self.rt.cl, self.rt.queue, self.search, self.n, self.k
        if not 0 <= offset < n:
            raise ValueError(f"round offset {offset} outside the tour's positions 0..{n - 1}")
        seed, wg, b = self.ctx.seed, self.gain_wg, self.buf
        members, first, cell_of, cells = self.cells_of(round_no)
        copies = self.copies(cells)
        groups = cells * copies
        windows = self.p.span_count(cells) if self.has_spans else 0   # windows x copies fit the records
        # step_balance: a step budget a group, kicks up to twice round_kicks (within the
        # run's budget); the first round (its descent) and a round the budget would not
        # hold share out kicks
        step_budget = (round(round_kicks * self.steps_per_kick)
                       if self.step_balance and not descend and self.steps_per_kick > 0
                       and groups * 2 * round_kicks <= budget else 0)
        kicks = min(groups * (2 if step_budget else 1) * round_kicks, budget)
        staging, base, index, delta = b.staging, b.staging_base, b.staging_index, b.delta

        def prepare() -> list:
            events = []
            if record:
                events.append(k["pils_neighbours"](q, (min(n, 1 << 16),), None, s.tour, n,
                                                   b.neighbours))
            if not self.kd:
                events.append(k["pils_tour_cells"](q, (min(n, 1 << 16),), None, s.tour, n, offset,
                                                   first, cells, members, cell_of))
            if windows:
                events += [cl.enqueue_fill_buffer(q, b.window_of, np.int32(-1), 0, 4 * cells),
                           k["pils_windows"](q, (1,), (1,), s.tour, n, offset, windows, cell_of,
                                             b.window_of, copies, b.rejoin)]
            return events + [cl.enqueue_fill_buffer(q, delta, np.int32(0), 0, 4 * n)]

        def search(first_group: int, count: int) -> list:
            return [k["pils_round"](
                q, (count * self.group,), (self.group,), *self.ctx.dinst.dist_args,
                self.cand.cities, self.cand.dists, self.cand.m, s.pos, members, first, cell_of,
                b.local_of, staging, base, index, delta, b.gains,
                seed & 0xFFFFFFFF, seed >> 32, round_no, offset, copies, int(descend),
                kicks // groups, kicks % groups, self.p.window, self.p.walk,
                self.bridge_cut, self.span_cut, b.window_of,
                windows, b.rejoin, step_budget, b.work,
                global_offset=(first_group * self.group,) if first_group else None)]

        def lay_out() -> list:
            events = [k["pils_pick"](q, (cells * wg,), (wg,), b.gains, copies, first, n,
                                     staging, base, index, delta, b.cell_gain, b.window_of,
                                     windows, b.rejoin, cl.LocalMemory(8 * wg),
                                     cl.LocalMemory(4 * wg)),
                      k["pils_round_gain"](q, (wg,), (wg,), b.cell_gain, cells, b.work, groups,
                                           b.round_gain, cl.LocalMemory(8 * wg))]
            chunks = -(-n // SCAN_CHUNK)
            events += [k["pils_scan_sums"](q, (chunks * SCAN_WG,), (SCAN_WG,), delta, n, b.sums,
                                           cl.LocalMemory(8 * SCAN_WG)),
                       k["pils_scan_chunks"](q, (1,), (1,), b.sums, chunks),
                       k["pils_scan_apply"](q, (chunks * SCAN_WG,), (SCAN_WG,), delta, n, b.sums,
                                            b.shift, cl.LocalMemory(4 * SCAN_WG)),
                       k["pils_place"](q, (min(n, 1 << 16),), None, staging, base, index,
                                       b.shift, n, offset, s.tour)]
            if windows:
                events.append(k["pils_rejoin"](q, (windows * wg,), (wg,), b.rejoin, copies,
                                               b.shift, n, offset, s.tour, b.moved, b.rejoined,
                                               cl.LocalMemory(4 * 8 * SPAN_PIECES)))
            events.append(k["pils_positions"](q, (min(n, 1 << 16),), None, s.tour, s.pos, n))
            gain, kicked, stepped = (int(x) for x in rt.read(b.round_gain, np.int64, 3))
            if not descend and kicked:
                self.steps_per_kick = stepped / kicked
            finished(gain, kicked)
            return events

        return [Launch.whole(prepare), Launch(groups, search), Launch.whole(lay_out)]

    def queue_touched(self) -> list:
        """The polish's queue (DeviceSearch.restart with queued): the cities whose tour
        edges changed since the neighbours were recorded (round_launches' record), and
        those the last polish left queued (its steps ran out first)."""
        rt, s, n = self.rt, self.search, self.n
        q = rt.queue
        return [rt.cl.enqueue_fill_buffer(q, s.qcount, np.int32(0), 0, 8),
                self.k["pils_touched"](q, (min(n, 1 << 16),), None, s.tour, n, self.buf.neighbours,
                                       s.queue, s.qcount, s.active)]


def max_copies(n: int, fewest_cells: int, target: int, asked: int = 0) -> int:
    """The most copies of a cell a round runs: enough to fill `target` work-groups with
    the fewest cells a partition has (cells hold at most n / fewest_cells cities), the
    copies' staging (16 bytes a city each) within STAGING_CITIES, and `asked` at most
    (0: no bound)."""
    most = max(1, min(target // fewest_cells, STAGING_CITIES // n))
    return min(most, asked) if asked else most


def run_segment_ils(ctx: SolveContext, p: SegmentIlsParams) -> None:
    """The start (`init`: greedy or qb with their defaults; auto: choose_start), a bounded
    whole-tour local search (Descent), then rounds of cell searches (CellRounds), both
    through the device loop, until the kick budget is spent or ctx.stop."""
    n = ctx.inst.n
    start = STARTS[choose_start(ctx, p)]
    reason = start.unsupported(ctx.inst) if start.unsupported else None
    if reason:
        raise UsageError(f"pils init={p.init}: {reason}")
    start.run(ctx, start.params_type())
    if n < 8 or ctx.best_length == 0:
        return  # too small for the moves' assumptions, or optimal: the start is the result
    if ctx.stop(0):
        return  # the time limit is spent: no candidate lists or search are built
    cand = ctx.candidates(p.candidate_params())
    layout = CellLayout.of(ctx.inst, p, cand.m, ctx.rt.limits)
    draws = KdDraws.of(ctx, layout) if n >= MIN_CELL else None   # while the descent runs
    try:
        search = DeviceSearch(ctx, cand, p.polish_params(cand.m))
        search.load(ctx.best_order, ctx.best_length)
        length = ctx.best_length
        if p.polish != "none":
            descent = Descent(search, length, p.polish_steps)
            run_device_loop(ctx, descent)
            length = descent.length
        if n < MIN_CELL:
            return
        rounds = CellRounds(ctx, p, DeviceCells(ctx, cand, p, search, layout, draws), search, length)
        run_device_loop(ctx, rounds)
        ctx.notes.append(rounds.summary())
    finally:
        if draws:
            draws.close()   # a run that ended in its descent draws no more partitions


def choose_start(ctx: SolveContext, p: SegmentIlsParams) -> str:
    """The start's construction: init as given; auto: qb on a lattice (Quick-Boruvka can
    run, at most QB_MOST cities, and a LATTICE share or more of the cities have their two
    nearest cities exactly as near: construct.cl nearest_ties), said in the run's notes,
    greedy elsewhere.  On the pla instances the x-sweep's start halves pils' gap at 60 s;
    on rl5915 and d18512 it costs (docs/notebook/pils.md), and the cells keep either
    start's large-scale structure."""
    inst = ctx.inst
    if p.init != "auto":
        return p.init
    if not qb_may_start(inst):
        return "greedy"
    rt, n = ctx.rt, inst.n
    cand = ctx.candidates(CandidateParams("knn", STARTS["qb"].params_type().candidates))
    bufs = ties_plan(n).allocate(rt)
    rt.cl.enqueue_copy(rt.queue, bufs.ties_plane, np.ascontiguousarray(inst.planar_coords, np.float64))
    rt.cl.enqueue_fill_buffer(rt.queue, bufs.ties_count, np.int32(0), 0, 4)
    ctx.timed(ctx.dinst.kernel("construct", "nearest_ties")(
        rt.queue, (n,), None, n, bufs.ties_plane, cand.cities, cand.m, bufs.ties_count))
    share = int(rt.read(bufs.ties_count, np.int32, 1)[0]) / n
    chosen = "qb" if share >= LATTICE else "greedy"
    ctx.notes.append(f"pils: init=auto chose {chosen}: {100 * share:.0f} % of the cities have "
                     f"their two nearest exactly as near ({'' if chosen == 'qb' else 'not '}a lattice)")
    return chosen


def qb_may_start(inst: Instance) -> bool:
    """Whether init=auto may start from qb: Quick-Boruvka can run, on QB_MOST cities at most."""
    return inst.n <= QB_MOST and not STARTS["qb"].unsupported(inst)


def start_plan(inst: Instance, p: SegmentIlsParams, m: int) -> BufferPlan:
    """The start's buffers over candidate lists of m cities: greedy's or qb's, and with
    init=auto where it may choose qb, room for either and choose_start's."""
    n, qb = inst.n, STARTS["qb"].params_type()
    if not (p.init == "qb" or (p.init == "auto" and qb_may_start(inst))):
        return greedy_plan(n, m)
    if p.init == "qb":
        return qb_plan(n, m, qb.sweep)
    return qb_plan(n, m, qb.sweep).add("greedy_keys", np.uint64, edge_keys(n, m)).merge(ties_plan(n))


def ties_plan(n: int) -> BufferPlan:
    """choose_start's buffers: the plane coordinates and the count."""
    return BufferPlan().add("ties_plane", np.float64, 2 * n).add("ties_count", np.int32, 1)


def polish_launch(search: DeviceSearch, steps: int, polished: Callable[[int, int], None]) -> Launch:
    """`steps` steps of the whole-tour search as a launch of a unit a step
    (device_loop.Launch: a slice of steps is those steps), enqueued POLISH_CHUNK at a
    time: once the search's words say it is done (its local optimum), the steps left
    are not enqueued (they would do nothing).  After each slice `polished` gets the
    steps done and the tour's length, read from the search's words."""
    def enqueue(first: int, count: int) -> list:
        events, done = [], 0
        while done < count and not search.words[StateWord.DONE]:
            chunk = min(POLISH_CHUNK, count - done)
            events += search.enqueue(chunk)
            search.read_words()
            done += chunk
        polished(first + count, int(search.words[StateWord.CUR_LEN]))
        return events
    return Launch(steps, enqueue)


class Descent:
    """The whole-tour search's first polish, from the start tour, as the device loop
    runs it (device_loop.SplitRun): one step of `steps` steps of the search, which a
    time limit may stop between two; the status is the tour's exact length."""

    def __init__(self, search: DeviceSearch, length: int, steps: int):
        self.search, self.length, self.steps, self.done = search, length, steps, False

    def batch_size(self, status: LoopStatus) -> int:
        return 1

    def enqueue(self, count: int) -> list:
        return enqueue_whole(self.next_step())

    def next_step(self) -> list:
        return [polish_launch(self.search, self.steps, self._polished)]

    def _polished(self, steps: int, length: int) -> None:
        self.length, self.done = length, steps >= self.steps

    def read_status(self) -> LoopStatus:
        return LoopStatus(self.length, 0, self.done)

    def best_buffer(self, status: LoopStatus):
        return self.search.tour

    def after_batch(self, status: LoopStatus) -> None:
        pass


class CellRounds:
    """The rounds as the device loop runs them (device_loop.SplitRun): a step is one
    round of the cells and, every polish_every rounds, polish_steps steps of the
    whole-tour search (`polish_launch`, which a time limit may stop between two); the
    status is the tour's exact length (the rounds' gains and the search's sums) and the
    kicks done."""

    def __init__(self, ctx: SolveContext, p: SegmentIlsParams, cells: DeviceCells,
                 search: DeviceSearch, length: int):
        self.ctx, self.p, self.cells, self.search, self.length = ctx, p, cells, search, length
        time_limited = ctx.stop.remaining() is not None
        self.budget = p.budget(ctx.inst.n, time_limited)
        # kicks=auto under a time limit ends on the time alone, so its rounds are sized
        # to it (`_kicks_now`); other runs take round_kicks a work-group every round
        self.sized = time_limited and p.kicks == "auto"
        self.round_kicks = 1 if self.sized else p.round_kicks   # kicks a work-group, the next round at most
        self.kick_s = self.polish_s = 0.0   # a kick's seconds in the last round; the last polish's
        self.left = 0.0                     # the seconds left when the last round or polish began
        self.draws = np.random.default_rng([ctx.seed, 0x70696C73])   # "pils": the rounds' offsets
        self.kicks = self.rounds = 0
        self.spent = {"cells": [0, 0.0], "polish": [0, 0.0]}   # gain and seconds of each phase
        self.mark = time.perf_counter()   # when the last launch of a step ended

    def batch_size(self, status: LoopStatus) -> int:
        return 1

    def enqueue(self, count: int) -> list:
        return [e for _ in range(count) for e in enqueue_whole(self.next_step())]

    def next_step(self) -> list:
        polish = self.p.polish != "none" and (self.rounds + 1) % self.p.polish_every == 0
        offset = int(self.draws.integers(self.ctx.inst.n))
        self.mark = time.perf_counter()
        kicks = self._kicks_now()
        # the neighbours the next polish compares with: those after the last polish
        record = self.p.polish != "none" and self.rounds % self.p.polish_every == 0
        launches = self.cells.round_launches(self.rounds, offset, self.rounds == 0, kicks, self.budget - self.kicks,
                                             lambda gain, done: self._round(gain, done, kicks, polish),
                                             record)
        if polish:
            launches.append(polish_launch(self.search, self.p.polish_steps, self._polished))
        return launches

    def _kicks_now(self) -> int:
        """Kicks a work-group in the next round: round_kicks; sized to the time, a kick
        in the first round (with the cells' descent, which PoCL's work-groups take
        seconds over), then at most SLICE_GROWTH times the round before and what fits in
        the time left beside a polish, at the last round's seconds a kick."""
        if not self.sized:
            return self.round_kicks
        self.left = self.ctx.stop.remaining()
        if self.kick_s > 0:
            return max(1, min(self.round_kicks, int((self.left - self.polish_s) / self.kick_s)))
        return self.round_kicks

    def _round(self, gain: int, kicks: int, each: int, polish: bool) -> None:
        """A round's end, at `each` kicks a work-group: its gain and kicks counted; with
        `polish`, the whole-tour search restarted from the tour, from the cities whose
        edges changed since the last polish and those it left queued (the others were at
        its local optimum)."""
        self.length -= gain
        self.kicks += kicks
        self.rounds += 1
        if self.sized:
            left = self.ctx.stop.remaining()
            self.kick_s, self.left = (self.left - left) / each, left
            self.round_kicks = min(SLICE_GROWTH * each, self.p.round_kicks)
        if polish:
            self.cells.queue_touched()
            self.search.restart(self.length, queued=True)
        self.mark = _tally(self.spent["cells"], gain, self.mark)

    def _polished(self, steps: int, length: int) -> None:
        self.mark = _tally(self.spent["polish"], self.length - length, self.mark)
        self.length = length
        if self.sized:
            self.polish_s = self.left - self.ctx.stop.remaining()

    def read_status(self) -> LoopStatus:
        return LoopStatus(self.length, self.kicks, self.kicks >= self.budget)

    def best_buffer(self, status: LoopStatus):
        return self.search.tour

    def after_batch(self, status: LoopStatus) -> None:
        pass

    def summary(self) -> str:
        cells, polish = self.spent["cells"], self.spent["polish"]
        spans = (f"; {self.cells.rejoined()} spans joined their pieces otherwise"
                 if self.cells.has_spans else "")
        return (f"pils: {self.rounds} rounds; the cells gained {cells[0]} in {cells[1]:.1f} s, "
                f"the polish {polish[0]} in {polish[1]:.1f} s{spans}")


def _tally(phase: list, gain: int, since: float) -> float:
    """Add `gain` and the seconds since `since` to `phase`; returns the time now."""
    now = time.perf_counter()
    phase[0] += gain
    phase[1] += now - since
    return now


def _buffers(inst: Instance, p: SegmentIlsParams, limits=None) -> BufferPlan:
    """The instance, the start (its candidate lists and buffers: start_plan), one
    candidate list for both searches, the whole-tour search's buffers and the cells'."""
    k = p.candidate_params().k
    layout = CellLayout.of(inst, p, k, limits)
    m = max(spec.params_type().candidates for spec in STARTS.values())
    return (shared_plan(inst, m, k).merge(start_plan(inst, p, m))
            .merge(search_plan(inst.n, p.polish_params(k))).merge(layout.plan(inst.n)))


SOLVERS = [
    SolverSpec("pils", "segment-parallel iterated local search: work-groups run 2-opt/"
               "Or-opt/LK ILS on the tour's pieces in k-d cells, in local memory, all at once",
               SegmentIlsParams, run_segment_ils, _buffers,
               unsupported=lambda inst: reversal_problem(inst, "pils"),
               budget_param="kicks", memory_hint="fewer candidates (-p polish_candidates=8, -p candidates=4)"),
]
