"""Thread control: the launch geometry of a kernel tuned while it runs.

Luong et al., section 4.1, Algorithm 3: the global size starts at the power of two at or
above the solution size and doubles up to the neighbourhood size; for each, work-group
sizes 32, 64, ..., 512 are tried for `trials` iterations of the search itself (they are
real iterations, so the tuning costs only the slower configurations' extra time).  The
fastest configuration is kept (`waves`).  A launch that fails for lack of resources (an
invalid work-group size, local memory or registers) ends the tuning, and the search goes
on with the best configuration measured so far, or the safe default when none was.

Beyond the paper: each configuration first runs one iteration, and one more than
PROBE_SLACK times slower than the best so far is dropped there; and `axes` tunes the
global size first (work-groups of 256) and then the work-group size at the best global
size: 28 configurations instead of 192 on rl5915's swap neighbourhood.  On a large GPU
the first waves' small global sizes leave most of it idle, each wave is about twice as
fast as the one before, so the probe drops little there and the full grid costs more
than the tuning saves (BENCHMARKS.md, issue 7).

The kernels this drives must give the same result for every configuration (tspcl's
neighbourhood kernels loop over their work with the global size as stride and break ties
by move id), so tuning never changes a tour.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

PROBE_SLACK = 2.0    # a configuration whose first iteration is this much slower than the
                     # best median so far is dropped without its other trials
GROUP_STEP = 32      # work-group sizes are multiples of the warp size (Algorithm 3, line 19)
MAX_TUNED_GROUP = 512


@dataclass(frozen=True)
class LaunchConfig:
    """A kernel launch geometry: `threads` work-items in work-groups of `group`."""

    threads: int
    group: int

    def __str__(self) -> str:
        return f"{self.threads} work-items in groups of {self.group}"


AXES_GROUP = 256     # the work-group size `axes` tunes the global size with


def global_sizes(solution_size: int, neighborhood_size: int, max_threads: int) -> list[int]:
    """Algorithm 3's global sizes: powers of two from the solution size's up to the
    neighbourhood size (at most max_threads)."""
    threads = 1 << max(0, solution_size - 1).bit_length()
    top = max(threads, min(neighborhood_size, max_threads))
    out = []
    while threads <= top:
        out.append(threads)
        threads *= 2
    return out


def group_sizes() -> range:
    return range(GROUP_STEP, MAX_TUNED_GROUP + 1, GROUP_STEP)


def _config(threads: int, group: int) -> LaunchConfig:
    return LaunchConfig(-(-threads // group) * group, group)


def waves(solution_size: int, neighborhood_size: int, max_threads: int) -> list[LaunchConfig]:
    """Algorithm 3's configurations, in the order it tries them."""
    return [_config(t, g) for t in global_sizes(solution_size, neighborhood_size, max_threads)
            for g in group_sizes()]


def axes(solution_size: int, neighborhood_size: int, max_threads: int) -> list[LaunchConfig]:
    """The first axis: the global sizes with work-groups of AXES_GROUP (the second,
    :func:`group_axis`, follows from the best of these)."""
    sizes = global_sizes(solution_size, neighborhood_size, max_threads)
    return list(dict.fromkeys(_config(t, AXES_GROUP) for t in sizes))  # small ones round up alike


def group_axis(best: LaunchConfig) -> list[LaunchConfig]:
    """The second axis: every work-group size at the best global size."""
    return [_config(best.threads, g) for g in group_sizes() if g != best.group]


class ThreadControl:
    """Which configuration the next launches use (`current`).  While `tuning`, run
    `trials` iterations with `current`, then report their times to :meth:`measured`;
    a launch error goes to :meth:`failed`.  `log` says what was chosen and why."""

    def __init__(self, default: LaunchConfig, tune: list[LaunchConfig] | None = None,
                 fixed: LaunchConfig | None = None, trials: int = 10,
                 then: Callable[[LaunchConfig], list[LaunchConfig]] | None = None):
        """tune: configurations to try in order, then the ones `then` gives for the
        best of them; fixed: no tuning, this configuration."""
        self.default = default
        self.pending = list(tune or [])
        self.then = then
        self.tried = len(self.pending)
        self.chosen = fixed or default
        self.trials = trials
        self.best_seconds = float("inf")
        self.log: list[str] = []

    @property
    def tuning(self) -> bool:
        return bool(self.pending)

    @property
    def current(self) -> LaunchConfig:
        return self.pending[0] if self.pending else self.chosen

    def promising(self, first_iteration_seconds: float) -> bool:
        """Whether `current` deserves its other trials after its first iteration."""
        return first_iteration_seconds <= PROBE_SLACK * self.best_seconds

    def measured(self, seconds_per_iteration: list[float]) -> None:
        """Times of the trial iterations of `current`; moves on to the next one."""
        t = statistics.median(seconds_per_iteration)
        if t < self.best_seconds:
            self.chosen, self.best_seconds = self.pending[0], t
        self.pending.pop(0)
        if not self.pending and self.then is not None:
            self.pending, self.then = self.then(self.chosen), None
            self.tried += len(self.pending)
        if not self.pending:
            self.log.append(f"thread control: tuned {self.tried} configurations, chose "
                            f"{self.chosen} ({self.best_seconds * 1e6:.0f} us per iteration)")

    def finish(self) -> None:
        """The run ended: say how far the tuning got when it had not finished."""
        if self.pending:
            done = self.tried - len(self.pending)
            self.pending.clear()
            best = (f"the fastest so far {self.chosen} ({self.best_seconds * 1e6:.0f} us per "
                    f"iteration)" if done else f"{self.chosen}")
            self.log.append(f"thread control: the run ended after {done} of {self.tried} "
                            f"configurations; {best}")

    def failed(self, error: Exception) -> None:
        """The launch with `current` failed: stop tuning and go on with the best
        configuration measured so far (the default when none was)."""
        bad = self.current
        if self.pending:
            self.pending.clear()
            if self.best_seconds == float("inf"):
                self.chosen = self.default
        elif bad != self.default:
            self.chosen = self.default
        if self.chosen == bad:
            raise error
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        self.log.append(f"thread control: {bad} failed ({reason}); going on with {self.chosen}")
