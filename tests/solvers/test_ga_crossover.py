"""The genetic algorithm's crossovers (kernels_cl/ga.cl ga_crossover) against plain host
versions that search the legitimate cities by scanning the parents (O(n^2)): the jump
indices must give the same offspring, every offspring is a tour from city 0, and ARX's
children follow the privileged parent between the switch points."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_fixtures import rt  # noqa: F401 - fixture
from tspcl.device_instance import DeviceInstance
from tspcl.gen import generate
from tspcl.solvers.ga import (ARX, BCSCX, CROSSOVER_GROUP, PROGRAM_DEFINES, SCX, task_words,
                              tasks_per_part, working_memory_bytes)


def host_crossover(d, a, b, kind, A=0, B=0, start=0):
    """The offspring of parents a, b by scanning: SCX forward to the sequence's end (then
    the template's first unvisited city), BCSCX and ARX both ways round the circle; built
    from city `start` (SCX: always 0) and rotated to begin at city 0."""
    n = len(a)
    pos = [{c: i for i, c in enumerate(p)} for p in (a, b)]
    start = 0 if kind == SCX else start
    seen, child, cur = {start}, [start], start

    def scan(p, which, step, circular):
        i = pos[which][cur]
        for s in range(1, n):
            j = i + step * s
            if not circular and not 0 <= j < n:
                return None
            c = p[j % n]
            if c not in seen:
                return c
        return None

    def nearer(x, y, x_first):
        return x if d[cur, x] < d[cur, y] or (x_first and d[cur, x] == d[cur, y]) else y

    for k in range(1, n):
        if kind == SCX:
            first_free = min(c for c in range(n) if c not in seen)
            ca = scan(a, 0, 1, False)
            cb = scan(b, 1, 1, False)
            nxt = nearer(first_free if ca is None else ca, first_free if cb is None else cb, False)
        elif kind == BCSCX:
            x = nearer(scan(a, 0, 1, True), scan(a, 0, -1, True), True)
            y = nearer(scan(b, 1, 1, True), scan(b, 1, -1, True), True)
            nxt = nearer(x, y, True)
        else:
            p, which = (a, 0) if k < A or k >= B else (b, 1)
            nxt = nearer(scan(p, which, 1, True), scan(p, which, -1, True), True)
        seen.add(nxt)
        child.append(nxt)
        cur = nxt
    z = child.index(0)
    return child[z:] + child[:z]


def random_genes(rng, count, n):
    return np.array([[0, *rng.permutation(np.arange(1, n))] for _ in range(count)], np.int32)


def device_crossover(rt, inst, genes, tasks):  # noqa: F811
    """tasks: (a, b, kind, A, B[, start]) rows; offspring t is tasks[t]'s."""
    n, count = inst.n, len(tasks)
    dinst = DeviceInstance(rt, inst)
    k = dinst.kernel("ga", "ga_crossover", **PROGRAM_DEFINES)
    rows = np.array([tuple(t) + (0,) * (6 - len(t)) for t in tasks], np.int32)
    cols = [rt.to_device(np.ascontiguousarray(rows[:, j])) for j in range(6)]
    out = rt.empty(4 * count * n)
    group = rt.work_group_size(k, CROSSOVER_GROUP)
    k(rt.queue, (count * group,), (group,), *dinst.dist_args, rt.to_device(genes), out, np.int32(count),
      *cols, rt.to_device(np.arange(count, dtype=np.int32)),
      *(rt.empty(size) for size in working_memory_bytes(count, n, 0)), np.int32(tasks_per_part(count)),
      np.int32(task_words(n)))
    return rt.read(out, np.int32, count * n).reshape(count, n)


@pytest.mark.parametrize("kind", [SCX, BCSCX, ARX])
@pytest.mark.parametrize("n, kind_of_instance", [(3, "uniform"), (7, "uniform"), (61, "uniform"),
                                                 (64, "grid"), (150, "clustered")])
