"""The host's batch loop (tspcl/solvers/batches.py run_batches) under a time limit, on a
clock the test drives: each step takes one second of that clock, so what is asserted is
the loop's rule (no step started that would end past the limit), never a timing."""

from __future__ import annotations

import numpy as np
import pyopencl as cl

from kernel_fixtures import rt  # noqa: F401 - fixture
from tspcl.device_instance import DeviceInstance
from tspcl.gen import generate
from tspcl.solvers import SolveContext
from tspcl.solvers.batches import M_BEST, run_batches
from tspcl.stop import AnyOf, Deadline


class StepsOnAClock:
    """A device side whose every step is a small copy on the queue and one second on
    `now`; its best tour is the identity.  `batches`: the steps enqueued between two
    status reads."""

    def __init__(self, rt, n):  # noqa: F811
        self.rt, self.now, self.batches, self.pending = rt, 0.0, [], 0
        self.best_tour = rt.to_device(np.arange(n, dtype=np.int32))
        self.scratch = rt.empty(4 * n)
        self.status = np.zeros(6, np.int64)

    def enqueue(self, step, seed):
        self.pending += 1
        self.now += 1.0
        return [cl.enqueue_copy(self.rt.queue, self.scratch, self.best_tour)]

    def read_status(self):
        if self.pending:
            self.batches.append(self.pending)
            self.pending = 0
        return self.status


def run(rt, criteria, steps=100, batch=4):  # noqa: F811
    inst = generate("uniform", 12, seed=1)
    device = StepsOnAClock(rt, inst.n)
    device.status[M_BEST] = inst.tour_length(np.arange(inst.n))
    for c in criteria:
        if isinstance(c, Deadline):
            c.clock = lambda: device.now
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=1, stop=AnyOf(list(criteria)))
    run_batches(ctx, device, steps, batch, device.enqueue)
    return ctx, device


def test_under_a_time_limit_no_step_starts_that_would_end_past_it(rt):  # noqa: F811
    ctx, device = run(rt, [Deadline(at=10.5)])
    assert ctx.iterations == 10 and device.now <= 10.5
    assert device.batches == [1, 4, 4, 1]
    assert ctx.best_length is not None


def test_a_limit_shorter_than_the_first_step_still_runs_one(rt):  # noqa: F811
    ctx, device = run(rt, [Deadline(at=0.5)])
    assert ctx.iterations == 1 and device.batches == [1]


def test_without_a_time_limit_the_batches_do_not_depend_on_time(rt):  # noqa: F811
    ctx, device = run(rt, [], steps=10)
    assert ctx.iterations == 10 and device.batches == [4, 4, 2]
    assert AnyOf([]).remaining() is None
