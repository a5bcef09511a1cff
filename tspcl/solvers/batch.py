"""Many small instances solved at once (kernels_cl/batch.cl): a work-group per instance.

An instance fits when it has MIN_CITIES to MAX_CITIES cities (beyond, pils' cells search
a tour with many work-groups at once, where one work-group would run its kicks one after
another), its tour fits one work-group's local memory (the bound pils' cells have,
:func:`tspcl.solvers.pils.longest_cell`: batch_search's arrays take fewer bytes a city
than pils_round's) and it has 2-D coordinates of a metric other than GEO.  Fitting instances are
solved in waves of at most WAVE_CITIES cities, grouped by metric and by size class (the
kernels are built for the class's largest instance, LOCAL_SIZES, so small instances take
little local memory and many run on a compute unit at once).  In a wave every instance
gets its candidate lists and a nearest-neighbour tour (batch_start), then launches of
``launch_kicks`` kicks each (batch_search: pils' iterated local search on the whole
tour, going on from kicked tours up to ``slack`` mean edges longer than the launch's
best, each launch ending on its best) until its kick budget is spent or the time limit
passes (checked between launches).  The tours stay on the device between launches and are read at the end;
their lengths are computed exactly here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..device import Runtime
from ..errors import UsageError
from ..instance import Instance
from ..params import param
from .base import check_count
from .localsearch import kick_budget
from .pils import BRIDGE_SCALE, MAX_MOVES, QUEUE_SLOTS, local_xy, longest_cell

MIN_CITIES = 8               # the search's moves need 8 cities (pils_search.h path_ils)
MAX_CITIES = 1024            # the largest instance a batch takes
WAVE_CITIES = 1 << 22        # cities one wave holds at most (packed coordinates: 64 MiB)
LOCAL_SIZES = (64, 128, 256, 512, MAX_CITIES)   # size classes (within the local bound)


@dataclass(frozen=True)
class BatchParams:
    """Many small instances at once, one work-group each: nearest-neighbour start, then
    pils' iterated local search on the whole tour in local memory."""

    kicks: str = param("20n", "kicks per instance: a count or a multiple of its n (20n)")
    launch_kicks: int = param(128, "kicks per instance per launch (the time limit is checked "
                              "between launches; a launch keeps one edge of the tour, which "
                              "the next one moves)")
    candidates: int = param(8, "nearest cities per city the search tries (1 to 16)")
    bridges: float = param(1.0, "share of the kicks that are double bridges; the others move "
                           "a chain next to a city near it")
    window: int = param(200, "cities a chain kick moves at most")
    walk: int = param(0, "steps of each random walk over the candidates that finds a kick's "
                      "cities (0: any city of the instance)")
    depth: int = param(6, "2-opt steps of the Lin-Kernighan chains (0: 2-opt and Or-opt only)")
    slack: float = param(4.0, "go on from a kicked tour up to this many mean edges (length / n) "
                         "longer than the launch's best (0: only from one no longer than "
                         "the current)")
    group: int = param(64, "work-items of an instance's work-group: 32, 64, 128 or 256")

    def __post_init__(self):
        kick_budget(self.kicks, 1)
        check_count("launch_kicks", self.launch_kicks, 1, 1 << 20)
        check_count("candidates", self.candidates, 1, 16)
        if not 0 <= self.bridges <= 1:
            raise UsageError(f"bridges must be a share from 0 to 1 (got {self.bridges})")
        check_count("window", self.window, 3, 65535)
        check_count("walk", self.walk, 0, 1000)
        check_count("depth", self.depth, 0, 16)
        if not 0 <= self.slack <= 100:
            raise UsageError(f"slack must be 0 to 100 mean edges (got {self.slack})")
        if self.group not in (32, 64, 128, 256):
            raise UsageError(f"group must be 32, 64, 128 or 256 (got {self.group!r})")


@dataclass(frozen=True)
class BatchTour:
    """One instance's outcome: its tour (0-based order), exact length and kicks run."""

    order: np.ndarray
    length: int
    kicks: int


def most_cities(rt: Runtime, p: BatchParams) -> int:
    """The most cities an instance may have to be solved in a batch on rt's device."""
    return min(MAX_CITIES, longest_cell(p.candidates, rt.limits.local_mem, True,
                                        min(p.group, rt.limits.max_work_group)))


def fits(inst: Instance, most: int) -> bool:
    """Whether the batch kernels solve ``inst`` (``most``: :func:`most_cities`)."""
    return local_xy(inst) and MIN_CITIES <= inst.n <= most


