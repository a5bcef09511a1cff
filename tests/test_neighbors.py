"""Candidate lists on the device (kernels_cl/neighbors.cl) against a host reference.

The reference is the definition itself, computed from the full host distance matrix:

* knn: the m = min(k, n-1) other cities nearest to i, ordered by (distance, index).
* quadrant: the k/4 nearest (by (distance, index)) from each quadrant around i, where
  j is in quadrant 0 if dx > 0 and dy >= 0, 1 if dx <= 0 and dy > 0, 2 if dx < 0 and
  dy <= 0, 3 if dx >= 0 and dy < 0 (dx = xj - xi, dy = yj - yi; coincident -> 0), then
  completed to k from the plain k-nearest list in (distance, index) order, skipping
  cities already taken, and the whole list ordered by (distance, index).  GEO instances
  use the device coordinates (radians latitude, longitude) as the plane; EXPLICIT
  instances always get knn; with n - 1 < k the kind falls back to knn with m = n - 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernel_fixtures import device_instance, make_instance, rt, shared_instance
from tspcl.neighbors import CandidateParams, build_candidates


# ---- host reference ----------------------------------------------------------------------
def _sorted_others(inst) -> tuple[np.ndarray, np.ndarray]:
    """Row i: the other cities ordered by (distance from i, index); and the full matrix."""
    n = inst.n
    D = inst.full_matrix().astype(np.int64)
    key = D * n + np.arange(n)[None, :]
    np.fill_diagonal(key, np.iinfo(np.int64).max)
    order = np.argsort(key, axis=1, kind="stable")[:, : n - 1]
    return order, D


def quadrant_of(dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    q = np.zeros(dx.shape, np.int64)                 # dx > 0, dy >= 0 and coincident
    q[(dx <= 0) & (dy > 0)] = 1
    q[(dx < 0) & (dy <= 0)] = 2
    q[(dx >= 0) & (dy < 0)] = 3
    return q


def reference_candidates(inst, kind: str, k: int):
    """(cities, dists, m, kind) exactly as the device should produce them."""
    n = inst.n
    m = min(k, max(n - 1, 0))
    if kind == "quadrant" and (m < k or not inst.has_coords):
        kind = "knn"
    if m == 0:
        return np.zeros((n, 0), np.int64), np.zeros((n, 0), np.int64), 0, kind
    order, D = _sorted_others(inst)
    if kind == "knn":
        cities = order[:, :m]
    else:
        plane = inst.device_coords[:, :2]
        dx = plane[order, 0] - plane[:, None, 0]
        dy = plane[order, 1] - plane[:, None, 1]
        q = quadrant_of(dx, dy)
        chosen = np.zeros(order.shape, bool)
        for quad in range(4):
            mask = q == quad
            chosen |= mask & (np.cumsum(mask, axis=1) <= k // 4)
        need = m - chosen.sum(axis=1)
        free = ~chosen[:, :m]
        fill = free & (np.cumsum(free, axis=1) <= need[:, None])
        chosen[:, :m] |= fill
        assert (chosen.sum(axis=1) == m).all()
        cities = order[chosen].reshape(n, m)           # row-major: keeps (d, j) order
    dists = np.take_along_axis(D, cities, axis=1)
    return cities, dists, m, kind


def reference_quadrant_loop(inst, k: int, i: int) -> list[int]:
    """Row i of the quadrant list by a plain loop (cross-checks the vectorised one)."""
    n = inst.n
    plane = inst.device_coords[:, :2]
    others = sorted((int(inst.dist(i, j)), j) for j in range(n) if j != i)
    lists = {0: [], 1: [], 2: [], 3: []}
    for d, j in others:
        dx, dy = plane[j, 0] - plane[i, 0], plane[j, 1] - plane[i, 1]
        if dx > 0 and dy >= 0:
            q = 0
        elif dx <= 0 and dy > 0:
            q = 1
        elif dx < 0 and dy <= 0:
            q = 2
        elif dx >= 0 and dy < 0:
            q = 3
        else:
            q = 0
        if len(lists[q]) < k // 4:
            lists[q].append((d, j))
    picked = set(lists[0] + lists[1] + lists[2] + lists[3])
    for d, j in others[:k]:
        if len(picked) == k:
            break
        picked.add((d, j))
    return [j for _, j in sorted(picked)]


# ---- comparison ------------------------------------------------------------------------
def check_candidates(rt, inst, kind: str, k: int, dinst=None):
    dinst = dinst or device_instance(rt, inst)
    cand = build_candidates(dinst, CandidateParams(kind, k))
    want_c, want_d, m, want_kind = reference_candidates(inst, kind, k)
    assert (cand.n, cand.m, cand.kind) == (inst.n, m, want_kind), \
        f"{inst.name} {kind} k={k}: got n={cand.n} m={cand.m} kind={cand.kind}"
    if m == 0:
        return cand
    got_c, got_d = cand.host(rt)
    bad = np.flatnonzero((got_c != want_c).any(axis=1) | (got_d != want_d).any(axis=1))
    if bad.size:
        i = bad[0]
        pytest.fail(f"{inst.name} [{inst.weight_type}] {kind} k={k}: {bad.size} of {inst.n} "
                    f"lists differ; city {i}:\n device  {got_c[i].tolist()} "
                    f"{got_d[i].tolist()}\n host    {want_c[i].tolist()} {want_d[i].tolist()}")
    return cand


# ---- layouts ---------------------------------------------------------------------------
def _uniform(rng, n, d=2, scale=1000.0):
    return rng.uniform(0.0, scale, (n, d))


def _clustered(rng, n):
    centers = rng.uniform(0, 10_000, (8, 2))
    which = rng.integers(0, len(centers), n)
    return centers[which] + rng.normal(0, 60.0, (n, 2))


def _grid_points(rng, n):
    """Integer lattice: masses of exact distance ties."""
    side = int(np.ceil(np.sqrt(n)))
    xy = np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2)
    return (xy[rng.permutation(len(xy))[:n]] * 10).astype(np.float64)


def _duplicates(rng, n):
    base = rng.integers(0, 30, (12, 2)).astype(np.float64)
    return base[rng.integers(0, len(base), n)]


def _line_h(rng, n):
    return np.column_stack([rng.uniform(0, 500, n), np.full(n, 7.0)])


def _line_v(rng, n):
    return np.column_stack([np.full(n, -3.0), rng.integers(0, 200, n).astype(np.float64)])


def _line_diag(rng, n):
    t = rng.integers(0, 300, n).astype(np.float64)
    return np.column_stack([t, 2 * t + 1])


def _one_by_n(rng, n):
    """1 x N: evenly spaced on one row (every city has the same y)."""
    return np.column_stack([np.arange(n, dtype=np.float64) * 3.0, np.zeros(n)])


def _all_same(rng, n):
    return np.tile([[5.0, 5.0]], (n, 1))


def _wide_strip(rng, n):
    """Very skewed bounding box: the grid is one cell tall."""
    return np.column_stack([rng.uniform(0, 1e6, n), rng.uniform(0, 1.0, n)])


def _negative_large(rng, n):
    return rng.uniform(-1e6, 1e6, (n, 2)) + np.array([-3e6, 2e6])


LAYOUTS = {
    "uniform": lambda rng, n: _uniform(rng, n),
    "clustered": _clustered,
    "grid": _grid_points,
    "duplicates": _duplicates,
    "line_h": _line_h,
    "line_v": _line_v,
    "line_diag": _line_diag,
    "one_by_n": _one_by_n,
    "all_same": _all_same,
    "wide_strip": _wide_strip,
    "negative_large": _negative_large,
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_layouts_euc2d(rt, layout):
    rng = np.random.default_rng(len(layout) * 1000 + 17)
    for n in (60, 700):
        inst = make_instance("EUC_2D", coords=LAYOUTS[layout](rng, n), name=f"{layout}{n}")
        dinst = device_instance(rt, inst)
        for kind in ("knn", "quadrant"):
            check_candidates(rt, inst, kind, 8, dinst)


COORD_TYPES = ["EUC_2D", "CEIL_2D", "ATT", "MAN_2D", "MAX_2D", "EUC_3D", "MAN_3D", "MAX_3D"]


@pytest.mark.parametrize("weight_type", COORD_TYPES + ["GEO"])
def test_weight_types(rt, weight_type):
    rng = np.random.default_rng(sum(map(ord, weight_type)))
    n = 500
    if weight_type == "GEO":
        coords = np.column_stack([np.round(rng.uniform(-60, 60, n), 2),
                                  np.round(rng.uniform(-150, 150, n), 2)])
        coords[:20] = coords[20:40]                      # duplicates
    else:
        d = 3 if weight_type.endswith("_3D") else 2
        coords = rng.integers(0, 300, (n, d)).astype(np.float64)   # many ties
        coords[: n // 2] += rng.uniform(0, 1, (n // 2, d))
    inst = make_instance(weight_type, coords=coords, name=weight_type.lower())
    dinst = device_instance(rt, inst)
    for kind in ("knn", "quadrant"):
        check_candidates(rt, inst, kind, 8, dinst)


def test_explicit_always_knn(rt):
    rng = np.random.default_rng(5)
    n = 300
    mat = rng.integers(0, 50, (n, n))                      # asymmetric, many ties
    np.fill_diagonal(mat, 0)
    inst = make_instance("EXPLICIT", matrix=mat, kind="ATSP", name="asym")
    dinst = device_instance(rt, inst)
    for kind in ("knn", "quadrant"):
        cand = check_candidates(rt, inst, kind, 8, dinst)
        assert cand.kind == "knn"


@pytest.mark.parametrize("k", [4, 12, 40])
def test_other_k(rt, k):
    rng = np.random.default_rng(k)
    inst = make_instance("EUC_2D", coords=_clustered(rng, 900), name=f"k{k}")
    dinst = device_instance(rt, inst)
    for kind in ("knn", "quadrant"):
        check_candidates(rt, inst, kind, k, dinst)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 9])
def test_tiny_n(rt, n):
    """n - 1 < k falls back to knn with m = n - 1; n = 5, k = 4 keeps quadrant lists."""
    rng = np.random.default_rng(n)
    for layout in ("uniform", "all_same", "one_by_n"):
        inst = make_instance("EUC_2D", coords=LAYOUTS[layout](rng, n), name=f"{layout}{n}")
        dinst = device_instance(rt, inst)
        for kind in ("knn", "quadrant"):
            for k in (4, 8):
                check_candidates(rt, inst, kind, k, dinst)


@pytest.mark.parametrize("rel", ["tsplib/pr76.tsp", "tsplib/gr96.tsp", "tsplib/bays29.tsp",
                                 "tsplib/att48.tsp", "tsplib/dsj1000.tsp",
                                 "vlsi/xqf131.tsp", "atsp/ftv70.atsp"])
def test_shared_instances(rt, rel):
    inst = shared_instance(rel)
    dinst = device_instance(rt, inst)
    for kind, k in (("knn", 8), ("quadrant", 8), ("quadrant", 12)):
        check_candidates(rt, inst, kind, k, dinst)


def test_reference_quadrant_matches_loop():
    """The vectorised host reference agrees with a plain loop (guards the guard)."""
    rng = np.random.default_rng(11)
    coords = np.concatenate([_grid_points(rng, 40), _duplicates(rng, 20), _uniform(rng, 20, 2, 50)])
    inst = make_instance("EUC_2D", coords=coords)
    cities, _, m, kind = reference_candidates(inst, "quadrant", 8)
    assert (m, kind) == (8, "quadrant")
    for i in range(inst.n):
        assert cities[i].tolist() == reference_quadrant_loop(inst, 8, i), f"row {i}"


@pytest.mark.slow
def test_large_uniform_knn(rt):
    """n = 20000, k = 8: exact against a chunked host search.

    Per chunk of 25 rows the squared distances to every city are computed as
    Instance.dist computes them (EUC_2D distance is a non-decreasing function of that
    square), the 64 smallest are kept, and their exact distances come from Instance.dist.
    Every city outside that set is at least as far as the 64th, so when the 64th exact
    distance exceeds the k-th the set holds the exact (distance, index) top k; rows where
    it does not fall back to the full exact row.
    """
    rng = np.random.default_rng(20000)
    n, k, keep = 20_000, 8, 64
    inst = make_instance("EUC_2D", coords=rng.uniform(0, 100_000, (n, 2)).round(1))
    cand = build_candidates(device_instance(rt, inst), CandidateParams("knn", k))
    assert (cand.m, cand.kind) == (k, "knn")
    got_c, got_d = cand.host(rt)
    c = inst.coords
    x, y = c[:, 0].copy(), c[:, 1].copy()
    idx = np.arange(n)
    big = np.iinfo(np.int64).max
    for s in range(0, n, 25):
        rows = idx[s:s + 25]
        sq = np.abs(x[rows, None] - x[None, :])
        dy = np.abs(y[rows, None] - y[None, :])
        sq *= sq
        dy *= dy
        sq += dy                                        # dx * dx + dy * dy, as the host does
        sq[np.arange(len(rows)), rows] = np.inf
        near = np.argpartition(sq, keep, axis=1)[:, :keep]
        D = inst.dist(rows[:, None], near)
        key = np.where(near == rows[:, None], big, D * n + near)
        srt = np.argsort(key, axis=1)
        near = np.take_along_axis(near, srt, 1)
        D = np.take_along_axis(D, srt, 1)
        for r in np.flatnonzero(D[:, -1] <= D[:, k - 1]):   # ties reach the 64th: full row
            row = inst.dist_row(rows[r]) * n + idx
            row[rows[r]] = big
            full = np.argsort(row)[:k]
            near[r, :k], D[r, :k] = full, inst.dist(rows[r], full)
        want_c, want_d = near[:, :k], D[:, :k]
        bad = np.flatnonzero((got_c[rows] != want_c).any(1) | (got_d[rows] != want_d).any(1))
        assert bad.size == 0, (f"city {rows[bad[0]]} at {c[rows[bad[0]]]}: device "
                               f"{got_c[rows[bad[0]]].tolist()} host {want_c[bad[0]].tolist()}")


def test_random_small_sweep(rt):
    """Many small random instances (ties, duplicates, collinear runs) against the reference."""
    rng = np.random.default_rng(2024)
    for rep in range(40):
        n = int(rng.integers(6, 90))
        span = int(rng.choice([3, 10, 1000]))
        coords = rng.integers(0, span, (n, 2)).astype(np.float64)
        if rep % 3 == 1:
            coords[:, 1] = coords[0, 1]                     # all on one row
        if rep % 4 == 2:
            coords += rng.uniform(-0.5, 0.5, (n, 2))
        wt = ("EUC_2D", "MAN_2D", "CEIL_2D", "ATT")[rep % 4]
        inst = make_instance(wt, coords=coords, name=f"sweep{rep}")
        dinst = device_instance(rt, inst)
        for kind in ("knn", "quadrant"):
            check_candidates(rt, inst, kind, (4, 8)[rep % 2], dinst)


def test_params_validated():
    from tspcl.errors import UsageError

    for kind, k in (("quadrant", 6), ("knn", 0), ("nearest", 8)):
        with pytest.raises(UsageError):
            CandidateParams(kind, k)
    assert CandidateParams() == CandidateParams("quadrant", 40)
