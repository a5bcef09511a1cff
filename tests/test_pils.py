"""The segment-parallel ILS (kernels_cl/pils.cl, tspcl/solvers/pils.py) against host checks.

The segment search is checked by brute force on the host: every 2-opt and Or-opt move of
a segment's path (both ends fixed) that makes a candidate edge is enumerated directly
from the definition, and none may improve after a descent.  Rounds keep the tour a
permutation, never move a segment's end cities, and report exact gains; runs reproduce.
"""

from __future__ import annotations

import numpy as np
import pytest
from kernel_fixtures import rt  # noqa: F401

from tspcl.device_instance import DeviceInstance
from tspcl.instance import Instance
from tspcl.neighbors import build_candidates
from tspcl.run import solve
from tspcl.solvers import get_solver
from tspcl.solvers.pils import SegmentIlsParams, longest_segment

M = 8
LISTS = SegmentIlsParams().candidates()   # the solver's lists; the segments read their first M
WG, QCAP, MAX_MOVES, LK_DEPTH = 64, 32, 256, 6
SEGMENT = 64     # cities per segment in the kernel tests


def _uniform(n: int, seed: int) -> Instance:
    pts = np.random.default_rng(seed).integers(0, 10_000, size=(n, 2)).astype(np.float64)
    return Instance(name=f"u{n}", kind="TSP", weight_type="EUC_2D", coords=pts)


