"""Thread control: the launch geometry of a kernel tuned while it runs, in "waves".

Luong et al., section 4.1, Algorithm 3: the global size starts at the power of two at or
above the solution size and doubles up to the neighbourhood size; for each, work-group
sizes 32, 64, ..., 512 are tried for `trials` iterations of the search itself (they are
real iterations, so the tuning costs only the slower configurations' extra time).  The
fastest configuration is kept.  Beyond the paper: each configuration first runs one
iteration, and one more than PROBE_SLACK times slower than the best so far is dropped
there (the small global sizes of the first waves leave most of a large GPU idle, and
ten trials of each would cost more than the tuning saves).  A launch that fails for lack of resources (an invalid
work-group size, local memory or registers) ends the tuning, and the search goes on with
the best configuration measured so far, or the safe default when none was.

The kernels this drives must give the same result for every configuration (tspcl's
neighbourhood kernels loop over their work with the global size as stride and break ties
by move id), so tuning never changes a tour.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

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


def waves(solution_size: int, neighborhood_size: int, max_threads: int) -> list[LaunchConfig]:
    """Algorithm 3's configurations, in the order it tries them."""
    threads = 1 << max(0, solution_size - 1).bit_length()
    top = max(threads, min(neighborhood_size, max_threads))
    out = []
    while threads <= top:
        for group in range(GROUP_STEP, MAX_TUNED_GROUP + 1, GROUP_STEP):
            out.append(LaunchConfig(-(-threads // group) * group, group))
        threads *= 2
    return out


class ThreadControl:
    """Which configuration the next launches use (`current`).  While `tuning`, run
    `trials` iterations with `current`, then report their times to :meth:`measured`;
    a launch error goes to :meth:`failed`.  `log` says what was chosen and why."""

    def __init__(self, default: LaunchConfig, tune: list[LaunchConfig] | None = None,
                 fixed: LaunchConfig | None = None, trials: int = 10):
        self.default = default
        self.pending = list(tune or [])
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
