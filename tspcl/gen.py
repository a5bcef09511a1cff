"""Instance generators (pure numpy, reproducible from a seed).

``generate(kind, n, seed)`` builds an EUC_2D :class:`~tspcl.instance.Instance`:

uniform
    ``n`` cities with integer coordinates uniform in ``[0, 1_000_000)^2`` (the DIMACS
    TSP challenge's uniform instances).
clustered
    DIMACS-style clusters: ``max(1, n // 100)`` centres uniform in the same square; each
    city is drawn normally around a centre picked at random (sigma ``1e6 / sqrt(n)`` in
    each coordinate, as the DIMACS generator; about a tenth of the typical distance
    between centres), rounded to integers and clipped to the square.
circle
    ``n >= 3`` cities on a regular n-gon.  The radius is chosen so that every side is
    exactly an integer ``s`` (``R = s / (2 sin(pi/n))``); every other pair is farther apart
    (chords grow with the index gap, and the gap-2 chord is about ``2s``), so ``s`` is the
    smallest distance between two cities, every tour has length ``>= n*s`` and the polygon
    order reaches it: the optimum is exactly ``n*s``.  The generator checks this claim
    with the exact TSPLIB integer distances of the float coordinates it produces (they are
    written with full precision by :func:`tspcl.tsplib.format_problem`, so a re-read file
    gives the same integers).  ``s`` is the integer side of a polygon of radius 500,000
    (the circle fits the uniform square), but at least 10 (large ``n``).
grid
    a ``rows x cols`` lattice with spacing 100 (``rows * cols == n``, the factorisation
    closest to square; ``n`` must be even, so that one side is even and a boustrophedon
    Hamiltonian cycle exists).  Every edge is at least 100 long, so the optimum is
    exactly ``100 n``.

Batches: :func:`generate_many` makes ``count`` instances of one kind and size, seeds
``seed`` .. ``seed + count - 1``, named ``KIND N-SEED`` (``uniform100-7``);
:func:`write_many` writes them as one TSPLIB file each into a folder, or into one
multi-instance file (:mod:`tspcl.tsplib`) when the target's name ends in ``.tsp``.

All generators draw from ``np.random.Generator(np.random.Philox(key=seed))``.  For circle
and grid the seed only shuffles the city numbering (so that the input order is not the
optimal tour); :func:`optimal_tour` recovers an optimal order from the coordinates.
Circle and grid state their optimum in the comment (``...; optimum N``), which
:func:`known_optimum` reads back.
"""

from __future__ import annotations

import math
import operator
import re

import numpy as np

from .errors import UsageError
from .instance import Instance
from .tsplib import format_problem, format_problems, one_line

GENERATORS = ("uniform", "clustered", "circle", "grid")
MIN_N = 3
MAX_N = 10_000_000
MAX_COUNT = 10_000_000      # instances one batch holds at most
SQUARE = 1_000_000          # uniform / clustered coordinates lie in [0, SQUARE)
CIRCLE_RADIUS = 500_000     # nominal radius of the circle generator
CIRCLE_MIN_SIDE = 10
GRID_SPACING = 100

_OPTIMUM_RE = re.compile(r"\boptimum\s+(\d+)\b", re.IGNORECASE)
_GEN_RE = re.compile(r"^tspcl gen (\w+) ")


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.Philox(key=seed))


def _check_args(kind: str, n, seed) -> tuple[int, int]:
    if kind not in GENERATORS:
        raise UsageError(f"unknown generator {kind!r}; choose one of {', '.join(GENERATORS)}")
    try:
        if isinstance(n, bool):
            raise TypeError
        n = operator.index(n)
    except TypeError:
        raise UsageError(f"the number of cities must be an integer, not {n!r}") from None
    if not MIN_N <= n <= MAX_N:
        raise UsageError(f"the number of cities must be in {MIN_N}..{MAX_N:_}, not {n}")
    try:
        if isinstance(seed, bool):
            raise TypeError
        seed = operator.index(seed)
    except TypeError:
        raise UsageError(f"the seed must be an integer, not {seed!r}") from None
    if not 0 <= seed < 2**128:
        raise UsageError(f"the seed must be in 0..2**128-1, not {seed}")
    return n, seed


