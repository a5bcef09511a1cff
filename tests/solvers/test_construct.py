"""Construction heuristics (kernels_cl/construct.cl) against plain host implementations.

* nn: a sequential nearest-neighbour loop over the full host distance matrix (ties by
  index; ATSP reads dist(current, j)); the device's candidate lists only speed it up, so
  the tours must be identical for every k (k = 2 forces the work-group scan path).
* greedy: a sequential greedy-edge loop over the device's own knn lists, then fragments
  joined from the lowest-numbered end by nearest (distance, index) fragment end.
* qb: Quick-Boruvka passes over the cities in order of x, then y (quantized as the
  device does), each joined to its nearest free city by a full scan; the lists only
  speed it up, so the tours must be identical for every k (k = 2 or 3 forces the work-group scan).
* sfc: the Hilbert index of each city on the 2^16 grid, ordered by (index, city).
* random: Philox4x32-10 draws (a host Philox checked on the Random123 known answers),
  ordered by (draw, city); same seed, same tour.
Every solver's tour is a permutation and best_length is the exact host length.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernel_fixtures import (assert_permutation, device_instance, make_instance, rt,
                             shared_instance)
from tspcl.neighbors import CandidateParams
from tspcl.solvers import REGISTRY, SolveContext
from tspcl.solvers.construct import start_city, sweep_bits

SEEDS = (0, 1, 987654321, 2**40 + 7)


def solve(rt, inst, name: str, seed: int = 0, dinst=None, **params):
    spec = REGISTRY[name]
    ctx = SolveContext(rt, dinst or device_instance(rt, inst), seed=seed)
    spec.run(ctx, spec.params_type(**params))
    assert ctx.best_order is not None, f"{name} published no tour"
    order = np.asarray(ctx.best_order, np.int64)
    assert_permutation(order, inst.n)
    assert ctx.best_length == inst.tour_length(order)
    return order, ctx


# ---- host references ---------------------------------------------------------------------
def host_nn(inst, start: int) -> np.ndarray:
    n = inst.n
    D = inst.full_matrix().astype(np.int64)
    big = np.iinfo(np.int64).max
    visited = np.zeros(n, bool)
    tour = [start]
    visited[start] = True
    cur = start
    for _ in range(n - 1):
        row = np.where(visited, big, D[cur])
        cur = int(np.argmin(row))            # first minimum: ties go to the lower index
        visited[cur] = True
        tour.append(cur)
    return np.array(tour, np.int64)


def host_greedy(inst, cities: np.ndarray, dists: np.ndarray) -> np.ndarray:
    n, m = cities.shape
    lists = [set(cities[j].tolist()) for j in range(n)]
    edges = []
    for i in range(n):
        for r in range(m):
            j = int(cities[i, r])
            if i < j or i not in lists[j]:
                edges.append((int(dists[i, r]), i * m + r, i, j))
    edges.sort()
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    adj = [[] for _ in range(n)]
    for _, _, i, j in edges:
        if len(adj[i]) == 2 or len(adj[j]) == 2:
            continue
        ri, rj = find(i), find(j)
        if ri == rj:
            continue
        parent[max(ri, rj)] = min(ri, rj)
        adj[i].append(j)
        adj[j].append(i)
    return host_join(inst, adj)


def qb_tie(seed: int, i: int, near: np.ndarray) -> np.ndarray:
    """construct.cl qb_tie: a hash of (seed folded to 32 bits, i, c) above c."""
    with np.errstate(over="ignore"):
        h = (np.uint32((seed ^ (seed >> 32)) & 0xFFFFFFFF) ^ (np.uint32(i) * np.uint32(0x9E3779B1))
             ^ (near.astype(np.uint32) * np.uint32(0x85EBCA77)))
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x7FEB352D)
        h ^= h >> np.uint32(15)
        h *= np.uint32(0x846CA68B)
        h ^= h >> np.uint32(16)
    return (h.astype(np.uint64) << np.uint64(32)) | near.astype(np.uint64)


def qb_nearness(inst, seed: int, i: int, near: np.ndarray) -> np.ndarray:
    """The order of the cities `near` by nearness to i as qb sees it: (distance, squared
    plane distance as a float, qb_tie)."""
    plane = inst.planar_coords
    d2 = (plane[i, 0] - plane[near, 0]) ** 2 + (plane[i, 1] - plane[near, 1]) ** 2
    key = (inst.dist(np.full(len(near), i), near).astype(np.int64) << 32) \
        | d2.astype(np.float32).view(np.uint32).astype(np.int64)
    return np.lexsort((qb_tie(seed, i, near), key))


def host_qboruvka(inst, seed: int, axis: int = 0) -> np.ndarray:
    """Quick-Boruvka with a full scan: the cities by x, then y (axis 1: by y, then x; each
    quantized over its range to the bits sweep_bits gives it), then city; pass after pass
    each of degree < 2 joined to the nearest city of degree < 2 other than its
    fragment's other end, by (distance, squared plane distance as a float, qb_tie),
    until one path; closed as greedy's fragments are joined."""
    n = inst.n
    _, *bits = sweep_bits(n)
    q = []
    for coord, b in zip((axis, 1 - axis), bits):
        v = inst.planar_coords[:, coord]
        span = float(v.max() - v.min())
        q.append(np.minimum((v - v.min()) * (float((1 << b) - 1) / span if span > 0 else 0.0),
                            float((1 << b) - 1)).astype(np.uint64))
    sweep, kept, t = [int(c) for c in np.lexsort((np.arange(n), q[1], q[0]))], [], 0
    deg = np.zeros(n, np.int64)
    other = [-1] * n
    adj = [[] for _ in range(n)]
    cities = np.arange(n)
    for _ in range(n - 1):
        while True:
            if t == len(sweep):
                sweep, kept, t = kept, [], 0
            i = sweep[t]
            t += 1
            if deg[i] < 2:
                break
        free = deg < 2
        free[i] = False
        if other[i] >= 0:
            free[other[i]] = False
        near = cities[free]
        j = int(near[qb_nearness(inst, seed, i, near)[0]])
        ei, ej = (i if other[i] < 0 else other[i]), (j if other[j] < 0 else other[j])
        other[ei], other[ej] = ej, ei
        adj[i].append(j)
        adj[j].append(i)
        deg[i] += 1
        deg[j] += 1
        if deg[i] < 2:
            kept.append(i)
    return host_join(inst, adj)


