"""Progress on stderr: a live status line when stderr is a terminal, nothing otherwise."""

from __future__ import annotations

import sys
import time

from .optima import gap_percent
from .solvers.base import Progress

REFRESH_S = 0.2


class ProgressDisplay:
    """Throttled 'best length / gap / iteration / time' line (rich), for humans only."""

    def __init__(self, label: str, optimum: int | None, enabled: bool | None = None):
        self.optimum = optimum
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

    def __call__(self, p: Progress) -> None:
        if self._status is None or time.perf_counter() - self._last < REFRESH_S:
            return
        self._last = time.perf_counter()
        gap = gap_percent(p.best_length, self.optimum)
        gap_txt = "" if gap is None else f" (gap {gap:.3f}%)"
        self._status.update(f"best {p.best_length}{gap_txt}  iteration {p.iteration}  "
                            f"{p.elapsed:.1f} s")
