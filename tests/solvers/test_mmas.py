"""MAX-MIN Ant System (kernels_cl/aco.cl, mmas.cl) against plain host checks: every
variant builds valid tours with exact lengths, the parallel roulette wheel and the
reservoir sampling draw nodes with the exact probabilities, the six variants give
statistically alike results, memory that does not fit is refused with what would."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from kernel_fixtures import check_kernels, rt  # noqa: F401 - fixture
from tspcl.device import Runtime
from tspcl.device_instance import DeviceInstance
from tspcl.errors import DeviceMemoryError, UsageError
from tspcl.gen import generate
from tspcl.run import solve
from tspcl.solvers import REGISTRY, SolveContext
from tspcl.solvers import mmas
from tspcl.solvers.best import BestWord
from tspcl.solvers.device_loop import LONG_MAX
from tspcl.neighbors import CandidateParams, build_candidates
from test_localsearch import improving_2opt
from test_device_loop import enqueue_in_slices, run_on_a_counting_clock

SPEC = REGISTRY["mmas"]


def chi2_critical(df: int, z: float = 3.09) -> float:
    """Upper quantile of chi-square (Wilson-Hilferty; z = 3.09: p = 0.001)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def started_colony(r, inst, params, seed):
    """A colony on device runtime r, its trails started from the identity tour."""
    ctx = SolveContext(r, DeviceInstance(r, inst), seed=seed)
    colony = mmas.DeviceColony(ctx, params)
    ctx.timed(colony.start(inst.tour_length(np.arange(inst.n))))
    return ctx, colony


def ant_tours(r, colony, inst):
    """Every ant's tour (a row each) and length after the last iteration."""
    tours = r.read(colony.tours, np.int32, colony.ants * inst.n).reshape(colony.ants, inst.n)
    return tours, r.read(colony.lengths, np.int64, colony.ants)


def assert_valid_tours(inst, tours, lengths):
    for t, length in zip(tours, lengths):
        assert sorted(t) == list(range(inst.n))
        assert length == inst.tour_length(t)


@pytest.mark.parametrize("variant", mmas.VARIANTS)
@pytest.mark.parametrize("cl", [0, 8])
def test_every_variant_builds_valid_tours_with_exact_lengths(rt, variant, cl):  # noqa: F811
    inst = generate("clustered", 37, seed=4)
    ctx, colony = started_colony(rt, inst, mmas.MmasParams(variant=variant, candidates=cl, ants=12), 3)
    for it in range(3):
        ctx.timed(colony.iteration(it, ctx.seed))
        tours, lengths = ant_tours(rt, colony, inst)
        assert_valid_tours(inst, tours, lengths)
        status = colony.best.read()
        assert status[BestWord.ITER_BEST] == lengths.min()
        assert lengths[status[BestWord.ITER_INDEX]] == lengths.min()


@pytest.mark.parametrize("neighbors,moves", [(32, "best"), (5, "best"), (5, "chunk")])
def test_the_ants_2opt_leaves_no_improving_move_within_the_neighbours(rt, neighbors, moves):  # noqa: F811
    inst = generate("clustered", 90, seed=6)
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=5)
    colony = mmas.DeviceColony(ctx, mmas.MmasParams(ls="2opt", ls_candidates=neighbors, ls_moves=moves, ants=6))
    ctx.timed(colony.start(inst.tour_length(np.arange(inst.n))))
    cand = build_candidates(DeviceInstance(rt, inst), CandidateParams("knn", neighbors)).host(rt)[0]
    for it in range(2):
        ctx.timed(colony.iteration(it, ctx.seed))
        tours = rt.read(colony.tours, np.int32, 6 * inst.n).reshape(6, inst.n)
        lengths = rt.read(colony.lengths, np.int64, 6)
        for t, length in zip(tours, lengths):
            assert sorted(t) == list(range(inst.n)) and length == inst.tour_length(t)
            assert improving_2opt(inst, t, cand, bentley=True) == []


def test_mmas_with_2opt_beats_mmas_alone(rt):  # noqa: F811
    inst = generate("uniform", 120, seed=8)
    plain = solve(inst, SPEC, mmas.MmasParams(iterations=10, ants=16), rt, seed=1)
    with_ls = solve(inst, SPEC, mmas.MmasParams(iterations=10, ants=16, ls="2opt"), rt, seed=1)
    assert with_ls.length < plain.length


