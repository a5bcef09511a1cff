"""MAX-MIN Ant System on the device (Skinderowicz 2020,
../shared/papers/skinderowicz2020-gpu-mmas.txt).

Six variants: next-node selection by parallel roulette wheel (rwm) or weighted reservoir
sampling (wrs), ants' tabu as list compression (lc), compact tabu (ct) or bitmask (bt),
with or without candidate lists (candidates, 32 by default).  An iteration is four launches
(kernels_cl/aco.cl aco_construct, kernels_cl/mmas.cl mmas_best (the best of
kernels_cl/best.h and the trail limits), mmas_trails, mmas_deposit), with the ants'
2-opt (kernels_cl/ant2opt.cl, section 5.7) after the construction when ls=2opt;
iterations run in batches (tspcl/solvers/device_loop.py) and the host reads the status
words (iteration best, global best, best since the last reset, best.py BestWord) after
each batch, the best tour only when it improved, and decides there whether the trails
are reset.
Same seed, same device: the same tours.  Across devices the float weights (pow, log,
the roulette's partial sums) may round differently, so tours may differ there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ..buffers import BufferPlan
from ..device import DeviceLimits, round_up
from ..errors import UsageError
from ..instance import Instance
from ..neighbors import CandidateParams
from ..params import param
from . import population_two_opt
from .population_two_opt import PopulationTwoOpt, PopulationTwoOptParams, candidate_count, two_opt_plan
from .base import MAX_BATCH, MAX_CANDIDATES, SolveContext, SolverSpec, check_count, shared_plan
from .best import BEST_DEFINES, BestOfBatch, BestWord, StepRun, best_plan
from .construct import NearestNeighborParams, nn_plan, run_nn
from .device_loop import Launch, enqueue_whole, run_device_loop

SELECTIONS = {"rwm": 0, "wrs": 1}          # ants.h SELECT_* (ant_defines)
TABUS = {"lc": 0, "ct": 1, "bt": 2}         # ants.h TABU_* (ant_defines)
VARIANTS = [f"{s}-{t}" for s in SELECTIONS for t in TABUS]
STORES = {"matrix": 0, "candidates": 1}   # aco.cl / mmas.cl W_*
SOURCES = {"iteration": 0, "global": 1, "restart": 2}  # mmas.cl SOURCE_*: the tour a deposit follows
DEPOSITS = ("auto", "iteration", "global", "schedule")
SCHEDULE_ITERATION, SCHEDULE_GLOBAL = 0.1, 0.1  # the authors' code with local search (see MmasParams)
LS_RESTART = 500
MATRIX_GROUP = 256


@dataclass(frozen=True)
class MmasParams:
    """Skinderowicz's GPU MAX-MIN Ant System: one work-group per ant, next cities by
    roulette wheel or reservoir sampling, three tabu kinds, an optional 2-opt."""

    RENAMED: ClassVar[dict] = {"cl": "candidates", "rho": "persistence",
                               "ls_neighbors": "ls_candidates"}

    variant: str = param("wrs-bt", "selection-tabu: rwm (roulette wheel) or wrs (reservoir "
                         "sampling), lc (list compression), ct (compact) or bt (bitmask)")
    iterations: int = param(1000, "colony iterations")
    ants: int = param(0, "ants per iteration (0: one per city)")
    persistence: float = param(0.5, "pheromone kept per iteration, in (0, 1) (the paper's rho)")
    alpha: float = param(1.0, "exponent of the pheromone")
    beta: float = param(2.0, "exponent of 1/distance")
    candidates: int = param(32, "candidate list length (0: every unvisited city at every step)")
    fallback: str = param("best", "next city once an ant's candidates are used up: best (the "
                          "unvisited city of the largest weight, as ACOTSP) or draw (among all)")
    deposit: str = param("auto", "the tour that lays pheromone: iteration best, global best, "
                         "schedule (the authors' code with local search: the restart best, "
                         "sometimes the iteration or global best) or auto (schedule with ls, "
                         "else iteration)")
    restart: int | None = param(None, "iterations without a better tour after which every trail "
                                "goes back to tau_max (0: never; default 500 with ls, never "
                                "without)")
    p_best: float = param(0.01, "Stuetzle and Hoos' limit parameter of tau_min")
    store: str = param("matrix", "pheromone: matrix (n x n, the paper's) or candidates (the "
                       "candidate edges only, O(n candidates) memory)")
    ls: str = param("none", "none, or 2opt on every ant's tour (section 5.7)")
    ls_candidates: int = param(32, "2opt: nearest cities per city it tries")
    ls_moves: str = param("best", "2opt: the best move of each chunk of cities (the paper's "
                          "round) or every one whose edges are still in the tour (chunk)")
    threads: int = param(0, "work-items per ant (0: the rule of ant_group_size)")
    batch: int = param(10, "iterations between two reads of the status")

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise UsageError(f"variant must be one of {', '.join(VARIANTS)} (got {self.variant!r})")
        check_count("iterations", self.iterations)
        check_count("ants", self.ants, note=", 0 for one per city")
        if not 0.0 < self.persistence < 1.0:
            raise UsageError(f"persistence, the pheromone kept per iteration, must be in (0, 1) "
                             f"(got {self.persistence})")
        if self.alpha < 0 or self.beta < 0:
            raise UsageError("alpha and beta must not be negative")
        check_count("candidates", self.candidates, 0, MAX_CANDIDATES, note=", 0 for no candidate lists")
        if self.deposit not in DEPOSITS:
            raise UsageError(f"deposit must be one of {', '.join(DEPOSITS)} (got {self.deposit!r})")
        if self.restart is not None:
            check_count("restart", self.restart, note=", 0 for never")
        if self.fallback not in ("best", "draw"):
            raise UsageError(f"fallback must be best or draw (got {self.fallback!r})")
        if not 0.0 < self.p_best < 1.0:
            raise UsageError(f"p_best must be in (0, 1) (got {self.p_best})")
        if self.store not in STORES:
            raise UsageError(f"store must be matrix or candidates (got {self.store!r})")
        if self.store == "candidates" and self.candidates == 0:
            raise UsageError("store=candidates keeps the pheromone of candidate edges: it needs "
                             "candidates > 0")
        if self.ls not in ("none", "2opt"):
            raise UsageError(f"ls must be none or 2opt for mmas (got {self.ls!r})")
        check_count("ls_candidates", self.ls_candidates, 1, MAX_CANDIDATES)
        if self.ls_moves not in population_two_opt.MOVES:
            raise UsageError(f"ls_moves must be one of {', '.join(population_two_opt.MOVES)} "
                             f"(got {self.ls_moves!r})")
        check_count("threads", self.threads, note=", 0 for the rule of ant_group_size")
        if self.threads and (self.threads < 32 or self.threads & (self.threads - 1)):
            raise UsageError(f"threads must be 0 or a power of two of at least 32 (got {self.threads})")
        check_count("batch", self.batch, 1, MAX_BATCH)

    @property
    def deposit_rule(self) -> str:
        if self.deposit == "auto":
            return "schedule" if self.ls != "none" else "iteration"
        return self.deposit

    @property
    def restart_after(self) -> int:
        if self.restart is None:
            return LS_RESTART if self.ls != "none" else 0
        return self.restart

    def effective(self, n: int) -> "MmasParams":
        """As a run on n cities uses them: its ants and candidate list length (the colony
        takes them from here), deposit rule and restart period."""
        return replace(self, ants=self.ants or n, candidates=min(self.candidates, max(n - 1, 1)),
                       deposit=self.deposit_rule, restart=self.restart_after)

    def deposit_source(self, seed: int, iteration: int) -> str:
        """The tour this iteration's deposit follows (drawn from (seed, iteration), so the
        same run draws the same)."""
        rule = self.deposit_rule
        if rule != "schedule":
            return rule
        use_iteration, use_global = np.random.default_rng([seed, iteration]).random(2)
        if use_iteration < SCHEDULE_ITERATION:
            return "iteration"
        return "global" if use_global < SCHEDULE_GLOBAL else "restart"

    @property
    def selection(self) -> str:
        return self.variant.split("-")[0]

    @property
    def tabu(self) -> str:
        return self.variant.split("-")[1]

    @property
    def two_opt(self) -> PopulationTwoOptParams:
        """The ants' 2-opt of ls=2opt: its defaults with ls_candidates and ls_moves."""
        return PopulationTwoOptParams(candidates=self.ls_candidates, moves=self.ls_moves)


