"""The Python API (tspcl/api.py): problems as paths, Instances, coordinate arrays and
matrices; Result's fields; the runtime kept between calls; files; the CLI's errors."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tspcl
from kernel_fixtures import DEVICE_ENV, TEST_DATA, get_runtime
from tspcl import api
from tspcl.errors import DataError, MissingInputError, OutputError, UsageError
from tspcl.instance import Instance
from tspcl.tsplib import read_tour as read_tour_file

N = 40


@pytest.fixture(scope="module")
def device() -> str:
    """The test device's spec (skips without an OpenCL device)."""
    get_runtime()
    return os.environ.get(DEVICE_ENV) or "auto"


@pytest.fixture
def square(tmp_path) -> Path:
    """tests/data/small8.tsp (optimum 800) with an optima.csv beside it that says so."""
    (tmp_path / "optima.csv").write_text("name,optimum\nsmall8,800\n")
    return Path(shutil.copy(TEST_DATA / "small8.tsp", tmp_path))


def _points(n: int = N, dims: int = 2, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).random((n, dims)) * 1000


def _closed_length(matrix: np.ndarray, tour: np.ndarray) -> int:
    return int(matrix[tour, np.roll(tour, -1)].sum())


def _is_permutation(tour: np.ndarray, n: int) -> bool:
    return tour.ndim == 1 and np.array_equal(np.sort(tour), np.arange(n))


@pytest.mark.parametrize("dims, weight_type", [(2, "EUC_2D"), (3, "EUC_3D")])
def test_coordinates_give_a_tour_of_their_exact_length(device, dims, weight_type):
    xy = _points(dims=dims)
    r = tspcl.solve(xy, algo="2opt", device=device)
    inst = api.as_instance(xy)
    assert inst.weight_type == weight_type and inst.kind == "TSP"
    assert _is_permutation(r.tour, N) and r.n == N and r.algorithm == "2opt"
    assert r.length == inst.tour_length(r.tour)
    assert r.chosen is None and r.stopped == "done" and isinstance(r.device, str)


def test_metric_chooses_the_weight_type(device):
    xy = np.random.default_rng(2).integers(0, 100, (N, 2))
    r = tspcl.solve(xy, algo="nn", metric="man_2d", device=device)
    manhattan = np.abs(xy[:, None, :] - xy[None, :, :]).sum(axis=2)
    assert r.length == _closed_length(manhattan, r.tour)


def test_a_symmetric_matrix_is_a_tsp_and_auto_says_its_choice(device):
    xy = np.random.default_rng(3).integers(0, 1000, (N, 2))
    m = np.rint(np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))).astype(np.int64)
    r = tspcl.solve(m, iterations=2, device=device)
    assert api.as_instance(m).kind == "TSP" and api.as_instance(m).weight_type == "EXPLICIT"
    assert r.algorithm == "pils" and r.chosen.startswith("symmetric: pils")
    assert _is_permutation(r.tour, N) and r.length == _closed_length(m, r.tour)


def test_an_asymmetric_matrix_is_an_atsp_solved_one_way_round(device):
    m = np.random.default_rng(4).integers(1, 500, (N, N))
    r = tspcl.solve(m, iterations=2, device=device)
    assert api.as_instance(m).kind == "ATSP"
    assert r.algorithm == "ga" and r.chosen.startswith("asymmetric: ga")
    assert _is_permutation(r.tour, N) and r.length == _closed_length(m, r.tour)


def test_a_path_an_instance_and_the_known_optimum(device, square):
    r = tspcl.solve(square, algo="greedy", device=device)
    assert r.instance == "small8" and r.length == 800 and r.optimum == 800 and r.gap == 0.0
    inst = tspcl.read_problem(square)
    assert isinstance(inst, tspcl.Instance) and inst.n == 8
    again = tspcl.solve(inst, algo="greedy", device=device)
    assert np.array_equal(again.tour, r.tour)
    assert tspcl.solve(str(square), algo="greedy", device=device).length == 800


