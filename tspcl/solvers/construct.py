"""Construction heuristics on the device (kernels_cl/construct.cl).

nn      nearest neighbour from a start city, over nearest-city candidate lists
greedy  greedy edge over candidate edges, fragments joined by nearest free end
sfc     Hilbert space-filling-curve order (needs coordinates or display data)
random  a uniformly random permutation (Philox keys, sorted on the device)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import UsageError
from ..instance import Instance
from ..neighbors import CandidateParams, candidate_bytes
from ..params import param
from ..sort import padded_length, sort_keys
from .base import MAX_CANDIDATES, SolveContext, SolverSpec, check_count

GROUP_SIZE = 256  # the single work-group of nn_tour / greedy_tour (capped by the device)
CANDIDATES_HINT = "fewer candidates (e.g. -p candidates=5)"


@dataclass(frozen=True)
class NearestNeighborParams:
    """The nearest-neighbour tour's start and candidate lists."""

    RENAMED: ClassVar[dict] = {"start": "start_city", "k": "candidates"}

    start_city: int = param(0, "1-based city the tour starts from; 0: drawn from the seed")
    candidates: int = param(10, "nearest cities per city the tour looks at before all others")

    def __post_init__(self):
        check_count("start_city", self.start_city, note=", a city number, or 0 for a seeded draw")
        check_count("candidates", self.candidates, 1, MAX_CANDIDATES)


@dataclass(frozen=True)
class GreedyParams:
    """The candidate edges greedy matching considers before joining fragments."""

    RENAMED: ClassVar[dict] = {"k": "candidates"}

    candidates: int = param(10, "nearest cities per city whose edges greedy sorts and joins")

    def __post_init__(self):
        check_count("candidates", self.candidates, 1, MAX_CANDIDATES)


@dataclass(frozen=True)
class NoParams:
    pass


def start_city(seed: int, n: int, start: int = 0) -> int:
    """0-based start: the given 1-based city, or one drawn from the seed (Philox)."""
    if start:
        if start > n:
            raise UsageError(f"start city {start} is not in 1..{n}")
        return start - 1
    return int(np.random.Generator(np.random.Philox(np.random.SeedSequence(seed))).integers(n))


def _single_group(ctx: SolveContext, kernel) -> int:
    return ctx.rt.work_group_size(kernel, GROUP_SIZE)


def run_nn(ctx: SolveContext, p: NearestNeighborParams) -> None:
    rt, dinst, n = ctx.rt, ctx.dinst, ctx.inst.n
    cand = ctx.candidates(CandidateParams("knn", p.candidates))
    k = dinst.kernel("construct", "nn_tour")
    wg = _single_group(ctx, k)
    tour = rt.empty(4 * n)
    ev = k(rt.queue, (wg,), (wg,), *dinst.dist_args, cand.cities, np.int32(cand.m),
           np.int32(start_city(ctx.seed, n, p.start_city)), tour, rt.empty(4 * n), rt.empty(4 * n),
           rt.empty(n), rt.cl.LocalMemory(4 * wg), rt.cl.LocalMemory(4 * wg))
    ctx.timed(ev)
    ctx.improve(ctx.read_tour(tour), 0)


def run_greedy(ctx: SolveContext, p: GreedyParams) -> None:
    rt, dinst, n = ctx.rt, ctx.dinst, ctx.inst.n
    cand = ctx.candidates(CandidateParams("knn", p.candidates))
    m = cand.m
    length = padded_length(n * m + 1)  # at least one ~0 key ends the edge list
    keys = rt.empty(8 * length)
    mk = dinst.kernel("construct", "greedy_edge_keys")
    events = [mk(rt.queue, (length,), None, np.int32(n), cand.cities, cand.dists,
                 np.int32(m), keys, np.int32(length))]
    events += sort_keys(rt, keys, length)
    k = dinst.kernel("construct", "greedy_tour")
    wg = _single_group(ctx, k)
    tour = rt.empty(4 * n)
    events.append(k(rt.queue, (wg,), (wg,), *dinst.dist_args, keys, cand.cities, np.int32(m),
                    rt.empty(8 * n), rt.empty(4 * n), rt.empty(4 * n), tour, rt.empty(4 * n),
                    rt.empty(4 * n), rt.cl.LocalMemory(4 * wg), rt.cl.LocalMemory(4 * wg)))
    ctx.timed(events)
    ctx.improve(ctx.read_tour(tour), 0)


