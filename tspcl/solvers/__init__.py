"""The registry of algorithms by name; each family module contributes its SOLVERS."""

from __future__ import annotations

from ..errors import UsageError
from . import acs, construct, ga, localsearch, mmas, neighborhood, pils
from .base import SolveContext, SolverSpec

REGISTRY: dict[str, SolverSpec] = {s.name: s for s in construct.SOLVERS + localsearch.SOLVERS
                                   + neighborhood.SOLVERS + mmas.SOLVERS + acs.SOLVERS
                                   + ga.SOLVERS + pils.SOLVERS}


def get_solver(name: str) -> SolverSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise UsageError(f"unknown algorithm {name!r}; choose one of {', '.join(REGISTRY)}") from None


__all__ = ["REGISTRY", "SolveContext", "SolverSpec", "get_solver"]
