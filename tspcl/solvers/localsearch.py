"""Local search (2-opt, Or-opt, 3-opt) and iterated local search on the device.

Fosin et al. 2013 (../shared/papers/fosin2013-gpu-2opt-3opt-ils.txt): passes over
quadrant candidate lists (m = 40), work-items per (city, candidate), section 4.1; 3-opt
over neighbour triples with the four reconnections, section 4.2; ILS with double-bridge
kicks, Algorithm 1.  Beyond the paper: an active-city queue (don't-look bits) and many
non-conflicting moves per pass (kernels_cl/localsearch.cl).  The whole loop runs on the
device: steps are enqueued in batches (tspcl/solvers/device_loop.py); the host reads the
status words after each batch and the best tour only when it improved
(SolveContext.publish_due: at most every PUBLISH_S seconds) and at the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar
from enum import IntEnum

import numpy as np

from ..buffers import BufferPlan
from ..errors import UsageError
from ..instance import Instance
from ..neighbors import CandidateParams
from ..params import param
from .base import MAX_BATCH, MAX_COUNT, SolveContext, SolverSpec, check_count, shared_plan
from .construct import NearestNeighborParams, nn_plan, run_nn
from .device_loop import LONG_MAX, LoopStatus, run_device_loop, word_defines

# ls name -> (2-opt, Or-opt, 3-opt, Lin-Kernighan chain) moves evaluated
OPERATORS = {"2opt": (1, 0, 0, 0), "oropt": (0, 1, 0, 0), "2opt+oropt": (1, 1, 0, 0),
             "3opt": (1, 1, 1, 0), "lk": (1, 1, 1, 1)}
EVAL_GROUP = 128        # work-items per eval work-group (the paper's tb = 128)
APPLY_GROUP = 256       # work-items applying one move
GROUPS_PER_UNIT = 16    # eval/apply work-groups per compute unit (they loop over the queue)
SINGLE_CITIES_PER_UNIT = 6  # queued cities per compute unit evaluated at once in one-move steps
CLAIM_BLOCK = 64        # tour positions per claim block (ls_apply.h, -D CLAIM_BLOCK)
KICK_REVERSALS = 4      # a double bridge is four reversals (ls_move.h, -D KICK_REVERSALS)
MAX_M = 64              # candidates per city the local search takes at most
LK_DEPTHS = (2, 31)     # 2-opt steps a Lin-Kernighan chain may take at most (ls_lk.h LK_DEPTH)
LK_BREADTHS = (1, 8)    # alternatives for a chain's second step (ls_lk.h LK_BREADTH)
MEMORY_HINT = "fewer candidates (e.g. -p candidates=8)"


class StateWord(IntEnum):
    """The search's state words (long) in localsearch.cl, -D S_<NAME>."""

    CUR_LEN = 0       # length of the current tour (see PENDING)
    BEST_LEN = 1      # length of best_tour (LONG_MAX before the first optimum)
    KICKS = 2         # kicks done
    BUDGET = 3        # kicks allowed (0: plain local search)
    DONE = 4          # 1 when finished
    MOVES = 5         # improving moves applied (see PENDING)
    SAVE = 6          # this step: copy tour -> best_tour
    RESTORE = 7       # this step: copy best_tour -> tour
    ACCEPT = 8        # -1: always go on from the new local optimum; s >= 0: only if it is at
                      # most s parts per million longer than the best
    KICK_WINDOW = 9   # 0: double-bridge cut points anywhere; w > 0: within w positions
    SEED_LO = 10
    SEED_HI = 11
    STEPS = 12        # passes (ls_control launches that did something)
    MODE = 13         # this step: MODE_* (localsearch.cl)
    BEST_CODE = 14    # this step: code of the best move
    FLAGS = 15        # bit 0: queue parity; bit 1: this step's queue holds every city;
                      # bit 2: one move per pass (the paper's best improvement); bit 3:
                      # the start queue is trusted (no pass over every city at the end)
    PENDING = 16      # per ls_apply group g: gain at 16 + 2g, moves at 17 + 2g, not yet in
                      # CUR_LEN / MOVES (ls_control folds them in)


