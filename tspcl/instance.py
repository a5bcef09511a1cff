"""The problem as the solvers see it: coordinates or a matrix, and exact distances.

Distances are the TSPLIB95 integer distances, computed vectorised in float64 exactly as
the TSPLIB reference formulas do (``nint(x) = (int)(x + 0.5)``).  The kernels compute the
same integers (``kernels_cl/distance.h``); ``tests/test_distance_kernel.py`` proves the
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
GEO_PI = 3.141592
GEO_RRR = 6378.388


def geo_radians(coords: np.ndarray) -> np.ndarray:
    """TSPLIB GEO: DDD.MM (degrees, minutes) to radians, degrees truncated toward zero."""
    deg = np.trunc(coords)
    minutes = coords - deg
    return GEO_PI * (deg + 5.0 * minutes / 3.0) / 180.0


def _nint(x: np.ndarray) -> np.ndarray:
    return (x + 0.5).astype(np.int64)


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
    d = np.abs(a - b)
    if weight_type in ("MAN_2D", "MAN_3D"):
        return _nint(d.sum(axis=-1))
    if weight_type in ("MAX_2D", "MAX_3D"):
        return _nint(d).max(axis=-1)
    sq = (d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1])
    if weight_type == "EUC_3D":
        sq = sq + d[..., 2] * d[..., 2]
    if weight_type == "ATT":
        r = np.sqrt(sq / 10.0)
        t = _nint(r)
        return np.where(t < r, t + 1, t)
    if weight_type == "CEIL_2D":
        return np.ceil(np.sqrt(sq)).astype(np.int64)
    return _nint(np.sqrt(sq))  # EUC_2D, EUC_3D


@dataclass(frozen=True, eq=False)
class Instance:
    """A TSP or ATSP instance with 0-based cities.

    Exactly one of ``coords`` (float64, n x 2 or n x 3, as in the file) and ``matrix``
    (int32, n x n, row = from, column = to) defines the distances; EXPLICIT instances may
    also carry ``display`` coordinates (DISPLAY_DATA_SECTION), used only for drawing and
    for coordinate-based helpers such as space-filling-curve construction.
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
            object.__setattr__(self, "matrix", np.ascontiguousarray(self.matrix, np.int32))
        if self.coords is not None:
            object.__setattr__(self, "coords", np.ascontiguousarray(self.coords, np.float64))
        if self.weight_type == "GEO":
            object.__setattr__(self, "_geo", geo_radians(self.coords))
        self._check_int32_range()

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
        """Why ``tour`` (0-based city order) is not a tour of this instance, or None."""
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

    def tour_length(self, tour) -> int:
        """Exact length (int) of the closed tour ``tour``; raises ValueError if invalid."""
        problem = self.tour_problem(tour)
        if problem is not None:
            raise ValueError(problem)
        t = np.asarray(tour, dtype=np.int64)
        return int(self.dist(t, np.roll(t, -1)).sum(dtype=np.int64))

    # ---- internal ------------------------------------------------------------------
    def _check_int32_range(self):
        """Kernels hold a distance in a 32-bit int; refuse data whose distances do not fit."""
        if self.matrix is not None or self.n == 0:
            return
        c = self.device_coords
        lo, hi = c.min(axis=0), c.max(axis=0)
        if self.weight_type != "GEO":
            span = coord_distance(self.weight_type, lo[None, :], hi[None, :])[0]
            if span > INT32_MAX // 2:
                raise DataError(self.source, None,
                                f"coordinates span {span}: distances would not fit in "
                                "32-bit integers (the kernels' distance type)")
