"""Ant Colony System on the device (Skinderowicz 2016,
../shared/papers/skinderowicz2016-gpu-acs.txt).

Three variants (the paper's Table 1), all in kernels_cl/acs.cl:

* ``gpu`` (ACS-GPU): one launch per construction step for every ant, the local updates
  by compare-and-swap so that none is lost, into a second copy of the matrix that the
  next step reads (no ant reads a trail while it is written); the updates are all the
  same map, so their order does not matter and a run is reproducible;
* ``alt`` (ACS-GPU-Alt): whole tours in one launch, local updates by plain reads and
  writes: ants race on shared edges and some updates are lost, as in the paper, so a
  run is not bit-reproducible;
* ``spm`` (ACS-GPU-SPM): as ``alt`` over the selective pheromone memory of section 3.2,
  ``spm_size`` edges per city, each with its eta^beta (O(n s) memory instead of n x n);
  its greedy step also weighs the current city's stored edges outside the candidate
  list, as the authors' code does (without it runs stalled, docs/notebook/acs.md); racy too.

The ants read the trails fresh from L2 by default (``reads``), as the paper's Kepler GPU
did: through the H100's L1 an ant could miss other SMs' ants' local updates for as long
as a line stayed there, and alt and spm found worse tours (docs/notebook/acs.md, Table 9).
acs-gpu's step launches are enqueued without events (tspcl/launches.py).

An iteration is the construction (and with ls=2opt the ants' 2-opt of
kernels_cl/ant2opt.cl, shared with MMAS), the iteration's and global best (kernels_cl/best.cl,
tspcl/solvers/best.py) and the global update along the global best (eq. 4); iterations
run in batches between status reads (tspcl/solvers/device_loop.py).  The initial pheromone is tau0 = 1 / (n L_nn) (Dorigo
and Gambardella), also the selective memory's tau_min.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ..buffers import BufferPlan
from ..device import DeviceLimits, round_up
from ..errors import UsageError
from ..instance import Instance
from ..launches import enqueue_repeated
from ..neighbors import CandidateParams
from ..params import param
from .population_two_opt import PopulationTwoOpt, PopulationTwoOptParams, candidate_count, two_opt_plan
from .base import MAX_BATCH, MAX_CANDIDATES, SolveContext, SolverSpec, check_count, shared_plan
from .best import BEST_DEFINES, BestOfBatch, StepRun, best_plan
from .construct import NearestNeighborParams, nn_plan, run_nn
from .device_loop import Launch, enqueue_whole, run_device_loop
from .mmas import ant_defines, list_lengths, program_defines

VARIANTS = ("gpu", "alt", "spm")
READS = {"fresh": 1, "cached": 0}  # acs.cl FRESH_READS
STORES = {"matrix": 0, "spm": 1}   # acs.cl STORE_*
EMPTY_NODE = 0xFFFFFFFF            # acs.cl: a selective memory slot without an edge
SPM_EDGE_BYTES = 16                # acs.cl: a stored edge (node, tau, eta^beta, 0)
GROUP = 32                        # work-items per ant: one per candidate (cl 32)


def scratch_bytes(spm: bool, cl: int, spm_size: int) -> int:
    """An ant's local scratch, as acs.cl lays it out: the reductions' GROUP longs, over
    the selective memory the copy of the current city's stored edges (step_ring: a
    (node, trail) pair and an eta^beta each), then step_least's words (the candidates',
    and over the selective memory the stored edges'), then step_offer's candidates and
    their eta^beta, each part an even count of words."""
    def even(words: int) -> int:
        return words + words % 2
    ring = even(3 * spm_size) if spm else 0
    return 8 * GROUP + 4 * (ring + even(cl) + (even(spm_size) if spm else 0) + 2 * even(cl))


@dataclass(frozen=True)
class AcsParams:
    """Skinderowicz's GPU Ant Colony System: one work-group per ant, candidate sets,
    local and global pheromone updates, optionally the selective pheromone memory."""

    RENAMED: ClassVar[dict] = {"cl": "candidates", "rho": "local_evaporation",
                               "alpha": "global_evaporation", "k": "local_update_every",
                               "ls_neighbors": "ls_candidates"}

    variant: str = param("spm", "gpu (a launch per step, atomic local updates), alt (one launch, "
                         "racy local updates) or spm (alt over the selective pheromone memory)")
    iterations: int = param(1000, "colony iterations")
    ants: int = param(0, "ants per iteration (0: one per city; the paper recommends 256)")
    q0: float | None = param(None, "probability of the greedy choice (default (n - 20) / n, the "
                             "paper's)")
    beta: float = param(3.0, "exponent of 1/distance")
    local_evaporation: float = param(0.01, "evaporation of the local update, in (0, 1) (the "
                                     "paper's rho, eq. 3)")
    global_evaporation: float = param(0.2, "evaporation of the global update, in (0, 1) (the "
                                      "paper's alpha, eq. 4)")
    local_update_every: int = param(1, "a local update after every k-th edge of an ant (the "
                                    "paper's k, section 4.2)")
    candidates: int = param(32, f"candidate set size (at most {GROUP}, a work-item each)")
    spm_size: int = param(8, f"spm: edges kept per city (at most {GROUP})")
    ls: str = param("none", "none, or 2opt on every ant's tour (the MMAS ants' 2-opt)")
    ls_candidates: int = param(32, "2opt: nearest cities per city it tries")
    reads: str = param("fresh", "trail reads: fresh (from L2, where every update lands) or "
                       "cached (through L1: ants may miss each other's updates)")
    batch: int = param(10, "iterations between two reads of the status")

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise UsageError(f"variant must be one of {', '.join(VARIANTS)} for acs (got {self.variant!r})")
        check_count("iterations", self.iterations)
        check_count("ants", self.ants, note=", 0 for one per city")
        if self.q0 is not None and not 0.0 <= self.q0 <= 1.0:
            raise UsageError(f"q0 must be in [0, 1] (got {self.q0})")
        if self.beta < 0:
            raise UsageError(f"beta must not be negative (got {self.beta})")
        for name in ("local_evaporation", "global_evaporation"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise UsageError(f"{name} must be in (0, 1) (got {getattr(self, name)})")
        check_count("local_update_every", self.local_update_every, 1, note=", the local update period")
        if not 1 <= self.candidates <= GROUP:
            raise UsageError(f"candidates must be 1 to {GROUP} (a candidate per work-item; "
                             f"got {self.candidates})")
        if not 1 <= self.spm_size <= GROUP:
            raise UsageError(f"spm_size must be 1 to {GROUP} (a stored edge per work-item; got {self.spm_size})")
        if self.ls not in ("none", "2opt"):
            raise UsageError(f"ls must be none or 2opt for acs (got {self.ls!r})")
        check_count("ls_candidates", self.ls_candidates, 1, MAX_CANDIDATES)
        if self.reads not in READS:
            raise UsageError(f"reads must be fresh or cached for acs (got {self.reads!r})")
        check_count("batch", self.batch, 1, MAX_BATCH)

    def effective(self, n: int) -> "AcsParams":
        """As a run on n cities uses them (the colony takes them from here): its ants, q0
        and candidate list length."""
        q0 = self.q0 if self.q0 is not None else max(0.0, (n - 20) / n)
        return replace(self, ants=self.ants or n, q0=q0, candidates=min(self.candidates, max(n - 1, 1)))

    @property
    def two_opt(self) -> PopulationTwoOptParams:
        """The ants' 2-opt of ls=2opt: its defaults with ls_candidates."""
        return PopulationTwoOptParams(candidates=self.ls_candidates)