def size_class(n: int, most: int) -> int:
    """The L_MAX the kernels are built with for an instance of n cities."""
    return next((s for s in LOCAL_SIZES if n <= s <= most), most)


def waves(instances: list[Instance], most: int) -> list[list[int]]:
    """The indices of the instances, grouped by metric and size class (in first-seen
    order) and cut into waves of at most WAVE_CITIES cities (an instance's own index
    order kept)."""
    groups: dict = {}
    for i, inst in enumerate(instances):
        groups.setdefault((inst.metric_code, size_class(inst.n, most)), []).append(i)
    out = []
    for members in groups.values():
        wave, cities = [], 0
        for i in members:
            if wave and cities + instances[i].n > WAVE_CITIES:
                out.append(wave)
                wave, cities = [], 0
            wave.append(i)
            cities += instances[i].n
        out.append(wave)
    return out


def solve_batch(rt: Runtime, instances: list[Instance], p: BatchParams, seed: int = 1,
                time_limit: float | None = None) -> list[BatchTour]:
    """Solve every instance (each must fit: :func:`fits`), wave after wave; a wave stops
    after ``time_limit`` seconds too (checked between launches, counted once the wave's
    program is built).  Same seed, same device: same tours, and an instance's tour does
    not depend on the others in the batch."""
    most = most_cities(rt, p)
    for inst in instances:
        if not fits(inst, most):
            raise UsageError(f"{inst.name} (n={inst.n}, {inst.weight_type}) does not fit a "
                             f"batch on {rt.name} ({MIN_CITIES} to {most} cities with 2-D "
                             "coordinates, not GEO)")
    out: list = [None] * len(instances)
    for wave in waves(instances, most):
        tours = _solve_wave(rt, [instances[i] for i in wave], p, seed, time_limit, most)
        for i, tour in zip(wave, tours):
            out[i] = tour
    return out


def _solve_wave(rt: Runtime, wave: list[Instance], p: BatchParams, seed: int,
                time_limit: float | None, most: int) -> list[BatchTour]:
    """One wave: instances of one metric and size class, all resident on the device."""
    q = rt.queue
    group = min(p.group, rt.limits.max_work_group)
    defines = {"METRIC": wave[0].metric_code, "M": p.candidates,
               "L_MAX": size_class(max(inst.n for inst in wave), most), "WG": group,
               "QCAP": QUEUE_SLOTS, "LOCAL_XY": 1, "MAX_MOVES": MAX_MOVES, "LK_DEPTH": p.depth}
    start = rt.kernel("batch", "batch_start", defines)
    search = rt.kernel("batch", "batch_search", defines)
    if rt.work_group_size(search, group) < group:
        raise UsageError(f"group {group}: this device runs batch_search with fewer work-items")
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    sizes = np.array([inst.n for inst in wave], np.int64)
    first = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    coords = np.concatenate([inst.device_coords.reshape(-1, 2) for inst in wave])
    budget = np.array([kick_budget(p.kicks, n) for n in sizes], np.int64)
    done = np.zeros(len(wave), np.int64)
    total = int(first[-1])
    coords_buf, first_buf = rt.to_device(coords), rt.to_device(first)
    cand = rt.empty(2 * total * p.candidates)
    tours = rt.empty(4 * total)
    everyone = np.arange(len(wave), dtype=np.int32)
    start(q, (len(wave) * group,), (group,), coords_buf, first_buf, rt.to_device(everyone),
          cand, tours)
    launch = 0
    while True:
        # the first launch takes every instance (the descent), later ones those with kicks left
        active = everyone if launch == 0 else everyone[done < budget]
        if not len(active):
            break
        kicks = np.minimum(budget[active] - done[active], p.launch_kicks).astype(np.int32)
        search(q, (len(active) * group,), (group,), coords_buf, first_buf,
               rt.to_device(active), rt.to_device(kicks), cand, tours,
               seed & 0xFFFFFFFF, seed >> 32, launch, int(launch == 0), p.window, p.walk,
               round(p.bridges * BRIDGE_SCALE), round(p.slack * 1000))
        q.finish()
        done[active] += kicks
        launch += 1
        if deadline is not None and time.perf_counter() >= deadline:
            break
    orders = rt.read(tours, np.int32, total)
    return [BatchTour(order, inst.tour_length(order), int(k))
            for inst, order, k in zip(wave, np.split(orders.astype(np.int64), first[1:-1]), done)]


__all__ = ["BatchParams", "BatchTour", "MIN_CITIES", "fits", "most_cities", "solve_batch"]
