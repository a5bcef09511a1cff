"""The benchmark runner (tspcl.bench): output files, rows, gaps, and specs checked up front."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_fixtures import TEST_DATA, rt  # noqa: F401  (rt skips when there is no OpenCL device)
from tspcl.bench import COLUMNS, FIGURE, gap_series, load_suite, run_suite
from tspcl.errors import DataError, MissingInputError, UsageError
from tspcl.gen import generate, known_optimum
from tspcl.plot import available
from tspcl.tsplib import RunLog, format_log

CIRCLE50_OPT = known_optimum(generate("circle", 50))
ROOT = Path(__file__).resolve().parents[1]


def _python(*args, cwd=None) -> subprocess.CompletedProcess:
    """python ARGS with this checkout's tspcl importable, as an installed package is."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


SPEC = """
name = "tiny"
warmup = 1
repeats = 1
seeds = [1, 2]

[[group]]
instances = ["gen:circle:50", "gen:uniform:120:7"]
algorithms = ["nn", "greedy", "sfc", "random"]
params = { candidates = 6 }
"""


def _write(tmp_path, text: str, name: str = "suite.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_run_suite_writes_csv_json_md(tmp_path, rt):  # noqa: F811
    out = tmp_path / "out"
    rows = run_suite(_write(tmp_path, SPEC), os.environ.get("TSPCL_TEST_DEVICE"), str(out),
                     command="pytest")
    # 2 instances x 4 algorithms x 2 seeds x 1 repeat
    assert len(rows) == 16
    assert all(set(r) == set(COLUMNS) for r in rows)
    assert {r["instance"] for r in rows} == {"circle50", "uniform120s7"}
    for r in rows:
        assert r["length"] > 0 and r["wall_s"] >= r["kernel_s"] >= 0
        if r["instance"] == "circle50":
            assert r["optimum"] == CIRCLE50_OPT
            assert r["gap_percent"] == pytest.approx(100 * (r["length"] - r["optimum"]) / r["optimum"], abs=1e-3)
            assert r["gap_percent"] >= 0
        else:
            assert r["optimum"] is None and r["gap_percent"] is None
    assert [r["params"] for r in rows[:4:2]] == ["start_city=0 candidates=6", "candidates=6"]

    with open(out / "results.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 16 and list(table[0]) == COLUMNS
    data = json.loads((out / "results.json").read_text())
    assert data["suite"] == "tiny" and data["command"] == "pytest" and len(data["rows"]) == 16
    md = (out / "results.md").read_text().splitlines()
    assert md[0].startswith("Device: ") and "suite: tiny" in md[0] and "command: `pytest`" in md[0]
    body = [line for line in md if line.startswith("| ") and not line.startswith("| instance")
            and not line.startswith("| ---")]
    assert len(body) == 8  # one line per (instance, algorithm, params)
    nn_circle = next(line for line in body if line.startswith("| circle50 | 50 | nn |"))
    assert "| 2 |" in nn_circle  # two runs (seeds)
    assert nn_circle.endswith("| 0 |") and all(r["iterations"] == 0 for r in rows)  # constructions


def test_rows_say_how_many_iterations_a_run_did(tmp_path, rt):  # noqa: F811
    spec = """
name = "colony"
warmup = 0
seeds = [1, 2]

[[group]]
instances = ["gen:uniform:40:3"]
algorithms = ["acs"]
params = { variant = "alt", ants = 8, iterations = 7, batch = 3 }
"""
    out = tmp_path / "out"
    rows = run_suite(_write(tmp_path, spec), os.environ.get("TSPCL_TEST_DEVICE"), str(out), command="pytest")
    assert [r["iterations"] for r in rows] == [7, 7]
    line = next(x for x in (out / "results.md").read_text().splitlines() if x.startswith("| uniform"))
    assert line.endswith("| 7 |")
    assert (out / FIGURE).is_file() == available()  # drawn by default where it can be


def test_gap_series_is_the_median_best_so_far_or_final_points():
    def row(inst, alg, optimum, length, wall_s):
        return {"instance": inst, "algorithm": alg, "params": "", "optimum": optimum,
                "length": length, "wall_s": wall_s}

    rows = [row("a", "ils", 100, 110, 2.0), row("a", "ils", 100, 105, 1.0),
            row("b", "nn", None, 200, 0.02), row("b", "nn", None, 180, 0.03)]
    histories = [[(0.1, 130), (1.0, 110)], [(0.2, 120), (0.5, 105)], [(0.01, 200)], [(0.01, 180)]]
    ils, nn = gap_series(rows, histories)
    assert ils.label == "a ils" and ils.steps
    # from 0.2 s, when both runs have a tour, to the end of the longer run
    assert ils.seconds.tolist() == [0.2, 0.5, 1.0, 2.0]
    assert ils.values.tolist() == [25.0, 17.5, 7.5, 7.5]
    assert nn.label == "b nn (vs best)" and not nn.steps  # no optimum: the suite's best
    assert nn.seconds.tolist() == [0.02, 0.03]
    assert nn.values.tolist() == pytest.approx([100 * 20 / 180, 0.0])


def test_figure_without_matplotlib(tmp_path, monkeypatch, capsys, rt):  # noqa: F811
    """Asked for, a figure without matplotlib fails before anything runs; by default,
    the suite runs and a note says how to get it."""
    for module in ("matplotlib", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, module, None)
    spec = _write(tmp_path, '[[group]]\ninstances = ["gen:circle:20"]\nalgorithms = ["nn"]\n')
    with pytest.raises(UsageError, match=r"pip install 'tspcl\[plot\]'"):
        run_suite(spec, None, str(tmp_path / "out"), figure=True)
    assert not (tmp_path / "out").exists()
    run_suite(spec, os.environ.get("TSPCL_TEST_DEVICE"), str(tmp_path / "out"))
    assert not (tmp_path / "out" / FIGURE).exists()
    assert f"no {FIGURE}: drawing needs matplotlib (pip install 'tspcl[plot]')" in capsys.readouterr().err


@pytest.mark.parametrize("text, error, words", [
    ('[[group]]\ninstances = ["gen:uniform:50"]\nalgorithms = ["nn", "bogus"]\n', UsageError, "bogus"),
    ('[[group]]\ninstances = ["no/such/file.tsp"]\nalgorithms = ["nn"]\n', MissingInputError, "file.tsp"),
    ('[[group]]\ninstances = ["{shared}/no_such.tsp"]\nalgorithms = ["nn"]\n', MissingInputError, "no_such"),
    ('[[group]]\ninstances = ["gen:spiral:50"]\nalgorithms = ["nn"]\n', UsageError, "gen:"),
    ('[[group]]\ninstances = ["gen:uniform:50"]\nalgorithms = ["nn"]\nparams = { k = "x" }\n', UsageError, "k"),
    ('[[group]]\ninstances = ["gen:uniform:50"]\nalgorithms = ["sfc"]\nparams = { k = 5 }\n', UsageError, "k"),
    ('[[group]]\ninstances = ["gen:uniform:50"]\nalgorithms = ["nn"]\nrepeat = 3\n', UsageError, "repeat"),
    ('name = "empty"\n', UsageError, "group"),
    ('[[group]\n', DataError, "TOML"),
    ('time_limit = nan\n[[group]]\ninstances = ["gen:uniform:50"]\nalgorithms = ["nn"]\n', UsageError, "time_limit"),
    ('[[group]]\ninstances = ["gen:uniform:50"]\nalgorithms = ["nn"]\ntime_limit = inf\n', UsageError, "time_limit"),
])
def test_bad_specs_fail_before_running(tmp_path, monkeypatch, text, error, words):
    import tspcl.run

    def boom(*a, **k):
        raise AssertionError("ran a solver before the spec was checked")

    monkeypatch.setattr(tspcl.run, "solve", boom)
    spec = _write(tmp_path, text)
    with pytest.raises(error) as e:
        run_suite(spec, None, str(tmp_path / "out"))
    assert words in str(e.value)
    assert not (tmp_path / "out").exists()


def test_whole_spec_checked_first(tmp_path):
    """A bad second group stops the suite before the first group runs."""
    text = SPEC + '\n[[group]]\ninstances = ["missing.tsp"]\nalgorithms = ["nn"]\n'
    with pytest.raises(MissingInputError):
        load_suite(_write(tmp_path, text))


def test_cli_writes_to_bench_out_spec_name_by_default(tmp_path, rt):  # noqa: F811
    """``tspcl bench SPEC`` without --out: bench-out/SPEC (the spec's name without .toml)
    under the current folder, so that suites run in turn keep their results apart."""
    _write(tmp_path, '[[group]]\ninstances = ["gen:circle:20"]\nalgorithms = ["nn"]\n'
                     'seeds = [1]\n', "tiny_nn.toml")
    device = os.environ.get("TSPCL_TEST_DEVICE")
    r = _python("-m", "tspcl", "bench", "tiny_nn.toml", *(["--device", device] if device else []),
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "bench-out" / "tiny_nn"
    assert sorted(p.name for p in out.iterdir()) == (["gap.png"] if available() else []) + [
        "results.csv", "results.json", "results.jsonl", "results.md"]
    assert [row["algorithm"] for row in json.loads((out / "results.json").read_text())["rows"]] == ["nn"]


def test_missing_spec_file(tmp_path):
    with pytest.raises(MissingInputError):
        run_suite(str(tmp_path / "nope.toml"), None, str(tmp_path / "out"))


def test_shipped_suites_parse():
    suites = ROOT / "scripts" / "suites"
    for spec in sorted(suites.glob("*.toml")):
        try:
            suite = load_suite(str(spec))
        except MissingInputError:
            continue  # shared instances absent on this machine
        assert suite.groups and suite.name == spec.stem


def test_unsupported_pairs_are_skipped(tmp_path, rt, capsys):  # noqa: F811
    shutil.copy(TEST_DATA / "tiny4.atsp", tmp_path)
    spec = _write(tmp_path, '[[group]]\ninstances = ["tiny4.atsp"]\n'
                            'algorithms = ["nn", "greedy", "sfc"]\nparams = { k = 3 }\n')
    rows = run_suite(spec, os.environ.get("TSPCL_TEST_DEVICE"), str(tmp_path / "out"))
    assert [r["algorithm"] for r in rows] == ["nn"]  # relative path: found beside the spec
    err = capsys.readouterr().err
    assert "skip greedy on tiny4" in err and "skip sfc on tiny4" in err


def test_acs_large_summary_reads_errors_and_when_the_paper_s_was_reached(tmp_path):
    """scripts/acs_large_summary.py: best and mean final error per instance, and the
    first logged time at or below the paper's Table 10 error (rl11849: 15.12 %)."""
    optimum = 1000000
    (tmp_path / "optima.csv").write_text(f"name,dimension,edge_weight_type,optimum,status\n"
                                         f"rl11849,11849,EUC_2D,{optimum},optimal\n")
    runs = {1: [(0.5, 0, 1400000), (9.0, 300, 1151300), (12.0, 400, 1151100), (120.0, 8000, 1060000)],
            2: [(0.5, 0, 1500000), (30.0, 900, 1100000), (119.0, 7900, 1080000)],
            3: [(0.5, 0, 1600000), (118.0, 7800, 1200000)]}
    logs = []
    for seed, progress in runs.items():
        path = tmp_path / f"rl11849.{seed}.log"
        path.write_text(format_log(RunLog("rl11849", "acs", {"variant": "spm"}, "gpu", seed, "x", progress)))
        logs.append(str(path))
    r = _python(str(ROOT / "scripts" / "acs_large_summary.py"), str(tmp_path / "optima.csv"), *logs)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    row = next(line for line in out.splitlines() if line.startswith("| rl11849"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "3"                                   # runs
    assert cells[2] == "7,900" and cells[3] == "119 s"       # medians of the last improvements
    assert cells[4] == "6.00" and cells[5] == "11.33"        # best, mean of 6, 8, 20 %
    assert cells[6] == "15.12 (8263 s)"
    # 1151300 is above 1.1512 * optimum, 1151100 is not: seed 1 reached it at 12 s
    assert cells[7] == "12.0 s (it. 400); 30.0 s (it. 900); not reached"
