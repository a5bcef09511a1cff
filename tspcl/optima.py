"""Known optimal lengths, for gaps: generator comments, then optima.csv files; and the
Beardwood-Halton-Hammersley estimate for random instances without one."""

from __future__ import annotations

import csv
import math
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from .errors import DataError, MissingInputError
from .instance import Instance

OPTIMA_ENV = "TSPCL_OPTIMA"


@lru_cache(maxsize=None)
def read_optima_csv(path: str) -> dict[str, int]:
    """name -> optimum from an optima.csv (rows without an integer optimum skipped);
    MissingInputError if it cannot be read, DataError if it is not a CSV text file."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return _optima_rows(csv.DictReader(f))
    except OSError as e:
        raise MissingInputError(f"{path}: cannot read the optima file ({e.strerror})") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise DataError(path, None, f"not an optima CSV file (name,optimum rows): {e}") from None


def _optima_rows(rows) -> dict[str, int]:
    out = {}
    for row in rows:
        try:
            out[row["name"].strip()] = int(row["optimum"])
        except (AttributeError, KeyError, TypeError, ValueError):
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
    """The optimum for this instance if any source knows it (generator comments, then
    optima.csv files, then the shipped TSPLIB table by NAME), else None."""
    from .gen import known_optimum as from_comment

    value = from_comment(inst)
    if value is not None:
        return value
    names = [inst.name]
    if inst.source and not inst.source.startswith("<"):
        names.append(Path(inst.source).name.split(".")[0])  # NAME may be "pa561.tsp"
    for f in optima_files(inst.source):
        table = read_optima_csv(str(f))
        for name in names:
            if name in table:
                return table[name]
    return published_optimum(inst)


PUBLISHED = Path(__file__).parent / "data" / "tsplib_optima.csv"


@lru_cache(maxsize=1)
def _published() -> dict[str, tuple[int, str, int]]:
    with open(PUBLISHED, newline="", encoding="utf-8") as f:
        return {row["name"]: (int(row["dimension"]), row["edge_weight_type"], int(row["optimum"]))
                for row in csv.DictReader(f)}


def published_optimum(inst: Instance) -> int | None:
    """The published optimum of the TSPLIB instance of this NAME (shipped with tspcl, so
    a problem read from stdin or copied elsewhere finds it), if its dimension and weight
    type match too: another problem that took a TSPLIB name gets no false gap."""
    known = _published().get(inst.name)
    if known is None or known[:2] != (inst.n, inst.weight_type):
        return None
    return known[2]


def gap_percent(length: int, optimum: int | None) -> float | None:
    return None if not optimum else 100.0 * (length - optimum) / optimum


BHH_CONSTANT = 0.7124  # the optimal tour of n uniform random points in area A: about 0.7124 sqrt(n A)


def bhh_estimate(inst: Instance) -> float | None:
    """The Beardwood-Halton-Hammersley estimate of the optimal length, 0.7124 sqrt(n A)
    with A the area of the cities' bounding box: meant for cities spread uniformly over a
    rectangle (tspcl gen uniform), an estimate, not a bound.  None where it has no
    meaning: distances not planar Euclidean (EUC_2D, CEIL_2D), fewer than 2 cities or a
    box of no area."""
    if inst.coords is None or inst.weight_type not in ("EUC_2D", "CEIL_2D") or inst.n < 2:
        return None
    width, height = np.ptp(inst.coords[:, 0]), np.ptp(inst.coords[:, 1])
    area = float(width) * float(height)
    return BHH_CONSTANT * math.sqrt(inst.n * area) if area > 0 else None
