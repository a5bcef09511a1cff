"""SolveContext's record of progress: tours kept with exact lengths, device lengths
recorded before their tours are read back, and a device length that is not the tour's
exact one refused."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tspcl.instance import Instance
from tspcl.solvers.base import SolveContext


def _context() -> tuple[SolveContext, Instance]:
    pts = np.array([[0, 0], [3, 0], [3, 4], [0, 4], [1, 2]], dtype=np.float64)
    inst = Instance(name="five", kind="TSP", weight_type="EUC_2D", coords=pts)
    return SolveContext(rt=None, dinst=SimpleNamespace(inst=inst), seed=1), inst


def test_reached_lengths_join_the_history_once_and_the_tour_keeps_its_exact_length():
    ctx, inst = _context()
    slow, fast = np.array([0, 2, 1, 3, 4]), np.array([0, 1, 2, 3, 4])
    ctx.improve(slow, 0)
    ctx.reached(inst.tour_length(fast), 7)
    ctx.reached(inst.tour_length(slow), 8)      # not shorter: not recorded
    assert ctx.best_length == inst.tour_length(slow)
    assert ctx.improve(fast, 9, device_length=inst.tour_length(fast))
    assert [(p.iteration, p.best_length) for p in ctx.history] == \
        [(0, inst.tour_length(slow)), (7, inst.tour_length(fast))]
    assert ctx.best_length == inst.tour_length(fast)


def test_a_device_length_that_is_not_the_exact_one_is_an_error():
    ctx, inst = _context()
    order = np.arange(5)
    with pytest.raises(RuntimeError, match="not the tour's exact length"):
        ctx.improve(order, 0, device_length=inst.tour_length(order) - 1)
    assert ctx.best_order is None
