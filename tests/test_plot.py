"""Pictures (tspcl.plot): tours and curves in each format, what they draw, and the errors."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tspcl.errors import UsageError
from tspcl.gen import generate
from tspcl.instance import Instance
from tspcl.plot import available, plot_curves, plot_tour
from tspcl.tsplib import RunLog, format_log, format_problem, read_log

MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".svg": b"<?xml", ".pdf": b"%PDF-"}
SVG = "{http://www.w3.org/2000/svg}"
needs_matplotlib = pytest.mark.skipif(not available(), reason="matplotlib is not installed")


def _uniform(n: int = 30) -> tuple[Instance, np.ndarray]:
    inst = generate("uniform", n, seed=3)
    return inst, np.random.default_rng(1).permutation(n)


def _log(seed: int, progress) -> RunLog:
    return RunLog("uniform30", "ils", {"ls": "2opt"}, "pocl", seed, "0.1", progress)


def _drawn(svg_path, gid: str) -> ET.Element:
    root = ET.parse(svg_path).getroot()
    return next(e for e in root.iter() if e.get("id") == gid)


@needs_matplotlib
@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_tour_in_each_format(tmp_path, suffix):
    inst, order = _uniform()
    path = tmp_path / f"tour{suffix}"
    assert plot_tour(inst, order, str(path)) == inst.n
    assert path.read_bytes().startswith(MAGIC[suffix])
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left


@needs_matplotlib
def test_png_decodes(tmp_path):
    from matplotlib.image import imread

    inst, order = _uniform()
    plot_tour(inst, order, str(tmp_path / "t.png"))
    height, width, _ = imread(tmp_path / "t.png").shape
    assert height > 100 and width > 100


@needs_matplotlib
def test_svg_draws_every_edge_and_city(tmp_path):
    inst, order = _uniform()
    plot_tour(inst, order, str(tmp_path / "t.svg"))
    tour = _drawn(tmp_path / "t.svg", "tour")
    (d,) = [e.get("d") for e in tour.iter(f"{SVG}path")]
    assert d.count("M") == 1 and d.count("L") == inst.n          # one closed line, n edges
    assert len(list(_drawn(tmp_path / "t.svg", "cities").iter(f"{SVG}use"))) == inst.n


@needs_matplotlib
def test_explicit_problem_draws_its_display_data(tmp_path):
    coords = generate("uniform", 12, seed=2).coords
    inst = Instance("m12", "TSP", "EXPLICIT", matrix=np.ones((12, 12), np.int32),
                    display=coords)
    assert plot_tour(inst, np.arange(12), str(tmp_path / "m.svg")) == 12


def test_problem_without_coordinates(tmp_path):
    inst = Instance("m4", "TSP", "EXPLICIT", matrix=np.ones((4, 4), np.int32))
    with pytest.raises(UsageError, match="m4 has no coordinates to draw .EXPLICIT without "
                                         "DISPLAY_DATA_SECTION"):
        plot_tour(inst, np.arange(4), str(tmp_path / "m.png"))
    assert not list(tmp_path.iterdir())


def test_not_a_tour(tmp_path):
    inst, _ = _uniform()
    with pytest.raises(UsageError, match="not a tour of uniform30: city 1 is visited 30 times"):
        plot_tour(inst, np.zeros(inst.n, np.int64), str(tmp_path / "t.png"))


@pytest.mark.parametrize("name", ["tour.jpg", "tour", "tour.png.txt"])
def test_bad_suffix(tmp_path, name):
    inst, order = _uniform()
    with pytest.raises(UsageError, match=r"must end in \.png, \.svg, \.pdf"):
        plot_tour(inst, order, str(tmp_path / name))
    assert not list(tmp_path.iterdir())


def test_missing_matplotlib_says_how_to_install_it(tmp_path, monkeypatch):
    for module in ("matplotlib", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, module, None)  # import fails
    assert not available()
    inst, order = _uniform()
    with pytest.raises(UsageError) as e:
        plot_tour(inst, order, str(tmp_path / "t.png"))
    assert "pip install 'tspcl[plot]'" in e.value.message and "\n" not in e.value.message
    with pytest.raises(UsageError, match="tspcl.plot"):
        plot_curves([("a", _log(1, [(0.1, 0, 100)]))], str(tmp_path / "c.png"))
    assert not list(tmp_path.iterdir())


@needs_matplotlib
def test_a_failed_drawing_leaves_the_old_file(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    inst, order = _uniform()
    path = tmp_path / "t.png"
    path.write_bytes(b"old picture")

    def half_written(self, out, **kwargs):
        out.write(b"\x89PNG half")
        raise RuntimeError("renderer failed")

    monkeypatch.setattr(Figure, "savefig", half_written)
    with pytest.raises(RuntimeError, match="renderer failed"):
        plot_tour(inst, order, str(path))
    assert path.read_bytes() == b"old picture"
    assert [p.name for p in tmp_path.iterdir()] == ["t.png"]
    monkeypatch.undo()
    plot_tour(inst, order, str(path))
    assert path.read_bytes().startswith(MAGIC[".png"])


def test_never_replaces_the_problem_it_draws(tmp_path):
    inst, order = _uniform()
    problem = tmp_path / "uniform30.svg"  # a problem file with a picture's name
    problem.write_text(format_problem(inst))
    from tspcl.tsplib import read_problem

    read = read_problem(str(problem))
    with pytest.raises(UsageError, match="an input the picture is drawn from"):
        plot_tour(read, order, str(problem))
    assert problem.read_text() == format_problem(inst)


@needs_matplotlib
def test_curves_one_per_log_with_progress(tmp_path):
    logs = [("seed 1", _log(1, [(0.01, 0, 1200), (0.5, 9, 1100), (3.0, 40, 1050)])),
            ("seed 2", _log(2, [(0.02, 0, 1300)])),
            ("empty", _log(3, []))]
    for optimum in (None, 1000):
        path = tmp_path / f"c{optimum}.svg"
        assert plot_curves(logs, str(path), optimum=optimum) == 2
        root = ET.parse(path).getroot()
        assert sorted(e.get("id") for e in root.iter()
                      if (e.get("id") or "").startswith("curve-")) == ["curve-0", "curve-1"]


def test_curves_need_progress(tmp_path):
    with pytest.raises(UsageError, match="no progress lines"):
        plot_curves([("empty", _log(1, []))], str(tmp_path / "c.png"))


def test_read_log_reads_what_format_log_writes(tmp_path):
    log = _log(7, [(0.25, 3, 1234), (1.5, 10, 1200)])
    (tmp_path / "run.log").write_text(format_log(log))
    assert read_log(str(tmp_path / "run.log")) == log
