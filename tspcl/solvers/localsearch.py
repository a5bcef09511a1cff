"""Local search (2-opt, Or-opt) and iterated local search on the device.

Fosin et al. 2013 (../shared/papers/fosin2013-gpu-2opt-3opt-ils.txt): best-improvement
passes over quadrant candidate lists (m = 40), one work-item per (city, candidate),
section 4.1; ILS with double-bridge kicks, Algorithm 1.  The whole loop runs on the
device (kernels_cl/localsearch.cl): each step is eval -> control -> copy -> 4 reversals,
enqueued in batches; the host reads the 16-word state after each batch and the best
tour only when it improved (at most every PUBLISH_S seconds) and at the end.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from ..instance import Instance
from ..neighbors import CandidateParams, candidate_bytes
from .base import SolveContext, SolverSpec
from .construct import NearestNeighborParams, run_nn

# ls name -> (2-opt, Or-opt, 3-opt segment exchange) moves evaluated
OPERATORS = {"2opt": (1, 0, 0), "oropt": (0, 1, 0), "2opt+oropt": (1, 1, 0), "3opt": (1, 1, 1)}
STATE_WORDS = 16
S_CUR_LEN, S_BEST_LEN, S_KICKS, S_BUDGET, S_DONE, S_MOVES = 0, 1, 2, 3, 4, 5
S_ACCEPT, S_KICK_WINDOW, S_SEED_LO, S_SEED_HI, S_STEPS = 8, 9, 10, 11, 12
EVAL_GROUP = 128        # work-items per eval work-group (the paper's tb = 128)
PUBLISH_S = 1.0
REVERSALS = 4           # a move is applied as at most this many reversals (localsearch.cl)         # read the best tour back at most this often while improving
LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class LocalSearchParams:
    """ls: operators; neighbors/m: candidate lists (paper: quadrant, m = 40);
    batch: steps enqueued between two reads of the status words."""

    ls: str = "2opt"
    neighbors: str = "quadrant"
    m: int = 40
    batch: int = 64

    def __post_init__(self):
        if self.ls not in OPERATORS:
            raise UsageError(f"ls must be one of {', '.join(OPERATORS)} (got {self.ls!r})")
        CandidateParams(self.neighbors, self.m)  # validates kind and count
        if self.ls == "3opt" and self.m > 50:
            raise UsageError(f"3opt takes at most 50 candidates per city (got m={self.m})")
        if self.batch < 1:
            raise UsageError(f"batch must be at least 1 (got {self.batch})")


@dataclass(frozen=True)
class OrOptParams(LocalSearchParams):
    ls: str = "oropt"


@dataclass(frozen=True)
class ThreeOptParams(LocalSearchParams):
    ls: str = "3opt"


@dataclass(frozen=True)
class IteratedLocalSearchParams(LocalSearchParams):
    """kicks: double bridges, as a number or a multiple of n ('0.1n', '1n', '10n');
    accept: 'always' (paper: s := s'') or 'better'; kick: 'random' cut points (paper)
    or 'local' (cut points within `window` positions)."""

    ls: str = "3opt"
    kicks: str = "1n"
    accept: str = "always"
    kick: str = "random"
    window: int = 50

    def __post_init__(self):
        super().__post_init__()
        if self.accept not in ("always", "better"):
            raise UsageError(f"accept must be always or better (got {self.accept!r})")
        if self.kick not in ("random", "local"):
            raise UsageError(f"kick must be random or local (got {self.kick!r})")
        if self.window < 3:
            raise UsageError(f"window must be at least 3 (got {self.window})")
        kick_budget(self.kicks, 100)

    def budget(self, n: int) -> int:
        return kick_budget(self.kicks, n)


def kick_budget(spec: str, n: int) -> int:
    """'0.1n' -> ceil(0.1 n); '250' -> 250."""
    s = str(spec).strip().lower()
    try:
        value = math.ceil(float(s[:-1] or 1) * n) if s.endswith("n") else int(s)
    except ValueError:
        raise UsageError(f"kicks must be a count or a multiple of n like 0.1n (got {spec!r})") from None
    if value < 0:
        raise UsageError(f"kicks must not be negative (got {spec!r})")
    return value


def run_local_search(ctx: SolveContext, p: LocalSearchParams) -> None:
    """NN start, then best-improvement local search (ILS when p has a kick budget)."""
    rt, dinst, inst = ctx.rt, ctx.dinst, ctx.inst
    n = inst.n
    run_nn(ctx, NearestNeighborParams())
    if n < 8:
        return  # too small for the moves' assumptions; NN is already the result
    cand = ctx.candidates(CandidateParams(p.neighbors if inst.has_coords else "knn", p.m))
    m = cand.m
    use_2opt, use_oropt, use_3opt = OPERATORS[p.ls]
    defines = {"M": m, "USE_2OPT": use_2opt, "USE_OROPT": use_oropt, "USE_3OPT": use_3opt}
    k_eval = dinst.kernel("localsearch", "ls_eval", **defines)
    k_ctrl = dinst.kernel("localsearch", "ls_control", **defines)
    k_copy = dinst.kernel("localsearch", "ls_copy", **defines)
    k_apply = dinst.kernel("localsearch", "apply_reversal", **defines)
    wg = rt.work_group_size(k_eval, EVAL_GROUP)
    groups = -(-n * m // wg)
    cwg = rt.work_group_size(k_ctrl, 256)

    order = ctx.best_order.astype(np.int32)
    tour = rt.to_device(order)
    pos = np.empty(n, np.int32)
    pos[order] = np.arange(n, dtype=np.int32)
    pos = rt.to_device(pos)
    best_tour = rt.to_device(order)
    state_host = np.zeros(STATE_WORDS, np.int64)
    state_host[S_CUR_LEN] = ctx.best_length
    state_host[S_BEST_LEN] = LONG_MAX
    ils = isinstance(p, IteratedLocalSearchParams)
    if ils:
        state_host[S_BUDGET] = p.budget(n)
        state_host[S_ACCEPT] = 1 if p.accept == "better" else 0
        state_host[S_KICK_WINDOW] = p.window if p.kick == "local" else 0
    state_host[S_SEED_LO] = ctx.seed & 0xFFFFFFFF
    state_host[S_SEED_HI] = (ctx.seed >> 32) & 0xFFFFFFFF
    state = rt.to_device(state_host)
    move = rt.empty(4 * (1 + 2 * REVERSALS))
    group_gain, group_code = rt.empty(8 * groups), rt.empty(8 * groups)
    apply_size = -(-(n // 2 + 2) // 64) * 64
    copy_size = -(-n // 64) * 64
    dist = dinst.dist_args
    local_g, local_c = rt.cl.LocalMemory(8 * wg), rt.cl.LocalMemory(8 * wg)
    clocal_g, clocal_c = rt.cl.LocalMemory(8 * cwg), rt.cl.LocalMemory(8 * cwg)
    q = rt.queue

    def step(first: bool):
        e = k_eval(q, (groups * wg,), (wg,), *dist, cand.cities, tour, pos, state,
                   group_gain, group_code, local_g, local_c)
        k_ctrl(q, (cwg,), (cwg,), *dist, tour, pos, cand.cities, group_gain, group_code,
               np.int32(groups), state, move, clocal_g, clocal_c)
        k_copy(q, (copy_size,), None, np.int32(n), state, tour, pos, best_tour)
        last = None
        for r in range(REVERSALS):
            last = k_apply(q, (apply_size,), None, np.int32(n), move, np.int32(r), tour, pos)
        return e if first else last

    published_len, published_at = ctx.best_length, time.perf_counter()
    iteration = 0
    while True:
        first = last = step(True)
        for _ in range(p.batch - 1):
            last = step(False)
        rt.cl.enqueue_copy(q, state_host, state)  # blocking: a few bytes of status
        ctx.timed_span(first, last)
        iteration = int(state_host[S_KICKS]) if ils else int(state_host[S_MOVES])
        best_len = int(min(state_host[S_BEST_LEN], state_host[S_CUR_LEN]))
        done = bool(state_host[S_DONE])
        if done or (best_len < published_len and time.perf_counter() - published_at >= PUBLISH_S):
            _publish(ctx, rt, tour, best_tour, state_host, iteration)
            published_len, published_at = best_len, time.perf_counter()
        if done or ctx.stop(iteration):
            break
    if not done:
        _publish(ctx, rt, tour, best_tour, state_host, iteration)
    ctx.iterations = iteration


def _publish(ctx, rt, tour, best_tour, state_host, iteration):
    """Offer the best device tour to the context (host recomputes its exact length)."""
    if state_host[S_BEST_LEN] != LONG_MAX:
        ctx.improve(ctx.read_tour(best_tour), iteration)
    ctx.improve(ctx.read_tour(tour), iteration)


def _memory(inst: Instance, p: LocalSearchParams) -> int:
    n = inst.n
    base = inst.matrix.nbytes if inst.matrix is not None else inst.device_coords.nbytes
    return base + candidate_bytes(n, p.m) + 4 * n * 6 + 12 * (n * p.m // 64 + 1)


def _symmetric(inst: Instance) -> str | None:
    if not inst.symmetric:
        return "local search uses reversals: symmetric instances only (ATSP: use nn)"
    if inst.n * 64 >= 2**31:
        return f"local search handles up to {2**31 // 64} cities (n * m must fit 32 bits)"
    return None


SOLVERS = [
    SolverSpec("2opt", "2-opt local search to a local optimum (best improvement per pass)",
               LocalSearchParams, run_local_search, _memory, unsupported=_symmetric),
    SolverSpec("oropt", "Or-opt local search (segments of 1-3 cities)",
               OrOptParams, run_local_search, _memory, unsupported=_symmetric),
    SolverSpec("3opt", "3-opt search: 2-opt, Or-opt and segment-exchange moves over "
               "neighbour triples", ThreeOptParams, run_local_search, _memory, unsupported=_symmetric),
    SolverSpec("ils", "iterated local search: double-bridge kicks + local search",
               IteratedLocalSearchParams, run_local_search, _memory, unsupported=_symmetric),
]
