"""The problem as the solvers see it: coordinates or a matrix, and exact distances.

Distances are the TSPLIB95 integer distances, computed vectorised in float64 exactly as
the TSPLIB reference formulas do (``nint(x) = (int)(x + 0.5)``).  The kernels compute the
same integers (``kernels_cl/distance.h``); ``tests/kernels/test_distance_kernel.py`` proves the
two agree on every shipped instance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import DataError

# Weight types with a formula over coordinates, and the number of coordinates each uses.
COORD_DIMS = {
    "EUC_2D": 2, "CEIL_2D": 2, "MAN_2D": 2, "MAX_2D": 2, "ATT": 2, "GEO": 2,
    "EUC_3D": 3, "MAN_3D": 3, "MAX_3D": 3,
}
# Numeric code of each weight type, shared with the kernels (distance.h: METRIC_*).
METRIC_CODES = {
    "EUC_2D": 0, "CEIL_2D": 1, "MAN_2D": 2, "MAX_2D": 3, "ATT": 4, "GEO": 5,
    "EUC_3D": 6, "MAN_3D": 7, "MAX_3D": 8, "EXPLICIT": 9,
}
INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
# The largest coordinate distance accepted: the kernels hold distances in 32-bit ints
# (tour lengths and move gains in 64 bits: n < 2**31 cities, so a length always fits);
# the factor 2 is headroom kept since the first kernels.
MAX_COORD_DISTANCE = INT32_MAX // 2
GEO_PI = 3.141592
GEO_RRR = 6378.388


def geo_radians(coords: np.ndarray) -> np.ndarray:
    """TSPLIB GEO: DDD.MM (degrees, minutes) to radians, degrees truncated toward zero."""
    deg = np.trunc(coords)
    minutes = coords - deg
    return GEO_PI * (deg + 5.0 * minutes / 3.0) / 180.0


def _nint(x: np.ndarray) -> np.ndarray:
    return (x + 0.5).astype(np.int64)


def _unrounded(weight_type: str, d: np.ndarray) -> np.ndarray:
    """The real distance before TSPLIB's rounding, from absolute coordinate differences
    ``d`` (last axis), for every weight type but GEO; non-decreasing in each difference."""
    if weight_type in ("MAN_2D", "MAN_3D"):
        return d.sum(axis=-1)
    if weight_type in ("MAX_2D", "MAX_3D"):
        return d.max(axis=-1)       # max of the rounded = rounded max: rounding is monotone
    sq = d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1]
    if weight_type == "EUC_3D":
        sq = sq + d[..., 2] * d[..., 2]
    if weight_type == "ATT":
        return np.sqrt(sq / 10.0)
    return np.sqrt(sq)              # EUC_2D, EUC_3D, CEIL_2D


def _rounded(weight_type: str, r: np.ndarray) -> np.ndarray:
    """TSPLIB's integer for the real distance ``r`` (see :func:`_unrounded`)."""
    if weight_type == "CEIL_2D":
        return np.ceil(r).astype(np.int64)
    t = _nint(r)
    if weight_type == "ATT":
        return np.where(t < r, t + 1, t)
    return t


