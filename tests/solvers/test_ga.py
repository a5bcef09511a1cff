"""The genetic algorithm's pool (tspcl/solvers/ga.py, kernels_cl/ga.cl) against host
checks: the crossover tasks fill every offspring slot from fixed elite pairs, random
genes are tours from city 0, both fixed-rival competitions keep the shorter gene, the
task draws give switch points and start cities, a mutation is one random 2-opt move on
an offspring, the pool's best survives, migration moves each group's best over another
group's worst, a run improves on its random start and reproduces, and the crossover's
working memory is planned in parts that each fit one allocation."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_fixtures import rt  # noqa: F401 - fixture
from test_device_loop import enqueue_in_slices, run_on_a_counting_clock
from tspcl.device import Runtime
from tspcl.device_instance import DeviceInstance
from tspcl.errors import DeviceMemoryError, UsageError
from tspcl.gen import generate
from tspcl.run import solve
from tspcl.solvers import REGISTRY, SolveContext
from tspcl.solvers import ga
from tspcl.solvers.best import BestWord

SPEC = REGISTRY["ga"]


@pytest.mark.parametrize("crossover", ga.CROSSOVERS)
def test_crossover_tasks_fill_every_offspring_slot_from_elite_pairs(crossover):
    p = ga.GaParams(crossover=crossover, population=48, groups=3)
    size, tasks = p.size, ga.crossover_tasks(p)
    half, quarter = size // 2, size // 4
    outs = sorted(tasks[:, 4])
    assert outs == [g * size + j for g in range(3) for j in range(half, size)]  # each once, no stale slot
    for a, b, kind, pair, out in tasks:
        group, q = a // size, pair % size
        assert b // size == group and out // size == group and pair // size == group
        assert a % size < half and b % size < half  # parents are elites
        if out % size < half + quarter:  # the first child: the pair (2q, 2q + 1), the paper's slot
            assert (a % size, b % size, out % size) == (2 * q, 2 * q + 1, half + q)
        elif kind == ga.ARX:  # ARX's second child: the same pair the other way round
            assert (a % size, b % size, out % size) == (2 * q + 1, 2 * q, size - quarter + q)
        else:  # one-child crossovers: Algorithm 1's partners tau, tau + 1
            assert (a % size, b % size, out % size) == (2 * q + 1, (2 * q + 2) % half, size - quarter + q)
    counts = {k: int(np.sum(tasks[:, 2] == k)) for k in (ga.SCX, ga.BCSCX, ga.ARX)}
    expected = {"scx": {ga.SCX: 24}, "bcscx": {ga.BCSCX: 24}, "arx": {ga.ARX: 24},
                "hybrid": {ga.BCSCX: 12, ga.ARX: 12}}[crossover]
    assert {k: v for k, v in counts.items() if v} == expected


def pool_for(rt, inst, **params):  # noqa: F811
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=5)
    return ctx, ga.GenePool(ctx, ga.GaParams(**params))


def read_pool(rt, pool):  # noqa: F811
    return (rt.read(pool.genes, np.int32, pool.m * pool.n).reshape(pool.m, pool.n),
            rt.read(pool.lengths, np.int64, pool.m))


def test_random_genes_are_tours_from_city_0_with_their_lengths(rt):  # noqa: F811
    inst = generate("uniform", 57, seed=2)
    ctx, pool = pool_for(rt, inst, population=32, groups=2)
    ctx.timed(pool.start(ctx.seed))
    genes, lengths = read_pool(rt, pool)
    assert all(g[0] == 0 and sorted(g) == list(range(inst.n)) for g in genes)
    assert list(lengths) == [inst.tour_length(g) for g in genes]
    assert len({tuple(g) for g in genes}) == len(genes)
    assert pool.best.read()[BestWord.BEST] == lengths.min()


def test_the_fixed_rival_competition_keeps_the_shorter_gene(rt):  # noqa: F811
    inst = generate("uniform", 40, seed=3)
    ctx, pool = pool_for(rt, inst, population=24, groups=2, mutation_rate=0.0)
    ctx.timed(pool.start(ctx.seed))
    genes, lengths = read_pool(rt, pool)
    size, n, g = pool.p.size, inst.n, pool.gene_group
    ctx.timed([pool.k["ga_compete"](rt.queue, (pool.p.groups * (size // 2) * g,), (g,), np.int32(n),
                                    np.int32(size), pool.genes, pool.lengths)])
    after, after_lengths = read_pool(rt, pool)
    for group in range(pool.p.groups):
        for j in range(size // 2):
            slot, rival = group * size + j, group * size + j + (size + 1) // 2
            keep = rival if lengths[rival] < lengths[slot] else slot
            assert list(after[slot]) == list(genes[keep]) and after_lengths[slot] == lengths[keep]
            assert list(after[rival]) == list(genes[rival])


def test_a_mutation_is_one_random_2opt_move_from_position_1_and_spares_the_elites(rt):  # noqa: F811
    inst = generate("uniform", 30, seed=4)
    ctx, pool = pool_for(rt, inst, population=800, groups=2)
    ctx.timed(pool.start(ctx.seed))
    genes, _ = read_pool(rt, pool)
    size = pool.p.size
    ctx.timed([pool.k["ga_mutate"](rt.queue, (pool.m * pool.gene_group,), (pool.gene_group,), np.int32(inst.n),
                                   np.int32(size), np.int32(size // 2), np.float32(0.25), *pool._key(9),
                                   np.uint32(3), pool.genes)])
    after, _ = read_pool(rt, pool)
    changed = 0
    for index, (g0, g1) in enumerate(zip(genes, after)):
        diff = np.nonzero(g0 != g1)[0]
        if index % size < size // 2:
            assert len(diff) == 0  # an elite
        elif len(diff):
            changed += 1
            i, j = diff[0], diff[-1]
            assert i >= 1 and list(g1[i:j + 1]) == list(g0[i:j + 1][::-1])
            assert list(g1[:i]) == list(g0[:i]) and list(g1[j + 1:]) == list(g0[j + 1:])
    assert 0.25 * 400 - 4 * np.sqrt(400 * 0.25 * 0.75) <= changed <= 0.25 * 400 + 4 * np.sqrt(400 * 0.25 * 0.75)


def test_adjacent_rivals_keep_the_shorter_of_each_pair_in_the_first_half(rt):  # noqa: F811
    inst = generate("uniform", 33, seed=8)
    ctx, pool = pool_for(rt, inst, population=32, groups=2, competition="pairs")
    ctx.timed(pool.start(ctx.seed))
    genes, lengths = read_pool(rt, pool)
    lengths_host = lengths.copy()
    genes[3] = genes[2]  # a tie: the first of the pair wins
    lengths_host[3] = lengths_host[2]
    rt.cl.enqueue_copy(rt.queue, pool.genes, np.ascontiguousarray(genes))
    rt.cl.enqueue_copy(rt.queue, pool.lengths, lengths_host)
    ctx.timed(pool.compete())
    after, after_lengths = read_pool(rt, pool)
    size = pool.p.size
    for group in range(2):
        for j in range(size // 2):
            a = group * size + 2 * j
            keep = a + 1 if lengths_host[a + 1] < lengths_host[a] else a
            slot = group * size + j
            assert list(after[slot]) == list(genes[keep]) and after_lengths[slot] == lengths_host[keep]
        for j in range(size // 2, size):  # the second half is left for the offspring
            assert list(after[group * size + j]) == list(genes[group * size + j])


@pytest.mark.parametrize("random_start", ga.RANDOM_START)
def test_task_draws_give_switch_points_and_start_cities(rt, random_start):  # noqa: F811
    inst = generate("uniform", 50, seed=9)
    ctx, pool = pool_for(rt, inst, population=512, groups=1, crossover="hybrid", random_start=random_start)
    a, b, kind, pair, out = pool.task_cols
    ctx.timed([pool.k["ga_task_draws"](rt.queue, (ga.round_up(pool.tasks, 64),), (64,), np.int32(inst.n),
                                       np.int32(pool.tasks), *pool._key(3), np.uint32(4),
                                       np.int32(ga.start_mask(pool.p)), pair, kind, pool.task_A, pool.task_B,
                                       pool.task_S)])
    A, B, S = (rt.read(buf, np.int32, pool.tasks) for buf in (pool.task_A, pool.task_B, pool.task_S))
    tasks = ga.crossover_tasks(pool.p)
    assert np.all((1 <= A) & (A <= B) & (B < inst.n))
    for t, u in zip(*np.nonzero(tasks[:, 3][:, None] == tasks[:, 3][None, :])):  # a pair's children share A, B
        assert (A[t], B[t]) == (A[u], B[u])
    starting = {"none": set(), "bcscx": {ga.BCSCX}, "all": {ga.BCSCX, ga.ARX}}[random_start]
    for k in (ga.BCSCX, ga.ARX):
        s = S[tasks[:, 2] == k]
        if k in starting:
            assert np.all((0 <= s) & (s < inst.n)) and len(set(s)) > inst.n // 2  # spread over the cities
        else:
            assert np.all(s == 0)


def test_bcscx_and_arx_start_anywhere_by_default():
    assert ga.start_mask(ga.GaParams()) == (1 << ga.BCSCX) | (1 << ga.ARX)


def test_an_arx_pool_from_random_starts_stays_diverse_where_one_from_city_0_collapses(rt):  # noqa: F811
    """Why ARX starts anywhere by default (tspcl/solvers/ga.py): built from city 0, alike
    parents give one child and the pool collapses onto a few genes; from random cities it
    keeps distinct genes (no mutation in either, so only the start differs)."""
    inst = generate("clustered", 60, seed=2)
    distinct = {}
    for random_start in ("none", "all"):
        ctx, pool = pool_for(rt, inst, crossover="arx", population=128, groups=1, mutation_rate=0.0,
                             random_start=random_start)
        ctx.timed(pool.start(ctx.seed))
        for gen in range(60):
            ctx.timed(pool.generation(gen, ctx.seed))
        genes, _ = read_pool(rt, pool)
        assert all(g[0] == 0 and sorted(g) == list(range(inst.n)) for g in genes)
        distinct[random_start] = len({tuple(g) for g in genes})
    assert distinct["none"] <= 16 and distinct["all"] >= 96


def test_the_pools_best_never_gets_worse_when_only_offspring_mutate(rt):  # noqa: F811
    inst = generate("clustered", 45, seed=10)
    ctx, pool = pool_for(rt, inst, population=64, groups=2, crossover="hybrid", mutation_rate=0.5,
                         migration_interval=3)
    ctx.timed(pool.start(ctx.seed))
    bests = [pool.best.read()[BestWord.ITER_BEST]]
    for gen in range(12):
        ctx.timed(pool.generation(gen, 5))
        bests.append(pool.best.read()[BestWord.ITER_BEST])
    assert all(x >= y for x, y in zip(bests, bests[1:])) and bests[-1] < bests[0]


def test_migration_sends_each_groups_best_over_another_groups_worst(rt):  # noqa: F811
    inst = generate("uniform", 35, seed=6)
    ctx, pool = pool_for(rt, inst, population=40, groups=5)
    ctx.timed(pool.start(ctx.seed))
    genes, lengths = read_pool(rt, pool)
    ctx.timed(pool._migrate(7, 11))
    after, after_lengths = read_pool(rt, pool)
    targets, size = ga.migration_targets(5, 11, 7), pool.p.size
    assert all(targets[g] != g for g in range(5)) and sorted(targets) == list(range(5))
    for g in range(5):
        block = lengths[g * size:(g + 1) * size]
        best = g * size + int(np.argmin(block))
        dest = targets[g]
        worst = dest * size + int(np.argmax(lengths[dest * size:(dest + 1) * size]))
        assert list(after[worst]) == list(genes[best]) and after_lengths[worst] == lengths[best]


@pytest.mark.parametrize("crossover", ["bcscx", "hybrid"])
def test_a_run_improves_on_its_random_start_and_reproduces(rt, crossover):  # noqa: F811
    inst = generate("clustered", 60, seed=7)
    p = ga.GaParams(crossover=crossover, population=64, groups=2, generations=15)
    runs = [solve(inst, SPEC, p, rt, seed=2) for _ in range(2)]
    assert list(runs[0].order) == list(runs[1].order)
    first = runs[0].history[0].best_length
    assert runs[0].length < first


@pytest.mark.parametrize("bad, match", [
    (dict(crossover="pmx"), "crossover"), (dict(population=100, groups=8), "equal size"),
    (dict(population=24, groups=8), "at least 4"), (dict(population=24, groups=4), "multiple of 4"),
    (dict(mutation_rate=1.5), "mutation_rate"), (dict(mutate="elites"), "mutate"),
    (dict(competition="random"), "competition"), (dict(random_start="scx"), "random_start"),
    (dict(migration_interval=-1), "migration_interval"), (dict(init="nn"), "init"),
])
def test_bad_parameters_are_usage_errors(bad, match):
    with pytest.raises(UsageError, match=match):
        ga.GaParams(**bad)


def test_the_crossovers_working_memory_is_planned_in_parts_that_each_fit_one_allocation(rt):  # noqa: F811
    """The plan needs more than one allocation may hold: it runs, because no buffer is that
    large, and it is refused once the largest part (or the genes) is."""
    inst = generate("uniform", 500, seed=1)
    p = ga.GaParams(population=64, groups=2, generations=3)
    tasks = len(ga.crossover_tasks(p))
    parts = ga.working_memory_bytes(tasks, inst.n, p.population)
    assert len(parts) == ga.MEMORY_PARTS and sum(parts) >= 4 * tasks * ga.task_words(inst.n)
    plan = SPEC.buffers(inst, p, rt.limits)
    largest = plan.largest
    assert largest < plan.nbytes / 2
    small = Runtime(rt.device)
    small.__dict__["limits"] = rt.limits.__class__(**{**rt.limits.__dict__, "global_mem": 2**30,
                                                      "max_alloc": largest})
    res = solve(inst, SPEC, p, small, seed=1)
    assert sorted(res.order) == list(range(inst.n))
    small.__dict__["limits"] = rt.limits.__class__(**{**rt.limits.__dict__, "global_mem": 2**30,
                                                      "max_alloc": largest - 1})
    with pytest.raises(DeviceMemoryError, match="largest buffer"):
        solve(inst, SPEC, p, small, seed=1)


def test_generations_in_slices_of_crossovers_breed_the_genes_of_whole_launches(rt):  # noqa: F811
    """The device loop may enqueue a generation's crossover a few tasks at a time under
    a time limit: each task's child and draws are its own (common.h group_index)."""
    inst = generate("clustered", 45, seed=10)
    runs = []
    for size in (10**6, 5):
        ctx, pool = pool_for(rt, inst, population=64, groups=2, crossover="hybrid", mutation_rate=0.5,
                             migration_interval=2)
        ctx.timed(pool.start(ctx.seed))
        for gen in range(3):
            ctx.timed(enqueue_in_slices(pool.launches(gen, ctx.seed), size))
        runs.append((*read_pool(rt, pool), pool.best.read()))
    for whole, sliced in zip(*runs):
        assert np.array_equal(whole, sliced)


def test_a_deadline_inside_the_first_generation_leaves_the_pools_start(rt):  # noqa: F811
    inst = generate("clustered", 60, seed=2)
    ctx = run_on_a_counting_clock(rt, SPEC, inst, ga.GaParams(population=64, groups=2), at=4.5)
    assert ctx.iterations == 0 and len(ctx.history) == 1
    assert sorted(ctx.best_order) == list(range(inst.n))