def check_trail_update(rt, store, variant, source="iteration", reset=False, seed=4):  # noqa: F811
    """Four iterations (the second a reset), then one more against a host float32 model
    of evaporation and the deposit along the tour `source` names (or of the reset).  The
    ants draw when their lists are used up: the best city there made the three tours
    alike on this small instance, which would hide a mix-up."""
    inst = generate("uniform", 50, seed=12)
    n, cl, rho, ants = inst.n, 8, 0.7, 10

    class Params(mmas.MmasParams):
        def deposit_source(self, seed, iteration):
            return source if iteration == 4 else "iteration"

    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=seed)
    colony = mmas.DeviceColony(ctx, Params(variant=variant, candidates=cl, store=store, persistence=rho, ants=ants,
                                           fallback="draw"))
    ctx.timed(colony.start(inst.tour_length(np.arange(n))))
    for it in range(4):
        ctx.timed(colony.iteration(it, ctx.seed, reset=it == 1))
    width = n if store == "matrix" else cl
    tau = rt.read(colony.tau, np.float32, n * width)
    ctx.timed(colony.iteration(4, ctx.seed, reset=reset))
    limits = rt.read(colony.limits, np.float64, 2)
    status = colony.best.read()
    tours = {"iteration": rt.read(colony.tours, np.int32, ants * n).reshape(ants, n)[status[BestWord.ITER_INDEX]],
             "global": rt.read(colony.best.best_tour, np.int32, n),
             "restart": rt.read(colony.best.restart_tour, np.int32, n)}
    lengths = {"iteration": status[BestWord.ITER_BEST], "global": status[BestWord.BEST],
               "restart": status[BestWord.RESTART_BEST]}
    if reset:
        assert np.all(rt.read(colony.tau, np.float32, n * width) == np.float32(limits[1]))
        assert list(status[[BestWord.RESTART_BEST, BestWord.RESTART_ITER]]) == [LONG_MAX, 4]
        return
    for name, tour in tours.items():  # the status lengths are the tours' own
        assert sorted(tour) == list(range(n)) and inst.tour_length(tour) == lengths[name]
    if source != "iteration":  # the seed makes the three tours differ: a mix-up shows
        assert len(set(lengths.values())) == 3
    cand = build_candidates(DeviceInstance(rt, inst), CandidateParams("knn", cl)).host(rt)[0]
    want = np.maximum(np.float32(rho) * tau, np.float32(limits[0]))
    amount = np.float32(1.0 / lengths[source])
    tour = tours[source]
    for i, j in zip(tour, np.roll(tour, -1)):
        for a, b in ((i, j), (j, i)):
            if store == "matrix":
                cell = a * n + b
            elif b in cand[a]:
                cell = a * cl + list(cand[a]).index(b)
            else:
                continue
            want[cell] = min(want[cell] + amount, np.float32(limits[1]))
    assert np.array_equal(rt.read(colony.tau, np.float32, n * width), want)
    assert limits[1] == 1.0 / ((1.0 - rho) * status[BestWord.BEST])


@pytest.mark.parametrize("store, variant", [("matrix", "rwm-lc"), ("matrix", "wrs-bt"),
                                            ("candidates", "rwm-bt"), ("candidates", "wrs-ct")])
def test_pheromone_update_matches_a_host_model(rt, store, variant):  # noqa: F811
    check_trail_update(rt, store, variant)


@pytest.mark.parametrize("source", ["global", "restart"])
def test_deposit_follows_the_global_or_the_restart_best(rt, source):  # noqa: F811
    check_trail_update(rt, "matrix", "wrs-bt", source, seed=6)
    check_trail_update(rt, "candidates", "rwm-bt", source, seed=4)


def test_reset_puts_every_trail_at_tau_max_and_forgets_the_restart_best(rt):  # noqa: F811
    check_trail_update(rt, "matrix", "rwm-bt", reset=True)
    check_trail_update(rt, "candidates", "wrs-bt", reset=True)


