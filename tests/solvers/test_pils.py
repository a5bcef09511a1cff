"""The segment-parallel ILS (kernels_cl/pils.cl, tspcl/solvers/pils.py) against host checks.

A round runs through the solver's own DeviceCells on a tour the test gives.  The cells'
search is checked by brute force on the host: every 2-opt move inside a piece and every
Or-opt move of a chain inside a piece into an edge inside a piece of the same cell that
makes a candidate edge is enumerated directly from the definition, and none may improve
after a descent; nor may any Lin-Kernighan chain, followed step by step on the host by its
definition.  Rounds keep the tour a permutation, keep every edge between two cells
(so the ends of every piece; spans may join them otherwise), and report exact gains;
runs reproduce.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest
from kernel_fixtures import rt  # noqa: F401
from test_device_loop import run_on_a_counting_clock

from tspcl.device_instance import DeviceInstance
from tspcl.errors import UsageError
from tspcl.instance import Instance
from tspcl.neighbors import build_candidates
from tspcl.run import solve
from tspcl.solvers import get_solver, pils
from tspcl.solvers.base import SolveContext
from tspcl.solvers.localsearch import DeviceSearch, StateWord
from tspcl.solvers.pils import CellLayout, DeviceCells, SegmentIlsParams, kd_cells

CELL = 64     # cities per cell in the kernel tests


def _uniform(n: int, seed: int) -> Instance:
    pts = np.random.default_rng(seed).integers(0, 10_000, size=(n, 2)).astype(np.float64)
    return Instance(name=f"u{n}", kind="TSP", weight_type="EUC_2D", coords=pts)


def _matrix(n: int, seed: int) -> Instance:
    pts = np.random.default_rng(seed).integers(0, 1000, size=(n, 2))
    d = np.rint(np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))).astype(np.int64)
    return Instance(name=f"m{n}", kind="TSP", weight_type="EXPLICIT", matrix=d)


class Rounds:
    """The solver's DeviceCells on `inst`, driven one round at a time from a given tour."""

    def __init__(self, rt, inst, seed=1, **params):  # noqa: F811
        self.rt, self.inst, n = rt, inst, inst.n
        self.params = SegmentIlsParams(**{"cell": CELL, **params})
        dinst = DeviceInstance(rt, inst)
        self.cand = build_candidates(dinst, self.params.candidate_params())
        ctx = SimpleNamespace(rt=rt, inst=inst, dinst=dinst, seed=seed)
        self.search = SimpleNamespace(tour=rt.empty(4 * n), pos=rt.empty(4 * n))
        layout = CellLayout.of(inst, self.params, self.cand.m, rt.limits)
        self.cells = DeviceCells(ctx, self.cand, self.params, self.search, layout)
        self.m = layout.m

    def run(self, order, round_no, offset, descend, budget):
        """One round from `order`; returns the new order, the gain, the kicks and the
        round's cell of every city."""
        n, rt = self.inst.n, self.rt
        order = np.asarray(order, np.int32)
        pos = np.empty(n, np.int32)
        pos[order] = np.arange(n, dtype=np.int32)
        rt.cl.enqueue_copy(rt.queue, self.search.tour, order)
        rt.cl.enqueue_copy(rt.queue, self.search.pos, pos)
        gain, kicks, _ = self.cells.run_round(round_no, offset, descend, budget)
        cell_of = rt.read(self.cells.cells_of(round_no)[2], np.int32, n)
        return rt.read(self.search.tour, np.int32, n), gain, kicks, cell_of

    def lists(self):
        return self.cand.host(self.rt)[0][:, :self.m]


def _greedy(rt, inst):  # noqa: F811
    """A start whose pieces are long: cells of a random tour hold single cities."""
    spec = get_solver("greedy")
    return solve(inst, spec, spec.params_type(), rt, seed=1).order


def _edges(order):
    return {frozenset((int(a), int(b))) for a, b in zip(order, np.roll(order, -1))}


def _pieces(order, cell_of, offset):
    """Each cell's pieces, in tour order from `offset`: maximal runs of one cell."""
    n = len(order)
    keyed = [int(order[(offset + i) % n]) for i in range(n)]
    cells: dict[int, list[list[int]]] = {}
    for i, c in enumerate(keyed):
        if i and cell_of[keyed[i - 1]] == cell_of[c]:
            cells[int(cell_of[c])][-1].append(c)
        else:
            cells.setdefault(int(cell_of[c]), []).append([c])
    return cells