def test_parameters_are_python_values(device):
    r = tspcl.solve(_points(), algo="2opt", candidate_kind="knn", candidates=8, batch=None,
                    device=device)
    assert r.params["candidate_kind"] == "knn" and r.params["candidates"] == 8
    assert r.params["batch"] == 64         # None: the default


def test_the_same_seed_gives_the_same_tour(device):
    xy = _points()
    first, again, other = (tspcl.solve(xy, algo="random", seed=s, device=device) for s in (7, 7, 8))
    assert np.array_equal(first.tour, again.tour) and first.seed == 7
    assert not np.array_equal(first.tour, other.tour)


def test_a_runtime_serves_every_call(device, monkeypatch):
    xy = _points()
    tspcl.solve(xy, algo="2opt", device=device)
    rt = api.runtime(device)
    built = dict(rt._programs)

    def no_new_runtime(*args, **kwargs):
        raise AssertionError("a second Runtime was made")

    monkeypatch.setattr("tspcl.api.Runtime", no_new_runtime)
    r = tspcl.solve(xy, algo="2opt", device=device, seed=2)
    assert api.runtime(device) is rt and r.device == rt.name
    assert rt._programs == built           # the same programs: none built again


def test_the_library_installs_no_signal_handler(device):
    before = signal.getsignal(signal.SIGINT)
    tspcl.solve(_points(), algo="nn", device=device)
    assert signal.getsignal(signal.SIGINT) is before


def test_a_time_limit_counts_from_the_call(device):
    r = tspcl.solve(_points(), algo="ils", time_limit=0, device=device)
    assert r.stopped == "time limit" and _is_permutation(r.tour, N)


def test_tours_are_written_and_read_back(tmp_path, square, device):
    r = tspcl.solve(square, algo="greedy", device=device)
    out = tmp_path / "small8.tour"
    tspcl.write_tour(out, r.tour, problem=square, comment="by greedy")
    assert np.array_equal(tspcl.read_tour(out), r.tour)
    written = read_tour_file(str(out))
    assert written.name == "small8" and written.comment == "by greedy"
    tspcl.write_tour(tmp_path / "plain.tour", [2, 0, 1])
    assert read_tour_file(str(tmp_path / "plain.tour")).name == "plain"
    assert tspcl.read_tour(tmp_path / "plain.tour").tolist() == [2, 0, 1]


@pytest.mark.parametrize("tour, problem, message", [
    ([0, 1, 1], None, "not a tour: city 2 is visited 2 times"),
    ([[0, 1]], None, "a tour is a 1-D array of city numbers, not shape (1, 2)"),
    ([0, 1, 2], "square", "not a tour of small8: tour has 3 cities, the problem has 8"),
])
def test_write_tour_refuses_what_is_not_a_tour(tmp_path, square, tour, problem, message):
    out = tmp_path / "bad.tour"
    with pytest.raises(UsageError, match=f"^{str(out)}: " + re.escape(message) + "$"):
        tspcl.write_tour(out, tour, problem=square if problem else None)
    assert not out.exists()


def test_write_tour_says_an_unwritable_file():
    with pytest.raises(OutputError, match="cannot create output file"):
        tspcl.write_tour("/nonexistent/folder/x.tour", [0, 1, 2])


def test_arrays_are_told_apart_by_shape_and_type():
    assert api.as_instance(np.array([[0, 3], [3, 0]])).weight_type == "EXPLICIT"   # square ints
    assert api.as_instance(np.array([[0.0, 3.0], [3.0, 0.0]])).weight_type == "EUC_2D"
    assert api.as_instance(np.zeros((3, 3), int), metric="EUC_3D").weight_type == "EUC_3D"
    assert api.as_instance(np.full((5, 5), 2.0), metric="EXPLICIT").matrix.dtype == np.int32
    assert api.as_instance([[1, 2], [3, 4], [5, 6]]).weight_type == "EUC_2D"
    xy = _points()
    inst = api.as_instance(xy)
    xy[0] = -1.0
    assert inst.coords[0, 0] != -1.0       # a copy: the caller's array may change