def test_the_deposit_schedule_draws_the_authors_proportions():
    p = mmas.MmasParams(ls="2opt")
    assert p.deposit_rule == "schedule" and mmas.MmasParams().deposit_rule == "iteration"
    draws = [p.deposit_source(7, it) for it in range(20000)]
    assert draws == [p.deposit_source(7, it) for it in range(20000)]
    observed = np.array([draws.count(s) for s in ("iteration", "global", "restart")])
    expected = np.array([0.1, 0.9 * 0.1, 0.9 * 0.9]) * len(draws)
    assert ((observed - expected) ** 2 / expected).sum() < chi2_critical(2)
    assert {mmas.MmasParams(deposit="global").deposit_source(7, it) for it in range(50)} == {"global"}


@pytest.mark.parametrize("since_best, since_reset, left, due", [
    (500, 600, 1000, True), (499, 600, 1000, False), (500, 600, 599, False), (800, 10, 0, False)])
def test_restart_rule(since_best, since_reset, left, due):
    p = mmas.MmasParams(ls="2opt", iterations=3000)
    it = p.iterations - left
    status = np.zeros(6, np.int64)
    status[BestWord.RESTART_ITER] = it - since_best
    assert mmas.restart_due(p, it, status, it - since_reset) is due
    assert not mmas.restart_due(mmas.MmasParams(iterations=3000), it, status, it - since_reset)


@pytest.mark.parametrize("selection", ["rwm", "wrs"])
def test_candidate_store_weighs_unlisted_edges_by_distance(rt, selection):  # noqa: F811
    n, cur, trials = 30, 0, 8000
    inst = generate("uniform", n, seed=1)  # sample() places the cities of this instance
    cand = np.tile(np.array([3, 7, 11, 20], np.int32), (n, 1))
    weights = np.linspace(0.2, 2.0, n).astype(np.float32)
    visited = [0, 3, 7, 11, 20]
    chosen = sample(rt, selection, "bt", weights, visited, cur, trials, cand, store="candidates",
                    fallback_tau=0.5, fallback="draw")  # the best city: see the used-up list test
    free = np.setdiff1d(np.arange(n), visited)
    w = np.array([0.5 / max(inst.dist(cur, int(v)), 0.5) ** 2 for v in free])
    expected = w / w.sum() * trials
    observed = np.array([(chosen == v).sum() for v in free])
    assert ((observed - expected) ** 2 / expected).sum() < chi2_critical(len(free) - 1)


def test_candidate_store_runs_where_the_matrices_would_not_fit(rt):  # noqa: F811
    small = Runtime(rt.device)
    small.__dict__["limits"] = rt.limits.__class__(**{**rt.limits.__dict__, "global_mem": 2**26,
                                                      "max_alloc": 2**24})
    inst = generate("uniform", 3000, seed=1)
    with pytest.raises(DeviceMemoryError):
        solve(inst, SPEC, mmas.MmasParams(iterations=1, ants=4), small)
    res = solve(inst, SPEC, mmas.MmasParams(iterations=2, ants=4, store="candidates"), small)
    assert sorted(res.order) == list(range(3000))
    for variant in mmas.VARIANTS:
        r = solve(generate("clustered", 60, seed=2), SPEC,
                  mmas.MmasParams(variant=variant, store="candidates", candidates=8, iterations=5, ants=10), rt)
        assert sorted(r.order) == list(range(60))


def sample(rt, selection, tabu, weights, visited, cur, trials, cand=None, step=1,  # noqa: F811
           store="matrix", fallback_tau=1.0, fallback="best", inst=None):
    """Nodes chosen by `trials` independent selection steps (aco_select_sample)."""
    n = len(weights)
    cl = 0 if cand is None else cand.shape[1]
    inst = generate("uniform", n, seed=1) if inst is None else inst
    dinst = DeviceInstance(rt, inst)
    k = dinst.kernel(check_kernels("aco"), "aco_select_sample", **mmas.ant_defines(tabu, selection),
                     **{**mmas.store_defines(store, cl), "CL": cl}, FALLBACK_BEST=int(fallback == "best"))
    matrix = np.zeros((n, n if store == "matrix" else cl), np.float32)
    matrix[cur] = weights if store == "matrix" else weights[cand[cur]]
    host = (1 / np.where(matrix > 0, matrix, np.nan)) if selection == "wrs" else matrix
    host = np.nan_to_num(host, nan=np.inf).astype(np.float32)
    group = 32
    lm = rt.cl.LocalMemory
    tabu_args = {"lc": [lm(2 * n), lm(2 * n), lm(4)], "ct": [lm(2 * n), lm(4)],
                 "bt": [lm(mmas.tabu_bytes("bt", n))]}[tabu]
    out = rt.empty(4 * trials)
    cand = np.zeros((n, 1), np.int32) if cand is None else cand
    list_weights = host if store == "candidates" else np.take_along_axis(host, cand, axis=1)
    k(rt.queue, (trials * group,), (group,), *dinst.dist_args, rt.to_device(cand),
      rt.to_device(np.ascontiguousarray(list_weights)), rt.to_device(host),
      np.float32(2.0), np.float32(fallback_tau), np.uint32(11), np.uint32(0), np.uint32(step), np.uint32(cur),
      rt.to_device(np.asarray(visited, np.int32)), np.int32(len(visited)), out, *tabu_args,
      lm(mmas.scratch_bytes(group, cl)))
    return rt.read(out, np.int32, trials)


