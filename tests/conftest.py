"""Shared test fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def shared_instances_dir() -> Path:
    """../shared/instances next to the checkout, or $TSPCL_SHARED_INSTANCES."""
    env = os.environ.get("TSPCL_SHARED_INSTANCES")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "instances"


@pytest.fixture(scope="session")
def shared_instances() -> Path:
    """The shipped TSPLIB instances (tsplib/, atsp/, vlsi/, optima.csv); skips if absent."""
    path = shared_instances_dir()
    if not path.is_dir():
        pytest.skip(f"shared instances not found at {path} (set TSPCL_SHARED_INSTANCES)")
    return path
