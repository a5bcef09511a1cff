"""Shared test fixtures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernel_fixtures import TEST_DATA, require_shared_instances


@pytest.fixture(scope="session")
def shared_instances() -> Path:
    """The shipped TSPLIB instances (tsplib/, atsp/, vlsi/, optima.csv); skips if absent."""
    return require_shared_instances()


@pytest.fixture
def small(tmp_path) -> Path:
    """tests/data/small8.tsp (an 8-city EUC_2D square, optimum 800) copied into tmp_path."""
    return Path(shutil.copy(TEST_DATA / "small8.tsp", tmp_path))