@pytest.mark.parametrize("selection", ["rwm", "wrs"])
@pytest.mark.parametrize("tabu", ["lc", "ct", "bt"])
def test_selection_frequencies_match_the_exact_probabilities(rt, selection, tabu):  # noqa: F811
    n, cur, trials = 70, 5, 12000
    rng = np.random.default_rng(2)
    weights = rng.uniform(0.05, 1.0, n).astype(np.float32)
    weights[[9, 40]] = [6.0, 3.0]  # a few heavy nodes, as late in a run
    visited = [5, 0, 17, 33, 69, 2]
    chosen = sample(rt, selection, tabu, weights, visited, cur, trials)
    free = np.setdiff1d(np.arange(n), visited)
    assert set(chosen) <= set(free)
    expected = weights[free] / weights[free].sum() * trials
    observed = np.array([(chosen == v).sum() for v in free])
    stat = ((observed - expected) ** 2 / expected).sum()
    assert stat < chi2_critical(len(free) - 1), stat


@pytest.mark.parametrize("fallback", ["best", "draw"])
@pytest.mark.parametrize("selection", ["rwm", "wrs"])
def test_candidate_lists_come_first_then_every_unvisited_node(rt, selection, fallback):  # noqa: F811
    n, cur, trials = 40, 0, 6000
    weights = np.linspace(0.2, 2.0, n).astype(np.float32)
    cand = np.zeros((n, 4), np.int32)
    cand[cur] = [3, 7, 11, 20]
    chosen = sample(rt, selection, "ct", weights, [0, 7], cur, trials, cand, fallback=fallback)
    free = np.array([3, 11, 20])
    assert set(chosen) <= set(free)
    expected = weights[free] / weights[free].sum() * trials
    observed = np.array([(chosen == v).sum() for v in free])
    assert ((observed - expected) ** 2 / expected).sum() < chi2_critical(2)
    # every candidate visited: the heaviest unvisited city, or a draw among them all
    chosen = sample(rt, selection, "ct", weights, [0, 3, 7, 11, 20], cur, 200, cand, fallback=fallback)
    if fallback == "best":
        assert set(chosen) == {n - 1}
    else:
        assert set(chosen) <= set(range(n)) - {0, 3, 7, 11, 20} and len(set(chosen)) > 10


@pytest.mark.parametrize("store", ["matrix", "candidates"])
@pytest.mark.parametrize("selection", ["rwm", "wrs"])
@pytest.mark.parametrize("tabu", ["lc", "ct", "bt"])
def test_a_used_up_list_takes_the_heaviest_unvisited_city(rt, selection, tabu, store):  # noqa: F811
    """fallback best against a host argmax, ties to the lower city: over the matrix random
    weights (some tied, some zero); over the candidate store every unlisted edge weighs
    tau_min^alpha eta^beta, so the nearest unvisited city (ties: the lower) wins."""
    n, cl = 300, 4  # more slots than a pass of 32 work-items' quads
    rng = np.random.default_rng(7)
    inst = generate("uniform", n, seed=6)
    d = inst.full_matrix()
    for trial in range(6):
        cur = int(rng.integers(n))
        cand = np.zeros((n, cl), np.int32)
        cand[cur] = rng.choice(np.setdiff1d(np.arange(n), [cur]), cl, replace=False)
        visited = np.unique(np.concatenate([[cur], cand[cur], rng.choice(n, int(rng.integers(0, 250)))]))
        free = np.setdiff1d(np.arange(n), visited)
        if store == "matrix":
            weights = rng.uniform(0.05, 1.0, n).astype(np.float32)
            weights[rng.choice(n, 30)] = 0.0
            weights[free[:3]] = weights.max() if trial % 2 else weights[free[:3]]  # ties
            w = np.where(np.isin(np.arange(n), free) & (weights > 0), weights, -1.0)
            want = int(np.argmax(w))
        else:
            weights = np.ones(n, np.float32)  # the listed edges only: all visited here
            want = int(free[np.lexsort((free, d[cur, free]))[0]])
        chosen = sample(rt, selection, tabu, weights, visited.tolist(), cur, 3, cand, store=store,
                        fallback="best", inst=inst)
        assert set(chosen) == {want}, (trial, cur)


