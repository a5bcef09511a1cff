"""FIXED_EDGES_SECTION: impossible fixed edges are bad data, a tour without one of them
is invalid (``verify`` exits 1), and every solver refuses a problem that has them."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tspcl.errors import EXIT_DATA, EXIT_INVALID_TOUR, EXIT_USAGE, DataError, UsageError
from tspcl.gen import generate
from tspcl.instance import Instance
from tspcl.run import solve
from tspcl.solvers import REGISTRY
from tspcl.tsplib import format_problem, parse_problem


def tsp_text(edges: str, n: int = 6) -> str:
    """n cities on a hexagon-ish ring, the fixed edges on lines 7 + n onwards."""
    nodes = "".join(f"{i + 1} {int(100 * np.cos(i))} {int(100 * np.sin(i))}\n"
                    for i in range(n))
    return (f"NAME : f\nTYPE : TSP\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : EUC_2D\n"
            f"NODE_COORD_SECTION\n{nodes}FIXED_EDGES_SECTION\n{edges}\nEOF\n")


def atsp_text(edges: str, n: int = 3) -> str:
    """An n-city ATSP (lines 1-7 + n: header and matrix), the fixed edges after it."""
    rows = "".join(" ".join("0" if i == j else str(i + 2 * j + 1) for j in range(n)) + "\n"
                   for i in range(n))
    return (f"NAME : a\nTYPE : ATSP\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
            f"EDGE_WEIGHT_FORMAT : FULL_MATRIX\nEDGE_WEIGHT_SECTION\n{rows}"
            f"FIXED_EDGES_SECTION\n{edges}\nEOF\n")


FIRST = 13   # the first fixed-edge line of tsp_text with n = 6
ATSP_FIRST = 11


@pytest.mark.parametrize("text, fixed", [
    (tsp_text("1 2\n2 3\n-1"), [[0, 1], [1, 2]]),
    (tsp_text("1 2 2 3 3 4 4 5 5 6 6 1 -1"), [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5],
                                              [5, 0]]),          # a whole tour is fine
    (tsp_text("6 1\n3.0 4\n"), [[5, 0], [2, 3]]),                 # no -1, integral float
    (tsp_text("1 2\n-1", n=2), [[0, 1]]),
    (atsp_text("1 2\n2 3\n-1"), [[0, 1], [1, 2]]),
    (atsp_text("1 2\n2 1\n-1", n=2), [[0, 1], [1, 0]]),          # ATSP: both ways, n = 2
])
def test_possible_fixed_edges_are_kept(text, fixed):
    inst = parse_problem(text, "ok.tsp")
    assert inst.fixed_edges.tolist() == fixed
    assert parse_problem(format_problem(inst)).fixed_edges.tolist() == fixed


@pytest.mark.parametrize("text, line, words", [
    (tsp_text("1 2\n2 2\n-1"), FIRST + 1, "a fixed edge from city 2 to itself"),
    (tsp_text("1 2\n3 4\n1 2\n-1"), FIRST + 2, "fixed edge 1 2 is given twice"),
    (tsp_text("1 2\n2 1\n-1"), FIRST + 1, "fixed edge 2 1 is given twice"),
    (tsp_text("1 2\n1 3\n5 6 1 4\n-1"), FIRST + 2, "3 fixed edges at city 1 (a tour has 2)"),
    (tsp_text("1 2\n2 3\n3 1\n-1"), FIRST + 2,
     "fixed edges close a cycle through 3 of the 6 cities"),
    (tsp_text("4 5 1 2 2 3 5 6\n6 4\n-1"), FIRST + 1, "a cycle through 3 of the 6 cities"),
    (tsp_text("1 7\n-1"), FIRST, "city 7 is not in 1..6"),
    (tsp_text("1 2\n0 1\n-1"), FIRST + 1, "city 0 is not in 1..6"),
    (tsp_text("1 2\n-3 1\n-1"), FIRST + 1, "city -3 is not in 1..6"),
    (tsp_text("1 2\n3 99999999999999999999\n-1"), FIRST + 1, "too large"),
    (tsp_text("1 2_0\n-1"), FIRST, "got '2_0'"),
    (tsp_text("1 \uff12\n-1"), FIRST, "expected a number"),
    (tsp_text("1 2.5\n-1"), FIRST, "expected an integer node id, got '2.5'"),
    (tsp_text("1 2 3\n-1"), FIRST, "incomplete"),
    (tsp_text("1 2\n-1\n3 4"), FIRST + 2, "after the -1"),
    (atsp_text("1 2\n1 3\n-1"), ATSP_FIRST + 1, "2 fixed edges leaving city 1 (a tour has 1)"),
    (atsp_text("1 3\n2 3\n-1"), ATSP_FIRST + 1,
     "2 fixed edges entering city 3 (a tour has 1)"),
    (atsp_text("1 2\n2 1\n-1"), ATSP_FIRST + 1, "a cycle through 2 of the 3 cities"),
    (atsp_text("1 2\n1 2\n-1"), ATSP_FIRST + 1, "given twice"),
])
def test_impossible_fixed_edges_are_bad_data(text, line, words):
    with pytest.raises(DataError) as e:
        parse_problem(text, "fixed.tsp")
    assert e.value.exit_code == EXIT_DATA
    assert str(e.value).startswith(f"fixed.tsp:{line}: ") and words in str(e.value), e.value


def test_instances_made_in_code_are_checked_too():
    coords = np.zeros((4, 2))
    with pytest.raises(DataError, match=r"fixed edge 3: 3 fixed edges at city 1 \(a tour"):
        Instance(name="x", kind="TSP", weight_type="EUC_2D", coords=coords,
                 fixed_edges=[[0, 1], [0, 2], [0, 3]])
    with pytest.raises(DataError, match="not in 1..4"):
        Instance(name="x", kind="TSP", weight_type="EUC_2D", coords=coords,
                 fixed_edges=[[0, 4]])


# ---- verify: a tour must keep every fixed edge ----------------------------------------
SQUARE = np.array([[0.0, 0.0], [0.0, 3.0], [4.0, 3.0], [4.0, 0.0], [2.0, 5.0], [2.0, -2.0]])


@pytest.mark.parametrize("tour, problem", [
    ([0, 1, 2, 3, 4, 5], None),
    ([1, 0, 5, 4, 3, 2], None),                         # 0-1 and 2-3 travelled backwards
    ([1, 2, 3, 4, 5, 0], None),                         # 0-1 across the end of the order
    ([0, 2, 1, 3, 4, 5], "fixed edge 1-2 (FIXED_EDGES_SECTION) is not in the tour"),
    ([0, 1, 2, 4, 3, 5], "fixed edge 3-4 (FIXED_EDGES_SECTION) is not in the tour"),
    ([0, 1, 2, 2, 3, 5], "city 3 is visited 2 times"),  # not a permutation: said first
])
def test_tour_problem_checks_fixed_edges(tour, problem):
    inst = Instance(name="s", kind="TSP", weight_type="EUC_2D", coords=SQUARE,
                    fixed_edges=np.array([[0, 1], [2, 3]]))
    assert inst.tour_problem(tour) == problem
    if problem and "visited" in problem:
        with pytest.raises(ValueError, match="visited"):
            inst.tour_length(tour)
    else:                         # a permutation has a length, fixed edges kept or not
        t = np.asarray(tour)
        assert inst.tour_length(tour) == int(inst.dist(t, np.roll(t, -1)).sum())


def test_atsp_fixed_edges_have_a_direction():
    inst = parse_problem(atsp_text("1 2\n-1"))
    assert inst.tour_problem([0, 1, 2]) is None
    assert inst.tour_problem([2, 0, 1]) is None
    assert inst.tour_problem([0, 2, 1]) == ("fixed edge 1-2 (FIXED_EDGES_SECTION) is not in "
                                            "the tour")


def _tspcl(*args, cwd):
    return subprocess.run([sys.executable, "-m", "tspcl", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_verify_exits_1_for_a_tour_without_a_fixed_edge(tmp_path):
    (tmp_path / "p.tsp").write_text(tsp_text("1 2\n3 4\n-1"))
    (tmp_path / "good.tour").write_text("TOUR_SECTION\n2 1 6 5 4 3\n-1\n")
    (tmp_path / "bad.tour").write_text("TOUR_SECTION\n1 3 2 4 5 6\n-1\n")
    good = _tspcl("verify", "p.tsp", "good.tour", cwd=tmp_path)
    assert good.returncode == 0 and "valid tour" in good.stdout
    bad = _tspcl("verify", "p.tsp", "bad.tour", cwd=tmp_path)
    assert bad.returncode == EXIT_INVALID_TOUR and bad.stdout == ""
    assert bad.stderr == ("tspcl: bad.tour: invalid tour: fixed edge 1-2 "
                          "(FIXED_EDGES_SECTION) is not in the tour\n")


# ---- solve: refused by every algorithm ----------------------------------------------
def _with_fixed_edge(inst: Instance) -> Instance:
    return Instance(name=inst.name, kind=inst.kind, weight_type=inst.weight_type,
                    coords=inst.coords, fixed_edges=[[0, 1]], source="fixed.tsp")


@pytest.mark.parametrize("algo", list(REGISTRY))
def test_every_solver_refuses_fixed_edges(algo):
    spec = REGISTRY[algo]
    inst = _with_fixed_edge(generate("circle", 64, seed=2))
    assert spec.unsupported(inst) is None        # so the refusal below is the fixed edge's
    with pytest.raises(UsageError) as e:
        solve(inst, spec, spec.params_type(), rt=None)   # refused before any device work
    assert e.value.exit_code == EXIT_USAGE
    assert str(e.value) == ("fixed.tsp has 1 fixed edge (FIXED_EDGES_SECTION); tspcl's "
                            "solvers cannot keep them yet: remove the section to solve "
                            "without them")


def test_cli_solve_refuses_fixed_edges(tmp_path):
    (tmp_path / "p.tsp").write_text(tsp_text("1 2\n3 4\n-1"))
    r = _tspcl("solve", "p.tsp", "--algo", "nn", "-q", cwd=tmp_path)
    assert r.returncode == EXIT_USAGE and r.stdout == ""
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith("tspcl: p.tsp has 2 fixed edges (FIXED_EDGES_SECTION)")


def test_info_says_no_algorithm_takes_fixed_edges(tmp_path):
    (tmp_path / "p.tsp").write_text(tsp_text("1 2\n3 4\n-1"))
    r = _tspcl("info", "p.tsp", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = r.stdout.split("algorithm   device memory   note\n", 1)[1].splitlines()
    assert len(rows) == len(REGISTRY)
    inst = parse_problem(tsp_text("1 2\n3 4\n-1"))
    for row in rows:   # the solver's own reason, where it has one, comes first
        if REGISTRY[row.split()[0]].unsupported(inst) is None:
            assert "fixed edges (FIXED_EDGES_SECTION)" in row, row
