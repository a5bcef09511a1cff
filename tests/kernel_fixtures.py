"""Shared fixtures and helpers for the kernel tests.

Test modules import what they use (``from kernel_fixtures import rt, ...``); pyproject's
``pythonpath = ["tests"]`` puts tests/ on ``sys.path`` for the test folders below it.

* ``rt``: one :class:`tspcl.device.Runtime` for the whole session (device from
  ``TSPCL_TEST_DEVICE``, else ``auto``); tests are skipped when no OpenCL device exists.
  The Runtime is memoized at module level, so every test module that imports the fixture
  shares one context and one cache of built programs.
* ``shared_instances_dir()``: ``../shared/instances`` beside the checkout (override with
  ``TSPCL_SHARED_INSTANCES``), the one place every test finds it; ``shared_instances_absent()``
  says why it cannot be used (a skip reason) or None; ``require_shared_instances()`` skips
  with that reason (conftest's ``shared_instances`` fixture is this call).
* ``TEST_DATA``: tests/data, the small problem files tests read.
* ``load_problem(path)``: :func:`tspcl.tsplib.read_problem`, parsed once per path.
* ``check_kernels(program)``: tests/kernels/PROGRAM_checks.cl, the kernels only tests use,
  built as the production program kernels_cl/PROGRAM.cl with them added.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import pytest

SHARED_ENV = "TSPCL_SHARED_INSTANCES"
TEST_DATA = Path(__file__).resolve().parent / "data"
DEVICE_ENV = "TSPCL_TEST_DEVICE"

_RUNTIME = None
_NO_DEVICE: str | None = None


def get_runtime():
    """The session's Runtime (memoized), or a skip when no OpenCL device exists."""
    global _RUNTIME, _NO_DEVICE
    if _RUNTIME is None and _NO_DEVICE is None:
        from tspcl.device import Runtime
        from tspcl.errors import NoDeviceError

        spec = os.environ.get(DEVICE_ENV) or "auto"
        try:
            _RUNTIME = Runtime.from_spec(spec)
        except NoDeviceError as e:
            _NO_DEVICE = f"no OpenCL device for spec {spec!r}: {e.message}"
    if _RUNTIME is None:
        pytest.skip(_NO_DEVICE)
    return _RUNTIME


@pytest.fixture(scope="session")
def rt():
    """The OpenCL runtime every kernel test runs on (skips without a device)."""
    return get_runtime()


# ---- shared instances ------------------------------------------------------------------
def shared_instances_dir() -> Path:
    """../shared/instances beside the checkout, or $TSPCL_SHARED_INSTANCES."""
    env = os.environ.get(SHARED_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "instances"


def shared_instances_absent() -> str | None:
    """Why the shared instance folder cannot be used (a skip reason), or None if it is there."""
    root = shared_instances_dir()
    if root.is_dir():
        return None
    return (f"shared instances not found at {root} (set {SHARED_ENV} to the folder "
            "holding tsplib/, atsp/, vlsi/)")


def require_shared_instances() -> Path:
    """The shared instance folder, or a skip with the reason when it is absent."""
    reason = shared_instances_absent()
    if reason:
        pytest.skip(reason)
    return shared_instances_dir()


def shared_file(rel: str) -> Path:
    """A file under the shared instances (e.g. 'tsplib/pr76.tsp'), or a skip."""
    path = require_shared_instances() / rel
    if not path.is_file():
        pytest.skip(f"shared instance {rel} not found under {path.parent}")
    return path


def shared_problem_files(subdirs=("tsplib", "atsp", "vlsi")) -> list[Path]:
    """Every .tsp/.atsp file under the given shared subfolders (empty if absent)."""
    root = shared_instances_dir()
    files: list[Path] = []
    for sub in subdirs:
        d = root / sub
        if d.is_dir():
            files += sorted(p for p in d.iterdir()
                            if p.suffix in (".tsp", ".atsp") and p.is_file())
    return files


@functools.lru_cache(maxsize=None)
def _load(path: str):
    from tspcl.tsplib import read_problem

    return read_problem(path)


def load_problem(path) -> "object":
    """read_problem(path), parsed once per path for the whole session."""
    return _load(str(path))


@functools.lru_cache(maxsize=None)
def _load_tour(path: str):
    from tspcl.tsplib import read_tour

    return read_tour(path)


def optimal_tour(problem_path) -> np.ndarray | None:
    """0-based order of NAME.opt.tour beside NAME.tsp, or None when there is none."""
    p = Path(problem_path)
    tour = p.with_name(p.name.split(".")[0] + ".opt.tour")
    if not tour.is_file():
        return None
    return np.asarray(_load_tour(str(tour)).order, np.int64)


def shared_instance(rel: str):
    """A shared instance by relative path (parsed once), or a skip."""
    return load_problem(shared_file(rel))


# ---- small helpers ---------------------------------------------------------------------
def check_kernels(program: str) -> Path:
    """tests/kernels/PROGRAM_checks.cl, for ``DeviceInstance.kernel`` / ``Runtime.kernel``."""
    return Path(__file__).resolve().parent / "kernels" / f"{program}_checks.cl"


def device_instance(rt, inst):
    from tspcl.device_instance import DeviceInstance

    return DeviceInstance(rt, inst)


def make_instance(weight_type: str, coords=None, matrix=None, kind: str = "TSP",
                  name: str = "synthetic"):
    from tspcl.instance import Instance

    return Instance(name=name, kind=kind, weight_type=weight_type,
                    coords=None if coords is None else np.asarray(coords, np.float64),
                    matrix=None if matrix is None else np.asarray(matrix, np.int32))


def assert_permutation(order, n: int):
    order = np.asarray(order)
    assert order.shape == (n,), f"tour has shape {order.shape}, expected ({n},)"
    assert np.array_equal(np.sort(order), np.arange(n)), "tour is not a permutation of 0..n-1"