@pytest.mark.parametrize("selection", ["rwm", "wrs"])
@pytest.mark.parametrize("tabu", ["lc", "bt"])
def test_a_full_candidate_list_draws_with_the_exact_probabilities(rt, selection, tabu):  # noqa: F811
    """32 candidates, one per work-item: WRS finds the winner with one atomic min over
    keys that carry the slot in their low bits."""
    n, cur, trials = 80, 0, 12000
    rng = np.random.default_rng(5)
    weights = rng.uniform(0.05, 1.0, n).astype(np.float32)
    cand = np.zeros((n, 32), np.int32)
    cand[cur] = rng.choice(np.arange(1, n), 32, replace=False)
    weights[cand[cur][[3, 30]]] = [5.0, 2.5]
    visited = [cur, *cand[cur][[0, 7, 8, 31]]]
    chosen = sample(rt, selection, tabu, weights, visited, cur, trials, cand)
    free = np.setdiff1d(cand[cur], visited)
    assert set(chosen) <= set(free)
    expected = weights[free] / weights[free].sum() * trials
    observed = np.array([(chosen == v).sum() for v in free])
    assert ((observed - expected) ** 2 / expected).sum() < chi2_critical(len(free) - 1)


def test_weights_that_underflow_to_zero_still_give_tours(rt):  # noqa: F811
    assert set(sample(rt, "rwm", "bt", np.zeros(20, np.float32), [4], 4, 50)) == {-1}
    inst = generate("uniform", 40, seed=3)  # eta^50 is 0 in float: every weight is
    for variant in ("rwm-ct", "wrs-lc"):
        res = solve(inst, SPEC, mmas.MmasParams(variant=variant, beta=50, candidates=0, iterations=2), rt)
        assert sorted(res.order) == list(range(40))


def ranks(values):
    order = np.argsort(values, kind="stable")
    r = np.empty(len(values))
    r[order] = np.arange(1, len(values) + 1)
    for v in np.unique(values):  # ties share the mean rank
        r[values == v] = r[values == v].mean()
    return r


def colony_tours(rt, inst, params, seed, iterations=3):  # noqa: F811
    """Every ant's tour after `iterations` iterations from the identity tour's trails."""
    ctx, colony = started_colony(rt, inst, params, seed)
    for it in range(iterations):
        ctx.timed(colony.iteration(it, ctx.seed))
    return ant_tours(rt, colony, inst)[0]


@pytest.mark.parametrize("variant", ["wrs-ct", "wrs-bt"])
def test_wrs_list_draws_do_not_depend_on_the_work_items_per_ant(rt, variant):  # noqa: F811
    """With candidate lists and the best city after them, every draw is Philox's by
    (ant, iteration, step, slot): the same tours for any work-group size."""
    inst = generate("clustered", 90, seed=4)
    tours = [colony_tours(rt, inst, mmas.MmasParams(variant=variant, candidates=8, ants=12, threads=t), 3)
             for t in (32, 64, 128)]
    assert np.array_equal(tours[0], tours[1]) and np.array_equal(tours[0], tours[2])


