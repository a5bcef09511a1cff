"""Ant Colony System (kernels_cl/acs.cl, tspcl/solvers/acs.py) against plain host checks:
every variant builds valid tours with exact lengths, the atomic variant loses no local
update, the selective pheromone memory behaves as a host model of the paper's Fig. 5,
q0 = 1 gives the greedy (nearest neighbour) tour and q0 = 0 draws the first move with
the probabilities of eq. 2."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_fixtures import check_kernels, make_instance, rt  # noqa: F401 - fixture
from test_localsearch import improving_2opt
from test_mmas import chi2_critical
from test_device_loop import enqueue_in_slices, run_on_a_counting_clock
from tspcl.device import Runtime
from tspcl.device_instance import DeviceInstance
from tspcl.errors import UsageError
from tspcl.gen import generate
from tspcl.neighbors import CandidateParams, build_candidates
from tspcl.run import solve
from tspcl.solvers import REGISTRY, SolveContext
from tspcl.solvers import acs
from tspcl.solvers.best import BestWord
from tspcl.solvers.mmas import program_defines

SPEC = REGISTRY["acs"]


def colony(rt, inst, seed=3, count_updates=False, **params):  # noqa: F811
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=seed)
    return ctx, acs.AcsColony(ctx, acs.AcsParams(**params), count_updates)


def read_tours(rt, c):  # noqa: F811
    n = c.n
    return (rt.read(c.tours, np.int32, c.ants * n).reshape(c.ants, n),
            rt.read(c.lengths, np.int64, c.ants))


@pytest.mark.parametrize("variant", acs.VARIANTS)
def test_every_variant_builds_valid_tours_with_exact_lengths(rt, variant):  # noqa: F811
    inst = generate("clustered", 45, seed=4)
    ctx, c = colony(rt, inst, variant=variant, ants=12, candidates=8, local_update_every=2)
    ctx.timed(c.start(inst.tour_length(np.arange(inst.n))))
    for it in range(4):
        ctx.timed(c.iteration(it, ctx.seed))
        tours, lengths = read_tours(rt, c)
        for t, length in zip(tours, lengths):
            assert sorted(t) == list(range(inst.n))
            assert length == inst.tour_length(t)
        assert c.best.read()[BestWord.BEST] <= lengths.min()


def kth_edges(tour, k: int):
    """The edges an ant updates locally: those of its steps 1..n that k divides, the
    n-th the closing edge back to the start."""
    n = len(tour)
    return [(int(tour[step - 1]), int(tour[step % n])) for step in range(1, n + 1) if step % k == 0]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_atomic_variant_loses_no_local_update(rt, k):  # noqa: F811
    """Every local update adds 1 (COUNT_UPDATES) to cells that start at 0: the cells sum
    to the updates made, two for every k-th edge of every ant, in both copies of the
    matrix (the steps read one and update the other)."""
    inst = generate("uniform", 40, seed=7)
    n, ants = inst.n, 64
    ctx, c = colony(rt, inst, count_updates=True, variant="gpu", ants=ants, candidates=8, local_update_every=k)
    ctx.timed(c.start(1, tau0=0.0))
    ctx.timed(c.construct(0, ctx.seed))
    copies = rt.read(c.tau, np.float32, 2 * n * n).reshape(2, n * n)
    assert np.array_equal(copies[0], copies[1])
    tau = copies[0]
    edges = sum(1 for step in range(1, n + 1) if step % k == 0)
    assert np.all(tau == np.round(tau))
    assert tau.sum() == 2 * ants * edges
    tours, _ = read_tours(rt, c)
    want = np.zeros((n, n))
    for t in tours:
        for a, b in kth_edges(t, k):
            want[a, b] += 1
            want[b, a] += 1
    assert np.array_equal(tau.reshape(n, n), want)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_one_spm_ant_updates_every_kth_edge_both_ways(rt, k):  # noqa: F811
    """One ant over the selective memory (COUNT_UPDATES: an update adds 1, to 0 for an
    absent edge): after its tour each city holds exactly the edges of the tour's k-th
    steps (and the closing edge when k divides n), both ways round, each at 1."""
    inst = generate("uniform", 41, seed=5)
    n = inst.n
    ctx, c = colony(rt, inst, count_updates=True, variant="spm", ants=1, candidates=8, local_update_every=k)
    ctx.timed(c.start(1, tau0=0.0))
    ctx.timed(c.construct(0, ctx.seed))
    (tour,), _ = read_tours(rt, c)
    want = [set() for _ in range(n)]
    for a, b in kth_edges(tour, k):
        want[a].add(b)
        want[b].add(a)
    s = c.p.spm_size
    edges = rt.read(c.tau, np.uint32, 4 * n * s).reshape(n, s, 4)
    for u in range(n):
        held = edges[u, :, 0] != acs.EMPTY_NODE
        assert set(edges[u, held, 0].tolist()) == want[u], u
        assert np.all(edges[u, held, 1].copy().view(np.float32) == 1.0), u


class Ring:
    """The paper's Fig. 5, one city's s edges: a tail, nodes (-1: empty) and trails."""

    def __init__(self, s: int):
        self.s, self.tail, self.nodes, self.tau = s, s - 1, [-1] * s, [0.0] * s

    def read(self, v: int, tau_min: float) -> float:
        return self.tau[self.nodes.index(v)] if v in self.nodes else tau_min

    def update(self, v: int, a: float, b: float, tau_min: float):
        if v in self.nodes:
            i = self.nodes.index(v)
            self.tau[i] = np.float32(a) * np.float32(self.tau[i]) + np.float32(b)
        else:
            self.tail = (self.tail + 1) % self.s
            self.nodes[self.tail] = v
            self.tau[self.tail] = np.float32(a) * np.float32(tau_min) + np.float32(b)


@pytest.mark.parametrize("s", [1, 3, 8])
def test_selective_memory_matches_a_host_model_of_fig5(rt, s):  # noqa: F811
    n, ops, tau_min = 12, 400, np.float32(0.01)
    rng = np.random.default_rng(s)
    u = rng.integers(0, n, ops).astype(np.int32)
    v = rng.integers(0, 5, ops).astype(np.int32)  # few targets, so that edges come back
    a = rng.uniform(0.5, 1.0, ops).astype(np.float32)
    b = rng.uniform(0.0, 0.1, ops).astype(np.float32)
    reads = np.array([(x, y) for x in range(n) for y in range(n)], np.int32)
    inst = generate("uniform", n, seed=1)
    dinst = DeviceInstance(rt, inst)
    k = dinst.kernel(check_kernels("acs"), "acs_pher_sequence", **acs.host_defines("spm"), CL=8, SPM_S=s,
                     BETA_WHOLE=2)
    empty = np.array([acs.EMPTY_NODE, 0, 0, 0], np.uint32)
    edges, tail = rt.to_device(np.tile(empty, n * s)), rt.to_device(np.full(n, s - 1, np.uint32))
    out = rt.empty(4 * len(reads))
    k(rt.queue, (1,), (1,), *dinst.dist_args, edges, tail, tau_min, np.float32(2.0), rt.to_device(u),
      rt.to_device(v), rt.to_device(a), rt.to_device(b), np.int32(ops), rt.to_device(reads),
      np.int32(len(reads)), out)
    rings = [Ring(s) for _ in range(n)]
    for t in range(ops):
        rings[u[t]].update(int(v[t]), a[t], b[t], tau_min)
    got = rt.read(edges, np.uint32, 4 * n * s).reshape(n, s, 4)
    got_nodes, got_tau = got[..., 0].astype(np.int64), got[..., 1].copy().view(np.float32)
    got_heur = got[..., 2].copy().view(np.float32)
    d = inst.full_matrix().astype(np.float64)
    got_nodes[got_nodes == acs.EMPTY_NODE] = -1
    assert [t % s for t in rt.read(tail, np.uint32, n)] == [r.tail for r in rings]
    for x, r in enumerate(rings):
        assert list(got_nodes[x]) == r.nodes
        filled = np.array(r.nodes) >= 0
        assert np.array_equal(got_tau[x][filled], np.array(r.tau, np.float32)[filled])
        stored = got_nodes[x][filled]  # eta^beta of the edge, kept from when it was added
        assert np.allclose(got_heur[x][filled], np.maximum(d[x, stored], 0.5) ** -2.0, rtol=1e-5)
    want = [rings[x].read(y, tau_min) for x, y in reads]
    assert np.array_equal(rt.read(out, np.float32, len(reads)), np.array(want, np.float32))


@pytest.mark.parametrize("kind", ["symmetric", "asymmetric"])
def test_every_stored_edge_keeps_its_own_eta_beta(rt, kind):  # noqa: F811
    """After a few iterations of spm (local updates with k = 1, global updates), each
    edge (u, v) in u's selective memory holds (1 / d(u, v))^beta, for an ATSP instance
    too, where (v, u)'s differs: the memory adds an edge with the eta^beta the ant's step
    knew (SYMMETRIC) or computes the way back's."""
    rng = np.random.default_rng(8)
    if kind == "symmetric":
        inst = generate("clustered", 60, seed=2)
    else:
        mat = rng.integers(1, 100, (60, 60))
        np.fill_diagonal(mat, 0)
        inst = make_instance("EXPLICIT", matrix=mat, kind="ATSP", name="atsp60")
    ctx, c = colony(rt, inst, variant="spm", ants=8, candidates=6, local_update_every=1, q0=0.5)
    ctx.timed(c.start(10 ** 6))
    for it in range(4):
        ctx.timed(c.iteration(it, ctx.seed))
    n, s = inst.n, c.p.spm_size
    edges = rt.read(c.tau, np.uint32, 4 * n * s).reshape(n, s, 4)
    d = inst.full_matrix().astype(np.float64)
    held = 0
    for u in range(n):
        for v, eta_beta in zip(edges[u, :, 0], edges[u, :, 2].copy().view(np.float32)):
            if v != acs.EMPTY_NODE:
                assert np.isclose(eta_beta, max(d[u, v], 0.5) ** -3.0, rtol=1e-5), (u, v)
                held += 1
    assert held > n


