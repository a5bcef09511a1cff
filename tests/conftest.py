"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_fixtures import require_shared_instances


@pytest.fixture(scope="session")
def shared_instances() -> Path:
    """The shipped TSPLIB instances (tsplib/, atsp/, vlsi/, optima.csv); skips if absent."""
    return require_shared_instances()
