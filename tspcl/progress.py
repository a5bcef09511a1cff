"""Progress on stderr: a live status line when stderr is a terminal, nothing otherwise."""

from __future__ import annotations

import sys
import time

from .optima import gap_percent
from .solvers.base import Progress

REFRESH_S = 0.2


class ProgressDisplay:
    """Throttled 'best length (gap) / iterations and their rate / elapsed of the limit'
    line (rich), for humans only.  ``reference`` is the BHH estimate where no optimum is
    known (the gap is then marked as against it)."""

    def __init__(self, label: str, optimum: int | None, enabled: bool | None = None,
                 time_limit: float | None = None, reference: float | None = None):
        self.optimum = optimum
        self.reference = None if optimum is not None else reference
        self.time_limit = time_limit
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0
        self._status = None
        if self.enabled:
            from rich.console import Console

            self._status = Console(stderr=True).status(f"{label}: starting")

    def __enter__(self):
        if self._status is not None:
            self._status.__enter__()
        return self

    def __exit__(self, *exc):
        if self._status is not None:
            self._status.__exit__(*exc)

    def line(self, p: Progress) -> str:
        """The status text for progress `p`."""
        gap = gap_percent(p.best_length, self.optimum)
        if gap is not None:
            quality = f" (gap {gap:.3f} %)"
        elif self.reference:
            quality = f" ({100.0 * (p.best_length / self.reference - 1.0):+.2f} % vs BHH)"
        else:
            quality = ""
        rate = f" ({p.iteration / p.elapsed:,.0f}/s)" if p.elapsed > 0 and p.iteration else ""
        limit = f" of {self.time_limit:g}" if self.time_limit is not None else ""
        return (f"best {p.best_length}{quality}  iterations {p.iteration:,}{rate}  "
                f"{p.elapsed:.1f}{limit} s")

    def __call__(self, p: Progress) -> None:
        if self._status is None or time.perf_counter() - self._last < REFRESH_S:
            return
        self._last = time.perf_counter()
        self._status.update(self.line(p))
