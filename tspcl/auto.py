"""`--algo auto`, the default: the solver, parameters and budget measured best for an
instance on a kind of device (BENCHMARKS.md), and the reason, said in the tour's
COMMENT, the run log and the JSON summary.

- Symmetric instances: pils, the segment-parallel ILS (BENCHMARKS.md, "Against linkern":
  the best tours of every solver at every budget measured).  On a CPU device half its
  kicks are double bridges (`bridges=0.5`): far better at the few kicks a CPU runs
  (PoCL, pr1002, 30 s: 0.33 % against 0.84 %), no better at a GPU's.
- Asymmetric instances (no solver that reverses paths applies): the GA, the best of
  ga, mmas, acs, tabu and hc (3-exchange) at 10 s on PoCL (kro124p 1.3 %, ftv170 10 %,
  rbg443 24 %; docs/notebook/product.md).
- Without a time limit or an iteration budget the run gets the solver's own budget
  (pils: 100n kicks; the GA: 1000 generations) and at most default_seconds(n), said on
  stderr: small instances end on the budget, large ones on the time (a GPU's kicks, most
  of them copies of a cell, pils.py, and a CPU's are not worth the same, so a kick count
  alone would mean very different times).  With a time limit, the time alone decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from .instance import Instance

ATSP_ALGORITHM = "ga"
UNTIL_THE_TIME_LIMIT = {"pils": {"kicks": "auto"}, "ga": {"generations": "1000000000"}}
OWN_BUDGET = {"pils": {"kicks": "100n"}, "ga": {}}
SECONDS_PER_CITY = 1 / 500    # the default budget: n / 500 seconds,
MIN_SECONDS = 2.0             # at least this
MAX_SECONDS = 60.0            # and at most this


def default_seconds(n: int) -> float:
    """The time budget of an auto run given none: n / 500 s, from 2 s to 60 s."""
    return min(MAX_SECONDS, max(MIN_SECONDS, n * SECONDS_PER_CITY))


@dataclass(frozen=True)
class Choice:
    """What auto runs: `values` are -p KEY=VALUE strings of `algorithm` (the user's own
    -p values go over them); `time_limit` is the given one or the default budget."""

    algorithm: str
    values: dict
    time_limit: float | None
    reason: str
    default_budget: bool = False


def choose(inst: Instance, gpu: bool, time_limit: float | None,
           iterations_given: bool) -> Choice:
    """The algorithm, parameters and budget for `inst` on a GPU (`gpu`) or a CPU."""
    if inst.symmetric:
        algorithm, values = "pils", ({} if gpu else {"bridges": "0.5"})
        reason = ("symmetric: pils, the segment-parallel ILS (best measured, BENCHMARKS.md)"
                  + ("" if gpu else "; bridges=0.5 on a CPU device"))
    else:
        algorithm, values = ATSP_ALGORITHM, {}
        reason = (f"asymmetric: {ATSP_ALGORITHM}, the best measured on the ATSP set "
                  "(the solvers that reverse paths do not apply)")
    default_budget = time_limit is None and not iterations_given
    if default_budget:
        time_limit = default_seconds(inst.n)
        values.update(OWN_BUDGET[algorithm])
        own = ", ".join(f"{k}={v}" for k, v in OWN_BUDGET[algorithm].items()) or "its own budget"
        reason += (f"; no --time-limit: {own} or {time_limit:g} s, whichever comes first "
                   f"(n / 500 s, {MIN_SECONDS:g} to {MAX_SECONDS:g})")
    elif time_limit is not None:
        values.update(UNTIL_THE_TIME_LIMIT[algorithm])
    return Choice(algorithm, values, time_limit, reason, default_budget)


__all__ = ["Choice", "choose", "default_seconds"]
