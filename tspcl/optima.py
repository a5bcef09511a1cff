"""Known optimal lengths, for gaps: generator comments, then optima.csv files."""

from __future__ import annotations

import csv
import os
from functools import lru_cache
from pathlib import Path

from .instance import Instance

OPTIMA_ENV = "TSPCL_OPTIMA"


@lru_cache(maxsize=None)
def _read_csv(path: str) -> dict[str, int]:
    out = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                out[row["name"].strip()] = int(row["optimum"])
            except (KeyError, TypeError, ValueError):
                continue
    return out


def optima_files(source: str) -> list[Path]:
    """optima.csv candidates: $TSPCL_OPTIMA, then beside the problem file and one up."""
    files = [Path(os.environ[OPTIMA_ENV])] if os.environ.get(OPTIMA_ENV) else []
    if source and not source.startswith("<"):
        here = Path(source).resolve().parent
        files += [here / "optima.csv", here.parent / "optima.csv"]
    return [f for f in files if f.is_file()]


def known_optimum(inst: Instance) -> int | None:
    """The optimum for this instance if any source knows it, else None."""
    from .gen import known_optimum as from_comment

    value = from_comment(inst)
    if value is not None:
        return value
    names = [inst.name]
    if inst.source and not inst.source.startswith("<"):
        names.append(Path(inst.source).name.split(".")[0])  # NAME may be "pa561.tsp"
    for f in optima_files(inst.source):
        table = _read_csv(str(f))
        for name in names:
            if name in table:
                return table[name]
    return None


def gap_percent(length: int, optimum: int | None) -> float | None:
    return None if not optimum else 100.0 * (length - optimum) / optimum
