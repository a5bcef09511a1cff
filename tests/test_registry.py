"""The algorithm registry (tspcl.solvers): its table of families is the modules' own
SOLVERS, and a run imports only the family of the algorithm it runs."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from tspcl.errors import UsageError
from tspcl.solvers import FAMILIES, REGISTRY, get_solver


@pytest.mark.parametrize("module", FAMILIES)
def test_each_family_lists_the_algorithms_of_its_module(module):
    solvers = importlib.import_module(f"tspcl.solvers.{module}").SOLVERS
    assert tuple(spec.name for spec in solvers) == FAMILIES[module]
    assert all(REGISTRY[spec.name] is spec for spec in solvers)


def test_an_unknown_algorithm_is_a_usage_error_naming_them_all():
    with pytest.raises(UsageError, match="unknown algorithm 'nope'; choose one of nn, greedy"):
        get_solver("nope")
    assert "nope" not in REGISTRY and "pils" in REGISTRY and len(REGISTRY) == 16


def test_a_lookup_imports_only_its_family():
    code = ("import sys; from tspcl.solvers import get_solver; get_solver('pils'); "
            "print(sorted(m for m in sys.modules if m.startswith('tspcl.solvers.')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    imported = {m.rsplit(".", 1)[1] for m in eval(r.stdout)}
    assert "pils" in imported
    assert not imported & {"acs", "mmas", "ga", "neighborhood"}, imported