def ant_defines(tabu: str, selection: str = "wrs") -> dict:
    """ants.h's defines: the tabu TABU and selection SELECT, and every code TABU_* and
    SELECT_* they are compared with."""
    return {"TABU": TABUS[tabu], "SELECT": SELECTIONS[selection],
            **{f"TABU_{name.upper()}": code for name, code in TABUS.items()},
            **{f"SELECT_{name.upper()}": code for name, code in SELECTIONS.items()}}


def store_defines(store: str, cl: int) -> dict:
    """aco.cl's and mmas.cl's defines of the pheromone store: the stores' codes
    (W_MATRIX, W_CANDIDATES), WEIGHTS, and CL where the store is the candidate edges."""
    return {**{f"W_{name.upper()}": code for name, code in STORES.items()}, "WEIGHTS": STORES[store],
            **({"CL": cl} if store == "candidates" else {})}


def program_defines(store: str, cl: int) -> dict:
    """mmas.cl's defines: the store's (store_defines), the deposit sources SOURCE_* and
    the status words B_* (best.py)."""
    sources = {f"SOURCE_{name.upper()}": code for name, code in SOURCES.items()}
    return {**store_defines(store, cl), **sources, **BEST_DEFINES}


def tabu_bytes(tabu: str, n: int) -> int:
    """Local memory of an ant's tabu (the paper's Table 1, 16-bit nodes for lc and ct)."""
    return {"lc": 4 * n, "ct": 2 * n, "bt": 4 * (-(-n // 32))}[tabu]


def scratch_bytes(threads: int, cl: int = 0, kept: int = 0) -> int:
    """Local memory of the selection and the length: per work-item three floats (RWM's
    scan and the shares' sums) or a long (the length), RWM's chosen node and the `kept`
    slot weights of RWM's draw (aco.cl RWM_KEEP); at least WRS's eight accumulator words,
    the nodes of its cl list slots (ants.h list_winner) and a node per work-item (ants.h
    group_least_node)."""
    return max(12 * threads + 4 + 4 * kept, 4 * (8 + cl + threads))


RWM_SMALL = 1500
"""Cities below which RWM without lists runs 64 work-items per ant (ant_group_size) and
keeps every slot's weight in local memory (rwm_kept_slots)."""


def rwm_kept_slots(n: int, cl: int, fallback: str) -> int:
    """The slots whose weights an RWM draw keeps in local memory (aco.cl RWM_KEEP): the
    list's cl when a used-up list takes the best city, else every city below RWM_SMALL,
    else none.  Measured on the H100 (docs/notebook/mmas.md): kept, pr1002 without lists took
    1.91 ms instead of 2.09; n floats per ant cost more than the reloads they save from
    rl1889 up (fl3795 rwm-ct 48.7 -> 70.0 ms, rl1889 rwm-lc 8.4 -> 9.2)."""
    if cl and fallback == "best":
        return cl
    return n if n < RWM_SMALL else 0


def ant_group_size(n: int, max_group: int, cl: int, selection: str) -> int:
    """Work-items per ant, a power of two of at least 32 within the device's limit: with
    candidate lists, the power of two at or above cl (one slot per work-item, 32 for cl
    32); without them, about n/4 up to 128, or up to 64 for RWM below 1,500 cities.
    Measured (docs/notebook/mmas.md, work-group sweeps): with cl 32, 32 beat 64 everywhere;
    without cl, 128 was best or within 5 % of the best from d198 to fl3795 (H200), 32 up
    to 2.7x slower, 256 up to 1.7x; RWM with its weights kept in local memory (H100) ran
    faster with 64 than with 128 on pcb442 to pcb1173 (pcb1173 2.54 against 3.14 ms),
    slower on rl1889 (9.6 against 9.2 ms)."""
    if cl:
        want = 1 << max(5, (cl - 1).bit_length())
    else:
        cap = 6 if selection == "rwm" and n < RWM_SMALL else 7
        want = 1 << max(5, min(cap, (max(n // 4, 1) - 1).bit_length()))
    return max(32, min(want, 1 << (max_group.bit_length() - 1)))


def fitting_variants(n: int, local_mem: int, threads: int, cl: int = 0) -> list[str]:
    return [v for v in VARIANTS
            if tabu_bytes(v.split("-")[1], n) + scratch_bytes(threads, cl) + 64 <= local_mem]


def colony_plan(n: int, p: MmasParams) -> BufferPlan:
    """DeviceColony's own buffers on n cities: the pheromone store's trails, heuristic
    and weights (and WRS's inverse weights), a cell per candidate edge with
    store=candidates, else per city pair; the candidate edges' weights copied next to the
    lists (matrix store with lists), or the one element the kernels get for lists
    without them; the ants' tours and lengths; the trail limits."""
    used = p.effective(n)
    ants, cl = used.ants, used.candidates
    cells = n * (cl if p.store == "candidates" else n)
    plan = BufferPlan().add("tau", np.float32, cells).add("heur", np.float32, cells)
    plan = plan.add("weight", np.float32, cells)
    if p.selection == "wrs":
        plan = plan.add("inv_weight", np.float32, cells)
    if not cl:
        plan = plan.add("no_candidates", np.int32, 0)
    elif p.store == "matrix":
        plan = plan.add("list_weight", np.float32, n * cl)
    return (plan.add("tours", np.int32, ants * n).add("lengths", np.int64, ants)
            .add("limits", np.float64, 2))


class DeviceColony:
    """The device side of one MMAS run: matrices, tours, status and limits (its own
    buffers `colony_plan`'s)."""

    def __init__(self, ctx: SolveContext, p: MmasParams, ls: PopulationTwoOptParams | None = None):
        """`ls`: the 2-opt's launch shape when p.ls is '2opt' (default: its defaults with
        p.ls_candidates)."""
        rt, inst = ctx.rt, ctx.inst
        n = inst.n
        self.ctx, self.rt, self.n, self.p = ctx, rt, n, p
        used = p.effective(n)
        self.ants = used.ants
        self.cl = cl = used.candidates
        bufs = colony_plan(n, p).allocate(rt)
        self.cand = ctx.candidates(CandidateParams("knn", cl)).cities if cl else bufs.no_candidates
        store = store_defines(p.store, cl)
        # RWM keeps its slots' weights in local memory for the owner's walk where they fit
        # beside the tabu at the largest group the rule or `threads` asks for
        want = p.threads or ant_group_size(n, rt.limits.max_work_group, cl, p.selection)
        kept = rwm_kept_slots(n, cl, p.fallback) if p.selection == "rwm" else 0
        if tabu_bytes(p.tabu, n) + scratch_bytes(want, cl, kept) + 64 > rt.limits.local_mem:
            kept = 0
        self.kept = kept
        defines = {**ant_defines(p.tabu, p.selection), "CL": cl,
                   "FALLBACK_BEST": int(p.fallback == "best"), "RWM_KEEP": int(kept > 0), **store}
        self.construct_k = ctx.dinst.kernel("aco", "aco_construct", **defines)
        max_group = min(rt.limits.max_work_group, self.construct_k.get_work_group_info(
            rt.cl.kernel_work_group_info.WORK_GROUP_SIZE, rt.device))
        self.group = p.threads or ant_group_size(n, max_group, cl, p.selection)
        if self.group > max_group:
            raise UsageError(f"threads={self.group} exceeds the device's {max_group} work-items per ant")
        need = tabu_bytes(p.tabu, n) + scratch_bytes(self.group, cl, kept) + 64
        if need > rt.limits.local_mem or (p.tabu in ("lc", "ct") and n >= 2**16):
            fit = [v for v in fitting_variants(n, rt.limits.local_mem, self.group, cl)
                   if n < 2**16 or v.endswith("bt")]
            raise UsageError(
                f"the {p.tabu} tabu of {n} cities needs {need} bytes of local memory per ant "
                f"but {rt.name} has {rt.limits.local_mem}; variants that fit: "
                f"{', '.join(fit) or 'none'}")
        self.k = {name: ctx.dinst.kernel("mmas", name, **program_defines(p.store, cl)) for name in
                  ("mmas_heuristic", "mmas_trails", "mmas_deposit", "mmas_best", "mmas_list_weights")}
        self.cells = n * (cl if p.store == "candidates" else n)
        self.tau, self.heur, self.weight = bufs.tau, bufs.heur, bufs.weight
        self.inv_weight = bufs.inv_weight if p.selection == "wrs" else None
        self.drawn = self.inv_weight if p.selection == "wrs" else self.weight  # what selection reads
        # the candidate edges' weights next to the lists (aco.cl): the store itself with
        # store=candidates, a copy refreshed every iteration with the matrix
        self.copy_list_weights = bool(cl) and p.store == "matrix"
        self.list_weight = bufs.list_weight if self.copy_list_weights else self.drawn
        self.tours, self.lengths, self.limits = bufs.tours, bufs.lengths, bufs.limits
        self.best = BestOfBatch(ctx, self.ants, restart=True, kernel=self.k["mmas_best"])
        self.ls = PopulationTwoOpt(ctx, self.ants, ls or p.two_opt) if p.ls == "2opt" else None

    def start(self, nn_length: int) -> list:
        """Limits from the NN tour, every trail at tau_max, the heuristic matrix."""
        rt, p, n = self.rt, self.p, self.n
        tau_max = 1.0 / ((1.0 - p.persistence) * nn_length)
        p_dec = p.p_best ** (1.0 / n)
        tau_min = min(tau_max, tau_max * (1.0 - p_dec) / ((n / 2.0 - 1.0) * p_dec)) if n > 2 else tau_max
        rt.cl.enqueue_copy(rt.queue, self.limits, np.array([tau_min, tau_max]))
        self.best.reset()
        cells = round_up(self.cells, MATRIX_GROUP)
        return [self.k["mmas_heuristic"](rt.queue, (cells,), (MATRIX_GROUP,), *self.ctx.dinst.dist_args,
                                         self.cand, p.beta, self.heur),
                self._trails(evaporate=False), *self._list_weights()]

    def _list_weights(self) -> list:
        if not self.copy_list_weights:
            return []
        n, cl = self.n, self.cl
        return [self.k["mmas_list_weights"](self.rt.queue, (round_up(n * cl, MATRIX_GROUP),), (MATRIX_GROUP,),
                                            n, cl, self.cand, self.drawn,
                                            self.list_weight)]

    def _trails(self, evaporate: bool):
        rt, p = self.rt, self.p
        return self.k["mmas_trails"](rt.queue, (round_up(self.cells, MATRIX_GROUP),), (MATRIX_GROUP,),
                                     self.cells, self.tau, self.heur, self.weight, self.inv_weight,
                                     self.limits, p.persistence, p.alpha, int(evaporate))

    def iteration(self, it: int, seed: int, reset: bool = False) -> list:
        """Enqueue one iteration (`launches`): its events in order."""
        return enqueue_whole(self.launches(it, seed, reset))

    def launches(self, it: int, seed: int, reset: bool = False) -> list:
        """One iteration as launches (device_loop.Launch): construction (a unit an ant),
        the ants' 2-opt if any (a unit a tour), best, evaporation and deposit (with
        `reset`: every trail back to tau_max, no deposit, the best since the last reset
        forgotten), the list weights' copy with the matrix store and cl."""
        p, n = self.p, self.n
        launches = [Launch(self.ants, lambda first, count: [self._construct(it, seed, first, count)])]
        if self.ls:
            launches.append(self.ls.launch(self.tours, self.lengths))
        best = self.best
        launches.append(Launch.whole(lambda: [best.enqueue(self.lengths, self.tours, it, self.limits,
                                                           p.persistence, p.p_best)]))
        launches.append(Launch.whole(lambda: [self._trails(evaporate=not reset)]))
        if reset:
            launches.append(Launch.whole(lambda: [best.forget_restart(it)]))
        else:
            source = SOURCES[p.deposit_source(seed, it)]
            launches.append(Launch.whole(lambda: [self.k["mmas_deposit"](
                self.rt.queue, (round_up(n, 64),), (64,), n, self.tau, self.heur, self.weight,
                self.inv_weight, self.limits, best.status, self.tours, best.best_tour, best.restart_tour,
                source, p.alpha, self.cand)]))
        if self.copy_list_weights:
            launches.append(Launch.whole(self._list_weights))
        return launches

    def _construct(self, it: int, seed: int, first: int, count: int):
        """Enqueue the tours of ants first to first + count - 1 of iteration `it`."""
        rt, p, n, lm = self.rt, self.p, self.n, self.rt.cl.LocalMemory
        g = self.group
        tabu = {"lc": [lm(2 * n), lm(2 * n), lm(4)], "ct": [lm(2 * n), lm(4)],
                "bt": [lm(tabu_bytes("bt", n))]}[p.tabu]  # aco.cl TABU_DECL
        return self.construct_k(
            rt.queue, (count * g,), (g,), *self.ctx.dinst.dist_args, self.cand, self.list_weight,
            self.drawn, p.beta, p.alpha, self.limits, seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF, it,
            self.tours, self.lengths, *tabu, lm(scratch_bytes(g, self.cl, self.kept)),
            global_offset=(first * g,) if first else None)


def restart_due(p: MmasParams, it: int, status: np.ndarray, last_reset: int) -> bool:
    """Whether iteration `it` resets the trails: `p.restart_after` iterations without a
    better tour since the last reset (at `last_reset`), and at least as many iterations
    left as have passed since then."""
    return bool(p.restart_after and it - status[BestWord.RESTART_ITER] >= p.restart_after
                and it - last_reset <= p.iterations - it)


def run_mmas(ctx: SolveContext, p: MmasParams) -> None:
    """NN tour (for the initial limits), then `iterations` colony iterations; between
    batches, the restart rule of :class:`MmasParams` picks the next iteration to reset."""
    inst = ctx.inst
    run_nn(ctx, NearestNeighborParams())
    if inst.n < 4 or p.iterations == 0 or ctx.best_length == 0:
        return  # a tour of length 0 (every city at one point) is optimal, and tau_max 1 / 0
    if ctx.stop(0):
        return  # the time limit is spent: the colony (n x n matrices) is not built
    colony = DeviceColony(ctx, p)
    ctx.timed(colony.start(ctx.best_length))
    reset_at, last_reset = -1, 0

    def plan_reset(it: int, status: np.ndarray) -> None:
        nonlocal reset_at, last_reset
        if restart_due(p, it, status, last_reset):
            reset_at = last_reset = it

    run_device_loop(ctx, StepRun(ctx, colony.best, p.iterations, p.batch,
                                 lambda it, seed: colony.launches(it, seed, it == reset_at), plan_reset))


def list_lengths(*lengths: int) -> tuple[int, ...]:
    """The candidate lists a run builds for these lengths (cities a city, 0 for none):
    each length once, as SolveContext.candidates builds each knn list once."""
    return tuple(dict.fromkeys(k for k in lengths if k))


def _buffers(inst: Instance, p: MmasParams, limits: DeviceLimits | None = None) -> BufferPlan:
    """The run's buffers: the instance's, the candidate lists of the NN tour, the colony
    and the ants' 2-opt, the NN tour's, the colony's own (`colony_plan`), its best's and
    its 2-opt's."""
    n = inst.n
    used = p.effective(n)
    plan = nn_plan(n).merge(colony_plan(n, p)).merge(best_plan(n, restart=True))
    two_opt_list = 0
    if p.ls == "2opt":
        plan = plan.merge(two_opt_plan(n, used.ants, p.two_opt, limits))
        two_opt_list = candidate_count(n, p.two_opt)
    lists = list_lengths(NearestNeighborParams().candidates, used.candidates, two_opt_list)
    return shared_plan(inst, *lists).merge(plan)


def _cities_fit(inst: Instance) -> str | None:
    if inst.n * 64 >= 2**31:
        return f"mmas handles up to {2**31 // 64 - 1} cities"
    return None


SOLVERS = [
    SolverSpec("mmas", "MAX-MIN Ant System: one work-group per ant, RWM or WRS selection, "
               "LC/CT/BT tabu, candidate lists (32 candidates), store=candidates for O(n candidates) "
               "memory", MmasParams, run_mmas, _buffers,
               deterministic=False, unsupported=_cities_fit, budget_param="iterations",
               memory_hint="-p store=candidates (pheromone on the candidate edges only) or fewer ants "
                           "(e.g. --ants 256)",
               repro_params=(*(MmasParams(variant=v) for v in VARIANTS),
                             MmasParams(variant="rwm-bt", candidates=0),
                             MmasParams(variant="rwm-bt", ls="2opt")),
               effective=lambda inst, p: p.effective(inst.n)),
]
