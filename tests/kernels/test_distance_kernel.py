"""The device distance (kernels_cl/distance.h) equals the host's exact TSPLIB distance.

Invariant 1 of the design: for every pair of every shipped instance, the kernels' integer
distance equals ``Instance.dist``.  Each shipped instance gets many random pairs, every
pair when it is small, and the edges of its optimal tour where one is shipped; synthetic
instances cover every weight type with awkward coordinates (exact .5 boundaries, exact
integers, negative and large coordinates, duplicates).  The device tour length
(``tour_length`` kernel, a local-memory reduction) equals the host's on random tours.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from kernel_fixtures import (device_instance, load_problem, make_instance, optimal_tour,
                             require_shared_instances, rt, shared_instances_dir,
                             shared_problem_files)

RANDOM_PAIRS = 20_000
ALL_PAIRS_UP_TO = 150

SHARED_FILES = shared_problem_files(("tsplib", "atsp", "vlsi"))


def _seed(name: str) -> int:
    return zlib.crc32(name.encode())


def _assert_same(inst, dinst, a, b, what: str):
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    dev = dinst.pair_distances(a, b).astype(np.int64)
    host = np.asarray(inst.dist(a, b), np.int64)
    bad = np.flatnonzero(dev != host)
    if bad.size:
        rows = ", ".join(f"({a[t]},{b[t]}): device {dev[t]} host {host[t]}" for t in bad[:5])
        pytest.fail(f"{inst.name} [{inst.weight_type}] {what}: {bad.size} of {len(a)} pairs "
                    f"differ, e.g. {rows}")


def _device_tour_length(rt, dinst, order) -> int:
    buf = rt.to_device(np.asarray(order, np.int32))
    return dinst.tour_length(buf)


def _check_tours(rt, inst, dinst, rng, tours=()):
    n = inst.n
    cases = [("random permutation", rng.permutation(n)) for _ in range(2)]
    cases.append(("identity", np.arange(n)))
    cases += list(tours)
    for what, order in cases:
        dev = _device_tour_length(rt, dinst, order)
        host = inst.tour_length(order)
        assert dev == host, f"{inst.name}: device tour_length {dev} != host {host} ({what})"


def _pairs_for(inst, rng, opt):
    n = inst.n
    parts = [(rng.integers(0, n, RANDOM_PAIRS), rng.integers(0, n, RANDOM_PAIRS))]
    idx = np.arange(n)
    # consecutive cities in file order (often close together), both directions, and i == i
    parts.append((idx, np.roll(idx, -1)))
    parts.append((np.roll(idx, -1), idx))
    parts.append((idx, idx))
    if n <= ALL_PAIRS_UP_TO:
        ii, jj = np.meshgrid(idx, idx, indexing="ij")
        parts.append((ii.ravel(), jj.ravel()))
    if opt is not None:
        parts.append((opt, np.roll(opt, -1)))
        parts.append((np.roll(opt, -1), opt))
    a = np.concatenate([p[0] for p in parts])
    b = np.concatenate([p[1] for p in parts])
    return a, b


# ---- every shipped instance ------------------------------------------------------------
@pytest.mark.parametrize(
    "path", SHARED_FILES or [None],
    ids=[f"{p.parent.name}/{p.stem}" for p in SHARED_FILES] or ["no-shared-instances"])
def test_shared_instance_distances(rt, path):
    if path is None:
        root = require_shared_instances()
        pytest.skip(f"no .tsp/.atsp files under {root}/{{tsplib,atsp,vlsi}}")
    inst = load_problem(path)
    rng = np.random.default_rng(_seed(path.name))
    opt = optimal_tour(path)
    if opt is not None:
        assert inst.tour_problem(opt) is None, f"{path.name}: shipped optimal tour is invalid"
    dinst = device_instance(rt, inst)
    a, b = _pairs_for(inst, rng, opt)
    _assert_same(inst, dinst, a, b, "pairs")
    _check_tours(rt, inst, dinst, rng,
                 [] if opt is None else [("optimal tour", opt), ("reversed optimal", opt[::-1])])


def test_shared_instances_found():
    """The instance folder is there and the parametrized test above saw every subfolder."""
    root = require_shared_instances()
    subs = {p.parent.name for p in SHARED_FILES}
    present = {s for s in ("tsplib", "atsp", "vlsi") if (root / s).is_dir()}
    assert present <= subs, f"no problem files found in {sorted(present - subs)} under {root}"
    assert shared_instances_dir() == root


# ---- synthetic instances for every weight type -----------------------------------------
def _awkward_2d(rng) -> np.ndarray:
    """Coordinates whose distances sit on rounding boundaries, plus the usual suspects."""
    pts = [(0.0, 0.0)]
    # Pythagorean triples scaled so the exact length ends in .5 (and in .0)
    for (p, q), s in [((3, 4), 0.5), ((3, 4), 0.1), ((5, 12), 0.5), ((8, 15), 0.5),
                      ((3, 4), 1.0), ((7, 24), 0.5), ((20, 21), 0.5), ((3, 4), 1.5),
                      ((3, 4), 0.3), ((9, 40), 0.5)]:
        for k in (1, 3, 7):
            pts.append((p * s * k, q * s * k))
            pts.append((-q * s * k, p * s * k))
    # Manhattan / max boundaries (.25 + .25 = .5, a lone .5)
    pts += [(1.25, 1.25), (0.5, 0.0), (2.5, -0.5), (-1.5, 0.0), (0.0, 3.5), (10.75, -3.75)]
    # ATT boundaries: (k, 3k) has r = k exactly; (2.5, 7.5) gives r = 2.5
    pts += [(1.0, 3.0), (2.0, 6.0), (3.0, 9.0), (2.5, 7.5), (-4.0, -12.0)]
    # exact integers and one a hair above an integer (CEIL_2D)
    pts += [(30.0, 40.0), (30.0, 40.000000001), (6.0, 8.0), (600.0, 800.0)]
    base = np.array(pts)
    shifted = base + np.array([123.0, -456.0])           # same deltas, shifted origin
    uniform = rng.uniform(-1000.0, 1000.0, (40, 2))
    ints = rng.integers(-50, 50, (30, 2)).astype(np.float64)
    halves = rng.integers(-200, 200, (30, 2)) / 2.0
    dup = np.repeat(uniform[:3], 3, axis=0)             # duplicates
    big = rng.uniform(-1e6, 1e6, (10, 2)) + 0.5          # large coordinates with .5 parts
    huge = np.array([[-1e8, -1e8], [1e8, 1e8], [1e8, -1e8], [-1e8 + 0.5, 1e8 - 0.5]])
    return np.concatenate([base, shifted, uniform, ints, halves, dup, big, huge])


def _awkward_3d(rng) -> np.ndarray:
    xy = _awkward_2d(rng)
    z = np.concatenate([np.zeros(len(xy) // 3), rng.integers(-20, 20, len(xy) // 3) / 2.0,
                        rng.uniform(-1e5, 1e5, len(xy) - 2 * (len(xy) // 3))])
    pts = np.column_stack([xy, z])
    extra = np.array([[0, 0, 0], [1, 2, 2], [2, 3, 6], [0.5, 1, 1], [1, 4, 8], [-2, -3, -6],
                      [1.5, 1.5, 1.5], [0.25, 0.25, 0.0], [1e7, -1e7, 1e7]], np.float64)
    return np.concatenate([pts, extra])


def _geo_coords(rng) -> np.ndarray:
    """DDD.MM latitude/longitude: random, poles, equator, antipodes, duplicates, negatives."""
    lat = np.round(rng.uniform(-90, 90, 80), 2)
    lon = np.round(rng.uniform(-180, 180, 80), 2)
    pts = list(zip(lat, lon))
    pts += [(90.0, 0.0), (-90.0, 0.0), (90.0, 180.0), (0.0, 0.0), (0.0, 180.0),
            (0.0, -180.0), (0.0, 90.0), (0.0, -90.0), (45.3, 10.59), (-45.3, -169.01),
            (12.99, 100.99), (-12.99, -79.01), (38.24, 20.42), (38.24, 20.42),
            (-0.01, -0.01), (0.01, 0.01), (89.59, 179.59), (-89.59, -179.59)]
    return np.array(pts, np.float64)


def _synthetic(weight_type: str, rng):
    if weight_type == "EXPLICIT":
        n = 70
        mat = rng.integers(0, 1_000_000, (n, n))
        mat[rng.random((n, n)) < 0.05] = 2**31 - 1 - rng.integers(0, 10, 1)[0]
        mat[np.arange(n), np.arange(n)] = 0
        assert not np.array_equal(mat, mat.T)
        return make_instance("EXPLICIT", matrix=mat, kind="ATSP", name="asym")
    if weight_type == "GEO":
        return make_instance("GEO", coords=_geo_coords(rng), name="geo")
    if weight_type.endswith("_3D"):
        return make_instance(weight_type, coords=_awkward_3d(rng), name="awkward3d")
    return make_instance(weight_type, coords=_awkward_2d(rng), name="awkward2d")


WEIGHT_TYPES = ["EUC_2D", "CEIL_2D", "ATT", "MAN_2D", "MAX_2D", "GEO", "EUC_3D", "MAN_3D",
                "MAX_3D", "EXPLICIT"]


@pytest.mark.parametrize("weight_type", WEIGHT_TYPES)
def test_synthetic_all_pairs(rt, weight_type):
    rng = np.random.default_rng(_seed(weight_type))
    for rep in range(3):
        inst = _synthetic(weight_type, rng)
        n = inst.n
        dinst = device_instance(rt, inst)
        idx = np.arange(n)
        ii, jj = np.meshgrid(idx, idx, indexing="ij")
        _assert_same(inst, dinst, ii.ravel(), jj.ravel(), f"all pairs (rep {rep})")
        _check_tours(rt, inst, dinst, rng)


@pytest.mark.parametrize("weight_type", WEIGHT_TYPES)
def test_synthetic_random_uniform(rt, weight_type):
    """Plain random instances (n = 2000) on many random pairs."""
    rng = np.random.default_rng(_seed("uniform" + weight_type))
    n = 2000
    if weight_type == "EXPLICIT":
        inst = make_instance("EXPLICIT", matrix=rng.integers(0, 10_000, (n, n)), kind="ATSP")
    elif weight_type == "GEO":
        coords = np.column_stack([np.round(rng.uniform(-90, 90, n), 2),
                                  np.round(rng.uniform(-180, 180, n), 2)])
        inst = make_instance("GEO", coords=coords)
    else:
        d = 3 if weight_type.endswith("_3D") else 2
        inst = make_instance(weight_type, coords=rng.uniform(0, 10_000, (n, d)))
    dinst = device_instance(rt, inst)
    a, b = rng.integers(0, n, 50_000), rng.integers(0, n, 50_000)
    _assert_same(inst, dinst, a, b, "random pairs")
    _check_tours(rt, inst, dinst, rng)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 255, 256, 257, 1999, 5003])
def test_tour_length_sizes(rt, n):
    """The reduction over work-groups is exact for any n (partial groups, tiny n)."""
    rng = np.random.default_rng(n)
    inst = make_instance("EUC_2D", coords=rng.uniform(0, 1e6, (n, 2)))
    dinst = device_instance(rt, inst)
    for _ in range(3):
        order = rng.permutation(n)
        assert _device_tour_length(rt, dinst, order) == inst.tour_length(order)


def test_tour_length_needs_64_bits(rt):
    """A tour whose length does not fit in 32 bits is summed exactly on the device."""
    n = 5
    mat = np.full((n, n), 2**31 - 1, np.int64)
    np.fill_diagonal(mat, 0)
    inst = make_instance("EXPLICIT", matrix=mat, kind="ATSP")
    dinst = device_instance(rt, inst)
    order = np.array([3, 1, 4, 0, 2])
    assert inst.tour_length(order) == 5 * (2**31 - 1)
    assert _device_tour_length(rt, dinst, order) == 5 * (2**31 - 1)


def test_pair_distances_empty_and_single(rt):
    inst = make_instance("EUC_2D", coords=[[0.0, 0.0], [3.0, 4.0]])
    dinst = device_instance(rt, inst)
    assert dinst.pair_distances(np.zeros(0, np.int64), np.zeros(0, np.int64)).shape == (0,)
    assert dinst.pair_distances(np.array([0]), np.array([1])).tolist() == [5]


def test_pair_distances_across_batches(rt):
    """More pairs than one launch takes (PAIR_BATCH): every batch lands in its place."""
    from tspcl.device_instance import PAIR_BATCH

    rng = np.random.default_rng(3)
    inst = make_instance("EUC_2D", coords=rng.uniform(0, 1e4, (300, 2)))
    dinst = device_instance(rt, inst)
    count = PAIR_BATCH + 1000
    a, b = rng.integers(0, 300, count), rng.integers(0, 300, count)
    _assert_same(inst, dinst, a, b, "pairs over two batches")
