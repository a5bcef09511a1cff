"""The ants' 2-opt (kernels_cl/ant2opt.cl) against plain host checks: from random tours,
every result is a permutation with its exact length, no longer than the start, with no
improving 2-opt move left within the candidate lists (Bentley's rule: the new edge
shorter than the one it replaces at the city that looks); the tour in local memory and in
global memory give the same tours."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_fixtures import rt  # noqa: F401 - fixture
from test_localsearch import improving_2opt, instances
from tspcl.device_instance import DeviceInstance
from tspcl.gen import generate
from tspcl.neighbors import CandidateParams
from tspcl.solvers import SolveContext
from tspcl.solvers.ant_two_opt import AntTwoOpt, AntTwoOptParams

ANTS = 4


def improve(rt, inst, tours: np.ndarray, p: AntTwoOptParams):
    """The kernel on `tours` (ants x n); the improved tours, their lengths, the lists."""
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=0)
    search = AntTwoOpt(ctx, len(tours), p)
    buf, lengths = rt.to_device(tours.astype(np.int32)), rt.empty(8 * len(tours))
    ctx.timed(search.enqueue(buf, lengths))
    cand = ctx.candidates(CandidateParams("knn", min(p.neighbors, inst.n - 1))).host(rt)[0]
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


@pytest.mark.parametrize("params", [AntTwoOptParams(neighbors=10, threads=32, split=1),
                                    AntTwoOptParams(neighbors=10, threads=128, split=8),
                                    AntTwoOptParams(neighbors=7, threads=64, split=32, memory="global"),
                                    AntTwoOptParams(neighbors=32, threads=32, split=4, memory="global")],
                         ids=["split1", "split8", "split32-global", "split4-global"])
def test_random_tours_become_2opt_optimal_within_the_lists(rt, params):  # noqa: F811
    assert_2opt_optimal(rt, generate("uniform", 250, seed=1), params, seed=2)


def test_every_metric(rt):  # noqa: F811
    for k, inst in enumerate(instances()):
        assert_2opt_optimal(rt, inst, AntTwoOptParams(neighbors=10, threads=64, split=8), seed=k)


@pytest.mark.parametrize("split", [2, 16])
def test_local_and_global_tours_are_the_same(rt, split):  # noqa: F811
    inst = generate("clustered", 300, seed=9)
    start = random_tours(inst.n, 3)
    local, local_len, _ = improve(rt, inst, start, AntTwoOptParams(threads=64, split=split))
    glob, glob_len, _ = improve(rt, inst, start, AntTwoOptParams(threads=64, split=split, memory="global"))
    assert np.array_equal(local, glob) and np.array_equal(local_len, glob_len)


@pytest.mark.parametrize("n", [3, 4, 5, 6, 9])
def test_tiny_tours(rt, n):  # noqa: F811
    inst = generate("uniform", n, seed=n)
    start = random_tours(n, n)
    tours, lengths, cand = improve(rt, inst, start, AntTwoOptParams(neighbors=2, threads=32, split=8))
    for t, length in zip(tours, lengths):
        assert sorted(t) == list(range(n)) and length == inst.tour_length(t)
        if n >= 5:
            assert improving_2opt(inst, t, cand, bentley=True) == []