def host_join(inst, adj) -> np.ndarray:
    """The fragments of `adj` joined into a tour: from the lowest-numbered end, each
    fragment walked, the next from the nearest (distance, index) free end."""
    n = inst.n
    ends = {c for c in range(n) if len(adj[c]) < 2}
    tour: list[int] = []

    def walk(a):
        prev, x = -1, a
        while True:
            tour.append(x)
            nxt = [y for y in adj[x] if y != prev]
            if not nxt or (x != a and len(adj[x]) == 1):
                return x
            prev, x = x, nxt[0]

    a = min(ends)
    while True:
        ends.discard(a)
        x = walk(a)
        ends.discard(x)
        if len(tour) == n:
            break
        free = np.array(sorted(ends), np.int64)
        d = inst.dist(np.full(len(free), x), free)
        a = int(free[np.argmin(d)])              # first minimum: ties to the lower index
    return np.array(tour, np.int64)


def host_hilbert_order(inst) -> np.ndarray:
    plane = inst.planar_coords
    lo, hi = plane.min(axis=0), plane.max(axis=0)
    span = float(max((hi - lo).max(), 1e-300))
    scale = 65535.0 / span
    x = np.minimum((plane[:, 0] - lo[0]) * scale, 65535.0).astype(np.uint64)
    y = np.minimum((plane[:, 1] - lo[1]) * scale, 65535.0).astype(np.uint64)
    d = np.zeros(len(plane), np.uint64)
    s = 1 << 15
    while s > 0:
        rx = ((x & np.uint64(s)) != 0).astype(np.uint64)
        ry = ((y & np.uint64(s)) != 0).astype(np.uint64)
        d += np.uint64(s * s) * ((np.uint64(3) * rx) ^ ry)
        flip = (ry == 0) & (rx == 1)
        x = np.where(flip, np.uint64(65535) - x, x)
        y = np.where(flip, np.uint64(65535) - y, y)
        swap = ry == 0
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        s >>= 1
    return np.lexsort((np.arange(len(plane)), d))


M32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(ctr: list, key: list) -> list:
    """Random123 Philox4x32-10 over numpy uint64 arrays holding 32-bit words."""
    c = [np.asarray(v, np.uint64) & M32 for v in ctr]
    k0, k1 = np.uint64(key[0]) & M32, np.uint64(key[1]) & M32
    for rnd in range(10):
        if rnd:
            k0 = (k0 + np.uint64(0x9E3779B9)) & M32
            k1 = (k1 + np.uint64(0xBB67AE85)) & M32
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        hi0, lo0 = p0 >> np.uint64(32), p0 & M32
        hi1, lo1 = p1 >> np.uint64(32), p1 & M32
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
    return c


