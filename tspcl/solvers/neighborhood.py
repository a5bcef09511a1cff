"""Hill climbing and tabu search over neighbourhoods generated on the device.

Luong et al. (../shared/papers/luong-gpu-local-search-metaheuristics.txt): the
neighbourhood is generated and evaluated on the device (section 3.1) through index
mappings (section 4.6, Appendix A), the best move found by a reduction on the device
(section 6.7), the launch geometry tuned in waves (section 4.1, tspcl/thread_control.py);
the paper's experiments run tabu search for 10,000 iterations (section 6).  Neighbourhoods:
swap (2-exchange, n(n-1)/2 moves), 2-opt (the same pairs), 3-exchange (rotations of three
cities, 2 C(n,3) moves), full as in the paper or restricted to candidate lists
(kernels_cl/neighborhood.cl says how ids map to moves).

An iteration is two launches (nb_eval, nb_apply); iterations run in batches
(tspcl/solvers/device_loop.py): the host reads the state words after each batch, the best
tour only when it improved (at most every PUBLISH_S seconds, SolveContext.publish_due)
and at the end; while thread control tunes, a batch is one configuration's probe
iteration or its other trials.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from enum import IntEnum
from math import comb

import numpy as np

from ..buffers import BufferPlan
from ..device import round_up
from ..errors import UsageError
from ..instance import Instance
from ..neighbors import CandidateParams
from ..params import param
from ..thread_control import LaunchConfig, ThreadControl, axes, group_axis, waves
from .base import MAX_BATCH, MAX_CANDIDATES, SolveContext, SolverSpec, check_count, shared_plan
from .construct import (NearestNeighborParams, NoParams, candidate_length, nn_plan, random_plan, run_nn,
                        run_random)
from .device_loop import LONG_MAX, Launch, LoopStatus, run_device_loop, word_defines

NEIGHBORHOODS = {"swap": 0, "2opt": 1, "3exchange": 2}  # neighborhood.cl NB_*
STARTS = {"nn": lambda ctx: run_nn(ctx, NearestNeighborParams()),
          "random": lambda ctx: run_random(ctx, NoParams())}
NO_MOVE = LONG_MAX           # neighborhood.cl: a delta of no admissible move


class StateWord(IntEnum):
    """The state words (long) of neighborhood.cl, -D S_<NAME>."""

    CUR = 0          # length of the current tour
    BEST = 1         # length of best_tour
    ITER = 2         # iterations done (moves taken)
    DONE = 3         # 1: budget spent, local optimum (hill climbing) or no admissible move
    BUDGET = 4       # iterations to do
    TENURE = 5       # tabu tenure; -1: hill climbing (only improving moves)
    LAST_ID = 6      # the last move taken: its id,
    LAST_DELTA = 7   # its delta,
    LAST_TABU = 8    # 1 if it was tabu (taken by aspiration)


def program_defines(neighborhood: str, m: int) -> dict:
    """neighborhood.cl's defines: the neighbourhood NB and its codes NB_*, CAND_M, the
    state words S_*."""
    return {"NB": NEIGHBORHOODS[neighborhood], "CAND_M": m, **word_defines("S_", StateWord),
            **{f"NB_{name.upper()}": code for name, code in NEIGHBORHOODS.items()}}
DEFAULT_GROUP = 256          # the paper's threads per block (section 6)
MAX_THREADS = 1 << 26        # cap on the global size (work-items loop over the rest)
MIN_GROUP = 32               # the smallest work-group thread control tries
MAX_MOVE_IDS = 2**64 // 3    # neighborhood.cl maps 3-exchange ids through 3 x the id in 64 bits


@dataclass(frozen=True)
class HillClimbingParams:
    """Luong's local search framework: a neighbourhood of moves generated on the device
    by index mapping, the best admissible move taken each iteration, and thread control
    choosing the launch geometry."""

    RENAMED: ClassVar[dict] = {"m": "candidates", "neighbors": "candidate_kind", "start": "init"}

    neighborhood: str = param("swap", "moves: swap (2-exchange, the paper's), 2opt or 3exchange "
                              "(rotate three cities)")
    iterations: int = param(10000, "moves taken at most (the paper's 10,000)")
    candidates: int = param(0, "moves only within this many candidates per city (0: the full "
                            "neighbourhood, the paper's)")
    candidate_kind: str = param("quadrant", "candidate lists: quadrant or knn")
    init: str = param("nn", "start tour: nn (nearest neighbour) or random (the paper's)")
    threads: int = param(0, "global size of the evaluation launch (0: tuned by thread control)")
    group: int = param(0, "work-group size of the evaluation launch (0: tuned by thread control)")
    trials: int = param(10, "thread control: iterations per launch configuration tried")
    tuning: str = param("axes", "thread control: axes (the global size, then the work-group "
                        "size) or waves (the paper's whole grid)")
    batch: int = param(50, "iterations between two reads of the status")

    def __post_init__(self):
        if self.neighborhood not in NEIGHBORHOODS:
            raise UsageError(f"neighborhood must be one of {', '.join(NEIGHBORHOODS)} "
                             f"(got {self.neighborhood!r})")
        check_count("iterations", self.iterations)
        check_count("candidates", self.candidates, 0, MAX_CANDIDATES,
                    note=", 0 for the full neighbourhood")
        if self.candidates:
            CandidateParams(self.candidate_kind, self.candidates)
        if self.init not in STARTS:
            raise UsageError(f"init must be one of {', '.join(STARTS)} (got {self.init!r})")
        for name in ("threads", "group"):
            check_count(name, getattr(self, name), 0, MAX_THREADS, note=", 0 for thread control")
        if self.tuning not in ("axes", "waves"):
            raise UsageError(f"tuning must be axes or waves (got {self.tuning!r})")
        check_count("trials", self.trials, 1, MAX_BATCH)
        check_count("batch", self.batch, 1, MAX_BATCH)


@dataclass(frozen=True)
class TabuParams(HillClimbingParams):
    """As hill climbing, with moved cities tabu for a while (aspiration: a tabu move that
    beats the best is taken)."""

    tenure: int = param(10, "iterations a moved city stays tabu")

    def __post_init__(self):
        super().__post_init__()
        check_count("tenure", self.tenure)


def neighborhood_size(neighborhood: str, n: int, m: int = 0) -> int:
    """Move ids of a neighbourhood (some name no move: neighborhood.cl)."""
    if m:
        return {"swap": n * m, "2opt": 2 * n * m, "3exchange": 2 * n * m * m}[neighborhood]
    return 2 * comb(n, 3) if neighborhood == "3exchange" else comb(n, 2)


class DeviceNeighborhoodSearch:
    """The device side of one run: tour, positions, best tour, tabu list, state."""

    def __init__(self, ctx: SolveContext, p: HillClimbingParams, tenure: int):
        rt, n = ctx.rt, ctx.inst.n
        self.ctx, self.rt, self.n = ctx, rt, n
        kind = p.candidate_kind if ctx.inst.has_coords else "knn"
        cand = ctx.candidates(CandidateParams(kind, p.candidates)) if p.candidates else None
        m = cand.m if cand else 0
        self.count = neighborhood_size(p.neighborhood, n, m)
        # the planned buffers (search_plan) as attributes: self.tour, self.pos, ...
        vars(self).update(vars(search_plan(n, self.count, cand is not None).allocate(rt)))
        self.cand = cand.cities if cand else self.no_candidates
        defines = program_defines(p.neighborhood, m)
        self.eval_k = ctx.dinst.kernel("neighborhood", "nb_eval", **defines)
        self.apply_k = ctx.dinst.kernel("neighborhood", "nb_apply", **defines)
        self.apply_wg = rt.work_group_size(self.apply_k, 1024)
        rt.cl.enqueue_fill_buffer(rt.queue, self.tabu_until, np.int32(0), 0, 4 * n)
        threads_cap = most_threads(self.count)
        self.group_results = max_groups(threads_cap)
        self.state_host = np.zeros(len(StateWord), np.int64)
        default = LaunchConfig(round_up(threads_cap, DEFAULT_GROUP), DEFAULT_GROUP)
        if p.threads or p.group:
            group = p.group or DEFAULT_GROUP
            fixed = LaunchConfig(round_up(p.threads or threads_cap, group), group)
            if fixed.threads // fixed.group > self.group_results:
                raise UsageError(f"threads={fixed.threads} in groups of {group} makes more than "
                                 f"{self.group_results} work-groups; use fewer threads")
            self.control = ThreadControl(default, fixed=fixed)
        elif p.tuning == "waves":
            self.control = ThreadControl(default, waves(n, self.count, threads_cap), trials=p.trials)
        else:
            self.control = ThreadControl(default, axes(n, self.count, threads_cap), trials=p.trials,
                                         then=group_axis)
        self.state_host[StateWord.TENURE] = tenure

    def load(self, order: np.ndarray, length: int, budget: int) -> None:
        n, rt = self.n, self.rt
        order = np.asarray(order, np.int32)
        pos = np.empty(n, np.int32)
        pos[order] = np.arange(n, dtype=np.int32)
        for buf, host in ((self.tour, order), (self.best_tour, order), (self.pos, pos)):
            rt.cl.enqueue_copy(rt.queue, buf, host)
        s = self.state_host
        s[StateWord.CUR] = s[StateWord.BEST] = length
        s[StateWord.ITER] = 0
        s[StateWord.BUDGET] = budget
        s[StateWord.DONE] = int(budget == 0)
        rt.cl.enqueue_copy(rt.queue, self.state, s)

    def enqueue(self, iterations: int, config: LaunchConfig) -> list:
        """Enqueue `iterations` iterations; returns (eval, apply) event pairs.  A launch
        the device refuses raises before anything of the batch is enqueued (the first
        launch of the batch is the one with the new geometry)."""
        cl, q = self.rt.cl, self.rt.queue
        self._set_args(config, 0, self.count, False)
        events = []
        for _ in range(iterations):
            e = cl.enqueue_nd_range_kernel(q, self.eval_k, (config.threads,), (config.group,))
            a = cl.enqueue_nd_range_kernel(q, self.apply_k, (self.apply_wg,), (self.apply_wg,))
            events.append((e, a))
        return events

    def launches(self, config: LaunchConfig) -> list:
        """One iteration as launches (device_loop.Launch): the evaluation, a unit a
        `config.threads` move ids (nb_eval: the same moves found in any slices of them),
        and the move's application."""
        cl, q = self.rt.cl, self.rt.queue
        ids = config.threads

        def evaluate(first: int, count: int) -> list:
            self._set_args(config, first * ids, min(self.count, (first + count) * ids), first > 0)
            return [cl.enqueue_nd_range_kernel(q, self.eval_k, (config.threads,), (config.group,))]

        return [Launch(-(-self.count // ids), evaluate),
                Launch.whole(lambda: [cl.enqueue_nd_range_kernel(q, self.apply_k, (self.apply_wg,),
                                                                 (self.apply_wg,))])]

    def _set_args(self, config: LaunchConfig, first: int, end: int, merge: bool) -> None:
        """The launches' arguments: nb_eval over move ids first to end - 1 (`merge`: kept
        with the groups' moves of the ids before), nb_apply over config's groups."""
        lm = self.rt.cl.LocalMemory
        groups = config.threads // config.group
        self.eval_k.set_args(*self.ctx.dinst.dist_args, self.tour, self.pos, self.cand,
                             self.tabu_until, self.state, first, end, int(merge), self.group_delta,
                             self.group_id, lm(8 * config.group), lm(8 * config.group))
        self.apply_k.set_args(*self.ctx.dinst.dist_args, self.tour, self.pos, self.best_tour,
                              self.cand, self.tabu_until, self.state, self.group_delta,
                              self.group_id, groups, lm(8 * self.apply_wg),
                              lm(8 * self.apply_wg))

    def read_state(self) -> np.ndarray:
        self.rt.cl.enqueue_copy(self.rt.queue, self.state_host, self.state)
        return self.state_host.copy()


def most_threads(count: int) -> int:
    """The evaluation launch's global size at most, for `count` move ids: one work-item
    a move up to MAX_THREADS (work-items loop over the rest), at least MIN_GROUP."""
    return max(MIN_GROUP, min(count, MAX_THREADS))


def max_groups(threads: int) -> int:
    """Work-group results the buffers hold: the most any tried geometry makes (global
    sizes up to the power of two above `threads`, or 512, in groups of 32 or more)."""
    top = max(512, 1 << max(0, threads - 1).bit_length())
    return top // MIN_GROUP + 1


class NeighborhoodRun:
    """The device loop's run (device_loop.SplitRun) of one search: batches of `batch`
    iterations up to the budget once thread control has chosen; while it tunes, a batch
    is the current configuration's probe iteration, then, if the probe was not slow, its
    other trials.  A launch the device refuses goes to thread control, and the batch is
    enqueued again with the configuration it then gives."""

    def __init__(self, search: DeviceNeighborhoodSearch, p: HillClimbingParams):
        self.search, self.p, self.control = search, p, search.control
        self.probe = None    # the probe's (eval, apply) events while its trials are due
        self.trial = False   # whether the last batch ran a configuration under trial
        self.pairs = []      # the last batch's (eval, apply) events

    def batch_size(self, status: LoopStatus) -> int:
        if self.control.tuning:
            return 1 if self.probe is None else self.control.trials - 1
        return min(self.p.batch, self.p.iterations - status.iterations)

    def enqueue(self, count: int) -> list:
        while True:
            try:
                self.pairs = self.search.enqueue(count, self.control.current)
                break
            except self.search.rt.cl.Error as error:
                self.control.failed(error)
                self.probe = None
        self.trial = self.control.tuning
        return [e for pair in self.pairs for e in pair]

    def next_step(self) -> list:
        """The next iteration, in the current configuration, as launches; it is no
        trial of thread control (its timing holds the loop's waits)."""
        self.trial, self.pairs = False, []
        return self.search.launches(self.control.current)

    def read_status(self) -> LoopStatus:
        state = self.search.read_state()
        return LoopStatus(int(state[StateWord.BEST]), int(state[StateWord.ITER]), bool(state[StateWord.DONE]))

    def best_buffer(self, status: LoopStatus):
        return self.search.best_tour

    def after_batch(self, status: LoopStatus) -> None:
        if not self.trial:
            return
        control = self.control
        if self.probe is None and control.trials > 1 and control.promising(_seconds(self.pairs[0])):
            self.probe = self.pairs
            return
        control.measured([_seconds(e) for e in (self.probe or []) + self.pairs])
        self.probe = None


def run_neighborhood_search(ctx: SolveContext, p: HillClimbingParams) -> None:
    """Start tour, then hill climbing (best improving move until none is left) or tabu
    search (best admissible move, `iterations` of them)."""
    inst = ctx.inst
    if p.neighborhood == "2opt" and not inst.symmetric:
        raise UsageError("the 2opt neighbourhood reverses segments: symmetric instances "
                         "only (ATSP: use --neighborhood swap or 3exchange)")
    if neighborhood_size(p.neighborhood, inst.n, p.candidates) > MAX_MOVE_IDS:
        raise UsageError(f"the full {p.neighborhood} neighbourhood of {inst.n} cities has more moves "
                         f"than 64-bit move ids number; restrict it to candidates (-p candidates=10)")
    STARTS[p.init](ctx)
    if inst.n < 5:
        return  # every tour of 4 or fewer cities is as good as any other
    if ctx.stop(0):
        return  # the time limit is spent: the start tour is the result
    tenure = p.tenure if isinstance(p, TabuParams) else -1
    search = DeviceNeighborhoodSearch(ctx, p, tenure)
    search.load(ctx.best_order, ctx.best_length, p.iterations)
    run_device_loop(ctx, NeighborhoodRun(search, p))
    search.control.finish()
    ctx.notes.extend(search.control.log)


def _seconds(iteration_events) -> float:
    """Device time of one iteration: nb_eval's start to nb_apply's end."""
    evaluate, apply = iteration_events
    return (apply.profile.end - evaluate.profile.start) * 1e-9


def search_plan(n: int, count: int, lists: bool) -> BufferPlan:
    """DeviceNeighborhoodSearch's buffers for n cities and `count` move ids: the tour, its
    positions, the best tour, the tabu list; the work-group results (delta, id) of the
    most work-groups any tried geometry makes; the state words; without candidate
    `lists`, the one int that stands in for them."""
    groups = max_groups(most_threads(count))
    plan = (BufferPlan().add("tour", np.int32, n).add("pos", np.int32, n)
            .add("best_tour", np.int32, n).add("tabu_until", np.int32, n)
            .add("group_delta", np.int64, groups).add("group_id", np.uint64, groups)
            .add("state", np.int64, len(StateWord)))
    return plan if lists else plan.add("no_candidates", np.int32, 1)


def _buffers(inst: Instance, p: HillClimbingParams, limits=None) -> BufferPlan:
    """The run's buffers: the candidate lists (nn's and the search's, one where they are
    the same), the start tour's (nn's or random's) and the search's."""
    n = inst.n
    lists = []
    if p.init == "nn":
        lists.append(CandidateParams("knn", NearestNeighborParams().candidates))
    if p.candidates:
        lists.append(CandidateParams(p.candidate_kind if inst.has_coords else "knn", p.candidates))
    start = nn_plan(n) if p.init == "nn" else random_plan(n)
    m = candidate_length(n, p.candidates)
    return (shared_plan(inst, *(c.k for c in dict.fromkeys(lists))).merge(start)
            .merge(search_plan(n, neighborhood_size(p.neighborhood, n, m), bool(p.candidates))))


def _positions_fit(inst: Instance) -> str | None:
    if inst.n >= 2**31 // 64:
        return f"neighbourhood search handles up to {2**31 // 64 - 1} cities"
    return None


SOLVERS = [
    SolverSpec("hc", "hill climbing: the best improving move of a swap, 2-opt or 3-exchange "
               "neighbourhood until none is left", HillClimbingParams, run_neighborhood_search,
               _buffers, unsupported=_positions_fit, budget_param="iterations"),
    SolverSpec("tabu", "tabu search: the best admissible move of a swap, 2-opt or 3-exchange "
               "neighbourhood, moved cities tabu for `tenure` iterations",
               TabuParams, run_neighborhood_search, _buffers, unsupported=_positions_fit,
               budget_param="iterations"),
]