@pytest.mark.parametrize("cl, s", [(8, 8), (7, 5)])  # odd counts: acs.cl step_least's padding
@pytest.mark.parametrize("beta", [3.0, 2.5])
@pytest.mark.parametrize("store", ["matrix", "spm"])
def test_the_greedy_choice_takes_the_largest_trail_times_heuristic(rt, store, beta, cl, s):  # noqa: F811
    """q0 = 1 from city cur, against a host scan of tau(cur, v) (1 / d)^beta: over the
    matrix, the argmax over the unvisited candidates, or over every unvisited city when
    none is left (the fallback); over the selective memory, the argmax over every
    unvisited city either way (its stored edges count, candidates or not, as in the
    authors' code).  Ties to the lower city.  The memory holds a few edges with trails up
    to 10^6 tau_min (some to far cities), every other edge is at tau_min; some trials
    leave no candidate unvisited."""
    n, tau_min = 150, np.float32(1e-3)
    inst = generate("uniform", n, seed=11)
    dinst = DeviceInstance(rt, inst)
    d = inst.full_matrix().astype(np.float64)
    cand = build_candidates(dinst, CandidateParams("knn", cl))
    lists = cand.host(rt)[0]
    heur = rt.empty(4 * n * cl)
    dinst.kernel("mmas", "mmas_heuristic", **program_defines("candidates", cl))(
        rt.queue, (n * cl,), None, *dinst.dist_args, cand.cities, np.float32(beta), heur)
    rng = np.random.default_rng(5)
    k = dinst.kernel(check_kernels("acs"), "acs_greedy_choice", **acs.host_defines(store), CL=cl, SPM_S=s,
                     BETA_WHOLE=acs.beta_whole(beta))
    lm = rt.cl.LocalMemory
    outcomes = set()
    for trial in range(24):
        cur = int(rng.integers(n))
        visited = rng.random(n) < rng.uniform(0.2, 0.95)
        if trial % 4 == 0:
            visited[lists[cur]] = True
        visited[cur] = True
        tau = np.full((n, n), tau_min, np.float32)
        if store == "spm":
            edges = np.tile(np.array([acs.EMPTY_NODE, 0, 0, 0], np.uint32), (n, s, 1))
            near_and_far = np.concatenate([rng.choice(lists[cur], 3, replace=False), rng.choice(n, s, replace=False)])
            stored = [v for v in dict.fromkeys(near_and_far.tolist()) if v != cur][: int(rng.integers(0, s + 1))]
            for slot, v in enumerate(stored):
                trail = np.float32(tau_min * 10.0 ** rng.uniform(0.0, 6.0))
                eta_beta = np.float32(max(d[cur, v], 0.5) ** -beta)
                edges[cur, slot] = (v, trail.view(np.uint32), eta_beta.view(np.uint32), 0)
                tau[cur, v] = trail
            store_buf = rt.to_device(edges.reshape(-1))
        else:
            tau[cur] = (tau_min * rng.uniform(1.0, 50.0, n)).astype(np.float32)
            store_buf = rt.to_device(tau.reshape(-1))
        words = np.zeros((n + 31) // 32, np.uint32)
        for v in np.flatnonzero(visited):
            words[v >> 5] |= np.uint32(1 << (v & 31))
        out = rt.empty(8)
        k(rt.queue, (32,), (32,), *dinst.dist_args, cand.cities, heur, store_buf,
          rt.to_device(np.zeros(n, np.uint32)), tau_min, np.float32(1.0), np.float32(beta), np.uint32(cur),
          rt.to_device(words), out, lm(4 * len(words)), lm(acs.scratch_bytes(store == "spm", cl, s)))
        eta = (1.0 / np.maximum(d[cur], 0.5)) ** beta
        w = np.where(visited, -1.0, tau[cur].astype(np.float64) * eta)
        left = [v for v in lists[cur] if not visited[v]]
        if store == "matrix" and left:
            w = np.where(np.isin(np.arange(n), left), w, -1.0)
        want = int(np.argmax(w)) if not visited.all() else 0xFFFFFFFF
        got, got_eta_beta = rt.read(out, np.uint32, 2)
        got = int(got)
        assert got == want, trial
        if store == "spm" and got != 0xFFFFFFFF:  # what the local update stores with a new edge
            assert np.isclose(got_eta_beta.view(np.float32), eta[got], rtol=1e-5), trial
        outcomes.add(("candidate" if got in lists[cur] else "other", bool(left)))
    assert {("candidate", True), ("other", False)} <= outcomes
    if store == "spm":  # a stored edge outside the list won while candidates were left
        assert ("other", True) in outcomes


@pytest.mark.parametrize("variant", acs.VARIANTS)
def test_q0_one_is_the_greedy_nearest_neighbour_tour(rt, variant):  # noqa: F811
    """With every trail equal, the greedy choice is the nearest unvisited candidate, and
    with none left the nearest unvisited city: one ant builds the NN tour from its start."""
    inst = generate("uniform", 60, seed=9)
    ctx, c = colony(rt, inst, variant=variant, ants=1, candidates=6, q0=1.0)
    ctx.timed(c.start(1000))
    ctx.timed(c.construct(0, ctx.seed))
    tour = read_tours(rt, c)[0][0]
    d = inst.full_matrix()
    want, seen = [tour[0]], {tour[0]}
    while len(want) < inst.n:
        nxt = min((j for j in range(inst.n) if j not in seen), key=lambda j: (d[want[-1], j], j))
        want.append(nxt)
        seen.add(nxt)
    assert list(tour) == want


def test_q0_zero_draws_the_first_move_with_eq2_probabilities(rt):  # noqa: F811
    """No local update during the construction (k > n): every ant sees tau0 everywhere,
    so its second city is drawn among the start's candidates with eta^beta weights."""
    inst = generate("uniform", 16, seed=5)
    n, cl, ants, beta = inst.n, 5, 16000, 3.0
    ctx, c = colony(rt, inst, variant="alt", ants=ants, candidates=cl, q0=0.0, local_update_every=n + 1, beta=beta)
    ctx.timed(c.start(1000))
    ctx.timed(c.construct(0, ctx.seed))
    tours = read_tours(rt, c)[0]
    cand = build_candidates(DeviceInstance(rt, inst), CandidateParams("knn", cl)).host(rt)[0]
    stat, df = 0.0, 0
    for start in range(n):
        seconds = tours[tours[:, 0] == start, 1]
        w = np.array([max(int(inst.dist(start, int(v))), 0.5) ** -beta for v in cand[start]])
        expected = w / w.sum() * len(seconds)
        observed = np.array([(seconds == v).sum() for v in cand[start]])
        assert observed.sum() == len(seconds)
        stat += ((observed - expected) ** 2 / expected).sum()
        df += cl - 1
    assert stat < chi2_critical(df)


@pytest.mark.parametrize("variant", ["gpu", "spm"])
def test_with_2opt_every_ant_ends_2opt_optimal_within_its_neighbours(rt, variant):  # noqa: F811
    inst = generate("clustered", 70, seed=6)
    ctx, c = colony(rt, inst, variant=variant, ants=5, candidates=8, ls="2opt", ls_candidates=6)
    ctx.timed(c.start(inst.tour_length(np.arange(inst.n))))
    cand = build_candidates(DeviceInstance(rt, inst), CandidateParams("knn", 6)).host(rt)[0]
    for it in range(2):
        ctx.timed(c.iteration(it, ctx.seed))
        tours, lengths = read_tours(rt, c)
        for t, length in zip(tours, lengths):
            assert sorted(t) == list(range(inst.n)) and length == inst.tour_length(t)
            assert improving_2opt(inst, t, cand, bentley=True) == []


@pytest.mark.parametrize("variant", ["gpu", "spm"])
def test_acs_improves_on_its_nn_start(rt, variant):  # noqa: F811
    inst = generate("uniform", 80, seed=2)
    nn = solve(inst, REGISTRY["nn"], REGISTRY["nn"].params_type(), rt)
    res = solve(inst, SPEC, acs.AcsParams(variant=variant, iterations=30, ants=20), rt, seed=1)
    assert res.length < nn.length


def test_the_gpu_variant_is_reproducible(rt):  # noqa: F811
    inst = generate("clustered", 50, seed=3)
    runs = [solve(inst, SPEC, acs.AcsParams(variant="gpu", iterations=8, ants=30), rt, seed=4).order
            for _ in range(2)]
    assert list(runs[0]) == list(runs[1])


def test_a_tabu_that_does_not_fit_local_memory_says_how_many_cities_would(rt):  # noqa: F811
    small = Runtime(rt.device)
    small.__dict__["limits"] = rt.limits.__class__(**{**rt.limits.__dict__, "local_mem": 2200})
    inst = generate("uniform", 16000, seed=1)
    ctx = SolveContext(small, DeviceInstance(small, inst), seed=1)
    with pytest.raises(UsageError, match=r"16000 cities need 2832 bytes.*has 2200 \(up to 10944 cities\)"):
        acs.AcsColony(ctx, acs.AcsParams())


@pytest.mark.parametrize("bad, match", [
    (dict(variant="atomic"), "variant"), (dict(q0=1.5), "q0"),
    (dict(local_evaporation=0.0), "local_evaporation"), (dict(global_evaporation=1.0), "global_evaporation"),
    (dict(local_update_every=0), "local_update_every"), (dict(candidates=33), "candidates"),
    (dict(spm_size=0), "spm_size"),
    (dict(spm_size=33), "spm_size"),
    (dict(ls="3opt"), "ls"), (dict(ls_candidates=0), "ls_candidates"), (dict(reads="l1"), "reads"),
])
def test_bad_parameters_are_usage_errors(bad, match):
    with pytest.raises(UsageError, match=match):
        acs.AcsParams(**bad)


def test_the_per_step_launches_build_the_same_tours_with_or_without_their_events(rt):  # noqa: F811
    """acs-gpu enqueues its n - 1 step launches without events (tspcl.launches) unless
    asked for them (bench_acs's kernel times): the same tours either way."""
    inst = generate("uniform", 50, seed=3)
    built = []
    for step_events in (False, True):
        ctx, c = colony(rt, inst, variant="gpu", ants=16, candidates=8)
        ctx.timed(c.start(inst.tour_length(np.arange(inst.n))))
        events = c.construct(0, ctx.seed, step_events=step_events)
        ctx.timed(events)
        assert len(events) == (inst.n + 1 if step_events else 2)
        built.append(read_tours(rt, c))
    assert np.array_equal(built[0][0], built[1][0]) and np.array_equal(built[0][1], built[1][1])


def test_acs_gpu_in_slices_of_steps_builds_the_tours_of_whole_launches(rt):  # noqa: F811
    """acs-gpu's construction is a launch a step: the device loop may enqueue them a few
    steps at a time (and the 2-opt a few tours at a time) and get the same tours."""
    inst = generate("clustered", 45, seed=4)
    runs = []
    for size in (inst.n, 7):
        ctx, c = colony(rt, inst, variant="gpu", ants=12, candidates=8, ls="2opt")
        ctx.timed(c.start(inst.tour_length(np.arange(inst.n))))
        for it in range(2):
            ctx.timed(enqueue_in_slices(c.launches(it, ctx.seed), size))
        runs.append((*read_tours(rt, c), c.best.read()))
    for whole, sliced in zip(*runs):
        assert np.array_equal(whole, sliced)


@pytest.mark.parametrize("variant", ["alt", "spm"])
def test_whole_tours_in_slices_of_ants_are_valid_tours(rt, variant):  # noqa: F811
    """alt and spm in slices of ants (their local updates race, so tours are not
    compared): every tour valid, its length exact."""
    inst = generate("clustered", 45, seed=4)
    ctx, c = colony(rt, inst, variant=variant, ants=12, candidates=8)
    ctx.timed(c.start(inst.tour_length(np.arange(inst.n))))
    ctx.timed(enqueue_in_slices(c.launches(0, ctx.seed), 5))
    tours, lengths = read_tours(rt, c)
    assert all(sorted(t) == list(range(inst.n)) and length == inst.tour_length(t)
               for t, length in zip(tours, lengths))


def test_a_deadline_inside_the_first_iteration_leaves_the_nn_start(rt):  # noqa: F811
    inst = generate("clustered", 40, seed=2)
    ctx = run_on_a_counting_clock(rt, SPEC, inst, acs.AcsParams(ants=12), at=4.5)
    nn = solve(inst, REGISTRY["nn"], REGISTRY["nn"].params_type(), rt)
    assert ctx.iterations == 0 and ctx.best_length == nn.length