STATE_DEFINES = word_defines("S_", StateWord)
# localsearch.cl's defines besides the search's own: the state words and the sizes the
# host allocates by
PROGRAM_DEFINES = {**STATE_DEFINES, "CLAIM_BLOCK": CLAIM_BLOCK, "KICK_REVERSALS": KICK_REVERSALS}


@dataclass(frozen=True)
class LocalSearchParams:
    """A local search over candidate lists (Fosin et al.: quadrant lists, 40 candidates),
    run in batches of steps on the device."""

    RENAMED: ClassVar[dict] = {"m": "candidates", "neighbors": "candidate_kind",
                               "chain_m": "chain_candidates"}

    ls: str = param("2opt", "operators: 2opt, oropt, 2opt+oropt, 3opt, or lk (3opt's moves "
                    "and Lin-Kernighan chains)")
    candidate_kind: str = param("quadrant", "candidate lists: quadrant (the paper's) or knn")
    candidates: int = param(40, f"candidates per city (the paper: 40; at most {MAX_M}, 50 for "
                            "3opt and lk)")
    moves: str = param("many", "per pass: many non-conflicting improving moves, or the best "
                       "one only (the paper's best improvement)")
    depth: int = param(10, "lk: 2-opt steps of a chain at most ({} to {})".format(*LK_DEPTHS))
    breadth: int = param(1, "lk: alternatives tried for a chain's second step ({} to {})".format(
        *LK_BREADTHS))
    chain_candidates: int = param(10, "lk: candidates scanned for a chain's later steps (at most "
                                  "candidates)")
    batch: int = param(64, "steps enqueued between two reads of the status")
    max_moves: int = param(0, "stop after the batch in which this many improving moves were "
                           "applied (0: at the local optimum)")

    def __post_init__(self):
        if self.ls not in OPERATORS:
            raise UsageError(f"ls must be one of {', '.join(OPERATORS)} (got {self.ls!r})")
        check_count("candidates", self.candidates, 1, MAX_M)
        CandidateParams(self.candidate_kind, self.candidates)  # validates the kind (quadrant: 4 | count)
        if self.moves not in ("many", "best"):
            raise UsageError(f"moves must be many or best (got {self.moves!r})")
        if self.ls in ("3opt", "lk") and self.candidates > 50:
            raise UsageError(f"{self.ls} takes at most 50 candidates per city "
                             f"(got candidates={self.candidates})")
        check_count("depth", self.depth, *LK_DEPTHS)
        check_count("breadth", self.breadth, *LK_BREADTHS)
        check_count("chain_candidates", self.chain_candidates, 1, MAX_M,
                    note=" (at most candidates are scanned)")
        check_count("batch", self.batch, 1, MAX_BATCH)
        check_count("max_moves", self.max_moves, note=", 0 for none")


@dataclass(frozen=True)
class OrOptParams(LocalSearchParams):
    ls: str = "oropt"


@dataclass(frozen=True)
class ThreeOptParams(LocalSearchParams):
    ls: str = "3opt"


@dataclass(frozen=True)
class LinKernighanParams(LocalSearchParams):
    ls: str = "lk"


@dataclass(frozen=True)
class IteratedLocalSearchParams(LocalSearchParams):
    """Fosin et al.'s Algorithm 1: double-bridge kicks, each followed by the local search.
    The defaults are the best measured settings (BENCHMARKS.md: LK, acceptance 'better'
    with 0.05 % slack); the paper's are ls=3opt accept=always slack=0."""

    ls: str = "lk"
    kicks: str = param("1n", "double bridges in all: a count or a multiple of n (0.1n, 1n, 10n)")
    accept: str = param("better", "go on from every new local optimum (always, the paper's) or "
                        "only from one no longer than the best allows (better)")
    slack: float = param(0.05, "better: keep local optima up to this many percent above the best "
                         "(the paper: 0)")
    kick: str = param("random", "double-bridge cut points: random (the paper's) or local "
                      "(within window positions)")
    window: int = param(50, "local: positions the cut points lie within")

    def __post_init__(self):
        super().__post_init__()
        if self.accept not in ("always", "better"):
            raise UsageError(f"accept must be always or better (got {self.accept!r})")
        if not 0 <= self.slack <= 100:
            raise UsageError(f"slack must be a percentage from 0 to 100 (got {self.slack})")
        if self.kick not in ("random", "local"):
            raise UsageError(f"kick must be random or local (got {self.kick!r})")
        check_count("window", self.window, 3)
        kick_budget(self.kicks, 1)

    def budget(self, n: int) -> int:
        return kick_budget(self.kicks, n)


