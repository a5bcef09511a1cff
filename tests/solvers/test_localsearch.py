"""Local search and ILS against plain host checks: no improving move is left within the
candidate lists, tours stay valid after every step and kick, seeds reproduce."""

from __future__ import annotations

import numpy as np
import pytest

import tspcl.solvers.localsearch as ls
from kernel_fixtures import rt  # noqa: F401 - fixture
from tspcl.device_instance import DeviceInstance
from tspcl.gen import generate
from tspcl.instance import Instance
from tspcl.neighbors import CandidateParams, build_candidates
from tspcl.run import solve
from tspcl.solvers import REGISTRY


def instances():
    rng = np.random.default_rng(5)
    yield generate("uniform", 150, seed=2)
    yield generate("clustered", 200, seed=3)
    yield Instance("ceil", "TSP", "CEIL_2D", coords=rng.uniform(0, 500, (120, 2)))
    yield Instance("att", "TSP", "ATT", coords=np.round(rng.uniform(0, 5000, (100, 2))))
    m = rng.integers(1, 1000, (60, 60))
    yield Instance("mat", "TSP", "EXPLICIT", matrix=np.triu(m, 1) + np.triu(m, 1).T)


def host_candidates(rt, inst, neighbors="quadrant", m=40):
    kind = neighbors if inst.has_coords else "knn"
    return build_candidates(DeviceInstance(rt, inst), CandidateParams(kind, m)).host(rt)[0]


def positions(tour) -> np.ndarray:
    pos = np.empty(len(tour), int)
    pos[tour] = np.arange(len(tour))
    return pos


def improving_2opt(inst, tour, cand, bentley: bool = False) -> list:
    """Improving 2-opt moves joining a city a to a candidate c; with `bentley`, only
    those whose new edge (a, c) is shorter than the edge (a, b) they remove."""
    n, pos, d, found = len(tour), positions(tour), inst.dist, []
    for a in range(n):
        for c in cand[a]:
            if c == a:
                continue
            for step in (1, -1):  # successor and predecessor variants
                b = tour[(pos[a] + step) % n]
                dd = tour[(pos[c] + step) % n]
                if b == c or dd == a or (bentley and d(a, c) >= d(a, b)):
                    continue
                gain = d(a, b) + d(c, dd) - d(a, c) - d(b, dd)
                if gain > 0:
                    found.append((a, int(c), step, int(gain)))
    return found


def improving_oropt(inst, tour, cand) -> list:
    """Segments of 1-3 cities starting or ending at a, moved next to candidate c with a
    touching c, between (c, succ c) or (pred c, c)."""
    n, pos, d, found = len(tour), positions(tour), inst.dist, []
    for a in range(n):
        for c in cand[a]:
            if c == a:
                continue
            for L in (1, 2, 3):
                for backward in (False, True):
                    s = (pos[a] - L + 1) % n if backward else pos[a]
                    seg = [tour[(s + t) % n] for t in range(L)]
                    prev, nxt = tour[(s - 1) % n], tour[(s + L) % n]
                    for after_c in (True, False):
                        g = pos[c] if after_c else (pos[c] - 1) % n
                        if (g - (s - 1)) % n <= L:
                            continue
                        u, w = tour[g], tour[(g + 1) % n]
                        # a must touch c: pick the orientation that does
                        first, last = (seg[0], seg[-1])
                        if (after_c and first != a) or (not after_c and last != a):
                            first, last = last, first
                        gain = (d(prev, seg[0]) + d(seg[-1], nxt) + d(u, w) - d(prev, nxt)
                                - d(u, first) - d(last, w))
                        if gain > 0:
                            found.append((a, int(c), L, backward, after_c, int(gain)))
    return found


def improving_3opt(inst, tour, cand) -> list:
    """3-opt over triples (a, c, f) read in either direction as a b .. p c .. e f: c a
    candidate of a, f a candidate of p, with positive partial gains (d(a,c) < d(a,b),
    d(p,f) < d(a,b) - d(a,c) + d(p,c)); the removed edges (a,b), (p,c), (e,f) are joined
    in any of the paper's four ways."""
    n, pos, d, found = len(tour), positions(tour), inst.dist, []
    for a in range(n):
        for step in (1, -1):
            b = tour[(pos[a] + step) % n]
            for c in cand[a]:
                oc = (step * (pos[c] - pos[a])) % n
                if oc < 2 or d(a, c) >= d(a, b):
                    continue
                p = tour[(pos[c] - step) % n]
                for f in cand[p]:
                    if d(p, f) >= d(a, b) - d(a, c) + d(p, c) or (step * (pos[f] - pos[a])) % n <= oc:
                        continue
                    e = tour[(pos[f] - step) % n]
                    removed = d(a, b) + d(p, c) + d(e, f)
                    for way, added in enumerate((d(a, c) + d(e, b) + d(p, f), d(a, c) + d(e, p) + d(b, f),
                                                 d(a, e) + d(c, b) + d(p, f), d(a, p) + d(b, e) + d(c, f))):
                        if removed - added > 0:
                            found.append((a, step, int(c), int(f), way, int(removed - added)))
    return found


