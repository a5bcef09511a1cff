"""Construction heuristics on the device (kernels_cl/construct.cl).

nn      nearest neighbour from a start city, over nearest-city candidate lists
greedy  greedy edge over candidate edges, fragments joined by nearest free end
qb      Quick-Boruvka (linkern's start): cities in order of x then y (or y then x, or
        both at once and the shorter tour kept), pass after pass, each joined to its
        nearest free city (candidate lists first, else a scan) until one path (needs
        coordinates or display data)
sfc     Hilbert space-filling-curve order (needs coordinates or display data)
random  a uniformly random permutation (Philox keys, sorted on the device)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..buffers import BufferPlan
from ..errors import UsageError
from ..instance import Instance
from ..neighbors import CandidateParams
from ..params import param
from ..sort import padded_length, sort_keys
from .base import MAX_CANDIDATES, SolveContext, SolverSpec, check_count, shared_plan

GROUP_SIZE = 256  # the single work-group of nn_tour / greedy_tour (capped by the device)
SWEEPS = {"x": (0,), "y": (1,), "auto": (0, 1)}   # qb's sweeps: the axes each goes along first
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
class QuickBoruvkaParams:
    """The candidate lists in which Quick-Boruvka looks first for a city's nearest free city."""

    candidates: int = param(10, "nearest cities per city looked at first for its nearest free "
                            "city (beyond them, the work-group scans every free city; the "
                            "tour is the same)")
    sweep: str = param("auto", "the order of the cities: x (by x, then y; linkern's), y (by y, "
                       "then x) or auto (both at once, the shorter tour kept: on a lattice the "
                       "sweep along its lines is shorter, and so are the tours searched from it)")

    def __post_init__(self):
        check_count("candidates", self.candidates, 1, MAX_CANDIDATES)
        if self.sweep not in SWEEPS:
            raise UsageError(f"sweep must be one of {', '.join(SWEEPS)} (got {self.sweep!r})")


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


def nn_plan(n: int) -> BufferPlan:
    """nn_tour's buffers: the tour, the cities not yet visited and where each lies in that
    list, the visited flags."""
    return (BufferPlan().add("nn_tour", np.int32, n).add("nn_rem", np.int32, n)
            .add("nn_where", np.int32, n).add("nn_visited", np.uint8, n))


def edge_keys(n: int, m: int) -> int:
    """The keys greedy sorts over candidate lists of m cities: an edge key a candidate
    and at least one ~0 key that ends the edge list, padded to a power of two."""
    return padded_length(n * m + 1)


def fragments_plan(n: int, tours: int = 1) -> BufferPlan:
    """The buffers of `tours` tours built from fragments at once (greedy_tour: one;
    qboruvka_tour: one a sweep), each: every city's two neighbours, degree and fragment
    parent (qboruvka_tour: each end's other end), the tour (qboruvka_tour: the free
    cities until the join), the free ends and where each lies in that list (qboruvka_tour
    also keeps a pass's open cities there)."""
    n *= tours
    return (BufferPlan().add("fragments_adj", np.int32, 2 * n).add("fragments_deg", np.int32, n)
            .add("fragments_parent", np.int32, n).add("fragments_tour", np.int32, n)
            .add("fragments_rem", np.int32, n).add("fragments_where", np.int32, n))


def greedy_plan(n: int, m: int) -> BufferPlan:
    """greedy's buffers over candidate lists of m cities: the edge keys, then the
    fragments' (fragments_plan)."""
    return BufferPlan().add("greedy_keys", np.uint64, edge_keys(n, m)).merge(fragments_plan(n))