def move_reversals(p: LocalSearchParams) -> int:
    """Most reversals one move is applied as (localsearch.cl REVERSALS)."""
    return max(KICK_REVERSALS, p.depth if OPERATORS[p.ls][3] else 0)


def kick_budget(spec: str, n: int) -> int:
    """'0.1n' -> ceil(0.1 n); '250' -> 250; UsageError unless 0 to MAX_COUNT kicks on n
    cities (inf and nan are neither)."""
    s = str(spec).strip().lower()
    per_city = s.endswith("n")
    try:
        value = float(s[:-1] or 1) * n if per_city else int(s)
    except ValueError:
        raise UsageError(f"kicks must be a count or a multiple of n like 0.1n (got {spec!r})") from None
    if not 0 <= value <= MAX_COUNT:
        cities = f" on {n} cities" if per_city and n > 1 else ""
        raise UsageError(f"kicks must be 0 to {MAX_COUNT}{cities} (got {spec!r})")
    return math.ceil(value)


def run_local_search(ctx: SolveContext, p: LocalSearchParams) -> None:
    """NN start, then local search to a local optimum (ILS when p has a kick budget)."""
    inst = ctx.inst
    n = inst.n
    kicks = p.budget(n) if isinstance(p, IteratedLocalSearchParams) else 0
    run_nn(ctx, NearestNeighborParams())
    if n < 8:
        return  # too small for the moves' assumptions; NN is already the result
    if ctx.stop(0):
        return  # the time limit is spent: no candidate lists or search are built
    cand = ctx.candidates(CandidateParams(p.candidate_kind if inst.has_coords else "knn", p.candidates))
    search = DeviceSearch(ctx, cand, p)
    search.load(ctx.best_order, ctx.best_length)
    if isinstance(p, IteratedLocalSearchParams):
        search.set_kicks(kicks, -1 if p.accept == "always" else round(p.slack * 10**4),
                         p.window if p.kick == "local" else 0)
    run_device_loop(ctx, search)