def lk_chain_gains(inst, tour, cand, a, slot, step, depth, branch, chain_m) -> list:
    """Closing gains of the Lin-Kernighan chain of (a, cand[a][slot]) at depths 2..depth,
    each step done as a real 2-opt move on a copy of the tour, its gain the drop in the
    recomputed length.  step -1 reads the tour backwards.  The choices follow the
    kernel's rule: from the second step on, the candidates t5 of the chain's t2 with
    positive partial gain, skipping t1, succ t2, removed edges as added ones and added
    edges as removed ones, ranked by -d(t2, t5) + d(t5, pred t5) (ties in list order);
    the second step takes the branch-th of them, later steps the first; steps after the
    first look at the first chain_m candidates only (None: all)."""
    d = inst.dist
    t = [int(x) for x in (tour if step == 1 else tour[::-1])]
    n, length0 = len(t), inst.tour_length(t)
    pos = {c: i for i, c in enumerate(t)}
    c = int(cand[a][slot])
    t1 = t[pos[a] - 1]
    G = d(t1, a) - d(a, c)
    if G <= 0 or c == t1 or c == t[(pos[a] + 1) % n]:
        return []
    removed, added, gains, t3 = [{t1, a}], [{a, c}], [], c
    for k in range(depth):
        t2 = t[(pos[t1] + 1) % n]
        t4 = t[pos[t3] - 1]
        G += d(t3, t4)
        removed.append({t3, t4})
        i, j = (pos[t1] + 1) % n, pos[t4]           # reverse the path t2 .. t4
        rot = t[i:] + t[:i]
        m = (j - i) % n + 1
        t = rot[:m][::-1] + rot[m:]
        pos = {x: q for q, x in enumerate(t)}
        assert t[(pos[t1] + 1) % n] == t4 and G - d(t4, t1) == length0 - inst.tour_length(t)
        if k >= 1:
            gains.append(length0 - inst.tour_length(t))
        ranked = []
        for order, t5 in enumerate(int(x) for x in cand[t4][:chain_m]):
            g = G - d(t4, t5)
            if g <= 0:
                break
            if t5 == t1 or t5 == t[(pos[t4] + 1) % n] or {t4, t5} in removed:
                continue
            t6 = t[pos[t5] - 1]
            if {t5, t6} not in added:
                ranked.append((-(g + d(t5, t6)), order, t5))
        rank = branch if k == 0 else 0
        if len(ranked) <= rank or k == depth - 1:
            break
        nxt = sorted(ranked)[rank][2]
        G -= d(t4, nxt)
        added.append({t4, nxt})
        t3 = nxt
    return gains


def improving_lk(inst, tour, cand, depth, breadth=1, chain_m=None) -> list:
    return [(a, slot, step, branch, g) for a in range(len(tour)) for slot in range(len(cand[a]))
            for step in (1, -1) for branch in range(breadth)
            for g in lk_chain_gains(inst, tour, cand, a, slot, step, depth, branch, chain_m)
            if g > 0 and cand[a][slot] != a]


@pytest.mark.slow
@pytest.mark.parametrize("algo,extra,checks", [
    ("2opt", {}, ("2opt",)),
    ("oropt", {}, ("oropt",)),
    ("2opt", {"ls": "2opt+oropt"}, ("2opt", "oropt")),
    ("2opt", {"candidate_kind": "knn", "candidates": "8"}, ("2opt",)),
    ("2opt", {"ls": "2opt+oropt", "moves": "best"}, ("2opt", "oropt")),
    ("3opt", {"candidates": "12"}, ("2opt", "oropt", "3opt")),
    ("lk", {"candidates": "8", "depth": "5"}, ("2opt", "oropt", "3opt", "lk")),
    ("lk", {"candidates": "8", "depth": "4", "breadth": "3"}, ("2opt", "oropt", "3opt", "lk")),
    ("lk", {"candidates": "8", "depth": "6", "chain_candidates": "3"}, ("2opt", "oropt", "3opt", "lk")),
])
def test_local_optimum_within_candidates(rt, algo, extra, checks):  # noqa: F811
    for inst in instances():
        spec = REGISTRY[algo]
        params = spec.params_from(extra)
        res = solve(inst, spec, params, rt, seed=3)
        assert res.length == inst.tour_length(res.order)
        cand = host_candidates(rt, inst, params.candidate_kind, params.candidates)
        if "2opt" in checks:
            assert improving_2opt(inst, res.order, cand) == [], inst.name
        if "oropt" in checks:
            assert improving_oropt(inst, res.order, cand) == [], inst.name
        if "3opt" in checks:
            assert improving_3opt(inst, res.order, cand) == [], inst.name
        if "lk" in checks:
            left = improving_lk(inst, res.order, cand, params.depth, params.breadth, params.chain_candidates)
            assert left == [], inst.name


