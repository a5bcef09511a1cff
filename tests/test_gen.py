"""Instance generators: reproducibility, ranges, known optima (proved small, reached large)."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

from tspcl.errors import EXIT_USAGE, UsageError
from tspcl.gen import GENERATORS, generate, grid_shape, known_optimum, optimal_tour
from tspcl.instance import Instance

CIRCLE_NS = [3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 31, 64, 99, 100, 101, 127, 500, 997,
             1000, 1001, 1024, 1999, 2000]
GRID_NS = [4, 6, 8, 10, 12, 14, 22, 36, 100, 128, 998, 1000, 1024, 4096, 10000]


def brute_force_optimum(inst: Instance) -> int:
    """Shortest closed tour by enumerating every order with city 0 first."""
    d = inst.full_matrix()
    n = inst.n
    perms = np.array(list(itertools.permutations(range(1, n))), dtype=np.int64)
    tours = np.concatenate([np.zeros((len(perms), 1), np.int64), perms], axis=1)
    lengths = d[tours, np.roll(tours, -1, axis=1)].sum(axis=1)
    return int(lengths.min())


# ---- reproducibility, sizes, ranges ------------------------------------------------------
@pytest.mark.parametrize("kind", GENERATORS)
def test_same_seed_same_instance(kind):
    a = generate(kind, 1000, seed=7)
    b = generate(kind, 1000, seed=7)
    assert np.array_equal(a.coords, b.coords)
    assert a.comment == b.comment and a.name == b.name
    c = generate(kind, 1000, seed=8)
    assert not np.array_equal(a.coords, c.coords)
    assert generate(kind, 1000).comment == generate(kind, 1000, seed=1).comment


@pytest.mark.parametrize("kind", GENERATORS)
@pytest.mark.parametrize("n", [4, 10, 100, 1000, 5000])
def test_sizes_and_fields(kind, n):
    inst = generate(kind, n, seed=3)
    assert inst.n == n
    assert inst.coords.shape == (n, 2) and inst.coords.dtype == np.float64
    assert np.isfinite(inst.coords).all()
    assert inst.kind == "TSP" and inst.weight_type == "EUC_2D"
    assert inst.name == f"{kind}{n}"
    assert inst.comment.startswith(f"tspcl gen {kind} n={n} seed=3")
    assert generate(kind, n, name="mine").name == "mine"


@pytest.mark.parametrize("kind", ["uniform", "clustered"])
@pytest.mark.parametrize("n", [3, 99, 100, 20000])
def test_random_kinds_integer_coords_in_square(kind, n):
    inst = generate(kind, n, seed=5)
    c = inst.coords
    assert (c >= 0).all() and (c < 1_000_000).all()
    assert np.array_equal(c, np.rint(c))
    assert known_optimum(inst) is None
    assert optimal_tour(inst) is None
    # not degenerate: many distinct positions
    assert len(np.unique(c, axis=0)) > n // 2


def test_uniform_spreads_over_the_square():
    c = generate("uniform", 100_000, seed=2).coords
    assert abs(c.mean() - 500_000) < 5_000
    counts = np.histogram2d(c[:, 0], c[:, 1], bins=4, range=[[0, 1e6], [0, 1e6]])[0]
    assert counts.min() > 0.8 * 100_000 / 16


def test_clustered_is_more_clustered_than_uniform():
    def empty_cells(c):
        counts = np.histogram2d(c[:, 0], c[:, 1], bins=50, range=[[0, 1e6], [0, 1e6]])[0]
        return (counts == 0).mean()

    assert empty_cells(generate("uniform", 20_000, seed=4).coords) < 0.01
    assert empty_cells(generate("clustered", 20_000, seed=4).coords) > 0.3


@pytest.mark.parametrize("n", [3, 5, 100, 1001, 2000])
def test_circle_is_a_regular_polygon(n):
    inst = generate("circle", n, seed=9)
    c = inst.coords
    assert (c >= -1e-6).all()
    centre = c.mean(axis=0)
    r = np.hypot(*(c - centre).T)
    assert np.allclose(r, r[0], rtol=1e-9)
    t = optimal_tour(inst)
    side = inst.dist(t, np.roll(t, -1))
    assert (side == side[0]).all()
    assert known_optimum(inst) == n * int(side[0])


def test_circle_and_grid_numbering_is_shuffled():
    for kind in ("circle", "grid"):
        inst = generate(kind, 1000, seed=1)
        t = optimal_tour(inst)
        assert not np.array_equal(t, np.arange(1000))
        assert inst.tour_length(np.arange(1000)) > known_optimum(inst)


# ---- known optima ------------------------------------------------------------------------
@pytest.mark.parametrize("n", CIRCLE_NS)
def test_circle_optimum_reached_and_minimal(n):
    inst = generate("circle", n, seed=n)
    opt = known_optimum(inst)
    assert opt is not None and opt > 0 and opt % n == 0
    s = opt // n
    t = optimal_tour(inst)
    assert inst.tour_length(t) == opt
    # s is the smallest distance between two distinct cities, so no tour is shorter
    d = inst.full_matrix()
    np.fill_diagonal(d, np.iinfo(np.int64).max)
    assert d.min() == s
    # every city has exactly its two polygon neighbours at distance s (n > 4: else ties)
    if n > 4:
        assert ((d == s).sum(axis=1) == 2).all()


@pytest.mark.parametrize("n", GRID_NS)
def test_grid_optimum_reached_and_minimal(n):
    inst = generate("grid", n, seed=n)
    opt = known_optimum(inst)
    assert opt == 100 * n
    t = optimal_tour(inst)
    assert inst.tour_length(t) == opt
    assert np.array_equal(inst.coords, np.rint(inst.coords))
    rows, cols = grid_shape(n)
    assert rows * cols == n and 2 <= rows <= cols and (rows % 2 == 0 or cols % 2 == 0)
    assert inst.coords[:, 0].max() == 100 * (cols - 1)
    assert inst.coords[:, 1].max() == 100 * (rows - 1)
    assert len(np.unique(inst.coords, axis=0)) == n
    if n <= 2000:
        d = inst.full_matrix()
        np.fill_diagonal(d, np.iinfo(np.int64).max)
        assert d.min() == 100


@pytest.mark.parametrize("n,shape", [(4, (2, 2)), (6, (2, 3)), (12, (3, 4)), (14, (2, 7)),
                                     (100, (10, 10)), (1000, (25, 40)), (10000, (100, 100)),
                                     (2 * 9973, (2, 9973))])
def test_grid_shape_closest_to_square(n, shape):
    assert grid_shape(n) == shape


@pytest.mark.parametrize("kind,n", [("circle", n) for n in range(3, 9)]
                         + [("grid", n) for n in (4, 6, 8)])
def test_tiny_optimum_by_brute_force(kind, n):
    for seed in (1, 2):
        inst = generate(kind, n, seed=seed)
        assert brute_force_optimum(inst) == known_optimum(inst)
        assert inst.tour_length(optimal_tour(inst)) == known_optimum(inst)


def test_large_instances():
    inst = generate("circle", 200_000, seed=3)
    assert inst.tour_length(optimal_tour(inst)) == known_optimum(inst)
    inst = generate("grid", 2 * 100_003, seed=3)            # 2 x prime
    assert grid_shape(inst.n) == (2, 100_003)
    assert inst.tour_length(optimal_tour(inst)) == known_optimum(inst) == 100 * inst.n
    inst = generate("grid", 250_000, seed=3)
    assert inst.tour_length(optimal_tour(inst)) == known_optimum(inst)


def test_known_optimum_parsing():
    def with_comment(c):
        return Instance(name="x", kind="TSP", weight_type="EUC_2D",
                        coords=np.zeros((3, 2)), comment=c)

    assert known_optimum(with_comment("tspcl gen circle n=100 seed=1; optimum 31400")) == 31400
    assert known_optimum(with_comment("Optimum 7")) == 7
    assert known_optimum(with_comment("")) is None
    assert known_optimum(with_comment("optimum tour unknown")) is None
    assert optimal_tour(with_comment("some file; optimum 3")) is None


# ---- bad arguments -----------------------------------------------------------------------
@pytest.mark.parametrize("kind", GENERATORS)
@pytest.mark.parametrize("n", [-5, 0, 1, 2, 10_000_001])
def test_bad_n(kind, n):
    with pytest.raises(UsageError):
        generate(kind, n)


@pytest.mark.parametrize("n", [3, 5, 7, 9, 15, 101, 9973, 10001])
def test_grid_needs_even_n(n):
    with pytest.raises(UsageError, match="even"):
        generate("grid", n)


@pytest.mark.parametrize("bad", [2.5, "10", None, True])
def test_non_integer_n(bad):
    with pytest.raises(UsageError):
        generate("uniform", bad)


def test_bad_kind_and_seed():
    with pytest.raises(UsageError, match="unknown generator"):
        generate("spiral", 10)
    with pytest.raises(UsageError):
        generate("uniform", 10, seed=-1)
    with pytest.raises(UsageError):
        generate("uniform", 10, seed=1.5)


def test_numpy_integer_arguments():
    a = generate("uniform", np.int64(50), seed=np.int32(4))
    assert np.array_equal(a.coords, generate("uniform", 50, seed=4).coords)


# ---- TSPLIB round trip -------------------------------------------------------------------
@pytest.mark.parametrize("kind,n", [("uniform", 500), ("clustered", 500), ("circle", 3),
                                    ("circle", 7), ("circle", 1001), ("circle", 50_000),
                                    ("grid", 12), ("grid", 1000)])
def test_tsplib_round_trip(kind, n):
    tsplib = pytest.importorskip("tspcl.tsplib")
    inst = generate(kind, n, seed=11)
    back = tsplib.parse_problem(tsplib.format_problem(inst))
    assert back.n == n and back.name == inst.name
    assert back.weight_type == "EUC_2D" and back.kind == "TSP"
    assert np.array_equal(back.coords, inst.coords)          # bit for bit
    assert back.comment == inst.comment
    assert known_optimum(back) == known_optimum(inst)
    i = np.arange(n)
    for shift in (1, 2, 3, n // 2):
        assert np.array_equal(back.dist(i, np.roll(i, -shift)), inst.dist(i, np.roll(i, -shift)))
    t = optimal_tour(back)
    if kind in ("circle", "grid"):
        assert back.tour_length(t) == known_optimum(back)
    else:
        assert t is None


# ---- names: what gen writes, tspcl reads back as it was given -------------------------
@pytest.mark.parametrize("name", ["a\nb", "a\rb", " padded", "padded ", "nul\x00",
                                  "esc\x1b[0m", "raw\udcff", "line\u2028sep", "\t"])
def test_names_that_would_not_read_back_are_refused(name):
    with pytest.raises(UsageError, match="cannot be written as it is"):
        generate("uniform", 10, name=name)


@pytest.mark.parametrize("name", ["", "my instance", "a:b", "\u00e4\U0001f600", "EOF",
                                  "x" * 500])
def test_odd_but_writable_names_round_trip(name):
    from tspcl.tsplib import format_problem, parse_problem

    inst = generate("circle", 10, name=name)
    assert parse_problem(format_problem(inst)).name == name


def test_cli_refuses_a_name_with_a_newline():
    r = subprocess.run([sys.executable, "-m", "tspcl", "gen", "uniform", "-n", "5",
                        "--name", "two\nlines"], capture_output=True, text=True, timeout=60)
    assert r.returncode == EXIT_USAGE and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "'two\\nlines'" in r.stderr


# ---- batches ----------------------------------------------------------------------------
def test_a_batch_is_the_instances_of_its_seeds():
    from tspcl.gen import generate_many

    batch = generate_many("uniform", 12, 3, seed=5)
    assert [inst.name for inst in batch] == ["uniform12-5", "uniform12-6", "uniform12-7"]
    for seed, inst in zip((5, 6, 7), batch):
        assert np.array_equal(inst.coords, generate("uniform", 12, seed).coords)


@pytest.mark.parametrize("count", [0, -1, 1.5, True, 10_000_001])
def test_a_batch_needs_a_count(count):
    from tspcl.gen import generate_many

    with pytest.raises(UsageError, match="count"):
        generate_many("uniform", 12, count)