def qb_plan(n: int, m: int, sweep: str) -> BufferPlan:
    """qb's buffers over candidate lists of m cities for `sweep` (SWEEPS): each sweep's
    keys (padded to a power of two), the plane coordinates, the lists in qb's order and
    counts of their entries nearer than the last (qb_lists), then the fragments' of each
    sweep (fragments_plan)."""
    sweeps = len(SWEEPS[sweep])
    plan = BufferPlan()
    for name in ("qb_keys", "qb_keys_y")[:sweeps]:
        plan = plan.add(name, np.uint64, padded_length(n))
    return (plan.add("qb_plane", np.float64, 2 * n).add("qb_sorted", np.int32, n * m)
            .add("qb_inner", np.int32, n).merge(fragments_plan(n, sweeps)))


def keyed_plan(n: int, name: str) -> BufferPlan:
    """The buffers of a tour read off sorted keys (_tour_from_keys): `name`_keys, a key a
    city padded to a power of two, and `name`_tour."""
    return BufferPlan().add(f"{name}_keys", np.uint64, padded_length(n)).add(f"{name}_tour", np.int32, n)


def sfc_plan(n: int) -> BufferPlan:
    """sfc's buffers: the keyed tour's and the cities' plane coordinates."""
    return keyed_plan(n, "sfc").add("sfc_plane", np.float64, 2 * n)


def random_plan(n: int) -> BufferPlan:
    """random's buffers: the keyed tour's."""
    return keyed_plan(n, "random")


def run_nn(ctx: SolveContext, p: NearestNeighborParams) -> None:
    rt, dinst, n = ctx.rt, ctx.dinst, ctx.inst.n
    cand = ctx.candidates(CandidateParams("knn", p.candidates))
    k = dinst.kernel("construct", "nn_tour")
    wg = _single_group(ctx, k)
    bufs = nn_plan(n).allocate(rt)
    ev = k(rt.queue, (wg,), (wg,), *dinst.dist_args, cand.cities, cand.m,
           start_city(ctx.seed, n, p.start_city), bufs.nn_tour, bufs.nn_rem, bufs.nn_where,
           bufs.nn_visited, rt.cl.LocalMemory(4 * wg), rt.cl.LocalMemory(4 * wg))
    ctx.timed(ev)
    ctx.improve(ctx.read_tour(bufs.nn_tour), 0)


def run_greedy(ctx: SolveContext, p: GreedyParams) -> None:
    rt, dinst, n = ctx.rt, ctx.dinst, ctx.inst.n
    cand = ctx.candidates(CandidateParams("knn", p.candidates))
    m = cand.m
    bufs = greedy_plan(n, m).allocate(rt)
    length = edge_keys(n, m)
    mk = dinst.kernel("construct", "greedy_edge_keys")
    events = [mk(rt.queue, (length,), None, n, cand.cities, cand.dists, m, bufs.greedy_keys, length)]
    events += sort_keys(rt, bufs.greedy_keys, length)
    ctx.improve(_fragments_tours(ctx, "greedy_tour", bufs.greedy_keys, cand.cities, m, bufs, events)[0], 0)


def _fragments_tours(ctx: SolveContext, name: str, keys, lists, m: int, bufs, events: list,
                     own=lambda wg: (), tours: int = 1) -> list[np.ndarray]:
    """Run fragment kernel `name` (greedy_tour or qboruvka_tour: a work-group a tour,
    `tours` of them) over the sorted `keys` and candidate lists `lists` of m cities into
    the fragments' buffers (fragments_plan) after `events`; returns the tours.
    `own(wg)`: the kernel's own arguments after the shared ones, for a work-group of wg."""
    rt, dinst, n = ctx.rt, ctx.dinst, ctx.inst.n
    k = dinst.kernel("construct", name)
    wg = _single_group(ctx, k)
    events.append(k(rt.queue, (tours * wg,), (wg,), *dinst.dist_args, keys, lists, m,
                    bufs.fragments_adj, bufs.fragments_deg, bufs.fragments_parent,
                    bufs.fragments_tour, bufs.fragments_rem, bufs.fragments_where,
                    rt.cl.LocalMemory(4 * wg), rt.cl.LocalMemory(4 * wg), *own(wg)))
    ctx.timed(events)
    both = rt.read(bufs.fragments_tour, np.int32, tours * n).astype(np.int64)
    return [both[t * n:(t + 1) * n] for t in range(tours)]


