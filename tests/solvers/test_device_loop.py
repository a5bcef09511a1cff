"""The host's device loop (tspcl/solvers/device_loop.py run_device_loop) under a time
limit, on a clock the test drives: each step (or each unit of a step's launch) takes one
second of that clock, so what is asserted is the loop's rule (no step, or slice of a
step, started that would end past the limit), never a timing; and the status layouts,
which reach the kernels only as build defines."""

from __future__ import annotations

import numpy as np
import pyopencl as cl
import pytest

from kernel_fixtures import rt  # noqa: F401 - fixture
from tspcl.device_instance import DeviceInstance
from tspcl.gen import generate
from tspcl.run import solve
from tspcl.solvers import REGISTRY, SolveContext, acs, ga, localsearch, mmas, neighborhood
from tspcl.solvers.best import BEST_DEFINES, BestOfBatch, BestWord
from tspcl.solvers.device_loop import LONG_MAX, Launch, LoopStatus, run_device_loop
from tspcl.stop import AnyOf, Deadline


def enqueue_in_slices(launches, size: int) -> list:
    """Enqueue a step's launches (device_loop.Launch) `size` units at a time (their
    events)."""
    return [e for launch in launches for first in range(0, launch.units, size)
            for e in launch.enqueue(first, min(size, launch.units - first))]


def run_on_a_counting_clock(rt, spec, inst, params, at: float, seed: int = 1):  # noqa: F811
    """Run `spec` under a deadline `at` on a clock that reads one second later at every
    look (so a deadline a few looks away comes inside the first step, whatever the
    device's speed): the context after the run."""
    ticks = iter(range(1, 10**9))
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=seed,
                       stop=AnyOf([Deadline(at=at, clock=lambda: next(ticks))]))
    spec.run(ctx, params)
    return ctx


class StepsOnAClock:
    """A device run whose every step is a small copy on the queue and one second on
    `now`; its best tour is the identity.  `batches`: the steps enqueued between two
    status reads."""

    def __init__(self, rt, inst, steps, batch):  # noqa: F811
        self.rt, self.now, self.batches, self.pending, self.done = rt, 0.0, [], 0, 0
        self.steps, self.batch = steps, batch
        self.best_tour = rt.to_device(np.arange(inst.n, dtype=np.int32))
        self.scratch = rt.empty(4 * inst.n)
        self.length = inst.tour_length(np.arange(inst.n))

    def batch_size(self, status):
        return min(self.batch, self.steps - self.done)

    def enqueue(self, count):
        self.pending += count
        self.done += count
        self.now += count
        return [cl.enqueue_copy(self.rt.queue, self.scratch, self.best_tour) for _ in range(count)]

    def read_status(self):
        if self.pending:
            self.batches.append(self.pending)
            self.pending = 0
        return LoopStatus(self.length, self.done, self.done >= self.steps)

    def best_buffer(self, status):
        return self.best_tour

    def after_batch(self, status):
        pass


class UnitsOnAClock(StepsOnAClock):
    """StepsOnAClock whose step is one launch of `units` units (a device_loop.SplitRun),
    each unit one second on `now`; `slices` are the (first, count) slices enqueued."""

    def __init__(self, rt, inst, steps, batch, units):  # noqa: F811
        super().__init__(rt, inst, steps, batch)
        self.units, self.slices = units, []

    def enqueue(self, count):
        self.now += count * (self.units - 1)   # StepsOnAClock adds a second a step
        return super().enqueue(count)

    def next_step(self):
        def launch(first, count):
            self.slices.append((first, count))
            self.now += count
            if first + count == self.units:
                self.done += 1
                self.pending += 1
            return [cl.enqueue_copy(self.rt.queue, self.scratch, self.best_tour)]
        return [Launch(self.units, launch)]


def run(rt, criteria, steps=100, batch=4, units=None):  # noqa: F811
    inst = generate("uniform", 12, seed=1)
    device = (StepsOnAClock(rt, inst, steps, batch) if units is None
              else UnitsOnAClock(rt, inst, steps, batch, units))
    for c in criteria:
        if isinstance(c, Deadline):
            c.clock = lambda: device.now
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=1, stop=AnyOf(list(criteria)))
    run_device_loop(ctx, device)
    return ctx, device


