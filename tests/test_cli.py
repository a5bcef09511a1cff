"""The command line as a user drives it: real processes, stdout vs stderr, exit statuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernel_fixtures import TEST_DATA
from tspcl import errors
from tspcl.tsplib import parse_log, parse_tour

ROOT = Path(__file__).resolve().parents[1]

SMALL = (TEST_DATA / "small8.tsp").read_text()


def tspcl(*args, stdin: str | None = None, cwd=None, env_extra: dict | None = None):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "tspcl", *args], input=stdin, text=True,
                          capture_output=True, env=env, cwd=cwd, timeout=300)


def test_solve_writes_a_tour_on_stdout_and_diagnostics_on_stderr(small):
    r = tspcl("solve", str(small), "--algo", "nn", "--seed", "3")
    assert r.returncode == 0, r.stderr
    tour = parse_tour(r.stdout)
    assert sorted(tour.order.tolist()) == list(range(8))
    assert "length 800" in r.stdout  # the square's perimeter, stated in the COMMENT
    assert "device" in r.stderr and "TOUR_SECTION" not in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("args", [("--algo", "acs", "--variant", "spm"), ("--algo", "acs", "--variant", "gpu"),
                                  ("--algo", "mmas", "--variant", "rwm-lc", "--ls", "2opt"),
                                  ("--algo", "mmas", "--variant", "wrs-bt"), ("--algo", "ga"),
                                  ("--algo", "lk"), ("--algo", "tabu")])
def test_quiet_runs_print_nothing_even_when_kernels_are_built_afresh(small, tmp_path, args):
    """A compiler's warnings (PoCL prints them on stderr, without its own cache or
    pyopencl's) would break --quiet's promise: aco.cl's and acs.cl's did."""
    r = tspcl("solve", str(small), *args, "--iterations", "3", "-o", str(tmp_path / "t.tour"), "-q",
              env_extra={"PYOPENCL_NO_CACHE": "1", "POCL_KERNEL_CACHE": "0"})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""


@pytest.mark.parametrize("algo", ["nn", "greedy", "sfc", "random"])
def test_every_construction_verifies(small, tmp_path, algo):
    out = tmp_path / "t.tour"
    r = tspcl("solve", str(small), "--algo", algo, "-o", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""
    v = tspcl("verify", str(small), str(out))
    assert v.returncode == 0, v.stderr
    assert "valid tour, length" in v.stdout


def test_same_seed_same_bytes(small):
    a = tspcl("solve", str(small), "--algo", "random", "--seed", "11", "-q")
    b = tspcl("solve", str(small), "--algo", "random", "--seed", "11", "-q")
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout


def test_json_summary_and_log(small, tmp_path):
    log = tmp_path / "run.log"
    r = tspcl("solve", str(small), "--algo", "greedy", "--json", "--log", str(log), "-q")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["length"] == 800 and summary["n"] == 8 and summary["algorithm"] == "greedy"
    parsed = parse_log(log.read_text())
    assert parsed.algorithm == "greedy" and parsed.progress[-1][2] == 800


def test_dash_output_is_stdout(small, tmp_path):
    r = tspcl("solve", str(small), "--algo", "nn", "-o", "-", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert parse_tour(r.stdout).order.size == 8 and not (tmp_path / "-").exists()
    tour = tmp_path / "t.tour"
    r = tspcl("solve", str(small), "--algo", "greedy", "-o", str(tour), "--log", "-", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert parse_log(r.stdout).progress[-1][2] == 800 and parse_tour(tour.read_text()).order.size == 8
    g = tspcl("gen", "uniform", "-n", "20", "-o", "-", cwd=tmp_path)
    assert g.returncode == 0 and "DIMENSION : 20" in g.stdout and not (tmp_path / "-").exists()


@pytest.mark.parametrize("args", [["--log", "-"], ["-o", "-", "--json"], ["--json", "--log", "-"],
                                  ["-o", "-", "--log", "-", "--json"]])
def test_one_thing_on_stdout(small, tmp_path, args):
    r = tspcl("solve", str(small), "--algo", "nn", *args, "-q", cwd=tmp_path)
    assert r.returncode == errors.EXIT_USAGE and "can go to stdout" in r.stderr
    assert r.stdout == "" and list(tmp_path.iterdir()) == [small]


def test_stdin_pipeline_into_verify(small):
    r = tspcl("solve", "-", "--algo", "nn", "-q", stdin=SMALL)
    assert r.returncode == 0, r.stderr
    v = tspcl("verify", str(small), "-", stdin=r.stdout)
    assert v.returncode == 0 and "length 800" in v.stdout


def test_issue_pipeline_pr1002(shared_instances):
    problem = shared_instances / "tsplib" / "pr1002.tsp"
    r = tspcl("solve", "-", "--algo", "nn", "--seed", "1", "-q", stdin=problem.read_text())
    assert r.returncode == 0, r.stderr
    v = tspcl("verify", str(problem), "-", stdin=r.stdout)
    assert v.returncode == 0, v.stderr
    length = int(v.stdout.split("length ")[1].split(",")[0])
    assert length > 259045  # pr1002's optimum
    assert "gap" in v.stdout  # optimum found in optima.csv beside the instances


def test_verify_rejects_an_invalid_tour(small, tmp_path):
    bad = tmp_path / "bad.tour"
    bad.write_text("TYPE : TOUR\nDIMENSION : 8\nTOUR_SECTION\n1 2 3 4 5 6 7 7\n-1\nEOF\n")
    v = tspcl("verify", str(small), str(bad))
    assert v.returncode == errors.EXIT_INVALID_TOUR
    assert "visited 2 times" in v.stderr and v.stdout == ""


def test_missing_file(tmp_path):
    r = tspcl("solve", str(tmp_path / "nope.tsp"))
    assert r.returncode == errors.EXIT_NO_INPUT
    assert r.stderr.count("\n") == 1 and "nope.tsp" in r.stderr and r.stdout == ""


def test_bad_data_names_file_and_line_and_leaves_no_output(tmp_path):
    p = tmp_path / "bad.tsp"
    p.write_text(SMALL.replace("5 200 200", "5 200 zz"))
    out = tmp_path / "out.tour"
    r = tspcl("solve", str(p), "-o", str(out))
    assert r.returncode == errors.EXIT_DATA
    assert f"{p}:10:" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists() and r.stdout == ""
    assert list(tmp_path.iterdir()) == [p]  # no temp file left behind either


@pytest.mark.parametrize("args,fragment", [
    (["--algo", "nosuch"], "unknown algorithm"),
    (["--algo", "nn", "-p", "k=zero"], "not a valid int"),
    (["--algo", "nn", "-p", "nosuch=1"], "no parameter"),
    (["--algo", "nn", "-p", "k"], "KEY=VALUE"),
    (["--device", "banana"], "--device"),
    (["--seed", "-4"], ""),
    (["--algo", "nn", "--kick", "local"], "does not apply"),
    (["--algo", "nn", "--iterations", "0.1n"], "whole number"),
    (["--algo", "ils", "--iterations", "lots"], "kicks must be"),
    (["--algo", "hc", "--tenure", "5"], "does not apply"),
    (["--algo", "tabu", "--neighborhood", "4opt"], "neighborhood must be"),
    (["--algo", "tabu", "--iterations", "1n"], "not a valid int"),
    (["--algo", "mmas", "--variant", "rwm-xx"], "variant must be"),
    (["--algo", "nn", "--rho", "0.5"], "does not apply"),
])
def test_usage_errors(small, args, fragment):
    r = tspcl("solve", str(small), *args)
    assert r.returncode == errors.EXIT_USAGE, r.stderr
    assert fragment in r.stderr and r.stdout == "" and "Traceback" not in r.stderr


def test_unknown_device_index(small):
    r = tspcl("solve", str(small), "-a", "nn", "--device", "9:9")
    assert r.returncode == errors.EXIT_NO_DEVICE and "9:9" in r.stderr


def test_unsupported_combination_is_a_usage_error(tmp_path):
    p = tmp_path / "m.atsp"
    p.write_text("NAME: m\nTYPE: ATSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                 "EDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1 2\n3 0 4\n5 6 0\nEOF\n")
    r = tspcl("solve", str(p), "--algo", "greedy")
    assert r.returncode == errors.EXIT_USAGE and "symmetric" in r.stderr
    assert tspcl("solve", str(p), "--algo", "nn", "-q").returncode == 0
    r = tspcl("solve", str(p), "--algo", "tabu", "--neighborhood", "2opt")
    assert r.returncode == errors.EXIT_USAGE and "symmetric" in r.stderr and r.stdout == ""


def test_mmas_from_the_command_line(tmp_path):
    p = tmp_path / "u.tsp"
    assert tspcl("gen", "uniform", "-n", "50", "-o", str(p)).returncode == 0
    r = tspcl("solve", str(p), "--algo", "mmas", "--variant", "rwm-ct", "--cl", "16", "--ants", "20",
              "--rho", "0.8", "--beta", "3", "--iterations", "30", "--json", "-q")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["iterations"] == 30 and summary["params"]["variant"] == "rwm-ct"
    assert summary["params"]["persistence"] == 0.8 and summary["params"]["ants"] == 20


def test_acs_reports_the_parameters_its_run_used(tmp_path):
    """ants = 0 (one per city), q0 unset ((n - 20) / n) and candidates above n - 1 are reported as
    the run used them, in --json and in the tour's COMMENT, not as the sentinels."""
    p, out = tmp_path / "u.tsp", tmp_path / "u.tour"
    assert tspcl("gen", "uniform", "-n", "25", "-o", str(p)).returncode == 0
    r = tspcl("solve", str(p), "--algo", "acs", "--iterations", "3", "-o", str(out), "--json", "-q")
    assert r.returncode == 0, r.stderr
    params = json.loads(r.stdout)["params"]
    assert params["ants"] == 25 and params["q0"] == pytest.approx(5 / 25) and params["candidates"] == 24
    comment = parse_tour(out.read_text(), str(out)).comment
    assert "ants=25 " in comment and "q0=0.2 " in comment and "candidates=24 " in comment, comment