def host_defines(store: str) -> dict:
    """acs.cl's defines of the host's constants: the store STORE and the stores' codes
    STORE_*, EMPTY_NODE, the status words B_* (best.py), and ants.h's codes (the tabu is
    a bitmask)."""
    return {"STORE": STORES[store], **{f"STORE_{name.upper()}": code for name, code in STORES.items()},
            "EMPTY_NODE": f"{EMPTY_NODE:#x}u", **BEST_DEFINES, **ant_defines("bt")}


def beta_whole(beta: float) -> int:
    """acs.cl BETA_WHOLE: beta when it is a whole number up to 16, else -1 (pow())."""
    return int(beta) if float(beta).is_integer() and beta <= 16 else -1


def colony_plan(n: int, p: AcsParams) -> BufferPlan:
    """AcsColony's own buffers on n cities: the trails (the matrix, twice for gpu, or the
    selective memory's edges of SPM_EDGE_BYTES) and the selective memory's ring ends
    (one unused element without it), the candidate edges' eta^beta, the ants' tours and
    lengths, and for gpu the tabu bitmasks and the ants' steps between launches."""
    used = p.effective(n)
    ants, cl, words = used.ants, used.candidates, -(-n // 32)
    if p.variant == "spm":
        plan = BufferPlan().add("tau", np.uint32, SPM_EDGE_BYTES // 4 * n * p.spm_size)
    else:
        plan = BufferPlan().add("tau", np.float32, (2 if p.variant == "gpu" else 1) * n * n)
    plan = (plan.add("spm_tail", np.uint32, n if p.variant == "spm" else 0)
            .add("cand_heur", np.float32, n * cl).add("tours", np.int32, ants * n)
            .add("lengths", np.int64, ants))
    if p.variant == "gpu":
        plan = plan.add("visited", np.uint32, ants * words).add("ant_state", np.uint32, 4 * ants)
    return plan


class AcsColony:
    """The device side of one ACS run: pheromone, tours and the best's status (its own
    buffers `colony_plan`'s)."""

    def __init__(self, ctx: SolveContext, p: AcsParams, count_updates: bool = False):
        """`count_updates` (tests): every local update adds 1 instead of evaporating."""
        rt, n = ctx.rt, ctx.inst.n
        self.ctx, self.rt, self.n, self.p = ctx, rt, n, p
        used = p.effective(n)
        self.ants = used.ants
        self.cl = cl = used.candidates
        self.scratch_bytes = scratch_bytes(p.variant == "spm", cl, p.spm_size)
        need = 4 * (-(-n // 32)) + self.scratch_bytes + 64   # the tabu bitmask, the scratch
        if need > rt.limits.local_mem:
            most = 32 * ((rt.limits.local_mem - self.scratch_bytes - 64) // 4)
            raise UsageError(f"acs keeps an ant's visited cities as a bitmask in local memory: {n} cities "
                             f"need {need} bytes, {rt.name} has {rt.limits.local_mem} (up to {most} cities)")
        self.cand = ctx.candidates(CandidateParams("knn", cl)).cities
        store = "spm" if p.variant == "spm" else "matrix"
        defines = {"CL": cl, **host_defines(store), "SPM_S": p.spm_size,
                   "ATOMIC_UPDATE": int(p.variant == "gpu"), "COUNT_UPDATES": int(count_updates),
                   "FRESH_READS": READS[p.reads], "BETA_WHOLE": beta_whole(p.beta),
                   "SYMMETRIC": int(ctx.inst.symmetric), "UNROLL_HINTS": int(rt.limits.is_gpu)}
        names = ("acs_first", "acs_step", "acs_close") if p.variant == "gpu" else ("acs_construct",)
        self.k = {name: ctx.dinst.kernel("acs", name, **defines) for name in names + ("acs_global",)}
        self.k["mmas_heuristic"] = ctx.dinst.kernel("mmas", "mmas_heuristic", **program_defines("candidates", cl))
        # the matrix's trails (twice for gpu, acs.cl acs_step), or the selective memory's
        # (node, trail) pairs
        self.copies = 2 if p.variant == "gpu" else 1
        self.cells = n * (p.spm_size if store == "spm" else self.copies * n)
        bufs = colony_plan(n, p).allocate(rt)
        self.tau, self.spm_tail, self.cand_heur = bufs.tau, bufs.spm_tail, bufs.cand_heur
        self.tours, self.lengths = bufs.tours, bufs.lengths
        self.visited = bufs.visited if p.variant == "gpu" else None
        self.ant_state = bufs.ant_state if p.variant == "gpu" else None
        self.best = BestOfBatch(ctx, self.ants)
        self.tau0 = 0.0
        self.q0 = used.q0
        self.store = store
        self.ls = PopulationTwoOpt(ctx, self.ants, p.two_opt) if p.ls == "2opt" else None

    def start(self, nn_length: int, tau0: float | None = None) -> list:
        """Every trail at tau0 = 1 / (n L_nn) (or `tau0`), an empty selective memory,
        the candidate edges' eta^beta."""
        rt, p, n = self.rt, self.p, self.n
        self.tau0 = 1.0 / (n * nn_length) if tau0 is None else tau0
        cl = rt.cl
        if self.store == "spm":
            empty = np.array([EMPTY_NODE, np.float32(self.tau0).view(np.uint32), 0, 0], np.uint32)
            events = [cl.enqueue_fill_buffer(rt.queue, self.tau, empty, 0, SPM_EDGE_BYTES * self.cells),
                      cl.enqueue_fill_buffer(rt.queue, self.spm_tail, np.uint32(p.spm_size - 1), 0, 4 * n)]
        else:
            events = [cl.enqueue_fill_buffer(rt.queue, self.tau, np.float32(self.tau0), 0, 4 * self.cells)]
        self.best.reset()
        events.append(self.k["mmas_heuristic"](rt.queue, (round_up(n * self.cl, 256),), (256,),
                                               *self.ctx.dinst.dist_args, self.cand, p.beta, self.cand_heur))
        return events

    def _pher(self) -> tuple:
        return self.tau, self.spm_tail, self.tau0

    def iteration(self, it: int, seed: int) -> list:
        """Enqueue one iteration: construction, the best, the global update (events in
        that order)."""
        return self.construct(it, seed) + self.finish(it)

    def launches(self, it: int, seed: int) -> list:
        """One iteration as launches (device_loop.Launch): the construction's (`slices`),
        the best, the global update."""
        return self.slices(it, seed) + [Launch.whole(lambda: self.finish(it))]

    def finish(self, it: int) -> list:
        """Enqueue the iteration's and global best, then the global update (events)."""
        rt, n, best = self.rt, self.n, self.best
        return [best.enqueue(self.lengths, self.tours, it),
                self.k["acs_global"](rt.queue, (round_up(n, 64),), (64,), *self.ctx.dinst.dist_args,
                                     best.best_tour, best.status, *self._pher(), self.p.global_evaporation,
                                     self.copies, self.p.beta)]

    def construct(self, it: int, seed: int, step_events: bool = False) -> list:
        """Enqueue the ants' tours and lengths with their local updates, then the ants'
        2-opt if any (events; for gpu the per-step launches' too when `step_events`)."""
        return enqueue_whole(self.slices(it, seed, step_events))

    def slices(self, it: int, seed: int, step_events: bool = False) -> list:
        """The construction as launches (device_loop.Launch): for gpu the first cities,
        the n - 1 steps (a unit a step: the same launches in any slices) and the close;
        for alt and spm the whole tours (a unit an ant: a slice's ants update the trails
        that the next slice's read, as a device runs a launch's ants in waves); then the
        ants' 2-opt if any (a unit a tour).  gpu's steps are enqueued without events
        unless `step_events` or a slice (tspcl/launches.py)."""
        rt, p, n, lm = self.rt, self.p, self.n, self.rt.cl.LocalMemory
        ants, g = self.ants, GROUP
        key = (seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF, it)
        acs = (*self.ctx.dinst.dist_args, self.cand, self.cand_heur, *self._pher(), self.q0, p.beta)
        local_rule = (p.local_evaporation, self.tau0, p.local_update_every)
        tabu, scratch = lm(4 * (-(-n // 32))), lm(self.scratch_bytes)
        if p.variant == "gpu":
            step_k = self.k["acs_step"]
            step_args = (*acs, *local_rule, *key, self.tours, self.visited, self.ant_state, tabu, scratch)

            def steps(first: int, count: int) -> list:
                # count launches of one kernel with the same arguments (each ant keeps its
                # step), without events (their enqueue rate bound the iteration,
                # tspcl/launches.py) unless step_events or a slice of the steps
                step_k.set_args(*step_args)
                if step_events or count < n - 1:
                    return [rt.cl.enqueue_nd_range_kernel(rt.queue, step_k, (ants * g,), (g,))
                            for _ in range(count)]
                enqueue_repeated(rt, step_k, count, ants * g, g)
                return []

            launches = [
                Launch.whole(lambda: [self.k["acs_first"](rt.queue, (round_up(ants, 64),), (64,), n, ants,
                                                          *key, self.tours, self.visited, self.ant_state)]),
                Launch(n - 1, steps),
                Launch.whole(lambda: [self.k["acs_close"](rt.queue, (ants * g,), (g,), *self.ctx.dinst.dist_args,
                                                          self.tau, *local_rule, self.tours, self.lengths,
                                                          scratch)])]
        else:
            launches = [Launch(ants, lambda first, count: [self.k["acs_construct"](
                rt.queue, (count * g,), (g,), *acs, *local_rule, *key, self.tours, self.lengths, tabu,
                scratch, global_offset=(first * g,) if first else None)])]
        if self.ls:
            launches.append(self.ls.launch(self.tours, self.lengths))
        return launches


def run_acs(ctx: SolveContext, p: AcsParams) -> None:
    """NN tour (for tau0), then `iterations` colony iterations, in batches between
    status reads."""
    inst = ctx.inst
    run_nn(ctx, NearestNeighborParams())
    if inst.n < 4 or p.iterations == 0 or ctx.best_length == 0:
        return  # a tour of length 0 (every city at one point) is optimal, and tau0 1 / 0
    if ctx.stop(0):
        return  # the time limit is spent: the colony (its trails) is not built
    colony = AcsColony(ctx, p)
    ctx.timed(colony.start(ctx.best_length))
    run_device_loop(ctx, StepRun(ctx, colony.best, p.iterations, p.batch, colony.launches))


def _buffers(inst: Instance, p: AcsParams, limits: DeviceLimits | None = None) -> BufferPlan:
    """The run's buffers: the instance's, the candidate lists of the NN tour, the colony
    and the ants' 2-opt, the NN tour's, the colony's own (`colony_plan`), its best's and
    its 2-opt's."""
    n = inst.n
    used = p.effective(n)
    plan = nn_plan(n).merge(colony_plan(n, p)).merge(best_plan(n, restart=False))
    two_opt_list = 0
    if p.ls == "2opt":
        plan = plan.merge(two_opt_plan(n, used.ants, p.two_opt, limits))
        two_opt_list = candidate_count(n, p.two_opt)
    lists = list_lengths(NearestNeighborParams().candidates, used.candidates, two_opt_list)
    return shared_plan(inst, *lists).merge(plan)


def _cities_fit(inst: Instance) -> str | None:
    if inst.n * 64 >= 2**31:
        return f"acs handles up to {2**31 // 64 - 1} cities"
    return None


def _racy(p: AcsParams) -> str | None:
    if p.variant == "gpu":
        return None
    return (f"acs variant={p.variant} updates the pheromone without atomics while other ants read it "
            "(the paper's ACS-GPU-Alt), so its tours depend on the ants' timing")


SOLVERS = [
    SolverSpec("acs", "Ant Colony System: one work-group per ant, candidate sets of 32, variants "
               "gpu (per-step launches, atomic updates), alt (one launch, racy updates), spm "
               "(selective pheromone memory, O(n s))", AcsParams, run_acs, _buffers,
               deterministic=False, unsupported=_cities_fit, racy=_racy, budget_param="iterations",
               memory_hint="--variant spm (O(n) pheromone) or fewer ants (e.g. --ants 256)",
               repro_params=tuple(AcsParams(variant=v) for v in VARIANTS),
               effective=lambda inst, p: p.effective(inst.n)),
]