def _round(rt, inst,  # noqa: F811
            order, offset, descend, kicks, seed=1, round_no=0, window=50):
    """One pils_round launch on `order` (segments of at most SEGMENT cities, `kicks` in
    all); returns the new order, the per-segment gains and the candidate lists."""
    d = DeviceInstance(rt, inst)
    cand = build_candidates(d, LISTS)
    # the solver's build (the longest segment local memory holds): one PoCL compile
    k = d.kernel("pils", "pils_round", M=M, L_MAX=longest_segment(M, rt.limits.local_mem, True),
                 WG=WG, QCAP=QCAP, LOCAL_XY=1, MAX_MOVES=MAX_MOVES, LK_DEPTH=LK_DEPTH)
    n = inst.n
    order = np.asarray(order, np.int32)
    pos = np.empty(n, np.int32)
    pos[order] = np.arange(n, dtype=np.int32)
    segments = -(-n // SEGMENT)
    assert -(-n // segments) <= SEGMENT
    out, gains = rt.empty(4 * n), rt.empty(8 * segments)
    k(rt.queue, (segments * WG,), (WG,), *d.dist_args, cand.cities, np.int32(cand.m),
      rt.to_device(order), rt.to_device(pos), out, gains, np.uint32(seed), np.uint32(0),
      np.uint32(round_no), np.int32(offset), np.int32(segments), np.int32(0),
      np.int32(descend), np.int32(kicks // segments), np.int32(kicks % segments),
      np.int32(window))
    lists = cand.host(rt)[0][:, :M]
    return rt.read(out, np.int32, n), rt.read(gains, np.int64, segments), lists


def _segments(n, offset):
    """(first position, length) of each segment, positions taken mod n."""
    count = -(-n // SEGMENT)
    return [(offset + g * n // count, (g + 1) * n // count - g * n // count) for g in range(count)]


def _improving_moves(inst, path, lists):
    """Every 2-opt and Or-opt move of `path` (ends fixed) that makes an edge (a, c) with
    c in a's candidate list and c in the path, by brute force; yields (kind, gain)."""
    inside = set(path)
    cand = {a: {c for c in lists[a] if c in inside} for a in path}

    def d(x, y):
        return int(inst.dist(x, y))

    def is_cand(a, c):
        return c in cand[a] or a in cand[c]

    L = len(path)
    for i in range(L - 1):
        for j in range(i + 2, L - 1):   # reverse [i + 1, j]
            a, a1, c, c1 = path[i], path[i + 1], path[j], path[j + 1]
            if is_cand(a, c) or is_cand(a1, c1):
                g = d(a, a1) + d(c, c1) - d(a, c) - d(a1, c1)
                if g > 0:
                    yield "2opt", g
    for s in (1, 2, 3):
        for u in range(1, L - s):
            v = u + s - 1
            p, q, cu, cv = path[u - 1], path[v + 1], path[u], path[v]
            for x in range(L - 1):
                if u - 1 <= x <= v:
                    continue
                px, py = path[x], path[x + 1]
                for e1, e2 in ((cu, cv), (cv, cu)):
                    if py in cand[e2] or px in cand[e1]:
                        g = d(p, cu) + d(cv, q) + d(px, py) - d(p, q) - d(px, e1) - d(e2, py)
                        if g > 0:
                            yield "oropt", g


@pytest.mark.parametrize("n, offset", [(200, 0), (173, 61)])
def test_a_descent_leaves_no_improving_move_inside_a_segment(rt, n, offset):  # noqa: F811
    inst = _uniform(n, n)
    start = np.random.default_rng(7).permutation(n)
    out, gains, lists = _round(rt, inst, start, offset, descend=1, kicks=0)
    assert sorted(out.tolist()) == list(range(n))
    assert inst.tour_length(start) - inst.tour_length(out) == gains.sum()
    for first, length in _segments(n, offset):
        if length < 8:
            continue
        path = [int(out[(first + i) % n]) for i in range(length)]
        found = list(_improving_moves(inst, path, lists))
        assert not found, f"segment at {first}: improving moves left {found[:3]}"


def test_rounds_keep_a_permutation_fixed_ends_and_exact_gains(rt):  # noqa: F811
    n = 300
    inst = _uniform(n, 3)
    order = np.random.default_rng(3).permutation(n)
    for round_no, offset in enumerate((0, 37, 250)):
        out, gains, _ = _round(rt, inst, order, offset, descend=round_no == 0, kicks=101,
                               round_no=round_no)
        assert sorted(out.tolist()) == list(range(n))
        for first, length in _segments(n, offset):
            for end in (first, first + length - 1):
                assert out[end % n] == order[end % n], "a segment's end city moved"
        assert (gains >= 0).all()
        assert inst.tour_length(order) - inst.tour_length(out) == gains.sum()
        order = out


def test_kicks_improve_a_local_optimum_and_reproduce(rt):  # noqa: F811
    n = 256
    inst = _uniform(n, 5)
    start = np.random.default_rng(5).permutation(n)
    optimum, _, _ = _round(rt, inst, start, 0, descend=1, kicks=0)
    a, gains_a, _ = _round(rt, inst, optimum, 0, descend=0, kicks=800, seed=11)
    b, gains_b, _ = _round(rt, inst, optimum, 0, descend=0, kicks=800, seed=11)
    c, _, _ = _round(rt, inst, optimum, 0, descend=0, kicks=800, seed=12)
    assert np.array_equal(a, b) and np.array_equal(gains_a, gains_b)
    assert gains_a.sum() > 0, "200 kicks a segment found nothing below a 2-opt/Or-opt optimum"
    assert not np.array_equal(a, c), "another seed drew the same kicks"


def test_the_solver_gives_a_reproducible_exact_tour(rt):  # noqa: F811
    inst = _uniform(512, 9)
    spec = get_solver("pils")
    params = spec.params_from({"segment": str(SEGMENT), "round_kicks": "8"})
    first = solve(inst, spec, params, rt, seed=4, iterations=2 * 512)
    again = solve(inst, spec, params, rt, seed=4, iterations=2 * 512)
    assert sorted(first.order.tolist()) == list(range(512))
    assert first.length == inst.tour_length(first.order)
    assert np.array_equal(first.order, again.order)
    assert first.iterations == 2 * 512
    greedy = solve(inst, get_solver("greedy"), get_solver("greedy").params_type(), rt, seed=4)
    assert first.length < greedy.length


def test_replicas_search_the_whole_tour_and_the_best_one_is_kept(rt):  # noqa: F811
    inst = _uniform(60, 13)
    spec = get_solver("pils")
    params = spec.params_from({"round_kicks": "16"})
    res = solve(inst, spec, params, rt, seed=2, iterations=3000)
    again = solve(inst, spec, params, rt, seed=2, iterations=3000)
    assert sorted(res.order.tolist()) == list(range(60))
    assert res.length == inst.tour_length(res.order)
    assert np.array_equal(res.order, again.order) and res.iterations == 3000
    # every city is inside each replica's one segment, and the lk polish after the last
    # round leaves no 2-opt or Or-opt move either: some cut of the tour has none left
    lists = build_candidates(DeviceInstance(rt, inst), LISTS).host(rt)[0]
    path = [int(c) for c in res.order]
    assert any(not any(True for _ in _improving_moves(inst, path[r:] + path[:r], lists[:, :M]))
               for r in range(60))