def _checked_name(name: str | None, kind: str, n: int) -> str:
    """``name`` (default ``f"{kind}{n}"``); UsageError unless the file's NAME line would
    read back as ``name`` (one line of printable text, no blanks around it)."""
    if name is None:
        return f"{kind}{n}"
    if name != one_line(name):
        raise UsageError(f"the name {name!r} cannot be written as it is on a TSPLIB NAME "
                         "line: give one line of printable text without blanks around it")
    return name


def generate(kind: str, n: int, seed: int = 1, name: str | None = None) -> Instance:
    """A ``kind`` instance (one of :data:`GENERATORS`) with ``n`` cities, named ``name``
    (default ``f"{kind}{n}"``); the same arguments always give the same instance."""
    n, seed = _check_args(kind, n, seed)
    name = _checked_name(name, kind, n)
    rng = _rng(seed)
    if kind == "uniform":
        coords = rng.integers(0, SQUARE, size=(n, 2)).astype(np.float64)
        comment = f"tspcl gen uniform n={n} seed={seed}"
    elif kind == "clustered":
        centres_n = max(1, n // 100)
        sigma = SQUARE / math.sqrt(n)
        centres = rng.integers(0, SQUARE, size=(centres_n, 2)).astype(np.float64)
        which = rng.integers(0, centres_n, size=n)
        coords = np.rint(centres[which] + rng.normal(0.0, sigma, size=(n, 2)))
        np.clip(coords, 0, SQUARE - 1, out=coords)
        comment = (f"tspcl gen clustered n={n} seed={seed} centres={centres_n} "
                   f"sigma={sigma:.1f}")
    elif kind == "circle":
        polygon, side = _circle(n)
        perm = rng.permutation(n)            # city perm[k] is vertex k
        coords = np.empty_like(polygon)
        coords[perm] = polygon
        comment = f"tspcl gen circle n={n} seed={seed} side={side}; optimum {n * side}"
    else:  # grid
        rows, cols = grid_shape(n)
        r, c = np.divmod(np.arange(n, dtype=np.int64), cols)
        lattice = np.stack([c * GRID_SPACING, r * GRID_SPACING], axis=1).astype(np.float64)
        perm = rng.permutation(n)
        coords = np.empty_like(lattice)
        coords[perm] = lattice
        comment = (f"tspcl gen grid n={n} seed={seed} rows={rows} cols={cols} "
                   f"spacing={GRID_SPACING}; optimum {n * GRID_SPACING}")
    return Instance(name=name, kind="TSP", weight_type="EUC_2D", coords=coords,
                    comment=comment)


def batch_name(kind: str, n: int, seed: int) -> str:
    """The name of a batch's instance: ``KIND N-SEED``."""
    return f"{kind}{n}-{seed}"


def generate_many(kind: str, n: int, count: int, seed: int = 1) -> list[Instance]:
    """``count`` instances of ``kind`` with ``n`` cities, seeds ``seed`` to
    ``seed + count - 1``, each named :func:`batch_name`."""
    n, seed = _check_args(kind, n, seed)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
        raise UsageError(f"the count must be an integer in 1..{MAX_COUNT:_}, not {count!r}")
    if seed + count > 2**128:
        raise UsageError(f"the seeds {seed}..{seed + count - 1} pass 2**128-1")
    return [generate(kind, n, s, batch_name(kind, n, s)) for s in range(seed, seed + count)]


def write_many(instances: list[Instance], output: str) -> list[str]:
    """Write the instances into one multi-instance file when ``output`` ends in ``.tsp``,
    else as ``NAME.tsp`` files into the folder ``output`` (made if missing); all files
    or none (:func:`tspcl.output.write_outputs`).  Returns the paths written."""
    from pathlib import Path

    from .output import output_target, write_outputs

    if output.endswith(".tsp"):
        write_outputs([(output_target(output, "-o"), format_problems(instances))])
        return [output]
    folder = Path(output)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"-o {output}: cannot make the folder ({e.strerror or e})") from None
    paths = [str(folder / f"{inst.name}.tsp") for inst in instances]
    write_outputs([(output_target(path, "-o"), format_problem(inst))
                   for path, inst in zip(paths, instances)])
    return paths