@pytest.mark.parametrize("variant", mmas.VARIANTS)
def test_tours_reproduce_for_a_seed_and_change_with_it(rt, variant):  # noqa: F811
    """Without lists (WRS: each work-item's SFC32 stream), every ant's tour is the same
    in two runs with one seed and work-group size, and another seed changes them."""
    inst = generate("clustered", 90, seed=4)
    params = mmas.MmasParams(variant=variant, candidates=0, ants=12, threads=64)
    first, again, other = (colony_tours(rt, inst, params, seed) for seed in (3, 3, 4))
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("variant", ["wrs-ct", "rwm-lc"])
def test_a_candidate_list_longer_than_the_work_group_builds_valid_tours(rt, variant):  # noqa: F811
    """cl 100 at 32 work-items per ant: three list slots a work-item, WRS's offered
    nodes (100 words of scratch) and its full-phase nodes (32) beyond what 32
    work-items' own scratch holds."""
    assert mmas.scratch_bytes(32, 100) >= 4 * (8 + 100 + 32)  # ants.h: 8 words, then the nodes
    inst = generate("uniform", 150, seed=6)
    params = mmas.MmasParams(variant=variant, candidates=100, ants=8, threads=32, fallback="draw")
    ctx, colony = started_colony(rt, inst, params, 2)
    for it in range(2):
        ctx.timed(colony.iteration(it, ctx.seed))
    assert_valid_tours(inst, *ant_tours(rt, colony, inst))


@pytest.mark.parametrize("cl, fallback", [(0, "best"), (8, "draw"), (8, "best")])
def test_rwm_walks_kept_weights_to_the_city_a_reload_finds(rt, cl, fallback):  # noqa: F811
    """aco.cl RWM_KEEP: the owner's walk over the weights its share kept in local memory
    draws the same tours as the walk that reloads them (a device whose local memory
    holds the tabu but not the kept weights)."""
    inst = generate("clustered", 90, seed=4)
    small = Runtime(rt.device)
    small.__dict__["limits"] = rt.limits.__class__(**{**rt.limits.__dict__, "local_mem": 830})
    runs = []
    params = mmas.MmasParams(variant="rwm-lc", candidates=cl, fallback=fallback, ants=12, threads=32)
    for r in (rt, small):
        ctx, colony = started_colony(r, inst, params, 5)
        for it in range(3):
            ctx.timed(colony.iteration(it, ctx.seed))
        runs.append((colony.kept, ant_tours(r, colony, inst)[0]))
    assert runs[0][0] > 0 and runs[1][0] == 0
    assert np.array_equal(runs[0][1], runs[1][1])


def test_the_six_variants_are_statistically_alike(rt):  # noqa: F811
    inst = generate("uniform", 45, seed=9)
    lengths = {v: [solve(inst, SPEC, mmas.MmasParams(variant=v, iterations=15, ants=20), rt,
                         seed=s).length for s in range(1, 9)] for v in mmas.VARIANTS}
    allv = np.concatenate([lengths[v] for v in mmas.VARIANTS]).astype(float)
    r = ranks(allv)
    groups = np.split(r, len(mmas.VARIANTS))
    big_n = len(allv)
    h = 12 / (big_n * (big_n + 1)) * sum(len(g) * g.mean() ** 2 for g in groups) - 3 * (big_n + 1)
    assert h < chi2_critical(len(mmas.VARIANTS) - 1), (h, lengths)  # Kruskal-Wallis


def test_mmas_improves_on_its_nn_start(rt):  # noqa: F811
    inst = generate("clustered", 80, seed=5)
    nn = solve(inst, REGISTRY["nn"], REGISTRY["nn"].params_type(), rt, seed=2)
    res = solve(inst, SPEC, mmas.MmasParams(iterations=40), rt, seed=2)
    assert res.length < nn.length and res.iterations == 40
    assert res.length == inst.tour_length(res.order)


def test_global_best_deposit_and_time_limits_run(rt):  # noqa: F811
    inst = generate("uniform", 30, seed=2)
    res = solve(inst, SPEC, mmas.MmasParams(variant="rwm-lc", deposit="global", iterations=20, candidates=0), rt)
    assert sorted(res.order) == list(range(30))


def test_a_tabu_that_does_not_fit_names_the_variants_that_do(rt):  # noqa: F811
    small = Runtime(rt.device)
    small.__dict__["limits"] = rt.limits.__class__(**{**rt.limits.__dict__, "local_mem": 2200})
    inst = generate("uniform", 1000, seed=1)
    with pytest.raises(UsageError, match="variants that fit: rwm-bt, wrs-bt"):
        solve(inst, SPEC, mmas.MmasParams(variant="rwm-lc", iterations=1, threads=32), small)
    assert mmas.fitting_variants(30000, 48 * 1024, 128) == ["rwm-bt", "wrs-bt"]