def _improving_moves(inst, pieces, lists):
    """Every 2-opt move inside a piece and Or-opt move of a chain of 1-3 cities inside a
    piece (not its ends) into an edge inside any piece of the cell, that makes an edge
    (a, c) with c in a's candidate list and in the cell, by brute force; yields (kind,
    gain)."""
    inside = {c for p in pieces for c in p}
    cand = {a: {c for c in lists[a] if c in inside} for a in inside}

    def d(x, y):
        return int(inst.dist(x, y))

    def is_cand(a, c):
        return c in cand[a] or a in cand[c]

    for path in pieces:
        L = len(path)
        for i in range(L - 1):
            for j in range(i + 2, L - 1):   # reverse [i + 1, j]
                a, a1, c, c1 = path[i], path[i + 1], path[j], path[j + 1]
                if is_cand(a, c) or is_cand(a1, c1):
                    g = d(a, a1) + d(c, c1) - d(a, c) - d(a1, c1)
                    if g > 0:
                        yield "2opt", g
    for source in pieces:
        for s in (1, 2, 3):
            for u in range(1, len(source) - s):
                v = u + s - 1
                p, q, cu, cv = source[u - 1], source[v + 1], source[u], source[v]
                for target in pieces:
                    for x in range(len(target) - 1):
                        if target is source and u - 1 <= x <= v:
                            continue
                        px, py = target[x], target[x + 1]
                        for e1, e2 in ((cu, cv), (cv, cu)):
                            if py in cand[e2] or px in cand[e1]:
                                g = (d(p, cu) + d(cv, q) + d(px, py) - d(p, q) - d(px, e1)
                                     - d(e2, py))
                                if g > 0:
                                    yield "oropt", g


def test_kd_cells_partition_the_cities_into_small_cells():
    pts = np.random.default_rng(4).random((5000, 2))
    members, first, cell_of = kd_cells(pts, 300, np.random.default_rng(5))
    assert sorted(members.tolist()) == list(range(5000))
    assert first[0] == 0 and first[-1] == 5000 and (np.diff(first) <= 300).all()
    for g in range(len(first) - 1):
        assert (cell_of[members[first[g]:first[g + 1]]] == g).all()
    other = kd_cells(pts, 300, np.random.default_rng(6))[2]
    assert not np.array_equal(cell_of, other), "another draw put the borders in the same places"


def _chain_gain(inst, path, piece_at, cand, a, c, side, depth):
    """The best closing gain of the cells' Lin-Kernighan chain from city a, candidate c
    and `side` on `path` (the cell's pieces end to end; piece_at[p], the piece of
    position p), by its definition (pils_search.h path_chain): t1 is a's neighbour on
    `side`; each step adds (t2, t3), removes (t3, t4) with t4 beside t3 as t1 is beside
    t2 and reverses the positions between the removed edges, inside one piece; the next
    t3 is the candidate of t4 with a positive partial gain and the best look-ahead
    (first in list order among equals); no removed edge is added, no added one removed;
    at most `depth` steps.  The reversals are applied to a copy."""
    def d(x, y):
        return int(inst.dist(x, y))

    cur, n = list(path), len(path)
    at = {x: p for p, x in enumerate(cur)}
    p1, p2 = at[a] + (1 if side == 0 else -1), at[a]
    if not 0 <= p1 < n:
        return 0
    t1, t2, t3 = cur[p1], a, c
    gain, best, removed, added = d(t1, a), 0, [{t1, a}], []
    for _ in range(depth):
        p3 = at[t3]
        p4 = p3 + (p1 - p2)
        if not 0 <= p4 < n or p3 in (p1, p2) or p4 == p2 or gain - d(t2, t3) <= 0:
            return best
        t4 = cur[p4]
        if {t2, t3} in removed or {t3, t4} in added:
            return best
        gain += d(t3, t4) - d(t2, t3)
        added.append({t2, t3})
        removed.append({t3, t4})
        lo, hi = min(p1, p2, p3, p4) + 1, max(min(p1, p2), min(p3, p4))
        if piece_at[lo - 1] != piece_at[hi + 1]:
            return best
        cur[lo:hi + 1] = cur[lo:hi + 1][::-1]
        at.update((x, p) for p, x in enumerate(cur[lo:hi + 1], lo))
        p1, p2 = at[t1], at[t4]
        best = max(best, gain - d(t4, t1))
        t2, first, t3, top = t4, min(p1, p2), None, None
        for x in cand[t2]:
            px = at[x]
            py = px + (p1 - p2)
            if x == t1 or gain - d(t2, x) <= 0 or not 0 <= py < n or px in (p1, p2) or py == p2:
                continue
            f = min(px, py)
            if piece_at[min(first, f)] != piece_at[max(first, f) + 1]:
                continue
            value = gain - d(t2, x) + d(x, cur[py])
            if t3 is None or value > top:
                t3, top = x, value
        if t3 is None:
            return best
    return best