def _tour_from_keys(ctx: SolveContext, keys, length: int, events: list) -> None:
    rt, n = ctx.rt, ctx.inst.n
    events += sort_keys(rt, keys, length)
    tour = rt.empty(4 * n)
    k = rt.kernel("construct", "keys_to_tour", ctx.dinst.defines)
    events.append(k(rt.queue, (length,), None, np.int32(n), keys, tour))
    ctx.timed(events)
    ctx.improve(ctx.read_tour(tour), 0)


def run_sfc(ctx: SolveContext, p: NoParams) -> None:
    rt, n = ctx.rt, ctx.inst.n
    plane = ctx.inst.planar_coords
    lo, hi = plane.min(axis=0), plane.max(axis=0)
    span = float(max((hi - lo).max(), 1e-300))
    length = padded_length(n)
    keys = rt.empty(8 * length)
    k = ctx.dinst.kernel("construct", "hilbert_keys")
    ev = k(rt.queue, (length,), None, np.int32(n), rt.to_device(np.ascontiguousarray(plane)),
           np.float64(lo[0]), np.float64(lo[1]), np.float64(65535.0 / span), keys, np.int32(length))
    _tour_from_keys(ctx, keys, length, [ev])


def run_random(ctx: SolveContext, p: NoParams) -> None:
    rt, n = ctx.rt, ctx.inst.n
    length = padded_length(n)
    keys = rt.empty(8 * length)
    k = ctx.dinst.kernel("construct", "random_keys")
    ev = k(rt.queue, (length,), None, np.int32(n), np.uint32(ctx.seed & 0xFFFFFFFF),
           np.uint32((ctx.seed >> 32) & 0xFFFFFFFF), keys, np.int32(length))
    _tour_from_keys(ctx, keys, length, [ev])


def _instance_bytes(inst: Instance) -> int:
    return inst.matrix.nbytes if inst.matrix is not None else inst.device_coords.nbytes


def _needs_plane(inst: Instance) -> str | None:
    return None if inst.planar_coords is not None else \
        "sfc needs coordinates or DISPLAY_DATA_SECTION; this instance has neither"


def _symmetric_only(inst: Instance) -> str | None:
    return None if inst.symmetric else "greedy edge is for symmetric instances (ATSP: use nn)"


SOLVERS = [
    SolverSpec("nn", "nearest neighbour from a seeded or given start city",
               NearestNeighborParams, run_nn,
               lambda inst, p: _instance_bytes(inst) + candidate_bytes(inst.n, p.candidates) + 13 * inst.n,
               memory_hint=CANDIDATES_HINT),
    SolverSpec("greedy", "greedy edge matching over candidate edges, fragments joined by NN",
               GreedyParams, run_greedy,
               lambda inst, p: (_instance_bytes(inst) + candidate_bytes(inst.n, p.candidates)
                                + 8 * padded_length(inst.n * p.candidates + 1) + 32 * inst.n),
               unsupported=_symmetric_only, memory_hint=CANDIDATES_HINT),
    SolverSpec("sfc", "Hilbert space-filling curve order", NoParams, run_sfc,
               lambda inst, p: _instance_bytes(inst) + 8 * padded_length(inst.n) + 20 * inst.n,
               unsupported=_needs_plane),
    SolverSpec("random", "uniformly random tour (seeded)", NoParams, run_random,
               lambda inst, p: _instance_bytes(inst) + 8 * padded_length(inst.n) + 4 * inst.n),
]