def test_matrices_that_do_not_fit_are_refused_before_allocation(rt):  # noqa: F811
    small = Runtime(rt.device)
    small.__dict__["limits"] = rt.limits.__class__(**{**rt.limits.__dict__, "global_mem": 2**24,
                                                      "max_alloc": 2**22})
    with pytest.raises(DeviceMemoryError, match="needs"):
        solve(generate("uniform", 3000, seed=1), SPEC, mmas.MmasParams(iterations=1), small)


def test_work_group_size_rule():
    size = mmas.ant_group_size
    assert size(1002, 1024, 32, "wrs") == 32 and size(500, 1024, 48, "rwm") == 64
    assert size(198, 1024, 0, "wrs") == 64 and size(3795, 1024, 0, "wrs") == 128
    assert size(100000, 1024, 0, "wrs") == 128 and size(100000, 64, 0, "wrs") == 64
    assert size(50, 1024, 0, "wrs") == 32 and size(50, 1024, 0, "rwm") == 32
    assert size(1002, 1024, 0, "rwm") == 64 and size(1002, 1024, 0, "wrs") == 128
    assert size(1173, 1024, 0, "rwm") == 64 and size(1889, 1024, 0, "rwm") == 128
    kept = mmas.rwm_kept_slots
    assert kept(1173, 0, "best") == 1173 and kept(1889, 0, "best") == 0
    assert kept(1889, 32, "best") == 32 and kept(1173, 32, "draw") == 1173


@pytest.mark.parametrize("bad, match", [
    ({"variant": "rwm-xx"}, "variant must be"), ({"persistence": "1"}, "persistence"),
    ({"candidates": "-1"}, "candidates must"),
    ({"deposit": "best"}, "deposit must"), ({"restart": "-1"}, "restart must"), ({"threads": "48"}, "power of two"),
    ({"p_best": "0"}, "p_best"), ({"ls": "3opt"}, "ls must be"), ({"fallback": "random"}, "fallback must"),
    ({"store": "disk"}, "store must be"), ({"store": "candidates", "candidates": "0"}, "needs candidates > 0")])
def test_bad_parameters_are_usage_errors(bad, match):
    with pytest.raises(UsageError, match=match):
        SPEC.params_from(bad)


@pytest.mark.parametrize("ls", ["none", "2opt"])
def test_iterations_in_slices_of_ants_build_the_tours_of_whole_launches(rt, ls):  # noqa: F811
    """The device loop may enqueue an iteration's construction (and the ants' 2-opt) a
    few ants at a time under a time limit: each ant's tour and draws are its own
    (common.h group_index), so the tours and the best are those of whole launches."""
    inst = generate("clustered", 37, seed=4)
    runs = []
    for size in (12, 5):
        ctx, colony = started_colony(rt, inst, mmas.MmasParams(ants=12, ls=ls), 3)
        for it in range(2):
            ctx.timed(enqueue_in_slices(colony.launches(it, ctx.seed), size))
        runs.append((*ant_tours(rt, colony, inst), colony.best.read(), ctx.read_tour(colony.best.best_tour)))
    for whole, sliced in zip(*runs):
        assert np.array_equal(whole, sliced)


def test_a_deadline_inside_the_first_iteration_leaves_the_nn_start(rt):  # noqa: F811
    """The first iteration goes in slices of ants; the deadline comes between two and
    the run ends with its start, the nearest-neighbour tour, before the colony's."""
    inst = generate("clustered", 40, seed=2)
    ctx = run_on_a_counting_clock(rt, SPEC, inst, mmas.MmasParams(ants=12), at=4.5)
    nn = solve(inst, REGISTRY["nn"], REGISTRY["nn"].params_type(), rt)
    assert ctx.iterations == 0 and ctx.best_length == nn.length
    assert sorted(ctx.best_order) == list(range(inst.n))


def test_a_time_limit_that_does_not_cut_the_run_leaves_its_tour_unchanged(rt):  # noqa: F811
    """Under a time limit the first iteration is sliced, then batches are sized by time:
    the tour is the one of the run without a limit."""
    inst = generate("clustered", 40, seed=2)
    p = mmas.MmasParams(ants=12, iterations=4, ls="2opt")
    free = solve(inst, SPEC, p, rt, seed=3)
    limited = solve(inst, SPEC, p, rt, seed=3, deadline=time.perf_counter() + 3600)
    assert np.array_equal(free.order, limited.order) and limited.iterations == 4