def sweep_bits(n: int) -> tuple[int, int, int]:
    """The bits of a Quick-Boruvka sweep key (construct.cl sweep_keys): the city's, then
    the first coordinate's and the other's from the rest."""
    city = max(1, (n - 1).bit_length())
    x = (64 - city + 1) // 2
    return city, x, 64 - city - x


def run_quick_boruvka(ctx: SolveContext, p: QuickBoruvkaParams) -> None:
    """Quick-Boruvka (construct.cl qboruvka_tour): the cities sorted along each sweep's
    axis first (sweep_keys; `sweep`: x, y or both), then a work-group a sweep joins each
    city to its nearest free city (equal distances to the nearer in the plane, then as a
    hash of the seed draws), looked for first among its `candidates` nearest (qb_lists:
    each list in qb's order); the shorter tour is kept (x on a tie) and, where there
    were two, the run's notes say which."""
    rt, dinst, n = ctx.rt, ctx.dinst, ctx.inst.n
    cand = ctx.candidates(CandidateParams("knn", p.candidates))
    seed = np.uint32((ctx.seed ^ (ctx.seed >> 32)) & 0xFFFFFFFF)
    plane = ctx.inst.planar_coords
    low, span = plane.min(axis=0), np.ptp(plane, axis=0)
    city_bits, *bits = sweep_bits(n)
    length = padded_length(n)
    axes = SWEEPS[p.sweep]
    bufs = qb_plan(n, cand.m, p.sweep).allocate(rt)
    key_bufs = [bufs.qb_keys] + ([bufs.qb_keys_y] if len(axes) > 1 else [])
    rt.cl.enqueue_copy(rt.queue, bufs.qb_plane, np.ascontiguousarray(plane, np.float64))
    events = []
    for axis, buf in zip(axes, key_bufs):
        first, then = (axis, 1 - axis)
        scale = [float((1 << b) - 1) / float(span[a]) if span[a] > 0 else 0.0
                 for b, a in zip(bits, (first, then))]
        events.append(dinst.kernel("construct", "sweep_keys")(
            rt.queue, (length,), None, n, bufs.qb_plane, np.int32(axis), float(low[first]), scale[0],
            float(low[then]), scale[1], city_bits, buf, length))
        events += sort_keys(rt, buf, length)
        events.append(dinst.kernel("construct", "key_cities")(rt.queue, (n,), None, n, buf, city_bits))
    events.append(dinst.kernel("construct", "qb_lists")(rt.queue, (n,), None, *dinst.dist_args, cand.cities,
                                                        cand.m, bufs.qb_plane, seed, bufs.qb_sorted,
                                                        bufs.qb_inner))
    tours = _fragments_tours(ctx, "qboruvka_tour", key_bufs[0], bufs.qb_sorted, cand.m, bufs, events,
                             lambda wg: (bufs.qb_plane, seed, rt.cl.LocalMemory(8 * wg),
                                         rt.cl.LocalMemory(8 * wg), bufs.qb_inner, key_bufs[-1]),
                             len(axes))
    lengths = [ctx.inst.tour_length(t) for t in tours]
    kept = int(np.argmin(lengths))
    if len(axes) > 1:
        ctx.notes.append(f"qb: the sweep along {'xy'[kept]} kept ({lengths[kept]}; along "
                         f"{'xy'[1 - kept]} {lengths[1 - kept]})")
    ctx.improve(tours[kept], 0)


def _tour_from_keys(ctx: SolveContext, keys, tour, length: int, events: list) -> None:
    rt, n = ctx.rt, ctx.inst.n
    events += sort_keys(rt, keys, length)
    k = rt.kernel("construct", "keys_to_tour", ctx.dinst.defines)
    events.append(k(rt.queue, (length,), None, n, keys, tour))
    ctx.timed(events)
    ctx.improve(ctx.read_tour(tour), 0)