class DeviceSearch:
    """The device side of one local search / ILS run (kernels_cl/localsearch.cl): the
    tour, its position array, the active-city queue and the step's bookkeeping.  A step
    is ls_eval -> ls_control -> ls_claim -> ls_resolve -> ls_apply (launches()).  It is
    the device loop's run (device_loop.DeviceRun): batches of p.batch steps; the run is
    done at the (last) local optimum, or once p.max_moves improving moves are applied;
    its iterations are the kicks of an ILS, else the moves."""

    def __init__(self, ctx: SolveContext, cand, p: LocalSearchParams):
        rt, dinst = ctx.rt, ctx.dinst
        n, m = ctx.inst.n, cand.m
        self.ctx, self.rt, self.n, self.cand = ctx, rt, n, cand
        use_2opt, use_oropt, use_3opt, use_lk = OPERATORS[p.ls]
        probe = dinst.kernel("localsearch", "ls_control", M=m, **PROGRAM_DEFINES)
        self.apply_wg = rt.work_group_size(probe, APPLY_GROUP)
        chains = {"LK_DEPTH": p.depth, "LK_BREADTH": p.breadth, "LK_STEP_M": min(p.chain_candidates, m)}
        defines = {"M": m, "USE_2OPT": use_2opt, "USE_OROPT": use_oropt, "USE_3OPT": use_3opt,
                   "USE_LK": use_lk, **(chains if use_lk else {}), "APPLY_GROUP": self.apply_wg,
                   **PROGRAM_DEFINES}
        self.k = {name: dinst.kernel("localsearch", name, **defines)
                  for name in ("ls_eval", "ls_control", "ls_claim", "ls_resolve", "ls_apply")}
        units = rt.device.max_compute_units
        # ls_eval: `sides` work-items per (city, slot).  Full passes use one; one-move steps
        # (ILS), whose queue holds a few hundred cities, split the serial 3-opt / chain
        # loops over the two tour directions and evaluate about 6 cities per unit at once.
        self.sides = {False: 1, True: 2 if use_3opt or use_lk else 1}
        self.eval_wg, self.eval_groups = {}, {}
        for single, sides in self.sides.items():
            city_items = m * sides
            wg = rt.work_group_size(self.k["ls_eval"], max(EVAL_GROUP, city_items))
            self.eval_wg[single] = max(city_items, wg // city_items * city_items)
            per_group = self.eval_wg[single] // city_items
            cities = SINGLE_CITIES_PER_UNIT * units if single else GROUPS_PER_UNIT * units * per_group
            self.eval_groups[single] = -(-min(n, cities) // per_group)
        self.apply_groups = min(-(-n // self.apply_wg), GROUPS_PER_UNIT * units)
        self.ctrl_wg = rt.work_group_size(self.k["ls_control"], 1024)
        self.item_size = min(-(-n // 64) * 64, 64 * GROUPS_PER_UNIT * units * 4)
        self.nblocks = -(-n // CLAIM_BLOCK)
        self.kicks = 0
        self.kicking = False
        self.one_move = p.moves == "best"
        self.batch, self.max_moves = p.batch, p.max_moves
        # the planned buffers (search_plan) as attributes: self.tour, self.pos, ...
        vars(self).update(vars(search_plan(n, p, max(self.eval_groups.values()),
                                           self.apply_groups).allocate(rt)))
        self.state_host = np.zeros(StateWord.PENDING + 2 * self.apply_groups, np.int64)
        self.words = self.state_host[:StateWord.PENDING]   # the last words read
        self.all_queued = False   # restart_*: a queue holding every city, filled once

    def load(self, order: np.ndarray, length: int) -> None:
        """Start from tour `order` (exact length `length`) with every city active."""
        n, rt = self.n, self.rt
        order = np.asarray(order, np.int32)
        pos = np.empty(n, np.int32)
        pos[order] = np.arange(n, dtype=np.int32)
        for buf, host in ((self.tour, order), (self.pos, pos)):
            rt.cl.enqueue_copy(rt.queue, buf, host)
        self.restart(length)

    def restart(self, length: int, queued: bool = False) -> None:
        """Start again from the tour now in the device's `tour` and `pos` buffers (exact
        length `length`) with every city active; nothing n-sized crosses to the device
        after the first start (pils restarts after every round).
        queued: the caller has filled the queue's first half, its count (qcount[0]) and
        the active flags with the only cities that may have an improving move (pils: the
        ends of the edges a round changed); the search starts from them and stops when
        the queue runs out, without a last pass over every city (FLAGS bit 3)."""
        self.kicking = False
        n, rt, q = self.n, self.rt, self.rt.queue
        if not queued and not self.all_queued:
            for buf, initial in ((self.restart_queue, np.tile(np.arange(n, dtype=np.int32), 2)),
                                 (self.restart_active, np.ones(n, np.int32)),
                                 (self.restart_qcount, np.array([n, 0], np.int32))):
                rt.cl.enqueue_copy(q, buf, initial)
            self.all_queued = True
        rt.cl.enqueue_copy(q, self.best_tour, self.tour)
        if not queued:
            for buf, initial in ((self.queue, self.restart_queue), (self.active, self.restart_active),
                                 (self.qcount, self.restart_qcount)):
                rt.cl.enqueue_copy(q, buf, initial)
        s, w = self.state_host, StateWord
        s[:] = 0
        s[w.CUR_LEN], s[w.BEST_LEN] = length, LONG_MAX
        # parity 0; every city queued, or a trusted queue
        s[w.FLAGS] = (8 if queued else 2) | (4 if self.one_move else 0)
        s[w.SEED_LO], s[w.SEED_HI] = self.ctx.seed & 0xFFFFFFFF, (self.ctx.seed >> 32) & 0xFFFFFFFF
        self.words = s[:StateWord.PENDING].copy()   # this start's words (not done)
        rt.cl.enqueue_copy(rt.queue, self.state, s)

    def set_kicks(self, budget: int, slack_ppm: int, window: int) -> None:
        """ILS: `budget` double bridges (cut points within `window` positions; 0: anywhere);
        a new local optimum more than `slack_ppm` parts per million longer than the best
        sends the walk back to the best (-1: never, the paper's acceptance)."""
        self.kicks = budget
        s, w = self.state_host, StateWord
        s[w.BUDGET], s[w.ACCEPT], s[w.KICK_WINDOW] = budget, slack_ppm, window
        self.rt.cl.enqueue_copy(self.rt.queue, self.state, s)

    def launches(self, single: bool = False) -> list:
        """The step's kernels in order, as (kernel, global size, local size), with their
        arguments set (kernel objects are shared: set again before every batch).
        single: ls_control applies the step's one move itself (ILS once kicking: the
        queue is small, two launches per step)."""
        n, lm, dist, cities = self.n, self.rt.cl.LocalMemory, self.ctx.dinst.dist_args, self.cand.cities
        groups, wg = self.eval_groups[single], self.eval_wg[single]
        steps = [
            ("ls_eval", groups * wg, wg,
             (*dist, cities, self.tour, self.pos, self.state, self.queue, self.qcount, self.active,
              self.ent_gain, self.ent_code, self.group_gain, self.group_code, self.block_gain,
              self.block_id, self.nblocks, self.sides[single], lm(8 * wg),
              lm(8 * wg))),
            ("ls_control", self.ctrl_wg, self.ctrl_wg,
             (*dist, cities, self.tour, self.pos, self.best_tour, self.group_gain, self.group_code,
              groups, self.apply_groups, self.state, self.move, self.queue,
              self.qcount, self.active, self.ent_gain, self.ent_code, int(single),
              lm(8 * self.ctrl_wg), lm(8 * self.ctrl_wg))),
            ("ls_claim", self.item_size, None,
             (*dist, cities, self.tour, self.pos, self.best_tour, self.state, self.qcount,
              self.ent_gain, self.ent_code, self.claim_first, self.claim_count, self.ent_move,
              self.block_gain, self.block_id)),
            ("ls_resolve", self.item_size, None,
             (n, self.state, self.qcount, self.ent_gain, self.ent_code, self.claim_first,
              self.claim_count, self.block_gain, self.block_id)),
            ("ls_apply", self.apply_groups * self.apply_wg, self.apply_wg,
             (n, cities, self.tour, self.pos, self.state, self.move, self.queue, self.qcount,
              self.active, self.ent_gain, self.ent_code, self.claim_first, self.claim_count,
              self.ent_move, self.block_id)),
        ][:2 if single else 5]
        out = []
        for name, gsize, lsize, args in steps:
            kernel = self.k[name]
            kernel.set_args(*args)
            out.append((kernel, (gsize,), None if lsize is None else (lsize,)))
        return out

    def enqueue(self, steps: int) -> list:
        """Enqueue `steps` steps (their launches' events).  Once an ILS has kicked, steps
        apply one move each from ls_control."""
        cl, q = self.rt.cl, self.rt.queue
        launches = self.launches(single=self.kicking)
        return [cl.enqueue_nd_range_kernel(q, k, g, l) for _ in range(steps) for k, g, l in launches]

    def read_words(self) -> np.ndarray:
        """Read the state words back (blocking; a few hundred bytes).  The returned
        CUR_LEN / MOVES include the moves still pending."""
        s = self.state_host
        self.rt.cl.enqueue_copy(self.rt.queue, s, self.state)
        out = s[:StateWord.PENDING].copy()
        out[StateWord.CUR_LEN] -= s[StateWord.PENDING::2].sum()
        out[StateWord.MOVES] += s[StateWord.PENDING + 1::2].sum()
        self.kicking = out[StateWord.KICKS] > 0
        self.words = out
        return out

    def run_batch(self, steps: int) -> np.ndarray:
        """Enqueue `steps` steps, then read the state words (read_words)."""
        events = self.enqueue(steps)
        out = self.read_words()
        self.ctx.timed_span(events[0], events[-1])
        return out

    def batch_size(self, status: LoopStatus) -> int:
        return self.batch

    def read_status(self) -> LoopStatus:
        w = self.read_words()
        moves = int(w[StateWord.MOVES])
        done = bool(w[StateWord.DONE]) or bool(self.max_moves and moves >= self.max_moves)
        best = min(int(w[StateWord.BEST_LEN]), int(w[StateWord.CUR_LEN]))
        return LoopStatus(best, int(w[StateWord.KICKS]) if self.kicks else moves, done)

    def best_buffer(self, status: LoopStatus):
        """best_tour (the best local optimum) unless the current tour is shorter."""
        return self.best_tour if self.words[StateWord.BEST_LEN] <= self.words[StateWord.CUR_LEN] else self.tour

    def after_batch(self, status: LoopStatus) -> None:
        pass


def search_plan(n: int, p: LocalSearchParams, groups: int | None = None,
                apply_groups: int | None = None) -> BufferPlan:
    """DeviceSearch's buffers for n cities: the tour, its positions and the best tour;
    the queue (two halves), its count and the active flags, and their every-city copies
    for restarts; each queued city's best move (gain, code, reversals) and its claim
    range; the claim blocks; the step's kick; the state words.  `groups` (ls_eval's
    work-groups) and `apply_groups` (ls_apply's) as the device sets them, else n, the
    most either can be."""
    groups = n if groups is None else groups
    apply_groups = n if apply_groups is None else apply_groups
    blocks = -(-n // CLAIM_BLOCK)
    i4, i8 = np.int32, np.int64
    return (BufferPlan()
            .add("tour", i4, n).add("pos", i4, n).add("best_tour", i4, n)
            .add("queue", i4, 2 * n).add("qcount", i4, 2).add("active", i4, n)
            .add("restart_queue", i4, 2 * n).add("restart_active", i4, n)
            .add("restart_qcount", i4, 2)
            .add("ent_gain", i8, n).add("ent_code", i8, n)
            .add("ent_move", i4, 2 * move_reversals(p) * n)   # MOVE_WORDS ints per entry
            .add("claim_first", i4, n).add("claim_count", i4, n)
            .add("block_gain", i4, blocks).add("block_id", i4, blocks)
            .add("group_gain", i8, groups).add("group_code", i8, groups)
            .add("move", i4, 2 * KICK_REVERSALS)
            .add("state", i8, StateWord.PENDING + 2 * apply_groups))


def _buffers(inst: Instance, p: LocalSearchParams, limits=None) -> BufferPlan:
    """The instance, the nearest-neighbour start (its candidate lists and buffers), the
    search's candidate lists and its buffers."""
    return (shared_plan(inst, NearestNeighborParams().candidates, p.candidates)
            .merge(nn_plan(inst.n)).merge(search_plan(inst.n, p)))


def reversal_problem(inst: Instance, solver: str = "local search") -> str | None:
    """Why a solver that reverses tour paths over candidate lists (local search, pils)
    cannot take `inst`, or None."""
    if not inst.symmetric:
        return f"{solver} uses reversals: symmetric instances only (ATSP: use nn)"
    if inst.n * 64 >= 2**31:
        return f"{solver} handles up to {2**31 // 64} cities (n * m must fit 32 bits)"
    return None


SOLVERS = [
    SolverSpec("2opt", "2-opt local search to a local optimum (many moves per pass; moves=best: one)",
               LocalSearchParams, run_local_search, _buffers, unsupported=reversal_problem,
               budget_param="max_moves", memory_hint=MEMORY_HINT),
    SolverSpec("oropt", "Or-opt local search (segments of 1-3 cities)",
               OrOptParams, run_local_search, _buffers, unsupported=reversal_problem,
               budget_param="max_moves", memory_hint=MEMORY_HINT),
    SolverSpec("3opt", "3-opt search: 2-opt, Or-opt and the four 3-opt reconnections of "
               "neighbour triples", ThreeOptParams, run_local_search, _buffers, unsupported=reversal_problem,
               budget_param="max_moves", memory_hint=MEMORY_HINT),
    SolverSpec("lk", "3-opt search plus Lin-Kernighan chains of up to `depth` 2-opt steps",
               LinKernighanParams, run_local_search, _buffers, unsupported=reversal_problem,
               budget_param="max_moves", memory_hint=MEMORY_HINT),
    SolverSpec("ils", "iterated local search: double-bridge kicks + local search",
               IteratedLocalSearchParams, run_local_search, _buffers, unsupported=reversal_problem,
               budget_param="kicks", memory_hint=MEMORY_HINT),
]
