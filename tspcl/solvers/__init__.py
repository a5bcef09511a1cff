"""The registry of algorithms by name; each family module contributes its SOLVERS, and is
imported when one of its algorithms is first asked for: a run imports only its own
family and those it builds on (a pils run's start-up is about 0.02 s shorter)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module

from ..errors import UsageError
from .base import SolveContext, SolverSpec

# each family module's algorithms, in the order listings show them (tests/test_registry.py
# checks them against the modules' SOLVERS)
FAMILIES = {
    "construct": ("nn", "greedy", "qb", "sfc", "random"),
    "localsearch": ("2opt", "oropt", "3opt", "lk", "ils"),
    "neighborhood": ("hc", "tabu"),
    "mmas": ("mmas",),
    "acs": ("acs",),
    "ga": ("ga",),
    "pils": ("pils",),
}


class Registry(Mapping):
    """Algorithm name -> SolverSpec, a family's module imported on its first lookup."""

    def __init__(self, families: dict[str, tuple[str, ...]]):
        self._family = {name: module for module, names in families.items() for name in names}

    def __getitem__(self, name: str) -> SolverSpec:
        module = import_module(f"{__name__}.{self._family[name]}")
        return next(spec for spec in module.SOLVERS if spec.name == name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._family)

    def __len__(self) -> int:
        return len(self._family)


REGISTRY = Registry(FAMILIES)


def get_solver(name: str) -> SolverSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise UsageError(f"unknown algorithm {name!r}; choose one of {', '.join(REGISTRY)}") from None


__all__ = ["FAMILIES", "REGISTRY", "Registry", "SolveContext", "SolverSpec", "get_solver"]