def run_sfc(ctx: SolveContext, p: NoParams) -> None:
    rt, n = ctx.rt, ctx.inst.n
    plane = ctx.inst.planar_coords
    lo, hi = plane.min(axis=0), plane.max(axis=0)
    span = float(max((hi - lo).max(), 1e-300))
    length = padded_length(n)
    bufs = sfc_plan(n).allocate(rt)
    rt.cl.enqueue_copy(rt.queue, bufs.sfc_plane, np.ascontiguousarray(plane, np.float64))
    k = ctx.dinst.kernel("construct", "hilbert_keys")
    ev = k(rt.queue, (length,), None, n, bufs.sfc_plane, lo[0], lo[1], 65535.0 / span,
           bufs.sfc_keys, length)
    _tour_from_keys(ctx, bufs.sfc_keys, bufs.sfc_tour, length, [ev])


def run_random(ctx: SolveContext, p: NoParams) -> None:
    rt, n = ctx.rt, ctx.inst.n
    length = padded_length(n)
    bufs = random_plan(n).allocate(rt)
    k = ctx.dinst.kernel("construct", "random_keys")
    ev = k(rt.queue, (length,), None, n, ctx.seed & 0xFFFFFFFF, (ctx.seed >> 32) & 0xFFFFFFFF,
           bufs.random_keys, length)
    _tour_from_keys(ctx, bufs.random_keys, bufs.random_tour, length, [ev])


def _needs_plane(inst: Instance, name: str = "sfc") -> str | None:
    return None if inst.planar_coords is not None else \
        f"{name} needs coordinates or DISPLAY_DATA_SECTION; this instance has neither"


def qb_problem(inst: Instance) -> str | None:
    """Why Quick-Boruvka cannot take `inst` (it orders the cities by x, and its tour is
    symmetric's), or None."""
    if not inst.symmetric:
        return "qb is for symmetric instances (ATSP: use nn)"
    return _needs_plane(inst, "qb")


def _symmetric_only(inst: Instance) -> str | None:
    return None if inst.symmetric else "greedy edge is for symmetric instances (ATSP: use nn)"


def candidate_length(n: int, k: int) -> int:
    """The cities a city of the candidate lists build_candidates makes for k: k, at most
    the n - 1 others."""
    return min(k, max(n - 1, 0))


SOLVERS = [
    SolverSpec("nn", "nearest neighbour from a seeded or given start city",
               NearestNeighborParams, run_nn,
               lambda inst, p, limits=None: shared_plan(inst, p.candidates).merge(nn_plan(inst.n)),
               memory_hint=CANDIDATES_HINT),
    SolverSpec("greedy", "greedy edge matching over candidate edges, fragments joined by NN",
               GreedyParams, run_greedy,
               lambda inst, p, limits=None: shared_plan(inst, p.candidates).merge(
                   greedy_plan(inst.n, candidate_length(inst.n, p.candidates))),
               unsupported=_symmetric_only, memory_hint=CANDIDATES_HINT),
    SolverSpec("qb", "Quick-Boruvka (linkern's start): cities in order of x (or y, or both "
               "and the shorter kept), pass after pass, each joined to its nearest free city "
               "until one path",
               QuickBoruvkaParams, run_quick_boruvka,
               lambda inst, p, limits=None: shared_plan(inst, p.candidates).merge(
                   qb_plan(inst.n, p.candidates, p.sweep)),
               unsupported=qb_problem, memory_hint=CANDIDATES_HINT),
    SolverSpec("sfc", "Hilbert space-filling curve order", NoParams, run_sfc,
               lambda inst, p, limits=None: shared_plan(inst).merge(sfc_plan(inst.n)),
               unsupported=_needs_plane),
    SolverSpec("random", "uniformly random tour (seeded)", NoParams, run_random,
               lambda inst, p, limits=None: shared_plan(inst).merge(random_plan(inst.n))),
]
