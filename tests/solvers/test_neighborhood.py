"""Hill climbing and tabu search (kernels_cl/neighborhood.cl) against plain host versions:
the index mappings are bijections, incremental deltas equal full recomputation, every
iteration takes the move a host enumeration picks (so no tabu move without aspiration),
hill climbing ends in a local optimum, thread control survives a launch that fails."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kernel_fixtures import check_kernels, rt  # noqa: F401 - fixture
from test_device_loop import enqueue_in_slices, run_on_a_counting_clock
from tspcl.device_instance import DeviceInstance
from tspcl.errors import UsageError
from tspcl.gen import generate
from tspcl.instance import Instance
from tspcl.neighbors import CandidateParams, build_candidates
from tspcl.run import solve
from tspcl.solvers import REGISTRY, SolveContext
from tspcl.solvers import neighborhood as nbs
from tspcl.thread_control import LaunchConfig, ThreadControl, axes, group_axis, waves

NO_MOVE = nbs.NO_MOVE


# ---- host reference -------------------------------------------------------------------
def host_pairs(n):
    """Pairs (i, j), i < j, in the order of the paper's two-to-one mapping."""
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def host_triples(n):
    """Triples i < j < k in colex order (the three-index mapping)."""
    return [(i, j, k) for k in range(n) for j in range(k) for i in range(j)]


def pair_of(f, n):
    """The f-th pair by bisection over the rows' first ids (exact integers, any size)."""
    def first(i):  # id of (i, i + 1)
        return i * (n - 1) - i * (i + 1) // 2 + i

    lo, hi = 0, n - 2
    while lo < hi:  # the last row starting at or before f
        mid = (lo + hi + 1) // 2
        if first(mid) <= f:
            lo = mid
        else:
            hi = mid - 1
    return lo, lo + 1 + f - first(lo)


def triple_of(t):
    """The t-th triple in colex order (exact integers; the float only starts the search)."""
    k = int(round((6 * t) ** (1 / 3))) + 2
    while math.comb(k, 3) > t:
        k -= 1
    while math.comb(k + 1, 3) <= t:
        k += 1
    rem = t - math.comb(k, 3)
    j = math.isqrt(2 * rem) + 1
    while math.comb(j, 2) > rem:
        j -= 1
    while math.comb(j + 1, 2) <= rem:
        j += 1
    return rem - math.comb(j, 2), j, k