def _improving_chains(inst, pieces, lists, depth):
    """Every (a, c, side) of the cell, c among a's candidates in the cell, whose
    Lin-Kernighan chain (_chain_gain) closes with a positive gain; yields (a, c, side,
    gain)."""
    path = [c for p in pieces for c in p]
    piece_at = [k for k, p in enumerate(pieces) for _ in p]
    inside = set(path)
    cand = {a: [c for c in lists[a] if c in inside] for a in path}
    for a in path:
        for c in cand[a]:
            for side in (0, 1):
                g = _chain_gain(inst, path, piece_at, cand, a, c, side, depth)
                if g > 0:
                    yield a, c, side, g


@pytest.mark.parametrize("n, offset, step_moves, cell", [(400, 0, 2, CELL), (373, 61, 2, CELL), (400, 0, 1, CELL),
                                                         (400, 0, 2, 400)])
def test_a_descent_leaves_no_improving_move_inside_a_cell(rt, n, offset, step_moves, cell):  # noqa: F811
    """(step_moves 2, the default: several moves whose reaches do not meet applied at each
    step; 1: only the best; one cell of the whole tour, one long piece, where Lin-Kernighan
    chains find what 2-opt and Or-opt leave: a descent without them leaves one here.  No
    spans: their moves are the whole tour's, which the host's check of pieces does not
    follow)"""
    inst = _uniform(n, n)
    rounds = Rounds(rt, inst, step_moves=step_moves, cell=cell, spans="0")
    start = _greedy(rt, inst)
    out, gain, _, cell_of = rounds.run(start, 0, offset, True, 0)
    assert sorted(out.tolist()) == list(range(n))
    assert inst.tour_length(start) - inst.tour_length(out) == gain > 0
    lists = rounds.lists()
    before = _pieces(start, cell_of, offset)
    for cell, pieces in _pieces(out, cell_of, offset).items():
        if sum(map(len, pieces)) < 8:
            continue
        found = list(_improving_moves(inst, pieces, lists))
        assert not found, f"cell {cell}: improving moves left {found[:3]}"
        found = list(_improving_chains(inst, pieces, lists, rounds.params.depth))
        assert not found, f"cell {cell}: improving Lin-Kernighan chains left {found[:3]}"
        assert len(pieces) <= len(before[cell])


@pytest.mark.parametrize("make, cells, cell, copies, step_moves", [
    (_uniform, "kd", CELL, 0, 2), (_matrix, "tour", CELL, 0, 2), (_uniform, "kd", 150, 0, 2),
    (_uniform, "kd", 150, 1, 2), (_uniform, "kd", CELL, 0, 1), (_matrix, "tour", CELL, 0, 1)])
def test_rounds_keep_a_permutation_the_edges_between_cells_and_exact_gains(rt, make, cells, cell, copies,  # noqa: F811
                                                                            step_moves):
    """(cells of 150 on 300 cities: several copies of each cell, the best one kept; or
    one work-group a cell; one move a step; balance=kicks, so that every group runs
    round_kicks kicks: the steps' budget has its own test below)"""
    n = 300
    inst = make(n, 3)
    rounds = Rounds(rt, inst, cells=cells, cell=cell, copies=copies, step_moves=step_moves,
                    balance="kicks")
    assert copies == 0 or rounds.cells.most_copies == copies
    assert rounds.cells.kd == (cells == "kd")
    order = _greedy(rt, inst)
    for round_no, offset in enumerate((0, 37, 250)):
        out, gain, kicks, cell_of = rounds.run(order, round_no, offset, round_no == 0, 10_000)
        assert sorted(out.tolist()) == list(range(n))
        crossing = {e for e in _edges(order) if len({int(cell_of[c]) for c in e}) == 2}
        assert crossing <= _edges(out), "an edge between two cells changed"
        cells = len(set(cell_of.tolist()))
        copies = rounds.cells.copies(cells)
        assert gain >= 0 and kicks == min(cells * copies * rounds.params.round_kicks, 10_000)
        assert inst.tour_length(order) - inst.tour_length(out) == gain
        order = out


def _three_rounds(rt, inst, seed, **params):  # noqa: F811
    """The descent, a round of kicks, and a third round (whose kicks balance may share
    out by steps) from greedy: the Rounds, the third round's start and end tours, gain,
    kicks and cells, its step budget as the host sets it, and each work-group's kicks and
    steps (`work`)."""
    rounds = Rounds(rt, inst, seed=seed, **params)
    order = _greedy(rt, inst)
    for round_no, offset in enumerate((0, 37)):      # the descent, then kicks shared out
        order = rounds.run(order, round_no, offset, round_no == 0, 10 ** 6)[0]
    budget = round(rounds.params.round_kicks * rounds.cells.steps_per_kick)
    out, gain, kicks, cell_of = rounds.run(order, 2, 250 % inst.n, False, 10 ** 6)
    cells = len(set(cell_of.tolist()))
    groups = cells * rounds.cells.copies(cells)
    work = rt.read(rounds.cells.buf.work, np.int32, 2 * groups).reshape(groups, 2)
    return rounds, order, out, gain, kicks, cell_of, budget, work