def test_tabu_search_from_the_command_line(tmp_path):
    p = tmp_path / "u.tsp"
    assert tspcl("gen", "uniform", "-n", "60", "-o", str(p)).returncode == 0
    r = tspcl("solve", str(p), "--algo", "tabu", "--neighborhood", "2opt", "--tenure", "5",
              "--iterations", "150", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["iterations"] == 150 and summary["params"]["tenure"] == 5
    assert summary["notes"] and "thread control" in r.stderr  # the tuned launch is reported


def test_unwritable_output(small, tmp_path):
    r = tspcl("solve", str(small), "-a", "nn", "-o", str(tmp_path / "no" / "dir" / "x.tour"))
    assert r.returncode == errors.EXIT_CANT_CREATE and "x.tour" in r.stderr


def test_debug_shows_a_traceback(tmp_path):
    r = tspcl("solve", str(tmp_path / "nope.tsp"), "--debug")
    assert r.returncode != 0 and "Traceback" in r.stderr


def test_info_devices_and_gen(tmp_path):
    g = tmp_path / "c.tsp"
    assert tspcl("gen", "circle", "-n", "50", "-o", str(g)).returncode == 0
    info = tspcl("info", str(g))
    assert info.returncode == 0, info.stderr
    assert "dimension   50" in info.stdout and "optimum" in info.stdout
    assert all(name in info.stdout for name in ("nn", "greedy", "sfc", "random"))
    d = tspcl("devices")
    assert d.returncode == 0 and "platform 0" in d.stdout
    s = tspcl("solve", str(g), "--algo", "greedy", "--json", "-q")
    assert json.loads(s.stdout)["gap_percent"] is not None
    assert json.loads(s.stdout)["bhh_gap_percent"] is None  # an optimum is known


def test_bhh_estimate_stands_in_for_an_unknown_optimum(tmp_path):
    """0.7124 sqrt(n A) over the bounding box, and the gap to it, where no optimum is known."""
    from tspcl.optima import bhh_estimate
    from tspcl.tsplib import read_problem

    u = tmp_path / "u.tsp"
    assert tspcl("gen", "uniform", "-n", "400", "-s", "3", "-o", str(u)).returncode == 0
    inst = read_problem(str(u))
    box = np.ptp(inst.coords, axis=0)
    assert bhh_estimate(inst) == pytest.approx(0.7124 * np.sqrt(400 * box[0] * box[1]))
    s = json.loads(tspcl("solve", str(u), "--algo", "greedy", "--json", "-q").stdout)
    assert s["optimum"] is None
    assert s["bhh_gap_percent"] == pytest.approx(100 * (s["length"] / s["bhh_estimate"] - 1), abs=1e-3)
    explicit = tmp_path / "e.tsp"
    explicit.write_text("NAME : e\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
                        "EDGE_WEIGHT_FORMAT : FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1 2\n1 0 3\n2 3 0\nEOF\n")
    assert bhh_estimate(read_problem(str(explicit))) is None


def test_help_texts_explain():
    for cmd in ([], ["solve"], ["verify"], ["info"], ["algorithms"], ["devices"], ["gen"], ["bench"]):
        r = tspcl(*cmd, "--help")
        assert r.returncode == 0 and "Usage" in r.stdout


@pytest.mark.slow
def test_time_limit_writes_the_best_tour_so_far(tmp_path):
    g = tmp_path / "u.tsp"
    assert tspcl("gen", "uniform", "-n", "2000", "-o", str(g)).returncode == 0
    out = tmp_path / "u.tour"
    r = tspcl("solve", str(g), "--algo", "ils", "--iterations", "10n", "--time-limit", "5",
              "-o", str(out), "--json", "-q")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["iterations"] < 20000  # stopped by the clock, not the budget
    v = tspcl("verify", str(g), str(out))
    assert v.returncode == 0 and f"length {summary['length']}" in v.stdout


def test_the_clock_counts_from_process_start():
    """--time-limit and the log's times count from the process's start, not from the
    import of tspcl.cli: a process that waited half a second first has spent it."""
    code = ("import time; time.sleep(0.5); import tspcl.cli as c; "
            "print(time.perf_counter() - c._STARTED)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) >= 0.45


def test_version_names_the_release_and_commit():
    r = tspcl("--version")
    assert r.returncode == 0 and r.stdout.startswith("tspcl 0.1.0"), r.stderr


def test_the_default_algorithm_is_auto_and_says_its_choice(small):
    """Without --algo a symmetric instance gets pils (bridges=0.5 on a CPU device), said
    on stderr, in the tour's COMMENT and the JSON summary; the run's last stderr line
    gives length, gap and why it stopped."""
    r = tspcl("solve", str(small), "-i", "2n", "-d", "cpu")
    assert r.returncode == 0, r.stderr
    assert "tspcl: auto: symmetric: pils" in r.stderr and "bridges=0.5 on a CPU device" in r.stderr
    assert "no --time-limit" not in r.stderr            # -i is a budget: no default time
    tour = parse_tour(r.stdout)
    assert "algorithm pils" in tour.comment and "auto: symmetric" in tour.comment
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("tspcl: pils on small8: length 800, ")   # no optimum known, n too small for BHH
    assert last.endswith("stopped by its own end (budget or local optimum)")
    s = json.loads(tspcl("solve", str(small), "-i", "2n", "-d", "cpu", "--json", "-q").stdout)
    assert s["algorithm"] == "pils" and s["auto"].startswith("symmetric") and s["stopped"] == "done"


def test_auto_takes_the_users_parameters_for_the_solver_it_picks(small, tmp_path):
    log = tmp_path / "run.log"
    r = tspcl("solve", str(small), "-i", "2n", "-d", "cpu", "-p", "bridges=0.25", "--log", str(log), "-q")
    assert r.returncode == 0, r.stderr
    run = parse_log(log.read_text())
    assert run.algorithm == "pils" and run.parameters["bridges"] == "0.25"
    assert run.comment.startswith("auto: symmetric")
    bad = tspcl("solve", str(small), "-i", "2n", "-d", "cpu", "-p", "tenure=3")
    assert bad.returncode == errors.EXIT_USAGE and "tenure" in bad.stderr


def test_auto_solves_an_asymmetric_instance_with_the_ga(tmp_path):
    p = tmp_path / "a.atsp"
    p.write_text("NAME : a5\nTYPE : ATSP\nDIMENSION : 5\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
                 "EDGE_WEIGHT_FORMAT : FULL_MATRIX\nEDGE_WEIGHT_SECTION\n"
                 + "".join(" ".join(str(0 if i == j else 1 + (3 * i + 7 * j) % 11) for j in range(5)) + "\n"
                           for i in range(5)) + "EOF\n")
    s = json.loads(tspcl("solve", str(p), "-i", "3", "-d", "cpu", "--json", "-q").stdout)
    assert s["algorithm"] == "ga" and s["auto"].startswith("asymmetric")
