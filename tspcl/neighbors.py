"""Candidate lists computed on the device (kernels_cl/neighbors.cl).

``knn``: the k nearest cities.  ``quadrant``: k/4 nearest from each quadrant around the
city, completed from the nearest overall where a quadrant is short (Fosin et al. 2013,
section 3, after Johnson & McGeoch).  Lists are ordered by (distance, index).  Planar
coordinate instances use a uniform grid (about two cities per cell), so the work is
about n * k, never n^2; EXPLICIT and GEO instances scan all cities (their distances are
not bounded by a planar grid), and EXPLICIT has no quadrants, so it always gets knn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .buffers import BufferPlan

from .device_instance import DeviceInstance
from .errors import UsageError

KINDS = ("knn", "quadrant")
CITIES_PER_CELL = 2.0


@dataclass(frozen=True)
class CandidateParams:
    """How candidate lists are built; Fosin et al. use quadrant lists with m = 40."""

    kind: str = "quadrant"
    k: int = 40

    def __post_init__(self):
        if self.kind not in KINDS:
            raise UsageError(f"neighbour kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if self.k < 1:
            raise UsageError(f"the candidate count must be at least 1 (got {self.k})")
        if self.kind == "quadrant" and self.k % 4:
            raise UsageError(f"quadrant lists take k per quadrant: k must be a multiple of 4 (got {self.k})")


@dataclass
class Candidates:
    """n x m candidate cities (int32, device buffer ``cities``) and their distances."""

    cities: object
    dists: object
    n: int
    m: int
    kind: str
    kernel_seconds: float

    def host(self, rt) -> tuple[np.ndarray, np.ndarray]:
        c = rt.read(self.cities, np.int32, self.n * self.m).reshape(self.n, self.m)
        d = rt.read(self.dists, np.int32, self.n * self.m).reshape(self.n, self.m)
        return c, d


def candidate_plan(n: int, k: int, name: str = "candidates") -> BufferPlan:
    """The buffers of one candidate list of k cities a city at most (build_candidates):
    the lists and their distances, the quadrant lists' scratch and the grid."""
    return (BufferPlan().add(name, np.int32, n * k).add(f"{name}_distances", np.int32, n * k)
            .add(f"{name}_scratch", np.int32, 4 * n * k).add(f"{name}_grid", np.int32, 4 * n))


def build_candidates(dinst: DeviceInstance, params: CandidateParams = CandidateParams()) -> Candidates:
    inst, rt = dinst.inst, dinst.rt
    n = inst.n
    m = min(params.k, max(n - 1, 0))
    kind = params.kind if (m == params.k and inst.has_coords) else "knn"
    if m == 0:
        empty = rt.empty(4)
        return Candidates(empty, empty, n, 0, kind, 0.0)
    events = []
    knn, knn_d = _search(dinst, nq=1, kq=m, events=events)
    if kind == "knn":
        cities, dists = knn, knn_d
    else:
        quad, quad_d = _search(dinst, nq=4, kq=m // 4, events=events)
        cities, dists = rt.empty(4 * n * m), rt.empty(4 * n * m)
        k = dinst.rt.kernel("neighbors", "fill_candidates",
                            {**dinst.defines, "NQ": 4, "KQ": m // 4})
        events.append(k(rt.queue, (_global(n),), None, n, quad, quad_d, knn, knn_d,
                        cities, dists))
    rt.queue.finish()
    secs = sum((e.profile.end - e.profile.start) * 1e-9 for e in events)
    return Candidates(cities, dists, n, m, kind, secs)


def _global(n: int, wg: int = 64) -> int:
    return -(-n // wg) * wg


def _search(dinst: DeviceInstance, nq: int, kq: int, events: list):
    inst, rt = dinst.inst, dinst.rt
    n = inst.n
    out, out_d = rt.empty(4 * n * nq * kq), rt.empty(4 * n * nq * kq)
    defines = {**dinst.defines, "NQ": nq, "KQ": kq}
    if inst.weight_type in ("EXPLICIT", "GEO"):
        plane = inst.device_coords if inst.has_coords else np.zeros((n, 2))
        k = rt.kernel("neighbors", "scan_candidates", defines)
        events.append(k(rt.queue, (_global(n),), None, *dinst.dist_args,
                        rt.to_device(np.ascontiguousarray(plane[:, :2])), out, out_d))
        return out, out_d
    grid = _grid(inst.coords[:, :2])
    k = rt.kernel("neighbors", "grid_candidates", defines)
    events.append(k(rt.queue, (_global(n),), None, *dinst.dist_args,
                    rt.to_device(grid.cell_start), rt.to_device(grid.cell_cities),
                    rt.to_device(grid.city_cell), grid.gx, grid.gy,
                    grid.cell, out, out_d))
    return out, out_d


@dataclass(frozen=True)
class Grid:
    gx: int
    gy: int
    cell: float
    city_cell: np.ndarray    # cell index (cx + cy * gx) of each city
    cell_cities: np.ndarray  # cities ordered by cell
    cell_start: np.ndarray   # gx * gy + 1 offsets into cell_cities


def _grid(xy: np.ndarray) -> Grid:
    """Bucket the cities into square cells of about CITIES_PER_CELL cities each."""
    n = len(xy)
    lo = xy.min(axis=0)
    w, h = (xy.max(axis=0) - lo).tolist()
    cells = max(1.0, n / CITIES_PER_CELL)
    if w > 0 and h > 0:
        cell = max((w * h / cells) ** 0.5, max(w, h) / cells)
    else:
        cell = max(w, h) / cells if max(w, h) > 0 else 1.0
    gx = min(int(w / cell) + 1, 4 * n + 1)
    gy = min(int(h / cell) + 1, 4 * n + 1)
    cx = np.minimum(((xy[:, 0] - lo[0]) / cell).astype(np.int64), gx - 1)
    cy = np.minimum(((xy[:, 1] - lo[1]) / cell).astype(np.int64), gy - 1)
    city_cell = (cx + cy * gx).astype(np.int32)
    order = np.argsort(city_cell, kind="stable").astype(np.int32)
    start = np.zeros(gx * gy + 1, np.int32)
    np.cumsum(np.bincount(city_cell, minlength=gx * gy), out=start[1:])
    return Grid(gx, gy, cell, city_cell, order, start)
