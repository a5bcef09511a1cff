"""tspcl.launches: repeated launches without events, through the ICD loader or PyOpenCL."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_fixtures import rt  # noqa: F401
from tspcl.launches import _enqueue_nd_range, enqueue_repeated

# each launch adds its work-item's id plus one to a running total per work-item, and
# counts itself: a dropped, doubled or misaddressed launch shows in the totals
COUNT_SOURCE = """
__kernel void count_launch(__global uint *totals, __global uint *launches)
{
    const uint gid = get_global_id(0);
    totals[gid] += gid + 1u;
    if (gid == 0)
        launches[0] += 1u;
}
"""


def test_pyopencls_icd_loader_is_found():
    assert _enqueue_nd_range() is not None


@pytest.mark.parametrize("use_loader", [True, False])
@pytest.mark.parametrize("count", [0, 1, 37])
def test_every_launch_runs_once_in_order(rt, use_loader, count):  # noqa: F811
    kernel = rt.cl.Program(rt.context, COUNT_SOURCE).build().count_launch
    size, group = 64, 16
    totals, launches = rt.to_device(np.zeros(size, np.uint32)), rt.to_device(np.zeros(1, np.uint32))
    kernel.set_args(totals, launches)
    enqueue_repeated(rt, kernel, count, size, group, use_loader=use_loader)
    assert rt.read(launches, np.uint32, 1)[0] == count
    assert np.array_equal(rt.read(totals, np.uint32, size), count * (np.arange(size, dtype=np.uint32) + 1))