def test_under_a_time_limit_no_step_starts_that_would_end_past_it(rt):  # noqa: F811
    ctx, device = run(rt, [Deadline(at=10.5)])
    assert ctx.iterations == 10 and device.now <= 10.5
    assert device.batches == [1, 4, 4, 1]
    assert ctx.best_length is not None
    assert ctx.time_cut          # it stopped with half a second left: the limit's doing


def test_a_run_that_ends_on_its_own_is_not_cut_by_time(rt):  # noqa: F811
    ctx, device = run(rt, [Deadline(at=1000.5)], steps=10)
    assert ctx.iterations == 10 and not ctx.time_cut


def test_a_limit_shorter_than_the_first_step_still_runs_one(rt):  # noqa: F811
    ctx, device = run(rt, [Deadline(at=0.5)])
    assert ctx.iterations == 1 and device.batches == [1]


def test_a_split_runs_first_step_goes_in_slices_and_stops_between_them(rt):  # noqa: F811
    """Ten units of a second: one, then four (the growth bound), then none fits in the
    half second left; the step is abandoned, the status before it stands."""
    ctx, device = run(rt, [Deadline(at=5.5)], units=10)
    assert device.slices == [(0, 1), (1, 4)] and device.now <= 5.5
    assert ctx.iterations == 0 and device.batches == []
    assert ctx.best_length is not None   # the run's tour as it was before the step
    assert ctx.time_cut


def test_a_split_run_batches_whole_steps_once_a_step_is_timed(rt):  # noqa: F811
    ctx, device = run(rt, [Deadline(at=100.5)], units=10)
    assert device.slices == [(0, 1), (1, 4), (5, 5)]   # only the first step is sliced
    assert device.batches == [1, 4, 4, 1] and ctx.iterations == 10 and device.now <= 100.5


def test_without_a_time_limit_a_split_run_enqueues_whole_steps(rt):  # noqa: F811
    ctx, device = run(rt, [], steps=10, units=10)
    assert device.slices == [] and device.batches == [4, 4, 2] and ctx.iterations == 10


def test_without_a_time_limit_the_batches_do_not_depend_on_time(rt):  # noqa: F811
    ctx, device = run(rt, [], steps=10)
    assert ctx.iterations == 10 and device.batches == [4, 4, 2]
    assert AnyOf([]).remaining() is None


class TurningTour(StepsOnAClock):
    """StepsOnAClock whose every step turns its best tour one place round: another
    order of the same length (as a search's kicks of no gain leave it)."""

    def __init__(self, rt, inst, steps, batch):  # noqa: F811
        super().__init__(rt, inst, steps, batch)
        self.n, self.turned = inst.n, 0

    def enqueue(self, count):
        self.turned += count
        order = np.roll(np.arange(self.n, dtype=np.int32), self.turned)
        cl.enqueue_copy(self.rt.queue, self.best_tour, order)
        return super().enqueue(count)


@pytest.mark.parametrize("publish_s", [0.0, 1e9])
def test_the_tour_a_run_ends_with_is_its_last_whenever_the_earlier_ones_were_read(rt, monkeypatch,  # noqa: F811
                                                                               publish_s):
    """(publish_s 0: a tour is read after the first batch, and later ones are no shorter;
    1e9: none is read before the end)"""
    monkeypatch.setattr("tspcl.solvers.base.PUBLISH_S", publish_s)
    inst = generate("uniform", 12, seed=1)
    device = TurningTour(rt, inst, 10, 4)
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=1, stop=AnyOf([]))
    run_device_loop(ctx, device)
    assert device.turned == 10
    assert np.array_equal(ctx.best_order, np.roll(np.arange(12), 10))
    assert ctx.best_length == inst.tour_length(np.arange(12))