def test_a_round_refuses_an_offset_outside_the_tour(rt):  # noqa: F811
    """The kernels index the tour with a round's offset unchecked: the host refuses one
    outside 0..n-1 before anything is enqueued (a test once passed 250 on 64 cities and
    PoCL wrote past the cells' arrays)."""
    inst = _uniform(CELL, 3)
    rounds = Rounds(rt, inst)
    order = _greedy(rt, inst)
    for offset in (-1, CELL, 250):
        with pytest.raises(ValueError, match=f"round offset {offset} outside"):
            rounds.run(order, 0, offset, True, 10 ** 6)
    assert sorted(rounds.run(order, 0, CELL - 1, True, 10 ** 6)[0].tolist()) == list(range(CELL))


def test_balance_steps_ends_each_group_at_its_step_budget_and_keeps_the_tour_exact(rt):  # noqa: F811
    """balance=steps: after a round that shared out kicks (it measures the steps a kick
    takes), every work-group kicks until its searches have taken the round's step budget,
    at most twice round_kicks kicks; the round counts the kicks taken, its gain is exact,
    the edges between cells stay, and the same seed gives the same tour."""
    n = 300
    inst = _uniform(n, 3)
    rounds, order, out, gain, kicks, cell_of, budget, work = _three_rounds(rt, inst, 5, cell=150, balance="steps")
    cap = 2 * rounds.params.round_kicks
    assert budget > 0 and kicks == work[:, 0].sum()
    assert (work[:, 0] <= cap).all() and (work[:, 0] >= 1).all()
    assert ((work[:, 0] == cap) | (work[:, 1] >= budget)).all(), "a group stopped before its budget"
    assert len(set(work[:, 0].tolist())) > 1, "every group took the same kicks: no steps shared out"
    assert sorted(out.tolist()) == list(range(n))
    crossing = {e for e in _edges(order) if len({int(cell_of[c]) for c in e}) == 2}
    assert crossing <= _edges(out), "an edge between two cells changed"
    assert inst.tour_length(order) - inst.tour_length(out) == gain
    assert np.array_equal(_three_rounds(rt, inst, 5, cell=150, balance="steps")[2], out)


def test_balance_auto_shares_out_kicks_in_replicas_and_steps_in_cells(rt):  # noqa: F811
    """balance=auto: in cells each work-group kicks to its step budget (as steps), where
    the tour fits one cell (its replicas) every group takes round_kicks kicks (as kicks)."""
    auto = SegmentIlsParams()
    assert (auto.balances_steps(replicas=True), auto.balances_steps(replicas=False)) == (False, True)
    assert all(SegmentIlsParams(balance="steps").balances_steps(r) for r in (True, False))
    assert not any(SegmentIlsParams(balance="kicks").balances_steps(r) for r in (True, False))
    with pytest.raises(UsageError, match="balance must be one of auto, kicks, steps"):
        SegmentIlsParams(balance="clocks")
    rounds, *_, budget, work = _three_rounds(rt, _uniform(300, 3), 5, cell=150)
    assert rounds.cells.step_balance and ((work[:, 0] == 2 * rounds.params.round_kicks)
                                          | (work[:, 1] >= budget)).all()
    assert len(set(work[:, 0].tolist())) > 1, "every group took the same kicks: no steps shared out"
    rounds, *_, work = _three_rounds(rt, _uniform(CELL, 3), 5)
    assert not rounds.cells.step_balance and (work[:, 0] == rounds.params.round_kicks).all()


def _pairings(order, cell_of, offset):
    """Each cell's pieces as the pairs of their end cities."""
    return {cell: sorted(tuple(sorted((p[0], p[-1]))) for p in pieces)
            for cell, pieces in _pieces(order, cell_of, offset).items()}


def test_spans_change_which_piece_ends_join_and_keep_the_tour_exact(rt):  # noqa: F811
    """spans: in each window one cell's pieces may join other ends (the tour between them
    laid out again by pils_rejoin); still a permutation, every edge between two cells
    kept, the gains exact (an outside path turned the wrong way would change the
    length).  Without spans no pairing ever changes; with them, some must."""
    n = 1000
    inst = _uniform(n, 3)
    for spans in (0, 8):
        rounds = Rounds(rt, inst, cell=128, spans=str(spans), bridges="0.5")
        order, changed = _greedy(rt, inst), 0
        for round_no, offset in enumerate((0, 37, 250, 11, 120, 199)):
            out, gain, _, cell_of = rounds.run(order, round_no, offset, round_no == 0, 10_000)
            assert sorted(out.tolist()) == list(range(n))
            crossing = {e for e in _edges(order) if len({int(cell_of[c]) for c in e}) == 2}
            assert crossing <= _edges(out), "an edge between two cells changed"
            assert inst.tour_length(order) - inst.tour_length(out) == gain
            before, after = _pairings(order, cell_of, offset), _pairings(out, cell_of, offset)
            changed += sum(before[cell] != after[cell] for cell in before)
            order = out
        assert (changed > 0) == (spans > 0), f"spans={spans}: {changed} cells joined other ends"
        assert rounds.cells.rejoined() == changed