def coord_distance(weight_type: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer distances between coordinate rows ``a`` and ``b`` (broadcasting).

    For GEO, ``a`` and ``b`` are already in radians (see :func:`geo_radians`).
    """
    if weight_type == "GEO":
        q1 = np.cos(a[..., 1] - b[..., 1])
        q2 = np.cos(a[..., 0] - b[..., 0])
        q3 = np.cos(a[..., 0] + b[..., 0])
        arc = np.arccos(np.clip(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1.0, 1.0))
        return (GEO_RRR * arc + 1.0).astype(np.int64)
    return _rounded(weight_type, _unrounded(weight_type, np.abs(a - b)))


def coordinate_problem(weight_type: str, coords: np.ndarray) -> tuple[int, str] | None:
    """A city (0-based) whose coordinates the kernels cannot take, and why; None if
    every distance is an exact int of at most :data:`MAX_COORD_DISTANCE`.

    Coordinates must be finite (GEO: in radians too).  Every weight type but GEO is
    non-decreasing in each coordinate difference, and no difference exceeds its axis's
    span, so the distance of the spans bounds every distance (GEO's never exceed
    ``6378.388 * pi + 1``).
    """
    if not len(coords):
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        values = geo_radians(coords) if weight_type == "GEO" else coords
        infinite = np.flatnonzero(~np.isfinite(values).all(axis=1))
        if infinite.size:
            i = int(infinite[0])
            shown = " ".join(f"{x:.17g}" for x in coords[i].tolist())
            return i, (f"coordinates {shown} are not finite numbers"
                       + (" in radians" if weight_type == "GEO" else ""))
        if weight_type == "GEO":
            return None
        spans = values.max(axis=0) - values.min(axis=0)
        largest = float(_unrounded(weight_type, spans))
    if largest <= MAX_COORD_DISTANCE:
        return None
    axis = int(np.argmax(spans))
    return int(np.argmax(values[:, axis])), (
        f"coordinates span {spans[axis]:.6g} in {'xyz'[axis]}: {weight_type} distances up "
        f"to {largest:.6g} would not fit the kernels' 32-bit integers (tspcl takes at most "
        f"{MAX_COORD_DISTANCE})")


def matrix_problem(matrix: np.ndarray) -> str | None:
    """Why ``matrix`` does not hold 32-bit integer weights, or None."""
    m = np.asarray(matrix)
    if m.dtype == np.int32 or not m.size:
        return None
    if not (np.issubdtype(m.dtype, np.integer) or np.issubdtype(m.dtype, np.floating)):
        return f"matrix weights must be integers, not {m.dtype}"
    if np.issubdtype(m.dtype, np.floating) and not (np.isfinite(m).all()
                                                    and np.array_equal(m, np.round(m))):
        return "matrix weights must be integers"
    if m.min() < INT32_MIN or m.max() > INT32_MAX:
        return f"matrix weights must fit in 32 bits ({INT32_MIN}..{INT32_MAX})"
    return None


def fixed_edges_problem(edges: np.ndarray, n: int, directed: bool) -> tuple[int, str] | None:
    """The first fixed edge (0-based index into the k x 2 ``edges``) that no tour can
    travel together with the edges before it, and why; None if a tour can travel all.

    A tour travels each city on two edges (an ATSP's: one leaving, one entering it) and
    closes only one cycle, through all ``n`` cities; an edge is given once (a TSP's
    either way round).
    """
    seen: set[tuple[int, int]] = set()
    ends: dict[tuple[int, str], int] = {}   # (city, way) -> fixed edges there so far
    parent: dict[int, int] = {}             # union-find over the cities touched so far
    size: dict[int, int] = {}

    def root(city: int) -> int:
        while parent.get(city, city) != city:
            city = parent[city]
        return city

    for k, (a, b) in enumerate(np.asarray(edges, np.int64).tolist()):
        outside = [c + 1 for c in (a, b) if not 0 <= c < n]
        if outside:
            return k, f"city {outside[0]} is not in 1..{n}"
        if a == b:
            return k, f"a fixed edge from city {a + 1} to itself"
        key = (a, b) if directed else (min(a, b), max(a, b))
        if key in seen:
            return k, f"fixed edge {a + 1} {b + 1} is given twice"
        seen.add(key)
        for city, way, most in (((a, "leaving", 1), (b, "entering", 1)) if directed
                                else ((a, "at", 2), (b, "at", 2))):
            ends[city, way] = ends.get((city, way), 0) + 1
            if ends[city, way] > most:
                return k, (f"{ends[city, way]} fixed edges {way} city {city + 1} (a tour "
                           f"has {most})")
        ra, rb = root(a), root(b)
        if ra == rb and size[ra] < n:
            return k, (f"fixed edges close a cycle through {size[ra]} of the {n} cities "
                       f"(at edge {a + 1} {b + 1})")
        if ra != rb:
            big, small = (ra, rb) if size.get(ra, 1) >= size.get(rb, 1) else (rb, ra)
            size[big] = size.get(ra, 1) + size.get(rb, 1)
            parent[small] = big
    return None


@dataclass(frozen=True, eq=False)
class Instance:
    """A TSP or ATSP instance with 0-based cities.

    Exactly one of ``coords`` (float64, n x 2 or n x 3, as in the file) and ``matrix``
    (int32, n x n, row = from, column = to) defines the distances; EXPLICIT instances may
    also carry ``display`` coordinates (DISPLAY_DATA_SECTION), used only for drawing and
    for coordinate-based helpers such as space-filling-curve construction.
    ``fixed_edges`` (k x 2, 0-based) must be in every tour (FIXED_EDGES_SECTION):
    :meth:`tour_problem` checks them; no solver keeps them yet (``run.solve`` refuses).
    """

    name: str
    kind: str                        # "TSP" or "ATSP"
    weight_type: str                 # a key of METRIC_CODES
    coords: np.ndarray | None = None
    matrix: np.ndarray | None = None
    display: np.ndarray | None = None
    fixed_edges: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    comment: str = ""
    edge_weight_format: str | None = None   # as read, for EXPLICIT (informational)
    source: str = "<memory>"

    def __post_init__(self):
        if (self.coords is None) == (self.matrix is None):
            raise ValueError("an Instance needs exactly one of coords and matrix")
        if self.matrix is not None:
            why = matrix_problem(self.matrix)
            if why:
                raise DataError(self.source, None, why)
            object.__setattr__(self, "matrix", np.ascontiguousarray(self.matrix, np.int32))
        if self.coords is not None:
            object.__setattr__(self, "coords", np.ascontiguousarray(self.coords, np.float64))
            problem = coordinate_problem(self.weight_type, self.coords)
            if problem:
                city, why = problem
                raise DataError(self.source, None, f"city {city + 1}: {why}")
        if self.weight_type == "GEO":
            object.__setattr__(self, "_geo", geo_radians(self.coords))
        object.__setattr__(self, "fixed_edges",
                           np.asarray(self.fixed_edges, np.int64).reshape(-1, 2))
        problem = fixed_edges_problem(self.fixed_edges, self.n, directed=not self.symmetric)
        if problem:
            k, why = problem
            raise DataError(self.source, None, f"fixed edge {k + 1}: {why}")

    # ---- size and kind -------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.matrix) if self.matrix is not None else len(self.coords)

    @property
    def symmetric(self) -> bool:
        return self.kind != "ATSP"

    @property
    def has_coords(self) -> bool:
        return self.coords is not None

    @property
    def metric_code(self) -> int:
        return METRIC_CODES[self.weight_type]

    @property
    def device_coords(self) -> np.ndarray | None:
        """Coordinates as the kernels read them (GEO pre-converted to radians)."""
        if self.coords is None:
            return None
        return self._geo if self.weight_type == "GEO" else self.coords

    @property
    def planar_coords(self) -> np.ndarray | None:
        """x/y positions for geometry (grids, curves): coordinates, else display data."""
        if self.coords is not None:
            return self.coords[:, :2]
        return None if self.display is None else self.display[:, :2]

    # ---- distances -----------------------------------------------------------------
    def dist(self, i, j) -> np.ndarray:
        """Exact integer distance from city ``i`` to city ``j`` (arrays broadcast)."""
        i = np.asarray(i, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        if self.matrix is not None:
            return self.matrix[i, j].astype(np.int64)
        c = self.device_coords
        return coord_distance(self.weight_type, c[i], c[j])

    def dist_row(self, i: int) -> np.ndarray:
        """Distances from city ``i`` to every city (int64, length n)."""
        return self.dist(np.full(self.n, i), np.arange(self.n))

    def full_matrix(self) -> np.ndarray:
        """The n x n int64 distance matrix (small instances only: tests, EXPLICIT)."""
        if self.matrix is not None:
            return self.matrix.astype(np.int64)
        idx = np.arange(self.n)
        return self.dist(idx[:, None], idx[None, :])

    # ---- tours ---------------------------------------------------------------------
    def tour_problem(self, tour) -> str | None:
        """Why ``tour`` (0-based city order) is not a tour of this instance, or None: it
        must be a permutation of the cities that travels every fixed edge."""
        problem = self._permutation_problem(tour)
        if problem is not None:
            return problem
        missing = self._first_missing_fixed_edge(np.asarray(tour))
        if missing is not None:
            a, b = missing
            return f"fixed edge {a + 1}-{b + 1} (FIXED_EDGES_SECTION) is not in the tour"
        return None

    def _permutation_problem(self, tour) -> str | None:
        """Why ``tour`` is not a permutation of the cities, or None."""
        t = np.asarray(tour)
        if t.ndim != 1 or len(t) != self.n:
            return f"tour has {t.size} cities, the problem has {self.n}"
        if not np.issubdtype(t.dtype, np.integer):
            return "tour entries are not integers"
        if t.size and (t.min() < 0 or t.max() >= self.n):
            bad = int(t[(t < 0) | (t >= self.n)][0])
            return f"city {bad + 1} is not in 1..{self.n}"
        counts = np.bincount(t, minlength=self.n)
        if (counts != 1).any():
            dup = np.flatnonzero(counts > 1)
            if dup.size:
                return f"city {int(dup[0]) + 1} is visited {int(counts[dup[0]])} times"
            return f"city {int(np.flatnonzero(counts == 0)[0]) + 1} is not visited"
        return None

    def _first_missing_fixed_edge(self, tour: np.ndarray) -> tuple[int, int] | None:
        """The first fixed edge that the permutation ``tour`` does not travel (an ATSP's
        from ``a`` to ``b``, a TSP's either way), or None."""
        if not len(self.fixed_edges):
            return None
        position = np.empty(self.n, np.int64)
        position[tour] = np.arange(self.n)
        a, b = self.fixed_edges[:, 0], self.fixed_edges[:, 1]
        step = (position[b] - position[a]) % self.n
        kept = (step == 1) | ((step == self.n - 1) & self.symmetric)
        missing = np.flatnonzero(~kept)
        if not missing.size:
            return None
        return int(a[missing[0]]), int(b[missing[0]])

    def tour_length(self, tour) -> int:
        """Exact length (int) of the closed tour ``tour``, any permutation of the cities
        (fixed edges or not: :meth:`tour_problem` says whether it keeps them); raises
        ValueError for anything else."""
        problem = self._permutation_problem(tour)
        if problem is not None:
            raise ValueError(problem)
        t = np.asarray(tour, dtype=np.int64)
        if self.matrix is not None:
            return int(self.dist(t, np.roll(t, -1)).sum(dtype=np.int64))
        visited = self.device_coords[t]      # one gather; the next city's row is the roll
        return int(coord_distance(self.weight_type, visited, np.roll(visited, -1, axis=0))
                   .sum(dtype=np.int64))
