"""--algo auto's choice (tspcl/auto.py) and the shipped TSPLIB optima."""

from __future__ import annotations

import numpy as np
import pytest

from tspcl.auto import MAX_SECONDS, MIN_SECONDS, choose, default_seconds
from tspcl.instance import Instance
from tspcl.optima import known_optimum, published_optimum


def _plane(n: int, name: str = "p") -> Instance:
    return Instance(name, "TSP", "EUC_2D", coords=np.random.default_rng(1).random((n, 2)) * 1000)


def test_default_seconds_grow_with_n_between_the_bounds():
    assert default_seconds(10) == MIN_SECONDS
    assert default_seconds(10_000) == pytest.approx(20.0)
    assert default_seconds(10**6) == MAX_SECONDS


@pytest.mark.parametrize("gpu", [True, False])
def test_symmetric_instances_get_pils(gpu):
    c = choose(_plane(2000), gpu, None, False)
    assert c.algorithm == "pils"
    assert c.values == {"kicks": "100n", **({} if gpu else {"bridges": "0.5"})}
    assert c.default_budget and c.time_limit == 4.0
    assert "no --time-limit: kicks=100n or 4 s, whichever comes first" in c.reason


def test_a_given_budget_is_kept():
    c = choose(_plane(2000), True, 7.5, False)
    assert c.time_limit == 7.5 and c.values == {"kicks": "auto"}      # kicks until the limit
    c = choose(_plane(2000), True, None, True)          # -i: the kicks decide
    assert c.time_limit is None and not c.default_budget


def test_asymmetric_instances_get_a_solver_that_does_not_reverse_paths():
    m = np.arange(25, dtype=np.int32).reshape(5, 5)
    np.fill_diagonal(m, 0)
    c = choose(Instance("a", "ATSP", "EXPLICIT", matrix=m), False, 3.0, False)
    assert c.algorithm == "ga" and "asymmetric" in c.reason


def test_the_published_optimum_needs_name_dimension_and_weight_type():
    assert published_optimum(_plane(52, "berlin52")) == 7542
    assert known_optimum(_plane(52, "berlin52")) == 7542     # no file: found by NAME
    assert published_optimum(_plane(51, "berlin52")) is None
    assert published_optimum(_plane(52, "mine")) is None
    geo = Instance("berlin52", "TSP", "GEO", coords=np.zeros((52, 2)))
    assert published_optimum(geo) is None