def test_spans_auto_gives_a_span_for_every_eight_cells_and_bad_counts_are_refused():
    auto, given = SegmentIlsParams(), SegmentIlsParams(spans="8")
    assert [auto.span_count(cells) for cells in (1, 3, 4, 11, 12, 22, 70, 1000)] == [1, 1, 1, 1, 2, 3, 9, 64]
    assert [given.span_count(cells) for cells in (1, 5, 8, 70)] == [1, 5, 8, 8]
    assert SegmentIlsParams(spans="0").span_count(70) == 0
    for bad in ("x", "-1", "65", "1.5"):
        with pytest.raises(UsageError, match="spans"):
            SegmentIlsParams(spans=bad)


def _polish(rt, inst):  # noqa: F811
    """The solver's whole-tour search and cells on `inst` (cells of CELL cities)."""
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=1)
    p = SegmentIlsParams(cell=CELL)
    cand = ctx.candidates(p.candidate_params())
    search = DeviceSearch(ctx, cand, p.polish_params(cand.m))
    return search, DeviceCells(ctx, cand, p, search, CellLayout.of(inst, p, cand.m, rt.limits))


def _set_tour(rt, search, order):  # noqa: F811
    order = np.asarray(order, np.int32)
    pos = np.empty(len(order), np.int32)
    pos[order] = np.arange(len(order), dtype=np.int32)
    rt.cl.enqueue_copy(rt.queue, search.tour, order)
    rt.cl.enqueue_copy(rt.queue, search.pos, pos)


def _to_the_end(search):
    """Steps of the search until its words say done; the last words."""
    for _ in range(1000):
        search.enqueue(4)
        words = search.read_words()
        if words[StateWord.DONE]:
            return words
    raise AssertionError("the search did not stop")


def test_the_polish_queues_the_cities_whose_edges_changed_since_the_neighbours_were_recorded(rt):  # noqa: F811
    """pils_touched against the host's set of cities whose two neighbours differ (the
    same edges at other positions or the other way round change nothing), with those
    the last polish left queued (active)."""
    n = 200
    inst = _uniform(n, 31)
    search, cells = _polish(rt, inst)
    rng = np.random.default_rng(8)
    before = rng.permutation(n).astype(np.int32)
    afters = [np.roll(before[::-1], 7), before.copy(), before.copy()]
    for after, reversals in zip(afters[1:], (1, 6)):
        for _ in range(reversals):
            i, j = sorted(rng.choice(n, 2, replace=False))
            after[i:j + 1] = after[i:j + 1][::-1].copy()
    for after, left in zip(afters, ([], [3, 77, 150], [])):
        _set_tour(rt, search, before)
        cells.k["pils_neighbours"](rt.queue, (64,), None, search.tour, n, cells.buf.neighbours)
        _set_tour(rt, search, after)
        rt.cl.enqueue_copy(rt.queue, search.active, np.isin(np.arange(n), left).astype(np.int32))
        cells.queue_touched()
        count = int(rt.read(search.qcount, np.int32, 2)[0])
        queued = rt.read(search.queue, np.int32, n)[:count].tolist()
        active = rt.read(search.active, np.int32, n)
        sides = lambda order: {int(c): {int(a), int(b)} for a, c, b in  # noqa: E731
                               zip(np.roll(order, 1), order, np.roll(order, -1))}
        old, new = sides(before), sides(after)
        changed = sorted(c for c in range(n) if old[c] != new[c] or c in left)
        assert sorted(queued) == changed
        assert active.tolist() == [int(c in set(changed)) for c in range(n)]
    assert count > 0, "six reversals changed no edge"


