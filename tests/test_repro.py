"""scripts/repro_check.py: registered algorithms reproduce, and the check can fail; an
iteration budget is exact, whatever the timing."""

from __future__ import annotations

import importlib.util
import itertools
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from kernel_fixtures import rt  # noqa: F401  (skips when there is no OpenCL device)
from tspcl.buffers import BufferPlan
from tspcl.gen import generate
from tspcl.run import solve
from tspcl.solvers import REGISTRY, SolverSpec
from tspcl.solvers.construct import NoParams
from tspcl.thread_control import ThreadControl


def _load_script():
    path = Path(__file__).resolve().parents[1] / "scripts" / "repro_check.py"
    spec = importlib.util.spec_from_file_location("repro_check", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


repro = _load_script()


@pytest.fixture(scope="module")
def inst():
    return generate("uniform", 200, seed=3)


@pytest.mark.slow
def test_every_registered_algorithm_reproduces(inst, rt):  # noqa: F811
    rows, bad = repro.run_checks([inst], [1, 2], [rt], iterations=20)
    assert bad == []
    checked = {r.algorithm for r in rows if r.status == "ok"}
    assert checked == {name for name, s in REGISTRY.items() if s.unsupported(inst) is None}


def NO_BUFFERS(inst, params, limits) -> BufferPlan:   # a test double's device memory
    return BufferPlan()


def _fake(name: str, order_for, deterministic: bool) -> SolverSpec:
    def run(ctx, params):
        ctx.improve(order_for(ctx), 0)

    return SolverSpec(name, "test double", NoParams, run, NO_BUFFERS, deterministic=deterministic)


def test_a_nondeterministic_solver_is_caught(inst, rt):  # noqa: F811
    def urandom_order(ctx):
        seed = int.from_bytes(os.urandom(8), "little")
        return np.random.default_rng(seed).permutation(ctx.inst.n)

    bad = repro.check([inst], [1, 2], [rt], algorithms={"noisy": _fake("noisy", urandom_order, False)})
    assert len(bad) == 2
    assert {(m.algorithm, m.instance, m.seed, m.device) for m in bad} == \
        {("noisy", inst.name, 1, rt.name), ("noisy", inst.name, 2, rt.name)}
    assert all("same seed" in m.what for m in bad)


def test_a_device_dependent_deterministic_solver_is_caught(inst, rt):  # noqa: F811
    """Two 'devices' (the same one twice): a solver that differs per call pair is flagged
    across devices too, while a seeded one is not."""
    calls = itertools.count()

    def per_pair(ctx):  # same tour for calls 2i and 2i+1, different for each pair
        k = next(calls) // 2
        return np.roll(np.arange(ctx.inst.n), k)

    def seeded(ctx):
        return np.random.default_rng(ctx.seed).permutation(ctx.inst.n)

    algs = {"per_pair": _fake("per_pair", per_pair, True), "seeded": _fake("seeded", seeded, True)}
    bad = repro.check([inst], [1], [rt, rt], algorithms=algs)
    assert [(m.algorithm, m.device) for m in bad] == [("per_pair", rt.name)]
    assert "differs from the one on" in bad[0].what


def test_a_crashing_solver_is_a_failure(inst, rt):  # noqa: F811
    def crash(ctx):
        raise RuntimeError("kaboom")

    bad = repro.check([inst], [1], [rt], algorithms={"crash": _fake("crash", crash, True)})
    assert len(bad) == 1 and "kaboom" in bad[0].what


def test_racy_parameters_are_reported_not_compared(inst, rt):  # noqa: F811
    """A solver whose parameters are marked racy (acs alt and spm) may differ run to run:
    its rows say why, and only its other parameter sets are compared."""
    def urandom_order(ctx):
        seed = int.from_bytes(os.urandom(8), "little")
        return np.random.default_rng(seed).permutation(ctx.inst.n)

    racy = SolverSpec("racy", "test double", NoParams, lambda ctx, p: ctx.improve(urandom_order(ctx), 0),
                      NO_BUFFERS, deterministic=False, racy=lambda p: "relaxed updates")
    rows, bad = repro.run_checks([inst], [1], [rt], algorithms={"racy": racy})
    assert bad == [] and [r.status for r in rows] == ["racy: relaxed updates"]
    rows, _ = repro.run_checks([inst], [1], [rt], algorithms={"acs": REGISTRY["acs"]}, iterations=3)
    assert sorted((r.params, r.status.split(":")[0]) for r in rows) == \
        [("defaults", "racy"), ("variant=alt", "racy"), ("variant=gpu", "ok")]


# ---- iteration budgets: the solver's own, exact whatever the timing ------------------------
@pytest.mark.parametrize("name", ["hc", "tabu"])
def test_a_tuning_probe_that_looks_slow_changes_neither_the_tour_nor_the_iterations(
        inst, rt, monkeypatch, name):  # noqa: F811
    """Thread control runs a configuration's other trials only when its first iteration
    looks fast (ThreadControl.promising, a measured time), so the iterations of a tuning
    step depend on the clock.  The budget is counted on the device: with the second
    probe dropped or none, the run takes exactly 13 moves and ends on the same tour."""
    spec = REGISTRY[name]
    params = spec.params_from({"neighborhood": "2opt", "trials": "5"})

    def run(slow_probe: int | None):
        probes = itertools.count()
        monkeypatch.setattr(ThreadControl, "promising", lambda self, seconds: next(probes) != slow_probe)
        res = solve(inst, spec, params, rt, seed=1, iterations=13)
        assert next(probes) > 2  # the tuning got past the second probe
        return res

    fast, slow = run(None), run(1)
    assert fast.iterations == slow.iterations == 13
    assert np.array_equal(fast.order, slow.order) and fast.length == slow.length


@pytest.mark.parametrize("name, params", [
    ("mmas", {"batch": "10"}), ("acs", {"variant": "gpu", "ants": "8", "batch": "10"}),
    ("ga", {"population": "64", "groups": "2", "batch": "10"}), ("ils", {"batch": "64"}),
    ("tabu", {"batch": "10", "threads": "256", "group": "64"}),
    ("tabu", {"neighborhood": "2opt", "trials": "20"}), ("hc", {"neighborhood": "2opt", "trials": "20"})])
def test_an_iteration_budget_is_exact_whatever_the_batch(inst, rt, name, params):  # noqa: F811
    """solve(iterations=N) is the solver's own budget (SolverSpec.budget_param): N
    iterations, kicks or generations, not the first batch boundary at or after N (nor,
    for hc and tabu, the end of a tuning step of 20 trials)."""
    spec = REGISTRY[name]
    res = solve(inst, spec, spec.params_from(params), rt, seed=1, iterations=13)
    assert res.iterations == 13
    assert str(res.params[spec.budget_param]) == "13"
