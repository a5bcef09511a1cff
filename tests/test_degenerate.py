"""Degenerate instances, for every registered algorithm: every city at one point, an
all-zero matrix, one to three cities, eight cities, duplicate points among distinct ones.  Each run
returns a valid tour of the exact length (or the algorithm says, in one line, that it
does not take the instance), never an internal error."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_fixtures import rt  # noqa: F401 - fixture
from tspcl.errors import UsageError
from tspcl.instance import Instance
from tspcl.run import solve
from tspcl.solvers import REGISTRY
from tspcl.solvers.neighborhood import MAX_MOVE_IDS, neighborhood_size

BUDGET = 3  # iterations, kicks or generations: the tour matters here, not its quality


def _points(name: str, xy) -> Instance:
    return Instance(name, "TSP", "EUC_2D", coords=np.asarray(xy, np.float64))


def _zero_matrix(name: str, n: int, kind: str) -> Instance:
    return Instance(name, kind, "EXPLICIT", matrix=np.zeros((n, n), np.int32))


DUPLICATES = [[0, 0], [0, 0], [0, 0], [5, 5], [5, 5], [10, 0], [3, 7], [3, 7], [8, 8], [1, 9],
              [0, 0], [2, 2], [6, 1], [6, 1], [9, 4], [4, 4], [4, 4], [7, 3], [0, 9], [0, 0]]
INSTANCES = {
    "one-point-5": _points("onepoint5", np.zeros((5, 2))),
    "one-point-50": _points("onepoint50", np.full((50, 2), 7.0)),
    "zero-matrix-tsp": _zero_matrix("zero20", 20, "TSP"),
    "zero-matrix-atsp": _zero_matrix("zero20a", 20, "ATSP"),
    "n1": _points("one", [[1, 2]]),
    "n2": _points("two", [[1, 2], [3, 4]]),
    "n3": _points("three", [[1, 2], [3, 4], [5, 9]]),
    "duplicates": _points("dup20", DUPLICATES),
    # fewer other cities than a quadrant list's multiple of 4 (pils once asked for 7)
    "n8": _points("eight", [[0, 0], [9, 1], [4, 8], [7, 7], [2, 5], [8, 3], [1, 9], [5, 2]]),
}
ZERO = {"one-point-5", "one-point-50", "zero-matrix-tsp", "zero-matrix-atsp", "n1"}


@pytest.mark.parametrize("case", INSTANCES)
@pytest.mark.parametrize("name", REGISTRY)
def test_every_algorithm_returns_a_valid_tour(rt, name, case):  # noqa: F811
    spec, inst = REGISTRY[name], INSTANCES[case]
    reason = spec.unsupported(inst)
    if reason is not None:
        assert isinstance(reason, str) and "\n" not in reason
        return
    res = solve(inst, spec, spec.params_type(), rt, seed=1, iterations=BUDGET)
    assert inst.tour_problem(res.order) is None
    assert res.length == inst.tour_length(res.order)
    if case in ZERO:
        assert res.length == 0


def test_a_full_neighbourhood_beyond_64_bit_move_ids_is_a_usage_error(rt):  # noqa: F811
    """hc/tabu's full 3-exchange neighbourhood has 2 C(n, 3) move ids, mapped through
    3 x the id in 64 bits: from about 2.6 million cities on, the run says to restrict it
    to candidate lists instead of overflowing."""
    n = 2_700_000
    assert neighborhood_size("3exchange", n) > MAX_MOVE_IDS >= neighborhood_size("3exchange", n - 100_000)
    inst = _points("line", np.stack([np.arange(n), np.zeros(n)], axis=1))
    spec = REGISTRY["hc"]
    with pytest.raises(UsageError, match="restrict it to candidates"):
        solve(inst, spec, spec.params_from({"neighborhood": "3exchange"}), rt, seed=1)