def host_move(nb, ident, tour, cand):
    """Positions (sorted) and rotation of move `ident`, or None (neighborhood.cl)."""
    n = len(tour)
    pos = np.empty(n, int)
    pos[tour] = np.arange(n)
    r = 0
    if cand is None:
        if nb == "3exchange":
            p, r = list(triple_of(ident >> 1)), ident & 1
        else:
            p = list(pair_of(ident, n))
    else:
        m = cand.shape[1]
        if nb == "swap":
            p = [pos[ident // m], pos[cand.flat[ident]]]
        elif nb == "2opt":
            e, back = ident >> 1, ident & 1
            p = [(pos[e // m] - back) % n, (pos[cand.flat[e]] - back) % n]
        else:
            e, r = ident >> 1, ident & 1
            a = e // (m * m)
            b = cand[a, e // m % m]
            c = cand[b, e % m]
            p = [pos[a], pos[b], pos[c]]
        p = sorted(int(x) for x in p)
        if len(set(p)) < len(p):
            return None
    if nb == "2opt" and (p[1] == p[0] + 1 or (p[0] == 0 and p[1] == n - 1)):
        return None
    return p, r


def host_apply(nb, tour, p, r):
    t = np.array(tour)
    if nb == "swap":
        t[p[0]], t[p[1]] = tour[p[1]], tour[p[0]]
    elif nb == "2opt":
        t[p[0] + 1:p[1] + 1] = tour[p[0] + 1:p[1] + 1][::-1]
    else:
        i, j, k = p
        src = (k, i, j) if r == 0 else (j, k, i)
        t[i], t[j], t[k] = tour[src[0]], tour[src[1]], tour[src[2]]
    return t


def touched(nb, tour, p):
    n = len(tour)
    if nb == "2opt":
        return {tour[p[0]], tour[(p[0] + 1) % n], tour[p[1]], tour[(p[1] + 1) % n]}
    return {tour[x] for x in p}


def device_moves(rt, inst, nb, tour, ids, cand_buf=None, m=0):  # noqa: F811
    """(positions + rotation, delta) of each id from the nb_moves kernel."""
    dinst = DeviceInstance(rt, inst)
    k = dinst.kernel(check_kernels("neighborhood"), "nb_moves", **nbs.program_defines(nb, m))
    tour = np.asarray(tour, np.int32)
    pos = np.empty(inst.n, np.int32)
    pos[tour] = np.arange(inst.n)
    ids = np.asarray(ids, np.uint64)
    out_pos, out_delta = rt.empty(16 * len(ids)), rt.empty(8 * len(ids))
    k(rt.queue, (-(-len(ids) // 64) * 64,), None, *dinst.dist_args, rt.to_device(tour),
      rt.to_device(pos), cand_buf if cand_buf is not None else rt.empty(4), rt.to_device(ids),
      np.int32(len(ids)), out_pos, out_delta)
    return (rt.read(out_pos, np.int32, 4 * len(ids)).reshape(-1, 4),
            rt.read(out_delta, np.int64, len(ids)))


def asymmetric(n, seed):
    m = np.random.default_rng(seed).integers(1, 1000, (n, n))
    np.fill_diagonal(m, 0)
    return Instance(f"atsp{n}", "ATSP", "EXPLICIT", matrix=m)


# ---- index mappings -------------------------------------------------------------------
@pytest.mark.parametrize("n", [5, 6, 7, 13, 40])
def test_mappings_are_bijections_exhaustively(rt, n):  # noqa: F811
    inst = generate("uniform", n, seed=n)
    tour = np.arange(n)
    got, _ = device_moves(rt, inst, "swap", tour, np.arange(math.comb(n, 2)))
    assert [tuple(x[:2]) for x in got] == host_pairs(n)
    got, _ = device_moves(rt, inst, "3exchange", tour, np.arange(2 * math.comb(n, 3)))
    want = [(*t, r) for t in host_triples(n) for r in (0, 1)]
    assert [(x[0], x[1], x[2], x[3]) for x in got] == want


def test_mappings_for_100000_cities_and_ids_above_2_31(rt):  # noqa: F811
    n = 100_000
    inst = generate("uniform", n, seed=1)
    rng = np.random.default_rng(7)
    pairs, triples = math.comb(n, 2), 2 * math.comb(n, 3)
    assert pairs > 2**32 and triples > 2**47
    pair_ids = np.concatenate([[0, 1, n - 2, n - 1, 2**31 - 1, 2**31, 2**31 + 1, pairs - 2, pairs - 1],
                               rng.integers(2**31, pairs, 3000), rng.integers(0, pairs, 1000)])
    got, _ = device_moves(rt, inst, "swap", np.arange(n), pair_ids)
    assert [tuple(x[:2]) for x in got] == [pair_of(int(f), n) for f in pair_ids]
    assert all(0 <= i < j < n for i, j in (pair_of(int(f), n) for f in pair_ids))
    tri_ids = np.concatenate([[0, 1, 2**31, 2**32 + 1, triples - 2, triples - 1],
                              rng.integers(2**31, triples, 3000, dtype=np.int64)])
    got, _ = device_moves(rt, inst, "3exchange", np.arange(n), tri_ids)
    want = [(*triple_of(int(t) >> 1), int(t) & 1) for t in tri_ids]
    assert [tuple(int(v) for v in x) for x in got] == want
    assert want[5] == (n - 3, n - 2, n - 1, 1)


# ---- incremental evaluation -------------------------------------------------------------
def delta_instances():
    yield generate("uniform", 9, seed=1)
    yield generate("clustered", 37, seed=2)
    yield Instance("att", "TSP", "ATT", coords=np.round(np.random.default_rng(3).uniform(0, 5000, (23, 2))))
    yield asymmetric(6, 4)
    yield asymmetric(21, 5)


@pytest.mark.parametrize("nb", ["swap", "2opt", "3exchange"])
@pytest.mark.parametrize("m", [0, 5])
def test_incremental_delta_equals_full_recomputation(rt, nb, m):  # noqa: F811
    for inst in delta_instances():
        if nb == "2opt" and not inst.symmetric:
            continue
        n = inst.n
        tour = np.random.default_rng(n).permutation(n)
        cand, cand_buf = None, None
        if m:
            c = build_candidates(DeviceInstance(rt, inst), CandidateParams("knn", m))
            cand, cand_buf = c.host(rt)[0], c.cities
        count = nbs.neighborhood_size(nb, n, min(m, n - 1))
        got_pos, got_delta = device_moves(rt, inst, nb, tour, np.arange(count), cand_buf, min(m, n - 1))
        base = inst.tour_length(tour)
        for ident in range(count):
            mv = host_move(nb, ident, tour, cand)
            if mv is None:
                assert got_delta[ident] == NO_MOVE, (inst.name, ident)
                continue
            p, r = mv
            assert list(got_pos[ident][:len(p)]) == p, (inst.name, ident)
            want = inst.tour_length(host_apply(nb, tour, p, r)) - base
            assert got_delta[ident] == want, (inst.name, nb, ident, p, r)


# ---- whole iterations --------------------------------------------------------------------
def host_choice(inst, nb, tour, tabu_until, iteration, cur, best, cand, climb):
    """The move one iteration must take: least (delta, id) among the admissible ones."""
    n = inst.n
    base = inst.tour_length(tour)
    choice = None
    for ident in range(nbs.neighborhood_size(nb, n, 0 if cand is None else cand.shape[1])):
        mv = host_move(nb, ident, tour, cand)
        if mv is None:
            continue
        delta = inst.tour_length(host_apply(nb, tour, *mv)) - base
        tabu = any(tabu_until[c] > iteration for c in touched(nb, tour, mv[0]))
        ok = delta < 0 if climb else (not tabu or cur + delta < best)
        if ok and (choice is None or delta < choice[0]):
            choice = (delta, ident, mv, tabu)
    return choice


def run_steps(rt, inst, p, tenure, steps, check):  # noqa: F811
    """Run `steps` single iterations with a fixed launch; check(before, after) each."""
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=1)
    n = inst.n
    start = np.random.default_rng(n).permutation(n)
    search = nbs.DeviceNeighborhoodSearch(ctx, p, tenure)
    search.load(start, inst.tour_length(start), budget=steps)
    for _ in range(steps):
        before = (ctx.read_tour(search.tour), rt.read(search.tabu_until, np.int32, n), search.read_state())
        search.enqueue(1, LaunchConfig(96, 32))
        after = (ctx.read_tour(search.tour), search.read_state(), ctx.read_tour(search.best_tour))
        if not check(before, after):
            break
    return search


@pytest.mark.parametrize("nb", ["swap", "2opt", "3exchange"])
@pytest.mark.parametrize("m", [0, 8])
def test_each_tabu_iteration_takes_the_best_admissible_move(rt, nb, m):  # noqa: F811
    inst = generate("uniform", 14 if nb == "3exchange" and not m else 24, seed=8)
    if nb == "swap" and not m:
        inst = asymmetric(16, 9)
    cand = None
    if m:
        cand = build_candidates(DeviceInstance(rt, inst), CandidateParams("knn", m)).host(rt)[0]
    tenure = 4
    taken_tabu = []

    def check(before, after):
        tour, tabu_until, s = before
        new_tour, s2, best_tour = after
        it, cur, best = int(s[nbs.StateWord.ITER]), int(s[nbs.StateWord.CUR]), int(s[nbs.StateWord.BEST])
        want = host_choice(inst, nb, tour, tabu_until, it, cur, best, cand, climb=False)
        if want is None:
            assert s2[nbs.StateWord.DONE] == 1
            return False
        delta, ident, mv, tabu = want
        assert int(s2[nbs.StateWord.LAST_ID]) == ident and int(s2[nbs.StateWord.LAST_DELTA]) == delta
        assert bool(s2[nbs.StateWord.LAST_TABU]) == tabu
        if tabu:  # aspiration only
            assert cur + delta < best
            taken_tabu.append(ident)
        assert inst.tour_length(new_tour) == cur + delta == s2[nbs.StateWord.CUR]
        assert sorted(new_tour) == list(range(inst.n))
        # the same tour as the host's move, up to the side a 2-opt reversed
        host = host_apply(nb, tour, *mv)
        assert inst.tour_length(host) == cur + delta
        assert inst.tour_length(best_tour) == s2[nbs.StateWord.BEST] == min(best, cur + delta)
        return True

    p = nbs.TabuParams(neighborhood=nb, candidates=m, candidate_kind="knn", tenure=tenure)
    run_steps(rt, inst, p, tenure, 40, check)


@pytest.mark.parametrize("nb", ["swap", "2opt", "3exchange"])
def test_hill_climbing_ends_in_a_local_optimum(rt, nb):  # noqa: F811
    inst = generate("clustered", 30 if nb == "3exchange" else 60, seed=4)
    res = solve(inst, REGISTRY["hc"], nbs.HillClimbingParams(neighborhood=nb, init="random"), rt, seed=3)
    tour = np.asarray(res.order)
    assert sorted(tour) == list(range(inst.n)) and res.iterations < 10000
    assert host_choice(inst, nb, tour, np.zeros(inst.n), 0, res.length, res.length, None, True) is None
    assert res.length < inst.tour_length(np.random.default_rng(0).permutation(inst.n))


# ---- thread control -----------------------------------------------------------------------
def test_waves_follow_algorithm_3():
    configs = waves(100, 5000, 1 << 26)
    assert configs[0] == LaunchConfig(128, 32) and configs[15] == LaunchConfig(512, 512)
    assert {c.group for c in configs} == set(range(32, 513, 32))
    assert sorted({1 << (c.threads - 1).bit_length() for c in configs if c.group == 128}) == \
        [128, 256, 512, 1024, 2048, 4096]
    assert all(c.threads % c.group == 0 for c in configs)


def test_axes_tune_the_global_size_then_the_group():
    first = axes(100, 5000, 1 << 26)
    assert first == [LaunchConfig(t, 256) for t in (256, 512, 1024, 2048, 4096)]
    tc = ThreadControl(LaunchConfig(8192, 256), first, trials=2, then=group_axis)
    for c in first:
        tc.measured([1e-3 if c.threads == 1024 else 2e-3])
    assert tc.tuning and {c.group for c in tc.pending} == set(range(32, 513, 32)) - {256}
    assert all(c.threads >= 1024 and c.threads % c.group == 0 for c in tc.pending)
    while tc.tuning:
        tc.measured([0.5e-3 if tc.current.group == 96 else 1e-3])
    assert tc.current == LaunchConfig(1056, 96) and "tuned 20 configurations" in tc.log[-1]


def test_thread_control_keeps_the_fastest_and_falls_back_on_failure():
    default = LaunchConfig(1024, 256)
    tc = ThreadControl(default, [LaunchConfig(128, 32), LaunchConfig(128, 64), LaunchConfig(256, 32)])
    assert tc.promising(1.0)  # nothing measured yet
    tc.measured([3e-3, 2e-3, 4e-3])
    assert tc.promising(6e-3) and not tc.promising(7e-3)  # 2x the best median, 3 ms
    tc.measured([1e-3, 1e-3, 9e-3])
    assert tc.tuning and tc.current == LaunchConfig(256, 32)
    tc.failed(RuntimeError("CL_OUT_OF_RESOURCES"))
    assert not tc.tuning and tc.current == LaunchConfig(128, 64)
    assert "failed (CL_OUT_OF_RESOURCES)" in tc.log[-1]
    fixed = ThreadControl(default, fixed=LaunchConfig(4096, 4096))
    fixed.failed(RuntimeError("invalid work-group size"))
    assert fixed.current == default
    with pytest.raises(RuntimeError):
        fixed.failed(RuntimeError("again"))


def test_an_oversized_launch_recovers_with_the_same_tour(rt):  # noqa: F811
    inst = generate("uniform", 80, seed=6)
    spec = REGISTRY["tabu"]
    too_big = 2 * rt.limits.max_work_group
    forced = solve(inst, spec, nbs.TabuParams(neighborhood="2opt", iterations=120, group=too_big), rt)
    assert any("failed" in note and "going on with" in note for note in forced.notes)
    tuned = solve(inst, spec, nbs.TabuParams(neighborhood="2opt", iterations=120, trials=1), rt)
    grid = solve(inst, spec, nbs.TabuParams(neighborhood="2opt", iterations=120, trials=1,
                                            tuning="waves"), rt)
    fixed = solve(inst, spec, nbs.TabuParams(neighborhood="2opt", iterations=120, threads=64, group=64), rt)
    assert forced.iterations == tuned.iterations == fixed.iterations == 120
    assert list(forced.order) == list(tuned.order) == list(fixed.order) == list(grid.order)
    assert any("tuned" in note for note in tuned.notes + grid.notes)


# ---- runs and parameters ------------------------------------------------------------------
def test_tabu_runs_the_budget_and_keeps_the_best(rt):  # noqa: F811
    inst = generate("uniform", 120, seed=2)
    res = solve(inst, REGISTRY["tabu"], nbs.TabuParams(neighborhood="2opt", iterations=500), rt)
    hc = solve(inst, REGISTRY["hc"], nbs.HillClimbingParams(neighborhood="2opt"), rt)
    assert res.iterations == 500 and res.length <= hc.length
    assert res.length == inst.tour_length(res.order)


def test_2opt_neighbourhood_refuses_asymmetric_instances(rt):  # noqa: F811
    with pytest.raises(UsageError, match="symmetric"):
        solve(asymmetric(12, 1), REGISTRY["hc"], nbs.HillClimbingParams(neighborhood="2opt"), rt)
    res = solve(asymmetric(12, 1), REGISTRY["tabu"], nbs.TabuParams(iterations=50), rt)
    assert sorted(res.order) == list(range(12))


@pytest.mark.parametrize("bad, match", [
    ({"neighborhood": "4opt"}, "neighborhood must be"), ({"tenure": "-1"}, "tenure"),
    ({"trials": "0"}, "trials"), ({"tuning": "grid"}, "tuning must be"), ({"init": "greedy"}, "init must be"),
    ({"candidates": "-3"}, "candidates must be"), ({"iterations": "-1"}, "iterations")])
def test_bad_parameters_are_usage_errors(bad, match):
    with pytest.raises(UsageError, match=match):
        REGISTRY["tabu"].params_from(bad)


@pytest.mark.parametrize("nb", ["swap", "2opt", "3exchange"])
def test_iterations_in_slices_of_move_ids_take_the_moves_of_whole_launches(rt, nb):  # noqa: F811
    """The device loop may evaluate an iteration's moves a few global sizes of ids at a
    time under a time limit (nb_eval merges each slice into the groups' moves): tabu
    search takes the same moves, so the tours and states are those of whole launches."""
    inst = generate("uniform", 30, seed=8)
    start = np.random.default_rng(3).permutation(inst.n)
    config = LaunchConfig(64, 32)
    runs = []
    for size in (10**9, 3):
        ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=1)
        search = nbs.DeviceNeighborhoodSearch(ctx, nbs.TabuParams(neighborhood=nb), 5)
        search.load(start, inst.tour_length(start), budget=6)
        assert -(-search.count // config.threads) > 3   # more than one slice
        for _ in range(6):
            ctx.timed(enqueue_in_slices(search.launches(config), size))
        runs.append((ctx.read_tour(search.tour), ctx.read_tour(search.best_tour), search.read_state()))
    for whole, sliced in zip(*runs):
        assert np.array_equal(whole, sliced)


def test_a_deadline_inside_the_first_iteration_leaves_the_start_tour(rt):  # noqa: F811
    """An iteration of the full 3-exchange neighbourhood goes in slices of move ids; the
    deadline comes between two and the run ends with its start (the NN tour)."""
    inst = generate("uniform", 60, seed=8)
    spec = REGISTRY["tabu"]
    ctx = run_on_a_counting_clock(rt, spec, inst, nbs.TabuParams(neighborhood="3exchange"), at=4.5)
    nn = solve(inst, REGISTRY["nn"], REGISTRY["nn"].params_type(), rt)
    assert ctx.iterations == 0 and ctx.best_length == nn.length