@pytest.mark.parametrize("program, kernel, defines, prefix", [
    ("best", "best_of_batch", BEST_DEFINES, "B_"),
    ("mmas", "mmas_best", mmas.program_defines("matrix", 8), "B_"),
    ("mmas", "mmas_best", mmas.program_defines("matrix", 8), "W_"),
    ("mmas", "mmas_best", mmas.program_defines("matrix", 8), "SOURCE_"),
    ("aco", "aco_construct", {**mmas.ant_defines("bt"), "CL": 8, **mmas.store_defines("matrix", 8)}, "W_"),
    ("aco", "aco_construct", {**mmas.ant_defines("bt"), "CL": 8, **mmas.store_defines("matrix", 8)}, "TABU_"),
    ("aco", "aco_construct", {**mmas.ant_defines("bt"), "CL": 8, **mmas.store_defines("matrix", 8)}, "SELECT_"),
    ("acs", "acs_global", {"CL": 8, **acs.host_defines("spm")}, "TABU_"),
    ("acs", "acs_global", {"CL": 8, **acs.host_defines("spm")}, "B_"),
    ("acs", "acs_global", {"CL": 8, **acs.host_defines("spm")}, "STORE_"),
    ("acs", "acs_global", {"CL": 8, **acs.host_defines("spm")}, "EMPTY_NODE"),
    ("ga", "ga_crossover", ga.PROGRAM_DEFINES, "SCX"),
    ("ga", "ga_crossover", ga.PROGRAM_DEFINES, "ARX"),
    ("neighborhood", "nb_eval", neighborhood.program_defines("swap", 0), "S_"),
    ("neighborhood", "nb_eval", neighborhood.program_defines("swap", 0), "NB_"),
    ("localsearch", "ls_control", {"M": 8, **localsearch.PROGRAM_DEFINES}, "S_"),
    ("localsearch", "ls_control", {"M": 8, **localsearch.PROGRAM_DEFINES}, "CLAIM_BLOCK"),
    ("localsearch", "ls_control", {"M": 8, **localsearch.PROGRAM_DEFINES}, "KICK_REVERSALS"),
])
def test_a_kernel_built_without_the_hosts_constants_does_not_build(rt, program, kernel, defines, prefix):  # noqa: F811
    """The kernels know the status words and the sizes the host allocates by only from
    the host's defines: without those named `prefix`... (the rest of the program's
    defines given) they do not build, and the compiler says which is missing (with
    them, every solver's own tests build these programs)."""
    dinst = DeviceInstance(rt, generate("uniform", 12, seed=1))
    missing = [k for k in defines if k.startswith(prefix)]
    with pytest.raises(cl.RuntimeError) as failed:
        dinst.kernel(program, kernel, **{k: v for k, v in defines.items() if k not in missing})
    assert any(name in str(failed.value) for name in missing), str(failed.value)


def test_the_best_of_a_batch_lands_in_the_words_the_host_reads(rt):  # noqa: F811
    inst = generate("uniform", 9, seed=3)
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=1)
    tours = np.array([np.roll(np.arange(9), k) for k in range(3)] + [np.arange(9)[::-1]], np.int32)
    lengths = np.array([70, 50, 60, 50], np.int64)
    best = BestOfBatch(ctx, len(tours))
    best.reset()
    assert best.restart_tour is None
    ctx.timed(best.enqueue(rt.to_device(lengths), rt.to_device(tours), 7))
    status = best.read()
    assert list(status[[BestWord.ITER_BEST, BestWord.ITER_INDEX, BestWord.BEST, BestWord.BEST_ITER]]) == [50, 1, 50, 7]
    assert list(status[[BestWord.RESTART_BEST, BestWord.RESTART_ITER]]) == [50, 7]
    assert list(ctx.read_tour(best.best_tour)) == list(tours[1])
    ctx.timed(best.enqueue(rt.to_device(lengths + 1), rt.to_device(tours), 8))
    assert best.read()[BestWord.BEST_ITER] == 7 and best.read()[BestWord.ITER_BEST] == 51
    assert LONG_MAX not in best.read()


@pytest.mark.parametrize("name, start", [("mmas", "nn"), ("acs", "nn"), ("ils", "nn"), ("tabu", "nn"),
                                         ("pils", "greedy")])
def test_a_limit_spent_by_the_start_construction_leaves_its_tour(rt, name, start):  # noqa: F811
    """Past the limit once the start tour is built, a solver builds nothing more (no
    colony, candidate lists or search) and the start tour is the result."""
    inst = generate("uniform", 40, seed=3)
    spec = REGISTRY[name]
    ctx = run_on_a_counting_clock(rt, spec, inst, spec.params_type(), at=0.5)
    first = solve(inst, REGISTRY[start], REGISTRY[start].params_type(), rt)
    assert ctx.iterations == 0 and ctx.best_length == first.length