def test_a_polish_from_a_trusted_queue_searches_from_its_cities_only(rt):  # noqa: F811
    """restart(queued=True) on a local optimum that one reversal made worse: queued at
    the reversal's ends, the search repairs it; queued at a city far from them, it stops
    at once with the tour as it was (no pass over every city), where a restart of every
    city repairs it."""
    n = 300
    inst = _uniform(n, 32)
    search, cells = _polish(rt, inst)
    _set_tour(rt, search, np.random.default_rng(9).permutation(n))
    search.restart(0)
    _to_the_end(search)
    optimum = rt.read(search.tour, np.int32, n)
    worse = optimum.copy()
    worse[40:121] = worse[40:121][::-1].copy()
    length = inst.tour_length(worse)
    assert length > inst.tour_length(optimum)
    ends = [int(c) for c in worse[[39, 40, 120, 121]]]
    far = int(np.argmax(np.min(np.hypot(*(inst.coords[:, None, :] - inst.coords[None, ends, :])
                                        .transpose(2, 0, 1)), axis=1)))
    results = []
    for queued in (ends, [far], None):
        _set_tour(rt, search, worse)
        if queued is not None:
            rt.cl.enqueue_copy(rt.queue, search.active,
                               np.isin(np.arange(n), queued).astype(np.int32))
            rt.cl.enqueue_copy(rt.queue, search.queue, np.array(queued, np.int32))
            rt.cl.enqueue_copy(rt.queue, search.qcount, np.array([len(queued), 0], np.int32))
        search.restart(length, queued=queued is not None)
        words = _to_the_end(search)
        tour = rt.read(search.tour, np.int32, n)
        assert sorted(tour.tolist()) == list(range(n))
        assert inst.tour_length(tour) == words[StateWord.CUR_LEN]
        results.append((tour, int(words[StateWord.CUR_LEN]), int(words[StateWord.STEPS])))
    (_, at_ends, _), (far_tour, at_far, far_steps), (_, at_all, _) = results
    assert at_ends < length and at_all < length
    assert np.array_equal(far_tour, worse) and at_far == length and far_steps <= 2


def test_kicks_improve_a_local_optimum_and_reproduce(rt):  # noqa: F811
    n = 256
    inst = _uniform(n, 5)
    optimum = Rounds(rt, inst).run(_greedy(rt, inst), 0, 0, True, 0)[0]
    a = Rounds(rt, inst, seed=11).run(optimum, 1, 0, False, 800)
    b = Rounds(rt, inst, seed=11).run(optimum, 1, 0, False, 800)
    c = Rounds(rt, inst, seed=12).run(optimum, 1, 0, False, 800)
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]
    assert a[1] > 0, "800 kicks found nothing below a descent's local optimum"
    assert not np.array_equal(a[0], c[0]), "another seed drew the same kicks"


@pytest.mark.parametrize("bridges, walk, step_moves, spans", [("0", "40", "2", "0"), ("1", "40", "2", "0"),
                                                             ("1", "0", "2", "0"), ("0", "40", "1", "0"),
                                                             ("0.5", "40", "2", "4")])
def test_the_solver_gives_a_reproducible_exact_tour(rt, bridges, walk, step_moves, spans):  # noqa: F811
    """(chain kicks only, double bridges only, double bridges anywhere in the cell; one
    move a step; spans)"""
    inst = _uniform(512, 9)
    spec = get_solver("pils")
    params = spec.params_from({"cell": str(CELL), "round_kicks": "8", "bridges": bridges,
                               "walk": walk, "step_moves": step_moves, "spans": spans})
    first = solve(inst, spec, params, rt, seed=4, iterations=2 * 512)
    again = solve(inst, spec, params, rt, seed=4, iterations=2 * 512)
    assert sorted(first.order.tolist()) == list(range(512))
    assert first.length == inst.tour_length(first.order)
    assert np.array_equal(first.order, again.order)
    assert first.iterations == 2 * 512
    greedy = solve(inst, get_solver("greedy"), get_solver("greedy").params_type(), rt, seed=4)
    assert first.length < greedy.length


def _twice(rt, inst, params: dict, seed: int, iterations: int):  # noqa: F811
    """pils with `params` (cells of CELL) run twice: the first result, checked to be a
    permutation of exact length, the same both times, after exactly `iterations` kicks."""
    spec = get_solver("pils")
    p = spec.params_from({"cell": str(CELL), **params})
    first = solve(inst, spec, p, rt, seed=seed, iterations=iterations)
    again = solve(inst, spec, p, rt, seed=seed, iterations=iterations)
    assert sorted(first.order.tolist()) == list(range(inst.n))
    assert first.length == inst.tour_length(first.order)
    assert np.array_equal(first.order, again.order) and first.iterations == iterations
    return first


def test_a_polish_every_few_rounds_gives_a_reproducible_exact_tour(rt):  # noqa: F811
    """polish_every=3: the neighbours are recorded after a polish, and the next polish,
    three rounds on, queues what those rounds changed."""
    inst = _uniform(300, 23)
    first = _twice(rt, inst, {"round_kicks": "8", "polish_every": "3"}, 6, 3000)
    greedy = solve(inst, get_solver("greedy"), get_solver("greedy").params_type(), rt, seed=6)
    assert first.length < greedy.length


