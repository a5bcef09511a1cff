"""Genetic algorithm on the device (Kang et al. 2016,
../shared/papers/kang2016-gpu-genetic-tsp.txt); kernels in kernels_cl/ga.cl.

A pool of `population` genes (tours from city 0) in `groups` groups of equal size (a
multiple of 4).  A generation, every group at once: the fixed-rival competition puts the
winners (the elites) in the first half of the group; the fixed-partner crossovers fill
the second half with offspring (crossover_tasks); a random 2-opt move mutates a
`mutation_rate` fraction of the offspring; every gene's length (a work-group per gene)
and the global best (kernels_cl/best.cl, tspcl/solvers/best.py); every `migration_interval`
generations each group's best goes over the worst gene of another group (a random
permutation without fixed points, drawn on the host from (seed, generation)).  The host
reads only the status (a few bytes) after each batch of generations
(tspcl/solvers/device_loop.py).

The crossovers SCX / BCSCX / ARX, jump indices, fixed rivals and partners, random 2-opt
mutation, hybrid and migrating groups follow the paper where it is explicit; where it is
silent or contradicts itself (offspring slots, rivals, start city, mutation, groups), the
choices made and what they measured are in docs/design/ga.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..buffers import BufferPlan
from ..device import round_up
from ..errors import UsageError
from ..instance import Instance
from ..params import param
from .population_two_opt import PopulationTwoOpt, PopulationTwoOptParams, candidate_count, two_opt_plan
from .base import MAX_BATCH, MAX_CANDIDATES, SolveContext, SolverSpec, check_count, shared_plan
from .best import BestOfBatch, StepRun, best_plan
from .construct import NearestNeighborParams, nn_plan, run_nn
from .device_loop import Launch, enqueue_whole, run_device_loop

SCX, BCSCX, ARX = 0, 1, 2      # the crossovers' codes (ga.cl's task kinds)
PROGRAM_DEFINES = {"SCX": SCX, "BCSCX": BCSCX, "ARX": ARX}   # ga.cl's build defines
CROSSOVERS = ("scx", "bcscx", "arx", "hybrid")
INITS = ("random", "2opt")
MUTATE = ("offspring", "all")
COMPETITIONS = ("pairs", "halves")
RANDOM_START = ("bcscx", "none", "all")
GENE_GROUP = 256               # work-items per gene (lengths, copies)
CROSSOVER_GROUP = 128          # work-items per offspring (set-up and rotation; one walks)
MEMORY_PARTS = 4               # ga_crossover's working memory in mem0..mem3
TASK_COLUMNS = ("parent_a", "parent_b", "kind", "pair", "slot")   # crossover_tasks' columns
POOL_CITIES = 4                # the fewest cities a pool is made for (run_ga)


def task_words(n: int) -> int:
    """An offspring's working memory in ints (ga_crossover's `words`): two records of 4
    ints and a position per city, the visited bits, a multiple of 4."""
    return (9 * n + (n + 31) // 32 + 3) & ~3


def tasks_per_part(tasks: int) -> int:
    """Tasks in each of ga_crossover's MEMORY_PARTS working-memory buffers."""
    return max(1, -(-tasks // MEMORY_PARTS))


def working_memory_bytes(tasks: int, n: int, m: int) -> list[int]:
    """Bytes of ga_crossover's mem0..mem3, tasks_per_part(tasks) tasks each; the first
    also holds the rows that ga_rotate_to_zero and ga_compete_pairs copy genes through
    (at most m)."""
    per = tasks_per_part(tasks)
    sizes = [4 * min(per, max(0, tasks - i * per)) * task_words(n) for i in range(MEMORY_PARTS)]
    sizes[0] = max(sizes[0], 4 * m * n)
    return [max(size, 4) for size in sizes]


@dataclass(frozen=True)
class GaParams:
    """Kang et al.'s GPU genetic algorithm: constructive crossovers, fixed-rival
    competition, a random 2-opt mutation, migrating groups (docs/design/ga.md: where the
    paper is silent)."""

    RENAMED: ClassVar[dict] = {"ls_neighbors": "ls_candidates"}

    crossover: str = param("hybrid", "scx, bcscx, arx or hybrid (half the offspring by BCSCX, "
                           "half by ARX)")
    population: int = param(2048, "genes in the pool (the paper's Tables 2 and 5)")
    groups: int = param(8, "islands of population / groups genes, a multiple of 4 each (the "
                        "paper's Table 4; 1: one pool)")
    generations: int = param(1000, "generations to run")
    mutation_rate: float = param(0.02, "fraction of the mutable genes given one random 2-opt "
                                 "move each generation")
    mutate: str = param("offspring", "genes that may mutate: offspring (the elites survive "
                        "unchanged) or all")
    migration_interval: int = param(10, "generations between migrations (0: never)")
    competition: str = param("pairs", "rivals: pairs (genes 2j and 2j + 1) or halves (j and j + "
                             "size / 2, the paper's text)")
    random_start: str = param("all", "crossovers that start from a random city rather than "
                              "city 0: all, bcscx or none")
    init: str = param("random", "start genes: random, or 2opt (random genes at 2-opt local "
                      "optima, the paper's Table 3)")
    ls_candidates: int = param(32, "init=2opt: nearest cities per city the 2-opt tries")
    batch: int = param(10, "generations between two reads of the status")

    def __post_init__(self):
        if self.crossover not in CROSSOVERS:
            raise UsageError(f"crossover must be one of {', '.join(CROSSOVERS)} (got {self.crossover!r})")
        check_count("population", self.population, 4)
        check_count("groups", self.groups, 1)
        if self.population % self.groups:
            raise UsageError(f"population ({self.population}) must split into groups ({self.groups}) of equal size")
        if self.population // self.groups < 4 or (self.population // self.groups) % 4:
            raise UsageError(f"every group needs a multiple of 4 genes, at least 4 (population "
                             f"{self.population}, groups {self.groups})")
        check_count("generations", self.generations)
        if not 0.0 <= self.mutation_rate <= 1.0:
            raise UsageError(f"mutation_rate must be in [0, 1] (got {self.mutation_rate})")
        if self.mutate not in MUTATE:
            raise UsageError(f"mutate must be offspring or all (got {self.mutate!r})")
        check_count("migration_interval", self.migration_interval, note=", 0 for never")
        if self.competition not in COMPETITIONS:
            raise UsageError(f"competition must be pairs or halves (got {self.competition!r})")
        if self.random_start not in RANDOM_START:
            raise UsageError(f"random_start must be bcscx, none or all (got {self.random_start!r})")
        if self.init not in INITS:
            raise UsageError(f"init must be random or 2opt (got {self.init!r})")
        check_count("ls_candidates", self.ls_candidates, 1, MAX_CANDIDATES)
        check_count("batch", self.batch, 1, MAX_BATCH)

    @property
    def size(self) -> int:
        return self.population // self.groups

    @property
    def two_opt(self) -> PopulationTwoOptParams:
        """init=2opt's search of the start genes."""
        return PopulationTwoOptParams(candidates=self.ls_candidates)


def task_count(p: GaParams) -> int:
    """The rows of crossover_tasks(p), counted without building them (memory plans come
    before anything population-sized): two for each of a group's size / 4 elite pairs."""
    return 2 * p.groups * (p.size // 4)


def crossover_tasks(p: GaParams) -> np.ndarray:
    """Rows (parent a, parent b, crossover, pair, offspring slot) of one generation
    (section 3.3): in every group of `size` genes the elites (slots below size / 2) pair
    up as (2q, 2q + 1), q < size / 4, and each pair fills two offspring slots,
    q + size / 2 and q + 3 size / 4.  ARX: its two children (the paper's slots).  SCX and
    BCSCX, which make one child: the children of (2q, 2q + 1) and (2q + 1, 2q + 2) (the
    last elite with the first), Algorithm 1's partners tau and tau + 1.  Hybrid: even
    pairs ARX, odd pairs BCSCX, so half the offspring each."""
    size, rows = p.size, []
    half, quarter = size // 2, size // 4
    for group in range(p.groups):
        base = group * size
        for q in range(quarter):
            kind = {"scx": SCX, "bcscx": BCSCX, "arx": ARX}.get(p.crossover, ARX if q % 2 == 0 else BCSCX)
            a, b, pair = base + 2 * q, base + 2 * q + 1, base + q
            rows.append((a, b, kind, pair, base + half + q))
            second = a if kind == ARX else base + (2 * q + 2) % half
            rows.append((b, second, kind, pair, base + size - quarter + q))
    return np.array(rows, np.int32).reshape(-1, 5)


def start_mask(p: GaParams) -> int:
    """ga_task_draws' random_start: bit `kind` set when that crossover starts anywhere."""
    return {"none": 0, "bcscx": 1 << BCSCX, "all": (1 << BCSCX) | (1 << ARX)}[p.random_start]


def migration_targets(groups: int, seed: int, generation: int) -> np.ndarray:
    """A random permutation of the groups without fixed points: group g's best goes to
    group targets[g]."""
    rng = np.random.default_rng([seed, generation, 7])
    while True:
        perm = rng.permutation(groups)
        if np.all(perm != np.arange(groups)):
            return perm.astype(np.int32)


class GenePool:
    """The device side of one GA run: genes, lengths, crossover tasks, best's status."""

    def __init__(self, ctx: SolveContext, p: GaParams):
        rt, n = ctx.rt, ctx.inst.n
        self.ctx, self.rt, self.n, self.p, self.m = ctx, rt, n, p, p.population
        names = ("ga_random_genes", "ga_rotate_to_zero", "ga_lengths", "ga_compete", "ga_compete_pairs",
                 "ga_compete_store", "ga_task_draws",
                 "ga_crossover", "ga_mutate", "ga_extremes", "ga_migrate_out", "ga_migrate_in")
        self.k = {name: ctx.dinst.kernel("ga", name, **PROGRAM_DEFINES) for name in names}
        # the planned buffers (pool_plan) as attributes: self.genes, self.lengths, ...
        vars(self).update(vars(pool_plan(n, p).allocate(rt)))
        tasks = crossover_tasks(p)
        self.tasks = len(tasks)
        self.task_cols = [getattr(self, f"task_{column}") for column in TASK_COLUMNS]
        for j, buf in enumerate(self.task_cols):
            rt.cl.enqueue_copy(rt.queue, buf, np.ascontiguousarray(tasks[:, j]))
        self.mem_parts = [getattr(self, f"mem{i}") for i in range(MEMORY_PARTS)]
        self.mem = self.mem_parts[0]  # also the rows genes are copied through
        self.best = BestOfBatch(ctx, self.m)
        self.gene_group = rt.work_group_size(self.k["ga_lengths"], GENE_GROUP)
        self.crossover_group = rt.work_group_size(self.k["ga_crossover"], CROSSOVER_GROUP)
        self.ls = PopulationTwoOpt(ctx, self.m, p.two_opt) if p.init == "2opt" else None

    def _key(self, seed: int) -> tuple:
        return seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF

    def start(self, seed: int) -> list:
        """The initial pool, random or at 2-opt local optima, and its best."""
        rt, n, m = self.rt, self.n, self.m
        self.best.reset()
        events = [self.k["ga_random_genes"](rt.queue, (round_up(m, 64),), (64,), n, m,
                                           *self._key(seed), self.genes)]
        if self.ls:
            events.append(self.ls.enqueue(self.genes, self.lengths))
            events.append(self.k["ga_rotate_to_zero"](rt.queue, (m * self.gene_group,), (self.gene_group,),
                                                      n, self.genes, self.mem))
        return events + self._measure(0)

    def _measure(self, generation: int) -> list:
        """Every gene's length, then the global best."""
        rt, m, g, lm = self.rt, self.m, self.gene_group, self.rt.cl.LocalMemory
        return [self.k["ga_lengths"](rt.queue, (m * g,), (g,), *self.ctx.dinst.dist_args, self.genes,
                                     self.lengths, lm(8 * g)),
                self.best.enqueue(self.lengths, self.genes, generation)]

    def generation(self, gen: int, seed: int) -> list:
        """Enqueue generation `gen` (`launches`): its events in order."""
        return enqueue_whole(self.launches(gen, seed))

    def launches(self, gen: int, seed: int) -> list:
        """Generation `gen` as launches (device_loop.Launch; it starts from measured
        lengths, ends measured): migration when due, competition, the tasks' draws, the
        crossover (a unit a task: no task reads a row that another writes), mutation,
        measure."""
        rt, p, n, m, g = self.rt, self.p, self.n, self.m, self.gene_group
        launches = []
        if p.migration_interval and p.groups > 1 and gen % p.migration_interval == p.migration_interval - 1:
            launches.append(Launch.whole(lambda: self._migrate(gen, seed)))
        a, b, kind, pair, out = self.task_cols
        launches.append(Launch.whole(lambda: self.compete() + [self.k["ga_task_draws"](
            rt.queue, (round_up(self.tasks, 64),), (64,), n, self.tasks, *self._key(seed), gen,
            start_mask(p), pair, kind, self.task_A, self.task_B, self.task_S)]))
        c = self.crossover_group
        launches.append(Launch(self.tasks, lambda first, count: [self.k["ga_crossover"](
            rt.queue, (count * c,), (c,), *self.ctx.dinst.dist_args, self.genes, self.genes,
            self.tasks, a, b, kind, self.task_A, self.task_B, self.task_S, out, *self.mem_parts,
            tasks_per_part(self.tasks), task_words(n), global_offset=(first * c,) if first else None)]))
        mutated = p.size // 2 if p.mutate == "offspring" else 0
        launches.append(Launch.whole(lambda: [self.k["ga_mutate"](
            rt.queue, (m * g,), (g,), n, p.size, mutated, p.mutation_rate, *self._key(seed), gen,
            self.genes)] + self._measure(gen + 1)))
        return launches

    def compete(self) -> list:
        """The fixed-rival competition of every group: the winners in the first half."""
        rt, p, n, g = self.rt, self.p, self.n, self.gene_group
        size, pairs = p.size, (p.groups * (p.size // 2) * g,)
        if p.competition == "halves":
            return [self.k["ga_compete"](rt.queue, pairs, (g,), n, size, self.genes, self.lengths)]
        return [self.k["ga_compete_pairs"](rt.queue, pairs, (g,), n, size, self.genes, self.lengths,
                                           self.mem, self.row_lengths),
                self.k["ga_compete_store"](rt.queue, pairs, (g,), n, size, self.mem, self.row_lengths,
                                           self.genes, self.lengths)]

    def _migrate(self, gen: int, seed: int) -> list:
        rt, p, n, g, lm = self.rt, self.p, self.n, self.gene_group, self.rt.cl.LocalMemory
        groups = p.groups
        rt.cl.enqueue_copy(rt.queue, self.group_target, migration_targets(groups, seed, gen))
        return [self.k["ga_extremes"](rt.queue, (groups * g,), (g,), p.size, self.lengths,
                                      self.group_best, self.group_worst, lm(8 * g), lm(4 * g)),
                self.k["ga_migrate_out"](rt.queue, (groups * g,), (g,), n, self.group_best, self.genes,
                                         self.lengths, self.rows, self.row_lengths),
                self.k["ga_migrate_in"](rt.queue, (groups * g,), (g,), n, self.group_target, self.group_worst,
                                        self.rows, self.row_lengths, self.genes, self.lengths)]


def run_ga(ctx: SolveContext, p: GaParams) -> None:
    """The initial pool, then `generations` generations in batches between status reads
    (below POOL_CITIES cities, the nearest-neighbour tour)."""
    if ctx.inst.n < POOL_CITIES:
        run_nn(ctx, NearestNeighborParams())
        return
    pool = GenePool(ctx, p)
    ctx.timed(pool.start(ctx.seed))
    ctx.improve(ctx.read_tour(pool.best.best_tour), 0)
    run_device_loop(ctx, StepRun(ctx, pool.best, p.generations, p.batch, pool.launches))


def pool_plan(n: int, p: GaParams) -> BufferPlan:
    """GenePool's buffers for n cities: the genes and their lengths; the crossover tasks'
    columns (TASK_COLUMNS, filled from crossover_tasks) and each generation's draws
    (switch points A and B, start city S); the crossover's working memory in
    MEMORY_PARTS parts; each group's best and worst gene and migration target; the
    migrants' rows and the row lengths (also ga_compete_pairs')."""
    m, g, tasks = p.population, p.groups, task_count(p)
    plan = BufferPlan().add("genes", np.int32, m * n).add("lengths", np.int64, m)
    for name in [*(f"task_{column}" for column in TASK_COLUMNS), "task_A", "task_B", "task_S"]:
        plan = plan.add(name, np.int32, tasks)
    for i, size in enumerate(working_memory_bytes(tasks, n, m)):
        plan = plan.add(f"mem{i}", np.int32, size // 4)
    return (plan.add("group_best", np.int32, g).add("group_worst", np.int32, g)
            .add("group_target", np.int32, g).add("rows", np.int32, g * n)
            .add("row_lengths", np.int64, max(g, m // 2)))


def _buffers(inst: Instance, p: GaParams, limits=None) -> BufferPlan:
    """The run's buffers: the pool's, the best tour's and, for init=2opt, the 2-opt
    search's and its candidate lists; below POOL_CITIES cities, nn's."""
    n = inst.n
    if n < POOL_CITIES:
        return shared_plan(inst, NearestNeighborParams().candidates).merge(nn_plan(n))
    plan = pool_plan(n, p).merge(best_plan(n, False))
    if p.init == "2opt":
        return (shared_plan(inst, candidate_count(n, p.two_opt)).merge(plan)
                .merge(two_opt_plan(n, p.population, p.two_opt, limits)))
    return shared_plan(inst).merge(plan)


def _fits(inst: Instance) -> str | None:
    if inst.n >= 2**30:
        return f"ga handles up to {2**30 - 1} cities"
    return None


SOLVERS = [
    SolverSpec("ga", "genetic algorithm: SCX, BCSCX, ARX or hybrid crossover over jump indices, fixed "
               "rivals and partners, random 2-opt mutation, islands with migration", GaParams, run_ga,
               _buffers, deterministic=False, unsupported=_fits,
               budget_param="generations", memory_hint="a smaller population (e.g. --population 256)",
               repro_params=(GaParams(population=256, groups=4),)),
]
