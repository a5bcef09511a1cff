"""Buffer plans (tspcl/buffers.py) and typed kernel arguments (device.typed_arguments):
what a run allocates is what its memory check added up, and kernels take plain Python
numbers as their declared scalar types."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_fixtures import rt  # noqa: F401 - fixture
from tspcl.buffers import BufferPlan
from tspcl.device import typed_arguments
from tspcl.instance import Instance
from tspcl.run import solve
from tspcl.solvers import REGISTRY


def test_a_plan_adds_up_its_buffers_and_refuses_a_name_twice():
    plan = BufferPlan().add("tour", np.int32, 10).add("gain", np.int64, 3).add("none", np.int32, 0)
    assert plan.nbytes == 40 + 24 + 4          # an empty buffer still takes one element
    assert plan.largest == 40
    both = plan.merge(BufferPlan().add("more", np.float64, 100))
    assert both.nbytes == plan.nbytes + 800 and both.largest == 800
    assert list(both.buffers) == ["tour", "gain", "none", "more"]
    with pytest.raises(ValueError, match="'tour' is planned twice"):
        plan.add("tour", np.int32, 1)
    with pytest.raises(ValueError, match="planned twice"):
        plan.merge(BufferPlan().add("gain", np.int64, 1))
    with pytest.raises(ValueError, match="-1 elements"):
        plan.add("bad", np.int32, -1)
    assert BufferPlan().nbytes == 0 and BufferPlan().largest == 0


def test_allocate_makes_every_planned_buffer_at_its_size(rt):  # noqa: F811
    plan = BufferPlan().add("a", np.int32, 5).add("b", np.int64, 0)
    bufs = plan.allocate(rt)
    assert bufs.a.size == 20 and bufs.b.size == 8


def _uniform(n: int) -> Instance:
    xy = np.random.default_rng(7).uniform(0, 1000, (n, 2)).round()
    return Instance(f"u{n}", "TSP", "EUC_2D", coords=xy)


@pytest.mark.parametrize("name", REGISTRY)
def test_a_run_allocates_only_buffers_its_plan_holds(rt, name, monkeypatch):  # noqa: F811
    """Every plan a solver allocates during a run is part of the plan the memory check
    read (same names, no larger), and the plan without device limits (`tspcl info`) is
    at least the device's."""
    spec, inst = REGISTRY[name], _uniform(300)
    if spec.unsupported(inst):
        pytest.skip(spec.unsupported(inst))
    params = spec.params_type()
    checked = spec.buffers(inst, params, rt.limits)
    assert spec.buffers(inst, params, None).nbytes >= checked.nbytes
    allocated = []
    real = BufferPlan.allocate
    monkeypatch.setattr(BufferPlan, "allocate",
                        lambda plan, runtime: allocated.append(plan) or real(plan, runtime))
    res = solve(inst, spec, params, rt, seed=1, iterations=2)
    assert inst.tour_problem(res.order) is None
    for plan in allocated:
        for buf, planned in plan.buffers.items():
            assert buf in checked.buffers, f"{name} allocated {buf!r}, which its plan lacks"
            assert planned.nbytes <= checked.buffers[buf].nbytes, \
                f"{name}: {buf!r} is {planned.nbytes} bytes, the plan {checked.buffers[buf].nbytes}"


TYPED_SOURCE = """
__kernel void scalars(__global long *out, const int i, const uint u, const long l,
                      const ulong ul, const float f, const double d, __local int *scratch)
{
    out[0] = i; out[1] = u; out[2] = l; out[3] = (long)ul; out[4] = (long)f; out[5] = (long)d;
}
__kernel void vector(__global float *out, const float2 v) { out[0] = v.x; }
"""


def test_kernels_take_python_numbers_as_their_declared_types(rt, tmp_path):  # noqa: F811
    path = tmp_path / "typed.cl"
    path.write_text(TYPED_SOURCE)
    k = rt.kernel(path, "scalars")
    out = rt.empty(8 * 6)
    k(rt.queue, (1,), (1,), out, -3, 2**32 - 1, -2**40, 2**63 + 5, 2.5, -7.75, rt.cl.LocalMemory(4))
    assert rt.read(out, np.int64, 6).tolist() == [-3, 2**32 - 1, -2**40, -(2**63) + 5, 2, -7]
    with pytest.raises(TypeError, match="argument 1 is a 'float2'"):
        typed_arguments(rt.cl, rt.program(path).vector)
