"""The host's stopping criteria: small callables, combined with AnyOf (after PyVRP's design).

Only time is the host's to watch: an iteration budget is the solver's own parameter,
counted on the device (tspcl.solvers.base.SolverSpec.with_budget), so that a budget ends
a run at the same iteration whatever the timing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Protocol


class StoppingCriterion(Protocol):
    def __call__(self, iteration: int) -> bool: ...


@dataclass
class Deadline:
    """Stops at an absolute `clock` instant, time.perf_counter()'s by default (the CLI's
    --time-limit counts from process start, so parsing and kernel builds are inside the
    budget)."""

    at: float
    clock: Callable[[], float] = time.perf_counter

    def __call__(self, iteration: int) -> bool:
        return self.clock() >= self.at

    def remaining(self) -> float:
        return max(0.0, self.at - self.clock())


@dataclass
class AnyOf:
    criteria: list = field(default_factory=list)

    def __call__(self, iteration: int) -> bool:
        return any(c(iteration) for c in self.criteria)

    def remaining(self) -> float | None:
        """Seconds to the earliest deadline; None without one."""
        return min((c.remaining() for c in self.criteria if isinstance(c, Deadline)), default=None)