ERRORS = [
    (dict(problem=np.array([[0, 0], [1, np.nan], [2, 2]])), DataError,
     "<array>: city 2: coordinates 1 nan are not finite numbers"),
    (dict(problem=np.zeros((4, 5), int)), DataError, "<array>: expected coordinates with 2 or 3 "
     "columns or a square integer distance matrix, not shape (4, 5) of int64"),
    (dict(problem=np.zeros((4, 4))), DataError, "a float matrix needs metric='EXPLICIT'"),
    (dict(problem=np.zeros((4, 5)), metric="EXPLICIT"), DataError,
     "<array>: a distance matrix must be square, not shape (4, 5)"),
    (dict(problem=np.full((3, 3), 0.5), metric="EXPLICIT"), DataError,
     "<array>: matrix weights must be integers"),
    (dict(problem=np.full((3, 3), 2**40)), DataError, "matrix weights must fit in 32 bits"),
    (dict(problem=np.zeros((0, 2))), DataError, "n >= 1, not shape (0, 2)"),
    (dict(problem=np.zeros(5)), DataError, "not shape (5,)"),
    (dict(problem=[[1, 2], [3]]), DataError, "<array>: not an array of numbers"),
    (dict(problem=np.zeros((4, 2)), metric="EUC_3D"), DataError,
     "<array>: EUC_3D takes 3 coordinates a city, the array has 2 columns"),
    (dict(problem={"a": 1}), UsageError, "problem must be a TSPLIB path, an Instance or an array "
     "of numbers (got dict of object)"),
    (dict(problem="/nonexistent/x.tsp"), MissingInputError,
     "/nonexistent/x.tsp: No such file or directory"),
    (dict(problem=TEST_DATA / "small8.tsp", metric="EUC_2D"), UsageError,
     "metric= applies to arrays only"),
    (dict(metric="EUC_4D"), UsageError, "metric must be one of EUC_2D, CEIL_2D, "),
    (dict(algo="nn", bogus=1), UsageError, "nn has no parameter 'bogus' (parameters: "),
    (dict(algo="2opt", candidates="many"), UsageError,
     "parameter candidates: 'many' is not a valid int"),
    (dict(algo="2opt", candidates=[8]), UsageError,
     "parameter candidates: give a number, a string or a boolean (got list)"),
    (dict(algo="2opt", batch=float("inf")), UsageError, "parameter batch: 'inf' is not a valid int"),
    (dict(algo="zz"), UsageError, "unknown algorithm 'zz'; choose one of nn, "),
    (dict(algo="nn", iterations=-1), UsageError, "--iterations takes a whole number from 0"),
    (dict(time_limit=float("nan")), UsageError,
     "time_limit: seconds must be a finite number, at least 0 (got nan)"),
    (dict(time_limit=-1), UsageError, "time_limit: seconds must be"),
    (dict(seed=-1), UsageError, "seed must be a whole number from 0 to 18446744073709551615"),
    (dict(seed=1.5), UsageError, "seed must be a whole number"),
    (dict(device="tpu"), UsageError, "--device must be auto, gpu, cpu or P:D (got 'tpu')"),
]


@pytest.mark.parametrize("kwargs, error, message", ERRORS,
                         ids=[f"{e.__name__}-{i}" for i, (_, e, _m) in enumerate(ERRORS)])
def test_errors_are_the_clis(kwargs, error, message):
    kwargs = {"problem": np.zeros((4, 2)), **kwargs}
    with pytest.raises(error, match=re.escape(message)):
        tspcl.solve(kwargs.pop("problem"), **kwargs)


def test_import_is_cheap_and_the_names_are_there():
    code = ("import sys, tspcl; assert 'numpy' not in sys.modules and 'pyopencl' not in sys.modules;"
            "import tspcl.api, tspcl.errors; assert tspcl.solve is tspcl.api.solve;"
            "assert tspcl.UsageError is tspcl.errors.UsageError; assert 'write_tour' in dir(tspcl)")
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        tspcl.nothing  # noqa: B018
    assert isinstance(tspcl.Result, type) and tspcl.Instance is Instance