@pytest.mark.slow
def test_lk_breadth_finds_the_chains_one_branch_misses(rt):  # noqa: F811
    """A case where the optimum of breadth 1 still has improving breadth-3 chains (so the
    host check can fail), and breadth 3 leaves none."""
    inst = generate("uniform", 400, seed=3)
    spec = REGISTRY["lk"]
    for breadth, expect_chains in ((1, True), (3, False)):
        params = spec.params_from({"candidates": "8", "depth": "4", "breadth": str(breadth)})
        res = solve(inst, spec, params, rt, seed=3)
        cand = host_candidates(rt, inst, params.candidate_kind, params.candidates)
        assert bool(improving_lk(inst, res.order, cand, 4, 3)) == expect_chains


def test_local_search_improves_on_its_nn_start(rt):  # noqa: F811
    inst = generate("uniform", 500, seed=4)
    nn = solve(inst, REGISTRY["nn"], REGISTRY["nn"].params_type(), rt, seed=9)
    two = solve(inst, REGISTRY["2opt"], REGISTRY["2opt"].params_type(), rt, seed=9)
    assert two.length < nn.length


@pytest.mark.parametrize("kick", ["random", "local"])
@pytest.mark.parametrize("accept", [{"accept": "always"}, {"accept": "better"},
                                    {"accept": "better", "slack": "0.5"},
                                    {"accept": "better", "ls": "lk", "breadth": "2"}])
def test_ils_tours_valid_after_every_step(rt, monkeypatch, kick, accept):  # noqa: F811
    """batch=1: the current tour is read back and validated (Instance.tour_length raises
    on a non-permutation) after every step."""
    seen = []
    real = ls.DeviceSearch.read_status

    def read_status(search):
        status = real(search)
        t = search.ctx.read_tour(search.tour)
        assert search.ctx.inst.tour_problem(t) is None
        assert search.ctx.inst.tour_length(t) == search.words[ls.StateWord.CUR_LEN]  # device bookkeeping is exact
        seen.append(int(search.words[ls.StateWord.KICKS]))
        return status

    monkeypatch.setattr(ls.DeviceSearch, "read_status", read_status)
    inst = generate("uniform", 120, seed=6)
    spec = REGISTRY["ils"]
    params = spec.params_from({"kicks": "15", "kick": kick, "batch": "1", **accept})
    res = solve(inst, spec, params, rt, seed=2)
    assert res.length == inst.tour_length(res.order)
    assert max(seen) == 15


def test_ils_reproducible_and_better_than_its_first_optimum(rt):  # noqa: F811
    inst = generate("clustered", 300, seed=8)
    spec = REGISTRY["ils"]
    params = spec.params_from({"kicks": "100", "kick": "local"})
    a = solve(inst, spec, params, rt, seed=4)
    b = solve(inst, spec, params, rt, seed=4)
    assert np.array_equal(a.order, b.order)
    first = solve(inst, REGISTRY["3opt"], REGISTRY["3opt"].params_type(), rt, seed=4)
    assert a.length < first.length  # the kicks and the local searches after them pay
    assert a.iterations == 100


def test_ils_slack_bounds_the_walk(rt):  # noqa: F811
    """A slack no local optimum exceeds (100 %: twice the best) never returns to the
    best, which is acceptance 'always'; a small slack is another walk."""
    inst = generate("uniform", 200, seed=5)
    spec = REGISTRY["ils"]

    def tour(**p):
        return solve(inst, spec, spec.params_from({"kicks": "40", "kick": "local", **p}), rt, seed=3).order

    assert np.array_equal(tour(accept="better", slack="100"), tour(accept="always"))
    assert not np.array_equal(tour(accept="better", slack="0"), tour(accept="always"))


def test_tiny_instances_keep_the_nn_tour(rt):  # noqa: F811
    for n in (3, 5, 7):
        inst = generate("circle", n, seed=1)
        res = solve(inst, REGISTRY["ils"], REGISTRY["ils"].params_type(), rt, seed=1)
        assert inst.tour_problem(res.order) is None


@pytest.mark.parametrize("bad", [{"ls": "4opt"}, {"ls": "3opt", "candidates": "52"}, {"kicks": "abc"}, {"accept": "maybe"},
                                 {"kick": "huge"}, {"moves": "some"}, {"candidates": "65"}, {"candidates": "6", "candidate_kind": "quadrant"},
                                 {"ls": "lk", "candidates": "52"}, {"depth": "1"}, {"depth": "32"},
                                 {"breadth": "0"}, {"breadth": "9"},
                                 {"chain_candidates": "0"},
                                 {"slack": "-1"}, {"slack": "101"}])
def test_bad_parameters(bad):
    from tspcl.errors import UsageError

    with pytest.raises(UsageError):
        REGISTRY["ils"].params_from(bad)


def test_kick_budget():
    assert ls.kick_budget("0.1n", 1002) == 101
    assert ls.kick_budget("10n", 5) == 50
    assert ls.kick_budget("7", 1000) == 7