def host_random_order(n: int, seed: int) -> np.ndarray:
    i = np.arange(n, dtype=np.uint64)
    draw = philox4x32_10([np.zeros(n), i, np.zeros(n), np.full(n, 0x7473)],
                         [seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF])[0]
    return np.lexsort((np.arange(n), draw))


def test_host_philox_known_answers():
    """Random123's published known-answer vectors for philox4x32_10."""
    kat = [
        ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
         [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
    ]
    for ctr, key, want in kat:
        got = [int(v[0]) for v in philox4x32_10([np.array([v]) for v in ctr], key)]
        assert got == want


# ---- instances ---------------------------------------------------------------------------
def _synthetic(name: str):
    rng = np.random.default_rng(sum(map(ord, name)))
    if name == "uniform":
        return make_instance("EUC_2D", coords=rng.uniform(0, 1000, (257, 2)), name=name)
    if name == "clustered":
        centers = rng.uniform(0, 10_000, (6, 2))
        xy = centers[rng.integers(0, 6, 300)] + rng.normal(0, 50, (300, 2))
        return make_instance("EUC_2D", coords=xy, name=name)
    if name == "lattice":                     # exact ties everywhere
        xy = np.stack(np.meshgrid(np.arange(12), np.arange(12)), -1).reshape(-1, 2) * 10.0
        return make_instance("EUC_2D", coords=xy[rng.permutation(len(xy))], name=name)
    if name == "duplicates":
        base = rng.integers(0, 40, (25, 2)).astype(np.float64)
        return make_instance("EUC_2D", coords=base[rng.integers(0, 25, 180)], name=name)
    if name == "line":
        return make_instance("EUC_2D", coords=np.column_stack(
            [rng.integers(0, 100, 120).astype(np.float64), np.zeros(120)]), name=name)
    if name == "man3d":
        return make_instance("MAN_3D", coords=rng.integers(0, 50, (150, 3)), name=name)
    if name == "atsp":
        mat = rng.integers(0, 100, (150, 150))
        np.fill_diagonal(mat, 0)
        return make_instance("EXPLICIT", matrix=mat, kind="ATSP", name=name)
    raise ValueError(name)


SYM = ["uniform", "clustered", "lattice", "duplicates", "line", "man3d"]
SHARED_SYM = ["tsplib/pr76.tsp", "tsplib/gr96.tsp", "tsplib/bays29.tsp", "tsplib/att48.tsp",
              "tsplib/dsj1000.tsp", "tsplib/pr2392.tsp"]
SHARED_ATSP = ["atsp/ftv33.atsp", "atsp/ry48p.atsp", "atsp/rbg323.atsp"]


def _instance(ref: str):
    return shared_instance(ref) if "/" in ref else _synthetic(ref)


# ---- nn ----------------------------------------------------------------------------------
@pytest.mark.parametrize("ref", SYM + ["atsp"] + SHARED_SYM + SHARED_ATSP)
def test_nn_matches_host(rt, ref):
    inst = _instance(ref)
    dinst = device_instance(rt, inst)
    for k, seed, start in [(2, 0, 0), (10, 1, 0), (10, 5, 1), (40, 987654321, 0),
                           (2, 3, inst.n)]:
        order, _ = solve(rt, inst, "nn", seed, dinst, candidates=k, start_city=start)
        s = start_city(seed, inst.n, start)
        assert order[0] == s
        want = host_nn(inst, s)
        assert np.array_equal(order, want), (
            f"{inst.name} k={k} seed={seed} start={start}: first difference at position "
            f"{int(np.flatnonzero(order != want)[0])}")


def test_start_city():
    from tspcl.errors import UsageError

    with pytest.raises(UsageError):
        start_city(0, 10, 11)
    assert start_city(7, 10, 3) == 2
    assert start_city(123, 50) == start_city(123, 50)
    assert all(0 <= start_city(s, 13) < 13 for s in range(50))


# ---- greedy ------------------------------------------------------------------------------
@pytest.mark.parametrize("ref", SYM + SHARED_SYM)
def test_greedy_matches_host(rt, ref):
    inst = _instance(ref)
    dinst = device_instance(rt, inst)
    for k in (3, 10):
        order, ctx = solve(rt, inst, "greedy", 0, dinst, candidates=k)
        cities, dists = ctx.candidates(CandidateParams("knn", k)).host(rt)
        want = host_greedy(inst, cities.astype(np.int64), dists.astype(np.int64))
        assert np.array_equal(order, want), (
            f"{inst.name} k={k}: first difference at position "
            f"{int(np.flatnonzero(order != want)[0])}")


def test_greedy_refuses_atsp():
    assert REGISTRY["greedy"].unsupported(_synthetic("atsp")) is not None
    assert REGISTRY["greedy"].unsupported(_synthetic("uniform")) is None


# ---- sfc and random ----------------------------------------------------------------------
@pytest.mark.parametrize("ref", SYM + ["tsplib/gr96.tsp", "tsplib/bays29.tsp",
                                       "tsplib/dsj1000.tsp"])
def test_sfc_matches_host(rt, ref):
    inst = _instance(ref)
    order, _ = solve(rt, inst, "sfc", 0)
    want = host_hilbert_order(inst)
    assert np.array_equal(order, want), (
        f"{inst.name}: first difference at position {int(np.flatnonzero(order != want)[0])}")


def test_sfc_needs_plane():
    assert REGISTRY["sfc"].unsupported(_synthetic("atsp")) is not None


@pytest.mark.parametrize("ref", ["uniform", "atsp", "tsplib/dsj1000.tsp"])
def test_random_is_seeded(rt, ref):
    inst = _instance(ref)
    dinst = device_instance(rt, inst)
    tours = {}
    for seed in SEEDS:
        a, _ = solve(rt, inst, "random", seed, dinst)
        b, _ = solve(rt, inst, "random", seed, dinst)
        assert np.array_equal(a, b), f"seed {seed}: two runs differ"
        assert np.array_equal(a, host_random_order(inst.n, seed)), f"seed {seed}: not Philox order"
        tours[seed] = a
    for s in SEEDS:
        for t in SEEDS:
            if s < t:
                assert not np.array_equal(tours[s], tours[t]), f"seeds {s} and {t} agree"


# ---- Quick-Boruvka -----------------------------------------------------------------------
@pytest.mark.parametrize("ref", SYM + SHARED_SYM)
def test_qb_matches_host(rt, ref):
    inst = _instance(ref)
    if inst.planar_coords is None:
        assert REGISTRY["qb"].unsupported(inst) is not None
        return
    dinst = device_instance(rt, inst)
    along = [host_qboruvka(inst, 0, axis) for axis in (0, 1)]
    lengths = [inst.tour_length(t) for t in along]
    for k in (3, 10):
        for sweep, want in (("x", along[0]), ("y", along[1]),
                            ("auto", along[int(lengths[1] < lengths[0])])):
            order, ctx = solve(rt, inst, "qb", 0, dinst, candidates=k, sweep=sweep)
            assert np.array_equal(order, want), (
                f"{inst.name} k={k} sweep={sweep}: first difference at position "
                f"{int(np.flatnonzero(order != want)[0])}")
    assert any("along" in note for note in ctx.notes), "auto does not say which sweep it kept"


@pytest.mark.parametrize("ref", ["lattice", "duplicates", "uniform"])
@pytest.mark.parametrize("k", [3, 10])
def test_qb_lists_order_as_the_host(rt, ref, k):
    """construct.cl qb_lists: each candidate list in qb's order of nearness, and how many
    of its entries are nearer than its last, as the host orders and counts them."""
    inst = _instance(ref)
    dinst = device_instance(rt, inst)
    ctx = SolveContext(rt, dinst, seed=5)
    cand = ctx.candidates(CandidateParams("knn", k))
    cities, _ = cand.host(rt)
    n, m = inst.n, cand.m
    sorted_, inner = rt.to_device(np.zeros(n * m, np.int32)), rt.to_device(np.zeros(n, np.int32))
    dinst.kernel("construct", "qb_lists")(rt.queue, (n,), None, *dinst.dist_args, cand.cities,
                                          np.int32(m), rt.to_device(np.ascontiguousarray(
                                              inst.planar_coords, np.float64)),
                                          np.uint32(5), sorted_, inner)
    got, got_inner = rt.read(sorted_, np.int32, n * m).reshape(n, m), rt.read(inner, np.int32, n)
    for i in range(n):
        row = cities[i]
        assert np.array_equal(got[i], row[qb_nearness(inst, 5, i, row)]), f"{ref} city {i}"
        d = inst.dist(np.full(m, i), row)
        assert got_inner[i] == (int(np.sum(d < d[-1])) if m < n - 1 else m), f"{ref} city {i}"


@pytest.mark.parametrize("ref", ["lattice", "duplicates", "uniform", "tsplib/pr76.tsp"])
def test_nearest_ties_counts_as_the_host(rt, ref):
    """construct.cl nearest_ties: the cities whose first two candidates are exactly as
    far in the plane, counted on the host from the same lists."""
    inst = _instance(ref)
    if inst.planar_coords is None:
        pytest.skip(f"{ref}: no plane")
    dinst = device_instance(rt, inst)
    ctx = SolveContext(rt, dinst, seed=0)
    cand = ctx.candidates(CandidateParams("knn", 10))
    cities, _ = cand.host(rt)
    plane = inst.planar_coords
    d2 = lambda j: ((plane - plane[j]) ** 2).sum(axis=1)  # noqa: E731
    want = int(np.sum(d2(cities[:, 0]) == d2(cities[:, 1])))
    count = rt.to_device(np.zeros(1, np.int32))
    dinst.kernel("construct", "nearest_ties")(rt.queue, (inst.n,), None, np.int32(inst.n),
                                              rt.to_device(np.ascontiguousarray(plane, np.float64)),
                                              cand.cities, np.int32(cand.m), count)
    assert int(rt.read(count, np.int32, 1)[0]) == want
    assert ref != "lattice" or want > inst.n // 2


def test_qb_refuses_atsp_and_instances_without_coordinates():
    assert REGISTRY["qb"].unsupported(_synthetic("atsp")) is not None
    mat = np.array([[0, 3, 4], [3, 0, 5], [4, 5, 0]])
    assert "coordinates" in REGISTRY["qb"].unsupported(make_instance("EXPLICIT", matrix=mat, name="m3"))
    assert REGISTRY["qb"].unsupported(_synthetic("uniform")) is None


# ---- every solver, every size --------------------------------------------------------------
@pytest.mark.parametrize("name", ["nn", "greedy", "qb", "sfc", "random"])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_tiny_instances(rt, name, n):
    """n = 1..5 (candidate lists shorter than k, a single city, a single edge)."""
    rng = np.random.default_rng(n)
    for coords in (rng.uniform(0, 100, (n, 2)), np.zeros((n, 2))):
        inst = make_instance("EUC_2D", coords=coords, name=f"tiny{n}")
        dinst = device_instance(rt, inst)
        for seed in (0, 1):
            order, _ = solve(rt, inst, name, seed, dinst)
            if name == "nn":
                assert np.array_equal(order, host_nn(inst, start_city(seed, n)))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tiny_atsp_nn(rt, n):
    mat = np.arange(n * n).reshape(n, n)[::-1].copy()
    np.fill_diagonal(mat, 0)
    inst = make_instance("EXPLICIT", matrix=mat, kind="ATSP", name=f"atsp{n}")
    order, _ = solve(rt, inst, "nn", 0, start_city=1)
    assert np.array_equal(order, host_nn(inst, 0))
    order, _ = solve(rt, inst, "random", 3)


@pytest.mark.parametrize("name", ["nn", "greedy", "qb", "sfc", "random"])
def test_device_length_agrees(rt, name):
    """The published best_length also equals the device's tour_length of that tour."""
    inst = _synthetic("clustered")
    dinst = device_instance(rt, inst)
    order, ctx = solve(rt, inst, name, 42, dinst)
    assert dinst.tour_length(rt.to_device(order.astype(np.int32))) == ctx.best_length


def test_random_small_sweep(rt):
    """nn, greedy and qb on many small random instances full of ties."""
    rng = np.random.default_rng(77)
    for rep in range(30):
        n = int(rng.integers(4, 70))
        coords = rng.integers(0, int(rng.choice([4, 20, 500])), (n, 2)).astype(np.float64)
        inst = make_instance("EUC_2D", coords=coords, name=f"sweep{rep}")
        dinst = device_instance(rt, inst)
        k = int(rng.choice([2, 3, 10]))
        seed = int(rng.integers(0, 2**31))
        order, _ = solve(rt, inst, "nn", seed, dinst, candidates=k)
        assert np.array_equal(order, host_nn(inst, start_city(seed, n))), f"nn rep {rep}"
        order, ctx = solve(rt, inst, "greedy", seed, dinst, candidates=k)
        cities, dists = ctx.candidates(CandidateParams("knn", k)).host(rt)
        want = host_greedy(inst, cities.astype(np.int64), dists.astype(np.int64))
        assert np.array_equal(order, want), f"greedy rep {rep} (n={n}, k={k})"
        along = [host_qboruvka(inst, seed, axis) for axis in (0, 1)]
        shorter = along[int(inst.tour_length(along[1]) < inst.tour_length(along[0]))]
        for sweep, want in (("x", along[0]), ("y", along[1]), ("auto", shorter)):
            order, _ = solve(rt, inst, "qb", seed, dinst, candidates=k, sweep=sweep)
            assert np.array_equal(order, want), f"qb rep {rep} (n={n}, k={k}, sweep={sweep})"