def test_jump_indices_give_the_offspring_of_a_naive_search(rt, kind, n, kind_of_instance):  # noqa: F811
    inst = generate(kind_of_instance, n, seed=n)
    d = inst.full_matrix()
    rng = np.random.default_rng(n + kind)
    genes = random_genes(rng, 12, n)
    tasks = []
    for t in range(12):
        A, B = sorted(rng.integers(1, n, 2))
        start = 0 if t < 4 else int(rng.integers(n))  # a third from city 0 (the paper), the rest anywhere
        tasks.append((t, (t + 1) % 12, kind, A, B, start))
    children = device_crossover(rt, inst, genes, tasks)
    for (a, b, _, A, B, start), child in zip(tasks, children):
        assert sorted(child) == list(range(n)) and child[0] == 0
        assert list(child) == host_crossover(d, list(genes[a]), list(genes[b]), kind, A, B, start)


def test_identical_parents_from_city_0_give_back_the_parent_or_a_greedy_shortcut(rt):  # noqa: F811
    """On a circle, a parent that is the circle's order is its own BCSCX / ARX child."""
    n = 40
    inst = generate("circle", n, seed=1)
    d = inst.full_matrix()
    order = np.array(host_nearest_order(d), np.int32)
    genes = np.stack([order, order])
    children = device_crossover(rt, inst, genes, [(0, 1, BCSCX, 0, 0), (0, 1, ARX, 5, 30), (0, 1, BCSCX, 0, 0, 17)])
    for child in children:
        assert inst.tour_length(child) == inst.tour_length(order)


def host_nearest_order(d):
    n, cur, order = len(d), 0, [0]
    left = set(range(1, n))
    while left:
        cur = min(left, key=lambda c: (d[cur, c], c))
        order.append(cur)
        left.remove(cur)
    return order


def test_arx_children_follow_the_privileged_parent_between_the_switch_points(rt):  # noqa: F811
    """Child alpha takes every city from parent alpha's legitimate pair before A and from
    B on, from parent beta's between; child beta the other way round."""
    n = 90
    inst = generate("uniform", n, seed=3)
    rng = np.random.default_rng(4)
    genes = random_genes(rng, 2, n)
    A, B = 25, 60
    alpha, beta = device_crossover(rt, inst, genes, [(0, 1, ARX, A, B), (1, 0, ARX, A, B)])
    assert list(alpha) != list(beta)
    for child, first, second in ((alpha, genes[0], genes[1]), (beta, genes[1], genes[0])):
        seen = {0}
        for k in range(1, n):
            p = first if k < A or k >= B else second
            i = int(np.where(p == child[k - 1])[0][0])
            after = next(p[(i + s) % n] for s in range(1, n) if p[(i + s) % n] not in seen)
            before = next(p[(i - s) % n] for s in range(1, n) if p[(i - s) % n] not in seen)
            assert child[k] in (after, before)
            seen.add(child[k])


def test_arx_from_city_0_gives_alike_parents_one_child_and_random_starts_many(rt):  # noqa: F811
    """The reason ARX starts from a random city by default (tspcl/solvers/ga.py): from city
    0 the construction is deterministic, so copies of one parent, whatever the switch
    points, all give the same child (a converging pool collapses onto such children);
    from random start cities they give different tours, each still built from the
    privileged parent's legitimate cities."""
    n = 70
    inst = generate("clustered", n, seed=12)
    d = inst.full_matrix()
    rng = np.random.default_rng(13)
    parent = np.array(host_nearest_order(d), np.int32)
    parent[1:] = np.roll(parent[1:], 7)  # a good tour, not a fixed point of the walk
    genes = np.stack([parent, parent])
    points = [tuple(sorted(rng.integers(1, n, 2))) for _ in range(8)]
    from_0 = device_crossover(rt, inst, genes, [(0, 1, ARX, A, B, 0) for A, B in points])
    assert len({tuple(c) for c in from_0}) == 1
    starts = rng.choice(n, 8, replace=False)
    anywhere = device_crossover(rt, inst, genes, [(0, 1, ARX, A, B, s) for (A, B), s in zip(points, starts)])
    assert len({tuple(c) for c in anywhere}) >= 4
    for (A, B), s, child in zip(points, starts, anywhere):
        assert sorted(child) == list(range(n)) and child[0] == 0
        assert list(child) == host_crossover(d, list(parent), list(parent), ARX, A, B, int(s))