def known_optimum(inst: Instance) -> int | None:
    """The optimum stated in the comment (``optimum N``, as circle and grid write), else
    None."""
    m = _OPTIMUM_RE.search(inst.comment or "")
    return int(m.group(1)) if m else None


# ---- circle ----------------------------------------------------------------------------
def _polygon(n: int, radius: float) -> np.ndarray:
    angle = 2.0 * np.pi * np.arange(n, dtype=np.float64) / n
    return np.stack([radius + radius * np.cos(angle), radius + radius * np.sin(angle)], axis=1)


def _circle_ok(coords: np.ndarray, side: int) -> bool:
    """Every side rounds to ``side`` and every gap-2 chord to more (exact distances)."""
    probe = Instance(name="probe", kind="TSP", weight_type="EUC_2D", coords=coords)
    i = np.arange(len(coords))
    if not (probe.dist(i, np.roll(i, -1)) == side).all():
        return False
    return len(coords) <= 3 or bool((probe.dist(i, np.roll(i, -2)) > side).all())


def _circle(n: int) -> tuple[np.ndarray, int]:
    """Vertices (in polygon order) of a regular n-gon whose sides are exactly ``side``."""
    half = math.sin(math.pi / n)
    side = max(CIRCLE_MIN_SIDE, int(2.0 * CIRCLE_RADIUS * half))
    # Aim the true side at the integer itself, far from a rounding boundary; should float
    # error ever break a side or the gap-2 chord, nudge the radius a little and retry.
    for nudge in (0.0, 0.05, -0.05, 0.1, -0.1, 0.2, -0.2, 0.3, -0.3):
        coords = _polygon(n, (side + nudge) / (2.0 * half))
        if _circle_ok(coords, side):
            return coords, side
    raise RuntimeError(f"cannot place a {n}-gon with integer sides {side}")  # not seen


# ---- grid ------------------------------------------------------------------------------
def grid_shape(n: int) -> tuple[int, int]:
    """``(rows, cols)`` with ``rows * cols == n``, ``2 <= rows <= cols``, closest to square;
    UsageError unless ``n`` is even (one side must be even for a Hamiltonian cycle)."""
    if n < 4 or n % 2:
        raise UsageError(f"grid needs an even number of cities >= 4 (4, 6, 8, ...: a "
                         f"rows x cols lattice with an even side), not {n}")
    for rows in range(math.isqrt(n), 1, -1):
        if n % rows == 0:
            return rows, n // rows
    raise AssertionError("unreachable: 2 divides an even n")


def _boustrophedon(ids: np.ndarray) -> np.ndarray:
    """A Hamiltonian cycle of lattice neighbours over the (rows x cols) ``ids`` array."""
    if ids.shape[0] % 2:
        ids = ids.T                                  # make the row count even
    snake = ids[:, 1:].copy()
    snake[1::2] = snake[1::2, ::-1]                  # rows 0, 2, ... left to right
    return np.concatenate([ids[:1, 0], snake.ravel(), ids[:0:-1, 0]])


# ---- optimal tours ---------------------------------------------------------------------
def optimal_tour(inst: Instance) -> np.ndarray | None:
    """An optimal tour (0-based order) of a circle or grid instance made by
    :func:`generate` (recognised by its comment, also after a TSPLIB round trip), found
    from the coordinates; None for any other instance."""
    m = _GEN_RE.match(inst.comment or "")
    if (m is None or m.group(1) not in ("circle", "grid") or inst.coords is None
            or inst.weight_type != "EUC_2D" or inst.n < MIN_N):
        return None
    xy = inst.coords[:, :2]
    if m.group(1) == "circle":
        centre = xy.mean(axis=0)
        angle = np.arctan2(xy[:, 1] - centre[1], xy[:, 0] - centre[0])
        return np.argsort(angle, kind="stable").astype(np.int64)
    cell = np.rint((xy - xy.min(axis=0)) / GRID_SPACING).astype(np.int64)
    cols, rows = (cell.max(axis=0) + 1).tolist()
    if rows * cols != inst.n or rows < 2 or cols < 2 or (rows % 2 and cols % 2):
        return None
    ids = np.full((rows, cols), -1, np.int64)
    ids[cell[:, 1], cell[:, 0]] = np.arange(inst.n)
    if (ids < 0).any():
        return None
    return _boustrophedon(ids)