def test_a_quick_boruvka_start_gives_a_reproducible_exact_tour_where_there_are_coordinates(rt):  # noqa: F811
    """init=qb: the run starts from construct's Quick-Boruvka tour (its first history
    point); without coordinates it is refused with the reason."""
    inst = _uniform(300, 24)
    first = _twice(rt, inst, {"round_kicks": "8", "init": "qb"}, 6, 600)
    qb = solve(inst, get_solver("qb"), get_solver("qb").params_type(), rt, seed=6)
    assert first.history[0].best_length == qb.length > first.length
    spec = get_solver("pils")
    with pytest.raises(UsageError, match="init=qb.*coordinates"):
        solve(_matrix(60, 2), spec, spec.params_from({"init": "qb"}), rt, seed=6, iterations=100)


def test_the_default_start_is_quick_boruvka_on_a_lattice_and_greedy_elsewhere(rt):  # noqa: F811
    """init=auto (the default) starts from qb's tour on a lattice (every city has two
    nearest cities exactly as near), from greedy's on random cities and on a distance
    matrix; the run's notes say the choice where it measured one."""
    spec = get_solver("pils")
    gx, gy = np.meshgrid(np.arange(16), np.arange(13))
    lattice = Instance(name="grid", kind="TSP", weight_type="EUC_2D",
                       coords=np.column_stack([gx.ravel(), gy.ravel()]).astype(np.float64) * 10)
    for inst, name, note in ((lattice, "qb", "chose qb"), (_uniform(200, 25), "greedy", "chose greedy"),
                             (_matrix(60, 3), "greedy", None)):
        res = solve(inst, spec, spec.params_from({"round_kicks": "8"}), rt, seed=4, iterations=200)
        start = solve(inst, get_solver(name), get_solver(name).params_type(), rt, seed=4)
        assert res.history[0].best_length == start.length >= res.length
        assert (note is None) == (not any("init=auto" in line for line in res.notes))
        assert note is None or any(note in line for line in res.notes)


def test_replicas_search_the_whole_tour_and_the_best_one_is_kept(rt):  # noqa: F811
    inst = _uniform(60, 13)
    spec = get_solver("pils")
    params = spec.params_from({"round_kicks": "16"})
    res = solve(inst, spec, params, rt, seed=2, iterations=3000)
    again = solve(inst, spec, params, rt, seed=2, iterations=3000)
    assert sorted(res.order.tolist()) == list(range(60))
    assert res.length == inst.tour_length(res.order)
    assert np.array_equal(res.order, again.order) and res.iterations == 3000
    # the whole tour is one cell, and the lk polish after the last round leaves no 2-opt
    # or Or-opt move either: some cut of the tour has none left
    lists = build_candidates(DeviceInstance(rt, inst), SegmentIlsParams().candidate_params()).host(rt)[0]
    path = [int(c) for c in res.order]
    assert any(not any(True for _ in _improving_moves(inst, [path[r:] + path[:r]], lists[:, :8]))
               for r in range(60))


