"""Stopping criteria: small callables, combined with any_of (after PyVRP's design)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol


class StoppingCriterion(Protocol):
    def __call__(self, iteration: int) -> bool: ...


@dataclass
class MaxIterations:
    limit: int

    def __call__(self, iteration: int) -> bool:
        return iteration >= self.limit


@dataclass
class Deadline:
    """Stops at an absolute time.perf_counter() instant (the CLI's --time-limit counts
    from process start, so parsing and kernel builds are inside the budget)."""

    at: float

    def __call__(self, iteration: int) -> bool:
        return time.perf_counter() >= self.at

    def remaining(self) -> float:
        return max(0.0, self.at - time.perf_counter())


@dataclass
class AnyOf:
    criteria: list = field(default_factory=list)

    def __call__(self, iteration: int) -> bool:
        return any(c(iteration) for c in self.criteria)
