"""The host's loop over the device runs that keep their best with kernels_cl/mmas.cl
mmas_best (mmas, acs, ga): steps (colony iterations, generations) enqueued in batches,
mmas_best's status words read back after each batch (a few bytes), the best tour read
back only when SolveContext.publish_due says so (it improved, at most every PUBLISH_S
seconds), and at the end.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .base import SolveContext

M_ITER_BEST, M_ITER_ANT, M_BEST, M_BEST_ITER, M_RESTART_BEST, M_RESTART_ITER = range(6)  # mmas.cl status
LONG_MAX = 2**63 - 1    # a status length before any tour


def run_batches(ctx: SolveContext, device, steps: int, batch: int,
                enqueue: Callable[[int, int], list],
                after_batch: Callable[[int, np.ndarray], None] | None = None) -> None:
    """Run steps 0 to `steps` - 1, `batch` at a time, until done or ``ctx.stop``.

    `device` is the run's device side (its ``best_tour`` buffer and ``read_status()``);
    ``enqueue(step, ctx.seed)`` enqueues one step and returns its events in order.  After
    each batch the status is read, handed to ``after_batch(steps done, status)`` (where a
    solver decides what later steps enqueue), the batch's device time is added, and the
    best tour is published if ``ctx.publish_due``.  At the end the best tour, if the
    device has one, is published, and ``ctx.iterations`` is set to the steps done.

    Under a time limit a batch holds only the steps that fit in the time left, each
    taken to last as long as one of the batch before did (the first batch is one step),
    and no step is started that would end past the limit: a step once enqueued runs to
    its end, so a whole batch of slow steps (PoCL, ants = n, 2-opt) used to overrun the
    limit by up to `batch` steps.  Without a time limit the batches, and so the run, do
    not depend on time.
    """
    done = 0
    step_s = None   # how long a step of the last batch took, on the time limit's clock
    while done < steps and not ctx.stop(done):
        count = min(batch, steps - done)
        left = ctx.stop.remaining()
        if left is not None:
            if step_s is None:
                fit = 1
            elif step_s > 0:
                fit = int(left / step_s)
            else:   # a clock too coarse to see the batch
                fit = count
            if fit == 0:
                break
            count = min(count, fit)
        events = [e for j in range(count) for e in enqueue(done + j, ctx.seed)]
        done += count
        status = device.read_status()
        if left is not None:
            step_s = (left - ctx.stop.remaining()) / count
        if after_batch is not None:
            after_batch(done, status)
        ctx.timed_span(events[0], events[-1])
        if ctx.publish_due(int(status[M_BEST])):
            ctx.improve(ctx.read_tour(device.best_tour), done)
    if device.read_status()[M_BEST] != LONG_MAX:
        ctx.improve(ctx.read_tour(device.best_tour), done)
    ctx.iterations = done