def test_bridges_auto_draws_double_bridges_in_replicas_and_spans_only(rt):  # noqa: F811
    """bridges=auto: half the kicks double bridges where the tour fits one cell (the
    replicas: the same tour as bridges=0.5, another than 0) and in cells with a span,
    none in other cells (as 0)."""
    auto = SegmentIlsParams()
    assert (auto.bridge_share("replica"), auto.bridge_share("span"), auto.bridge_share("cell")) == (0.5, 0.5, 0)
    assert all(SegmentIlsParams(bridges="0.25").bridge_share(w) == 0.25 for w in ("replica", "span", "cell"))
    for bad in ("1.5", "-0.1", "half", "nan"):
        with pytest.raises(UsageError, match="bridges must be"):
            SegmentIlsParams(bridges=bad)
    spec = get_solver("pils")

    def tour(inst, **values):
        params = spec.params_from({"round_kicks": "4", **values})
        return solve(inst, spec, params, rt, seed=4, iterations=400).order

    whole = _uniform(250, 17)
    assert np.array_equal(tour(whole), tour(whole, bridges="0.5"))
    assert not np.array_equal(tour(whole), tour(whole, bridges="0"))
    cells = _uniform(300, 17)
    assert np.array_equal(tour(cells, cell="64", spans="0"), tour(cells, cell="64", spans="0", bridges="0"))

    def cuts(inst, **values):
        """The cuts below which a kick is a double bridge: in other cells, in span cells."""
        device_cells = Rounds(rt, inst, **values).cells
        return device_cells.bridge_cut, device_cells.span_cut

    scale = pils.BRIDGE_SCALE
    assert cuts(cells) == (0, scale // 2) and cuts(cells, bridges="0.25") == (scale // 4, scale // 4)
    assert cuts(_uniform(CELL, 17))[0] == scale // 2


def test_the_tour_does_not_depend_on_the_work_group_size(rt):  # noqa: F811
    """(one move a step: with several, the moves after the best are each work-item's
    best, and which tasks share a work-item depends on the group's size)"""
    inst = _uniform(300, 21)
    spec = get_solver("pils")
    runs = [solve(inst, spec, spec.params_from({"cell": str(CELL), "round_kicks": "8", "step_moves": "1",
                                                "group": str(group)}), rt, seed=3, iterations=600)
            for group in (64, 128)]
    assert np.array_equal(runs[0].order, runs[1].order) and runs[0].length == runs[1].length


def test_coordinates_in_global_memory_give_the_same_tour(rt):  # noqa: F811
    """(cells of one size all ways: coords=global only frees local memory; auto is
    local on PoCL)"""
    inst = _uniform(300, 22)
    spec = get_solver("pils")
    runs = [solve(inst, spec, spec.params_from({"cell": str(CELL), "round_kicks": "8",
                                                "coords": coords}), rt, seed=5, iterations=600)
            for coords in ("local", "global", "auto")]
    for run in runs[1:]:
        assert np.array_equal(runs[0].order, run.order) and runs[0].length == run.length
    assert runs[1].length == inst.tour_length(runs[1].order)


def test_on_a_gpu_auto_reads_coordinates_globally_for_larger_cells():
    """(an H100's limits: 48 KiB of local memory; 864 cities a cell in local memory, 1,216
    with the coordinates read through the caches)"""
    from tspcl.device import DeviceLimits

    inst = _uniform(5000, 1)
    gpu = DeviceLimits(1024, 48 * 1024, 80 << 30, 20 << 30, 132, True)
    cpu = DeviceLimits(4096, 48 * 1024, 80 << 30, 20 << 30, 16, False)
    fits = {(coords, limits.is_gpu): pils.CellLayout.of(
        inst, SegmentIlsParams(coords=coords), 8, limits).fits
        for coords in ("auto", "local", "global") for limits in (gpu, cpu)}
    assert fits[("local", True)] == fits[("auto", False)] == fits[("local", False)] == 864
    assert fits[("auto", True)] == fits[("global", True)] == fits[("global", False)] == 1216
    assert pils.cells_local_xy(inst, SegmentIlsParams(), is_gpu=False)
    assert not pils.cells_local_xy(inst, SegmentIlsParams(), is_gpu=True)


def test_a_bounded_polish_still_gives_an_exact_tour_and_a_history_that_ends_at_it(rt):  # noqa: F811
    """(eight rounds' kicks on any device: a round runs about GROUPS_PER_UNIT work-groups
    a compute unit, round_kicks each)"""
    inst = _uniform(400, 22)
    spec = get_solver("pils")
    groups = min(pils.GROUPS_PER_UNIT * rt.limits.compute_units, pils.MOST_GROUPS)
    res = solve(inst, spec, spec.params_from({"cell": str(CELL), "round_kicks": "4",
                                              "polish_steps": "1"}), rt, seed=5,
                iterations=8 * 4 * groups)
    assert sorted(res.order.tolist()) == list(range(400))
    assert res.length == inst.tour_length(res.order)
    lengths = [p.best_length for p in res.history]
    # every round's device length is in the history (more points than tours read
    # back), strictly falling, and the last is the tour's exact length
    assert len(lengths) > 3 and all(a > b for a, b in zip(lengths, lengths[1:]))
    assert lengths[-1] == res.length


def test_a_deadline_inside_the_first_polish_stops_it_between_two_steps(rt):  # noqa: F811
    """The descent from the greedy tour goes in slices of the search's steps under a
    time limit; the deadline comes after the first and the run ends with that tour
    (exact, no worse than greedy), before any round."""
    inst = _uniform(300, 21)
    spec = get_solver("pils")
    ctx = run_on_a_counting_clock(rt, spec, inst, spec.params_from({"cell": str(CELL)}), at=4.5)
    greedy = solve(inst, get_solver("greedy"), get_solver("greedy").params_type(), rt)
    assert ctx.iterations == 0 and sorted(ctx.best_order.tolist()) == list(range(300))
    assert ctx.best_length == inst.tour_length(ctx.best_order) <= greedy.length


def test_a_time_limit_that_does_not_cut_the_run_leaves_its_tour_unchanged(rt):  # noqa: F811
    """Under a time limit the descent and the first round's polish go in slices of
    steps: the tour is the one of the run without a limit."""
    inst = _uniform(300, 21)
    spec = get_solver("pils")
    params = spec.params_from({"cell": str(CELL), "round_kicks": "8"})
    free = solve(inst, spec, params, rt, seed=3, iterations=600)
    limited = solve(inst, spec, params, rt, seed=3, iterations=600, deadline=time.perf_counter() + 3600)
    assert np.array_equal(free.order, limited.order) and limited.iterations == free.iterations
