"""The ants' 2-opt (kernels_cl/ant2opt.cl) against plain host checks: from random tours,
every result is a permutation with its exact length, no longer than the start, with no
improving 2-opt move left within the candidate lists (Bentley's rule: the new edge
shorter than the one it replaces at the city that looks); the tour in local memory and in
global memory give the same tours; and the tours are exactly those of a plain host
version of the same search (queue, chunks, each city's best move, moves applied in
order when their edges are still there; or, with moves="best", only the chunk's best
move, the others' cities back at the queue's head, all cities queued in tour order)."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from kernel_fixtures import rt  # noqa: F401 - fixture
from test_localsearch import improving_2opt, instances
from tspcl.device_instance import DeviceInstance
from tspcl.gen import generate
from tspcl.neighbors import CandidateParams
from tspcl.solvers import SolveContext
from tspcl.solvers.population_two_opt import PopulationTwoOpt, PopulationTwoOptParams

ANTS = 4


def improve(rt, inst, tours: np.ndarray, p: PopulationTwoOptParams):
    """The kernel on `tours` (ants x n); the improved tours, their lengths, the lists."""
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=0)
    search = PopulationTwoOpt(ctx, len(tours), p)
    buf, lengths = rt.to_device(tours.astype(np.int32)), rt.empty(8 * len(tours))
    ctx.timed(search.enqueue(buf, lengths))
    cand = ctx.candidates(CandidateParams("knn", min(p.candidates, inst.n - 1))).host(rt)[0]
    return (rt.read(buf, np.int32, tours.size).reshape(tours.shape),
            rt.read(lengths, np.int64, len(tours)), cand)


def random_tours(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(n) for _ in range(ANTS)])


def assert_2opt_optimal(rt, inst, params, seed):  # noqa: F811
    start = random_tours(inst.n, seed)
    tours, lengths, cand = improve(rt, inst, start, params)
    for t, length, s in zip(tours, lengths, start):
        assert sorted(t) == list(range(inst.n)), inst.name
        assert length == inst.tour_length(t), inst.name
        assert length < inst.tour_length(s), inst.name
        assert improving_2opt(inst, t, cand, bentley=True) == [], inst.name


@pytest.mark.parametrize("params", [PopulationTwoOptParams(candidates=10, threads=32, split=1),
                                    PopulationTwoOptParams(candidates=10, threads=128, split=8),
                                    PopulationTwoOptParams(candidates=7, threads=64, split=32, memory="global"),
                                    PopulationTwoOptParams(candidates=32, threads=32, split=4, memory="global"),
                                    PopulationTwoOptParams(candidates=10, threads=128, split=4, moves="best"),
                                    PopulationTwoOptParams(candidates=7, threads=64, split=8, memory="global",
                                                    moves="best")],
                         ids=["split1", "split8", "split32-global", "split4-global", "split4-best",
                              "split8-global-best"])
def test_random_tours_become_2opt_optimal_within_the_lists(rt, params):  # noqa: F811
    assert_2opt_optimal(rt, generate("uniform", 250, seed=1), params, seed=2)


def test_every_metric(rt):  # noqa: F811
    for k, inst in enumerate(instances()):
        assert_2opt_optimal(rt, inst, PopulationTwoOptParams(candidates=10, threads=64, split=8), seed=k)


@pytest.mark.parametrize("split", [2, 16])
def test_local_and_global_tours_are_the_same(rt, split):  # noqa: F811
    inst = generate("clustered", 300, seed=9)
    start = random_tours(inst.n, 3)
    local, local_len, _ = improve(rt, inst, start, PopulationTwoOptParams(threads=64, split=split))
    glob, glob_len, _ = improve(rt, inst, start, PopulationTwoOptParams(threads=64, split=split, memory="global"))
    assert np.array_equal(local, glob) and np.array_equal(local_len, glob_len)


@pytest.mark.parametrize("n", [3, 4, 5, 6, 9])
def test_tiny_tours(rt, n):  # noqa: F811
    inst = generate("uniform", n, seed=n)
    start = random_tours(n, n)
    tours, lengths, cand = improve(rt, inst, start, PopulationTwoOptParams(candidates=2, threads=32, split=8))
    for t, length in zip(tours, lengths):
        assert sorted(t) == list(range(n)) and length == inst.tour_length(t)
        if n >= 5:
            assert improving_2opt(inst, t, cand, bentley=True) == []


def host_two_opt(inst, start, cand, cand_dist, per_chunk: int, best_move: bool) -> list:
    """The kernel's search, one step at a time on the host (see kernels_cl/ant2opt.cl)."""
    n, m, d = len(start), cand.shape[1], inst.dist
    tour = [int(c) for c in start]
    pos = [0] * n
    for k, c in enumerate(tour):
        pos[c] = k
    if n < 5:
        return tour

    def all_cities():
        return deque(tour if best_move else range(n)), [True] * n, False

    queue, queued, moved = all_cities()

    def push(c):
        if not queued[c]:
            queued[c] = True
            queue.append(c)

    while True:
        chunk = [queue.popleft() for _ in range(min(per_chunk, len(queue)))]
        for a in chunk:
            queued[a] = False
        moves = []
        for a in chunk:
            pa = pos[a]
            succ_a, pred_a = tour[(pa + 1) % n], tour[pa - 1]
            d_succ, d_pred = d(a, succ_a), d(pred_a, a)
            best = (0, None, None)  # gain, key, ends: the largest gain, ties to the lower key
            for s in range(m):
                c, d_ac = int(cand[a, s]), int(cand_dist[a, s])
                if d_ac >= max(d_succ, d_pred) or c == a:
                    continue
                succ_c, pred_c = tour[(pos[c] + 1) % n], tour[pos[c] - 1]
                if d_ac < d_succ and succ_a != c and succ_c != a:
                    g = d_succ + d(c, succ_c) - d_ac - d(succ_a, succ_c)
                    if g > best[0]:
                        best = (g, (a * m + s) * 2, (a, succ_a, c, succ_c))
                if d_ac < d_pred and pred_a != c and pred_c != a:
                    g = d_pred + d(pred_c, c) - d_ac - d(pred_a, pred_c)
                    if g > best[0]:
                        best = (g, (a * m + s) * 2 + 1, (pred_a, a, pred_c, c))
            if best[0] > 0:
                moves.append((a, best))
        if best_move and moves:
            keep = max(moves, key=lambda m: (m[1][0], -m[1][1]))
            for a, _ in reversed(moves):
                if a != keep[0]:
                    queued[a] = True
                    queue.appendleft(a)
            moves = [keep]
        for a, (_, _, (x1, x2, y1, y2)) in moves:
            p1, p2, q1, q2 = pos[x1], pos[x2], pos[y1], pos[y2]
            ahead = p2 == (p1 + 1) % n and q2 == (q1 + 1) % n
            behind = p1 == (p2 + 1) % n and q1 == (q2 + 1) % n
            if not (ahead or behind):
                push(a)
                continue
            start_, end = (p2, q1) if ahead else (p1, q2)
            inner = (end - start_) % n + 1
            if inner > n - inner:
                start_, inner = (end + 1) % n, n - inner
            idx = [(start_ + k) % n for k in range(inner)]
            cities = [tour[i] for i in idx][::-1]
            for i, c in zip(idx, cities):
                tour[i], pos[c] = c, i
            for c in (x1, x2, y1, y2):
                push(c)
            moved = True
        if not queue:
            if not moved:
                return tour
            queue, queued, moved = all_cities()


@pytest.mark.parametrize("params", [PopulationTwoOptParams(candidates=8, threads=32, split=1),
                                    PopulationTwoOptParams(candidates=8, threads=64, split=2),
                                    PopulationTwoOptParams(candidates=10, threads=64, split=4),
                                    PopulationTwoOptParams(candidates=6, threads=32, split=8, memory="global"),
                                    PopulationTwoOptParams(candidates=8, threads=32, split=1, moves="best"),
                                    PopulationTwoOptParams(candidates=7, threads=32, split=2, memory="global",
                                                    moves="best"),
                                    PopulationTwoOptParams(candidates=10, threads=64, split=4, moves="best"),
                                    PopulationTwoOptParams(candidates=6, threads=64, split=8, memory="global",
                                                    moves="best")],
                         ids=["32x1", "64x2", "64x4", "32x8-global", "32x1-best", "32x2-global-best",
                              "64x4-best", "64x8-global-best"])
def test_tours_are_the_host_versions(rt, params):  # noqa: F811
    for k, inst in enumerate([generate("uniform", 120, seed=3), generate("clustered", 90, seed=4)]):
        start = random_tours(inst.n, 10 + k)
        ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=0)
        search = PopulationTwoOpt(ctx, len(start), params)
        tours, _, _ = improve(rt, inst, start, params)
        cand, cand_dist = ctx.candidates(CandidateParams("knn", params.candidates)).host(rt)
        for t, s in zip(tours, start):
            assert list(t) == host_two_opt(inst, s, cand, cand_dist, search.group // search.split,
                                           params.moves == "best")


@pytest.mark.parametrize("algo, params", [("mmas", {"ls": "2opt"}), ("acs", {"ls": "2opt"}),
                                          ("ga", {"init": "2opt"})])
def test_the_2opt_of_a_population_refuses_an_asymmetric_instance(rt, algo, params):  # noqa: F811
    """Its gains assume d(a, b) = d(b, a): on an ATSP matrix it ran without end."""
    from tspcl.errors import UsageError
    from tspcl.instance import Instance
    from tspcl.run import solve
    from tspcl.solvers import REGISTRY

    matrix = np.random.default_rng(3).integers(1, 100, (12, 12)).astype(np.int32)
    np.fill_diagonal(matrix, 0)
    inst = Instance("asym12", "ATSP", "EXPLICIT", matrix=matrix)
    spec = REGISTRY[algo]
    with pytest.raises(UsageError, match="symmetric instances only"):
        solve(inst, spec, spec.params_from(params), rt, seed=1, iterations=2)
