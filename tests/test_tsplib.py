"""tspcl.tsplib: every shipped file, round trips, messy and malformed input."""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from kernel_fixtures import shared_instances_absent, shared_instances_dir
from tspcl import tsplib
from tspcl.errors import DataError, MissingInputError
from tspcl.instance import Instance
from tspcl.tsplib import (
    EXPLICIT_FORMATS, RunLog, format_log, format_problem, format_tour, one_line, parse_log,
    parse_problem, parse_tour, read_problem, read_text, read_tour,
)


# ---- the shipped instances ------------------------------------------------------------
SHARED = shared_instances_dir()


def _files(pattern_dirs, suffixes):
    absent = shared_instances_absent()
    if absent:
        return [pytest.param(None, marks=pytest.mark.skip(reason=absent), id="absent")]
    found = sorted(p for d in pattern_dirs for p in (SHARED / d).glob("*")
                   if p.name.endswith(suffixes))
    return [pytest.param(p, id=p.name) for p in found]


PROBLEMS = _files(("tsplib", "atsp", "vlsi"), (".tsp", ".atsp"))
TOURS = _files(("tsplib", "atsp", "vlsi"), (".opt.tour",))


@pytest.fixture(scope="module")
def optima(shared_instances):
    with open(shared_instances / "optima.csv", newline="") as f:
        return {row["name"]: row for row in csv.DictReader(f)}


def _stem(path: Path) -> str:
    return path.name.split(".")[0]


@pytest.mark.parametrize("path", PROBLEMS)
def test_shipped_problem_parses(path, optima):
    inst = read_problem(str(path))
    header_dim = int(re.search(r"^\s*DIMENSION\s*:\s*(\d+)", path.read_text(), re.M).group(1))
    assert inst.n == header_dim
    row = optima[_stem(path)]
    assert inst.n == int(row["dimension"])
    kind = inst.weight_type + (f"/{inst.edge_weight_format}" if inst.edge_weight_format else "")
    assert kind == row["edge_weight_type"]
    assert inst.kind == ("ATSP" if path.suffix == ".atsp" else "TSP")
    assert inst.source == str(path)
    if inst.matrix is not None:
        assert inst.matrix.shape == (inst.n, inst.n)
        if inst.symmetric:
            assert np.array_equal(inst.matrix, inst.matrix.T)
    else:
        assert np.isfinite(inst.coords).all()


@pytest.mark.parametrize("path", TOURS)
def test_shipped_optimal_tour_has_the_optimum_length(path, optima):
    tour = read_tour(str(path))
    stem = _stem(path)
    problem = next(path.parent.glob(f"{stem}.*tsp"))
    inst = read_problem(str(problem))
    assert tour.order.dtype == np.int64
    assert inst.tour_problem(tour.order) is None
    assert inst.tour_length(tour.order) == int(optima[stem]["optimum"])


def test_shipped_special_cases(shared_instances):
    tsplib = shared_instances / "tsplib"
    si = read_problem(str(tsplib / "si175.tsp"))           # TYPE: TSP (M.~Hofmeister)
    assert si.kind == "TSP" and si.edge_weight_format == "UPPER_DIAG_ROW"
    bayg = read_problem(str(tsplib / "bayg29.tsp"))        # EXPLICIT + DISPLAY_DATA_SECTION
    assert bayg.display.shape == (29, 2) and bayg.display[0].tolist() == [1150.0, 1760.0]
    lin = read_problem(str(tsplib / "linhp318.tsp"))       # FIXED_EDGES_SECTION first
    assert lin.fixed_edges.tolist() == [[0, 213]]
    burma = read_problem(str(tsplib / "burma14.tsp"))      # GEO + EDGE_WEIGHT_FORMAT: FUNCTION
    assert burma.edge_weight_format is None and burma.dist(0, 1) == 153
    xqf = read_problem(str(shared_instances / "vlsi" / "xqf131.tsp"))   # 3 COMMENT lines
    assert xqf.comment.count("\n") == 2 and xqf.comment.startswith("Bonn VLSI")
    rd = read_tour(str(tsplib / "rd100.opt.tour"))          # no DIMENSION, 10 per line
    assert rd.dimension is None and len(rd.order) == 100


# ---- round trips ----------------------------------------------------------------------
def assert_same_instance(a: Instance, b: Instance):
    assert (a.name, a.kind, a.weight_type, a.comment) == (b.name, b.kind, b.weight_type,
                                                          b.comment)
    assert a.edge_weight_format == b.edge_weight_format
    for field in ("coords", "matrix", "display"):
        x, y = getattr(a, field), getattr(b, field)
        assert (x is None) == (y is None), field
        if x is not None:
            assert x.dtype == y.dtype and x.shape == y.shape, field
            assert x.tobytes() == y.tobytes(), field          # bit for bit
    assert np.array_equal(a.fixed_edges, b.fixed_edges)


@pytest.mark.parametrize("name", ["a280.tsp", "dsj1000.tsp", "att48.tsp", "ulysses22.tsp",
                                  "bayg29.tsp", "bays29.tsp", "dantzig42.tsp", "si175.tsp",
                                  "linhp318.tsp", "pa561.tsp"])
def test_shipped_round_trip(shared_instances, name):
    inst = read_problem(str(shared_instances / "tsplib" / name))
    assert_same_instance(parse_problem(format_problem(inst)), inst)


def test_shipped_atsp_round_trip(shared_instances):
    inst = read_problem(str(shared_instances / "atsp" / "br17.atsp"))
    assert_same_instance(parse_problem(format_problem(inst)), inst)


@pytest.mark.parametrize("weight_type", ["EUC_2D", "CEIL_2D", "MAN_2D", "MAX_2D", "ATT",
                                         "GEO", "EUC_3D", "MAN_3D", "MAX_3D"])
def test_coordinate_round_trip(weight_type):
    rng = np.random.default_rng(1)
    d = 3 if weight_type.endswith("3D") else 2
    coords = rng.uniform(-90, 90, (40, d))                   # awkward floats
    coords[0] = 0.0
    coords[1, 0] = -0.0
    coords[2] = np.round(coords[2])                           # integral values
    coords[3, 0] = 1.5e-12
    inst = Instance(name="r", kind="TSP", weight_type=weight_type, coords=coords,
                    comment="line one\nline two: with colon",
                    fixed_edges=np.array([[0, 5], [7, 3]]))
    back = parse_problem(format_problem(inst))
    assert_same_instance(back, inst)
    assert np.signbit(back.coords[1, 0])


def _sym_matrix(n, seed=0, diag=0):
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 1000, (n, n))
    m = np.triu(m, 1)
    m = m + m.T
    np.fill_diagonal(m, diag)
    return m


@pytest.mark.parametrize("fmt", list(EXPLICIT_FORMATS))
def test_explicit_round_trip(fmt):
    m = _sym_matrix(7, diag=9 if "DIAG" in fmt or fmt == "FULL_MATRIX" else 0)
    display = np.arange(14, dtype=float).reshape(7, 2) / 3
    inst = Instance(name="m", kind="TSP", weight_type="EXPLICIT", matrix=m,
                    edge_weight_format=fmt, display=display)
    text = format_problem(inst)
    assert f"EDGE_WEIGHT_FORMAT : {fmt}" in text
    assert_same_instance(parse_problem(text), inst)


def test_explicit_unrepresentable_matrix_is_written_in_full():
    m = _sym_matrix(5, diag=4)                 # UPPER_ROW has no diagonal
    inst = Instance(name="m", kind="TSP", weight_type="EXPLICIT", matrix=m,
                    edge_weight_format="UPPER_ROW")
    back = parse_problem(format_problem(inst))
    assert back.edge_weight_format == "FULL_MATRIX"
    assert np.array_equal(back.matrix, m)


def test_atsp_round_trip():
    m = np.random.default_rng(3).integers(-5, 2**31 - 1, (6, 6))
    inst = Instance(name="a", kind="ATSP", weight_type="EXPLICIT", matrix=m,
                    edge_weight_format="FULL_MATRIX")
    assert_same_instance(parse_problem(format_problem(inst)), inst)


def test_tour_round_trip():
    order = np.random.default_rng(0).permutation(1000)
    text = format_tour(order, "t1", "length 5\nsecond line")
    assert text.splitlines()[:6] == ["NAME : t1", "TYPE : TOUR", "COMMENT : length 5",
                                     "COMMENT : second line", "DIMENSION : 1000",
                                     "TOUR_SECTION"]
    assert text.endswith("-1\nEOF\n")
    assert text.splitlines()[6] == str(order[0] + 1)
    tour = parse_tour(text, "x.tour")
    assert (tour.name, tour.comment, tour.dimension, tour.source) == (
        "t1", "length 5\nsecond line", 1000, "x.tour")
    assert np.array_equal(tour.order, order) and tour.order.dtype == np.int64


def test_log_round_trip():
    log = RunLog(name="pr1002", algorithm="nn", parameters={"ants": "32", "rho": "0.2"},
                 device="NVIDIA H100 80GB HBM3 (NVIDIA CUDA)", seed=1,
                 version="0.1.0 (git abc1234)",
                 progress=[(0.0123, 0, 259045), (1.5, 10, 258000)])
    text = format_log(log)
    assert text.splitlines()[:8] == [
        "NAME : pr1002", "TYPE : LOG", "ALGORITHM : nn", "PARAMETERS : ants=32 rho=0.2",
        "DEVICE : NVIDIA H100 80GB HBM3 (NVIDIA CUDA)", "SEED : 1",
        "VERSION : 0.1.0 (git abc1234)", "PROGRESS_SECTION"]
    assert "0.012300 0 259045" in text
    assert parse_log(text) == log
    empty = RunLog("x", "ils", {}, "", 0, "", [])
    assert parse_log(format_log(empty)) == empty


def test_log_refuses_unwritable_parameters():
    with pytest.raises(ValueError):
        format_log(RunLog("x", "a", {"k": "two words"}, "", 0, "", []))


# ---- hostile names and comments: everything written reads back ----------------------
HOSTILE = ["a\nb", "a\r\nb", "old\rmac", "  spaced out  ", "colon: x : y", "tab\there",
           "raw\udcffbytes", "pair\ud83d\ude00", "nul\x00x", "esc\x1b[31mred", "c1\x85x",
           "line\u2028sep", "", "\n", "\u00e4\U0001f600", "EOF", "-1", "TOUR_SECTION"]


@pytest.mark.parametrize("text", HOSTILE)
def test_one_line(text):
    line = one_line(text)
    assert len(line.splitlines()) <= 1 and line == line.strip()
    assert one_line(line) == line
    line.encode("utf-8")                                    # writable as UTF-8
    parse_problem(f"NAME : {line}\nDIMENSION : 1\nEDGE_WEIGHT_TYPE : EUC_2D\n"
                  "NODE_COORD_SECTION\n1 0 0\n")          # the reader takes it


def _comment_as_read(comment: str) -> str:
    return "\n".join(one_line(c) for c in comment.splitlines())


def _written_and_read(text: str) -> str:
    """``text`` through a file: UTF-8 bytes, then the reader's decoding."""
    stdin = type("Stdin", (), {"buffer": io.BytesIO(text.encode("utf-8"))})()
    old, sys.stdin = sys.stdin, stdin
    try:
        return read_text("-")[0]
    finally:
        sys.stdin = old


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_and_comments_round_trip(name):
    comment = f"first {name} line\nsecond{name}"
    text = _written_and_read(format_tour([2, 0, 1], name, comment))
    tour = parse_tour(text)
    assert (tour.name, tour.comment) == (one_line(name), _comment_as_read(comment))
    assert tour.order.tolist() == [2, 0, 1] and tour.dimension == 3
    assert format_tour(tour.order, tour.name, tour.comment) == text      # stable

    inst = Instance(name=name, kind="TSP", weight_type="EUC_2D", comment=comment,
                    coords=np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))
    text = _written_and_read(format_problem(inst))
    back = parse_problem(text)
    assert (back.name, back.comment) == (one_line(name), _comment_as_read(comment))
    assert back.coords.tolist() == inst.coords.tolist()
    assert format_problem(back) == text

    log = RunLog(name=name, algorithm=name, parameters={"k": "10"}, device=name, seed=3,
                 version=comment, progress=[(0.5, 1, 10)])
    text = _written_and_read(format_log(log))
    back = parse_log(text)
    assert (back.name, back.algorithm, back.device) == (one_line(name),) * 3
    assert back.version == one_line(comment) and back.progress == [(0.5, 1, 10)]
    assert format_log(back) == text


@pytest.mark.parametrize("parameters", [{"k": "a\x00b"}, {"k\x1b": "1"}, {"k": "\udcff"},
                                        {"k": "a\u2028b"}])
def test_log_refuses_unwritable_parameter_characters(parameters):
    with pytest.raises(ValueError, match="cannot be written"):
        format_log(RunLog("x", "a", parameters, "", 0, "", []))


@pytest.mark.parametrize("file_name, name", [
    ("a b:c.tsp", "a b:c"), ("new\nline.tsp", "new_line"), ("tab\tx.tsp.gz", "tab\tx"),
    (os.fsdecode(b"raw\xff\xfe.tsp"), "raw_"), ("\x1b[1m.tsp", "_[1m")])
def test_names_from_odd_file_names_round_trip(tmp_path, small_problem_text, file_name, name):
    p = tmp_path / file_name
    p.write_text(small_problem_text.replace("NAME : tiny\n", ""))
    inst = read_problem(str(p))
    assert inst.name == name
    tour = parse_tour(_written_and_read(format_tour([0, 1, 2], inst.name, "c")))
    assert tour.name == name
    assert parse_problem(_written_and_read(format_problem(inst))).name == name


# ---- messy but valid input ------------------------------------------------------------
def test_messy_problem():
    text = ("\r\n"
            "NODE_COORD_SECTION\r\n"          # data before the header that gives its meaning
            "3\t-1.5e+01   2.0E0 \r\n"
            "  1 0 0\r\n"
            "\r\n"
            "2\t\t3   4   \r\n"
            "NAME:messy\r\n"
            "TYPE :TSP\r\n"
            "DIMENSION   :  3\r\n"
            "COMMENT : a: b\r\n"
            "edge_weight_type : euc_2d\r\n"
            "SOME_EXTRA_KEY : ignored\r\n")   # and no EOF
    inst = parse_problem(text, "messy.tsp")
    assert (inst.name, inst.kind, inst.weight_type, inst.comment) == ("messy", "TSP",
                                                                     "EUC_2D", "a: b")
    assert inst.coords.tolist() == [[0, 0], [3, 4], [-15, 2]]
    assert inst.dist(0, 1) == 5


def test_keyword_spellings_and_eof_junk():
    text = ("NAME: a\nTYPE : TSP\nDIMENSION :3\nEDGE_WEIGHT_TYPE:MAN_2D\nNODE_COORD_SECTION\n"
            "1 1 1\n2 2 2\n3 3 3\n EOF \nthis is junk after EOF\n1 2\n")
    inst = parse_problem(text)
    assert inst.weight_type == "MAN_2D" and inst.n == 3 and inst.dist(0, 2) == 4


def test_dimension_without_colon_and_missing_name_and_type():
    inst = parse_problem("DIMENSION 2\nEDGE_WEIGHT_TYPE EUC_2D\nNODE_COORD_SECTION\n"
                         "1 0 0\n2 1 1\n", "some/dir/x1.tsp")
    assert inst.name == "x1" and inst.kind == "TSP"


def test_explicit_with_node_coords_for_display():
    text = ("NAME: d\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
            "EDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n1 2\n3\n"
            "NODE_COORD_SECTION\n1 0 1\n2 2 3\n3 4 5\nEOF\n")
    inst = parse_problem(text)
    assert inst.display.tolist() == [[0, 1], [2, 3], [4, 5]]
    assert inst.matrix.tolist() == [[0, 1, 2], [1, 0, 3], [2, 3, 0]]


def test_tour_with_several_nodes_per_line_and_two_terminators():
    text = "NAME : t\nTYPE : TOUR\nTOUR_SECTION\n3 1\t2\n 5 4 -1\n-1\nEOF\n"
    tour = parse_tour(text)
    assert tour.order.tolist() == [2, 0, 1, 4, 3] and tour.dimension is None


@pytest.mark.parametrize("ending", ["-1\nEOF\n", "-1\n", "EOF\n", "", "-1 -1\n",
                                    "-1\n2 1 3 -1\n"])
def test_tour_endings(ending):
    tour = parse_tour("TYPE: TOUR\nDIMENSION: 3\nTOUR_SECTION\r\n3\r\n1\r\n2\r\n" + ending)
    assert tour.order.tolist() == [2, 0, 1] and tour.dimension == 3


@pytest.fixture
def small_problem_text():
    return ("NAME : tiny\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EUC_2D\n"
            "NODE_COORD_SECTION\n1 0 0\n2 3 0\n3 3 4\nEOF\n")


def test_read_text_plain_and_gz(tmp_path, small_problem_text):
    plain = tmp_path / "tiny.tsp"
    plain.write_text(small_problem_text)
    gz = tmp_path / "tiny.tsp.gz"
    gz.write_bytes(gzip.compress(small_problem_text.encode()))
    odd = tmp_path / "tiny.data"                       # gzip without a .gz name
    odd.write_bytes(gzip.compress(small_problem_text.encode()))
    assert read_text(str(plain)) == (small_problem_text, str(plain))
    assert read_text(str(gz)) == (small_problem_text, str(gz))
    assert read_text(str(odd))[0] == small_problem_text
    inst = read_problem(str(gz))
    assert inst.source == str(gz) and inst.tour_length([0, 1, 2]) == 12


class _FakeStdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


@pytest.mark.parametrize("compress", [False, True])
def test_read_stdin(monkeypatch, small_problem_text, compress):
    data = small_problem_text.encode()
    monkeypatch.setattr(sys, "stdin", _FakeStdin(gzip.compress(data) if compress else data))
    text, source = read_text("-")
    assert (text, source) == (small_problem_text, "<stdin>")


def test_read_problem_from_stdin_with_textiowrapper(monkeypatch, small_problem_text):
    raw = io.TextIOWrapper(io.BytesIO(gzip.compress(small_problem_text.encode())))
    monkeypatch.setattr(sys, "stdin", raw)
    inst = read_problem("-")
    assert inst.source == "<stdin>" and inst.n == 3


def test_non_utf8_comment_is_read(tmp_path):
    p = tmp_path / "latin.tsp"
    p.write_bytes(b"NAME: x\nCOMMENT: 14-St\xe4dte \x96 Burma\nDIMENSION: 1\n"
                  b"EDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n")
    assert read_problem(str(p)).comment == "14-St\u00e4dte \u2013 Burma"


def test_missing_file(tmp_path):
    with pytest.raises(MissingInputError, match="No such file"):
        read_text(str(tmp_path / "nope.tsp"))
    with pytest.raises(MissingInputError, match="directory"):
        read_problem(str(tmp_path))


def test_binary_file(tmp_path):
    p = tmp_path / "junk.tsp"
    p.write_bytes(b"NAME: x\n" + bytes(range(256)) * 4)
    with pytest.raises(DataError) as e:
        read_text(str(p))
    assert e.value.line == 2 and "binary" in str(e.value)
    p.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(DataError, match="gzip"):
        read_text(str(p))


# ---- reading in chunks: NUL bytes, overlong lines, gzip members and bombs ------------
@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 16 bytes and lines of at most 100, so that the tests stay small."""
    monkeypatch.setattr(tsplib, "READ_CHUNK", 16)
    monkeypatch.setattr(tsplib, "MAX_LINE_BYTES", 100)


def _read_bytes_as_file(tmp_path, data: bytes):
    p = tmp_path / "in.tsp"
    p.write_bytes(data)
    return read_text(str(p))[0]


@pytest.mark.parametrize("gzipped", [False, True])
def test_nul_byte_is_reported_on_its_line_across_chunks(tmp_path, small_chunks, gzipped):
    data = b"NAME : x\nTYPE : TSP\nCOMMENT : a long comment line\nDIM\x00ENSION : 3\n"
    with pytest.raises(DataError) as e:
        _read_bytes_as_file(tmp_path, gzip.compress(data) if gzipped else data)
    assert e.value.line == 4 and "character 0x00" in str(e.value)


@pytest.mark.parametrize("gzipped", [False, True])
def test_overlong_line_is_refused(tmp_path, small_chunks, gzipped):
    ok = b"COMMENT : " + b"x" * 90 + b"\n"                 # 100 bytes before its newline
    data = b"NAME : x\n" + ok + b"COMMENT : " + b"y" * 91 + b"\nEOF\n"
    assert _read_bytes_as_file(tmp_path, b"NAME : x\n" + ok) == (b"NAME : x\n" + ok).decode()
    with pytest.raises(DataError) as e:
        _read_bytes_as_file(tmp_path, gzip.compress(data) if gzipped else data)
    assert e.value.line == 3 and "a line longer than" in str(e.value)
    with pytest.raises(DataError) as e:                    # no newline at all
        _read_bytes_as_file(tmp_path, b"z" * 500)
    assert e.value.line == 1


def test_gzip_members_padding_and_small_chunks(tmp_path, small_chunks, small_problem_text):
    data = small_problem_text.encode()
    two_members = gzip.compress(data[:50]) + gzip.compress(data[50:])
    assert _read_bytes_as_file(tmp_path, two_members) == small_problem_text
    assert _read_bytes_as_file(tmp_path, two_members + bytes(40)) == small_problem_text
    for damaged, words in ((gzip.compress(data)[:-5], "ends in the middle"),
                           (gzip.compress(data) + b"junk", "not a valid gzip"),
                           (gzip.compress(data)[:10] + b"x" * 30, "not a valid gzip")):
        with pytest.raises(DataError, match=words):
            _read_bytes_as_file(tmp_path, damaged)


def test_gzip_bomb_is_refused_early(tmp_path, monkeypatch):
    monkeypatch.setattr(tsplib, "MAX_LINE_BYTES", 1 << 20)
    bomb = gzip.compress(b"\n" * (50 << 20))              # 50 MiB from about 50 KiB
    tracemalloc.start()
    try:
        with pytest.raises(DataError, match="expand more than 100 times") as e:
            _read_bytes_as_file(tmp_path, bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert e.value.line is None and peak < 16 << 20
    repetitive = b"NAME : x\n" * 100_000    # 900 KiB, under MAX_LINE_BYTES: any ratio
    assert _read_bytes_as_file(tmp_path, gzip.compress(repetitive)) == repetitive.decode()


def test_text_stdin_without_buffer(monkeypatch, small_problem_text):
    monkeypatch.setattr(sys, "stdin", io.StringIO(small_problem_text))
    assert read_text("-") == (small_problem_text, "<stdin>")


def test_old_mac_line_ends(small_problem_text):
    inst = parse_problem(small_problem_text.replace("\n", "\r"), "mac.tsp")
    assert inst.n == 3 and inst.name == "tiny"
    with pytest.raises(DataError) as e:
        parse_problem(small_problem_text.replace("3 3 4", "3 x 4").replace("\n", "\r"))
    assert e.value.line == 8


# ---- each EDGE_WEIGHT_FORMAT, by hand ------------------------------------------------
M5 = np.array([[0, 3, 4, 2, 7],
               [3, 0, 4, 6, 3],
               [4, 4, 0, 5, 8],
               [2, 6, 5, 0, 6],
               [7, 3, 8, 6, 0]])
M5_DIAG = M5 + 9 * np.eye(5, dtype=int)          # diagonal 9 where the format has one
HAND_FORMATS = {
    "FULL_MATRIX": ("9 3 4 2 7 3 9 4 6 3\n4 4 9 5 8\n2 6 5 9 6 7 3\n8 6 9", M5_DIAG),
    "UPPER_ROW": ("3 4 2 7\n4 6 3\n5 8\n6", M5),
    "LOWER_ROW": ("3\n4 4\n2 6 5\n7 3 8 6", M5),
    "UPPER_DIAG_ROW": ("9 3 4 2 7\n9 4 6 3\n9 5 8\n9 6\n9", M5_DIAG),
    "LOWER_DIAG_ROW": ("9\n3 9\n4 4 9\n2 6 5 9\n7 3 8 6 9", M5_DIAG),
    # column-wise: column j listed top to bottom
    "UPPER_COL": ("3\n4 4\n2 6 5\n7 3 8 6", M5),
    "LOWER_COL": ("3 4 2 7\n4 6 3\n5 8\n6", M5),
    "UPPER_DIAG_COL": ("9\n3 9\n4 4 9\n2 6 5 9\n7 3 8 6 9", M5_DIAG),
    "LOWER_DIAG_COL": ("9 3 4 2 7\n9 4 6 3\n9 5 8\n9 6\n9", M5_DIAG),
}


def _explicit_text(fmt, data, kind="TSP", n=5):
    return (f"NAME : hand\nTYPE : {kind}\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
            f"EDGE_WEIGHT_FORMAT : {fmt}\nEDGE_WEIGHT_SECTION\n{data}\nEOF\n")


@pytest.mark.parametrize("fmt", list(HAND_FORMATS))
def test_explicit_format_by_hand(fmt):
    data, expected = HAND_FORMATS[fmt]
    inst = parse_problem(_explicit_text(fmt, data))
    assert inst.matrix.dtype == np.int32
    assert inst.matrix.tolist() == expected.tolist()
    assert inst.edge_weight_format == fmt
    one_line = parse_problem(_explicit_text(fmt, " ".join(data.split())))   # any spreading
    assert np.array_equal(one_line.matrix, inst.matrix)
    # the writer lays the numbers out the same way (diagonals aside)
    written = format_problem(inst).split("EDGE_WEIGHT_SECTION\n")[1].split("EOF")[0]
    assert written.split() == data.split()


def test_explicit_integral_floats_are_accepted():
    inst = parse_problem(_explicit_text("UPPER_ROW", "3.0 4 2 7 4 6 3 5 8 6e0"))
    assert inst.matrix.tolist() == M5.tolist()


def test_atsp_full_matrix():
    inst = parse_problem(_explicit_text("FULL_MATRIX", "0 1 2\n3 0 4\n5 6 0", "ATSP", 3))
    assert inst.kind == "ATSP" and not inst.symmetric
    assert inst.matrix.tolist() == [[0, 1, 2], [3, 0, 4], [5, 6, 0]]
    assert inst.tour_length([0, 1, 2]) == 1 + 4 + 5


# ---- malformed input ------------------------------------------------------------------
HEAD = "NAME : bad\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EUC_2D\n"   # lines 1-4


def _coords(*rows):
    return HEAD + "NODE_COORD_SECTION\n" + "".join(r + "\n" for r in rows)   # data at 6


BAD_PROBLEMS = {
    # name: (text, line, words in the message)
    "truncated": (HEAD.replace(": 3", ": 5") + "NODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 2\nEOF\n",
                  9, "ends after 3 of 5"),
    "truncated-no-eof": (HEAD.replace(": 3", ": 5") + "NODE_COORD_SECTION\n1 0 0\n2 1 1\n"
                         "3 2 2\n\n", 8, "ends after 3 of 5"),
    "too-many-nodes": (_coords("1 0 0", "2 1 1", "3 2 2", "4 3 3"), 9, "more nodes"),
    "garbled-number": (_coords("1 0 0", "2 12x 5", "3 2 2"), 7, "expected a number, got '12x'"),
    "nan": (_coords("1 0 0", "2 nan 5", "3 2 2"), 7, "expected a number, got 'nan'"),
    "few-fields": (_coords("1 0 0", "2 5", "3 2 2"), 7, "expected 3 fields"),
    "many-fields": (_coords("1 0 0 0", "2 5 1", "3 2 2"), 6, "expected 3 fields"),
    "id-out-of-range": (_coords("1 0 0", "7 1 1", "3 2 2"), 7, "not an integer in 1..3"),
    "id-zero": (_coords("0 0 0", "2 1 1", "3 2 2"), 6, "'0'"),
    "id-fraction": (_coords("1 0 0", "2.5 1 1", "3 2 2"), 7, "'2.5'"),
    "id-twice": (_coords("1 0 0", "3 1 1", "3 2 2"), 8, "appears twice (first on line 7)"),
    "underscore": (_coords("1 0 0", "2 1_000 5", "3 2 2"), 7, "got '1_000'"),
    "arabic-indic": (_coords("1 0 0", "2 \u0661\u0662 5", "3 2 2"), 7, "expected a number"),
    "fullwidth": (_coords("1 0 0", "2 5 \uff11", "3 2 2"), 7, "expected a number"),
    "infinity": (_coords("1 0 0", "2 -infinity 5", "3 2 2"), 7, "got '-infinity'"),
    "inf-after-sign": (_coords("1 0 0", "2 1 +inf", "3 2 2"), 7, "got '+inf'"),
    "hex": (_coords("1 0 0", "2 0x10 5", "3 2 2"), 7, "got '0x10'"),
    "half-exponent": (_coords("1 0 0", "2 1e 5", "3 2 2"), 7, "got '1e'"),
    "float-overflow": (_coords("1 0 0", "2 1e400 5", "3 2 2"), 7, "beyond a 64-bit float"),
    "span-1e19": (_coords("1 0 0", "2 1e19 5", "3 2 2"), 7, "32-bit"),
    "span-1e200": (_coords("1 0 0", "2 5 1e200", "3 2 2"), 7, "32-bit"),
    "span-both-signs": (_coords("3 -1e308 0", "2 0 0", "1 1e308 5"), 8, "32-bit"),
    "span-just-over": (_coords("1 0 0", "2 1073741824 0", "3 2 2"), 7, "32-bit"),
    "id-underscore": (_coords("1 0 0", "2 1 1", "3_0 2 2"), 8, "got '3_0'"),
    "letters-in-data": (_coords("1 0 0", "abc 1 1", "3 2 2"), 7,
                        "expected numbers in NODE_COORD_SECTION or a keyword, got 'abc 1 1'"),
    "missing-dimension": (HEAD.replace("DIMENSION : 3\n", "") + "NODE_COORD_SECTION\n"
                          "1 0 0\n", 4, "missing DIMENSION"),
    "dimension-text": (HEAD.replace(": 3", ": three") + "NODE_COORD_SECTION\n", 3,
                       "positive integer"),
    "dimension-zero": (HEAD.replace(": 3", ": 0"), 3, "positive integer"),
    "dimension-negative": (HEAD.replace(": 3", ": -3"), 3, "positive integer"),
    "dimension-fraction": (HEAD.replace(": 3", ": 2.5"), 3, "positive integer"),
    "dimension-twice": (HEAD + "DIMENSION : 4\n", 5, "DIMENSION given twice"),
    "dimension-underscore": (HEAD.replace(": 3", ": 1_0"), 3, "positive integer"),
    "dimension-arabic-indic": (HEAD.replace(": 3", ": \u0663"), 3, "positive integer"),
    "dimension-float-form": (HEAD.replace(": 3", ": 3e0"), 3, "positive integer"),
    "dimension-beyond-int32": (HEAD.replace(": 3", ": 2147483648"), 3,
                               "up to 2147483647"),
    "missing-weight-type": (HEAD.replace("EDGE_WEIGHT_TYPE : EUC_2D\n", "") +
                            "NODE_COORD_SECTION\n1 0 0\n", 4, "missing EDGE_WEIGHT_TYPE"),
    "weight-type-xray": (HEAD.replace("EUC_2D", "XRAY1"), 4, "XRAY1 is not supported"),
    "weight-type-special": (HEAD.replace("EUC_2D", "SPECIAL"), 4, "SPECIAL is not supported"),
    "type-cvrp": (HEAD.replace("TYPE : TSP", "TYPE : CVRP") + "CAPACITY : 5\n"
                  "NODE_COORD_SECTION\n1 0 0\n2 1 1\n3 1 0\nDEMAND_SECTION\n1 0\n", 2,
                  "CVRP is not supported"),
    "type-hcp": (HEAD.replace("TYPE : TSP", "TYPE : HCP"), 2, "HCP is not supported"),
    "type-sop": (HEAD.replace("TYPE : TSP", "TYPE: SOP"), 2, "SOP is not supported"),
    "missing-coords": (HEAD + "EOF\n", 5, "missing NODE_COORD_SECTION"),
    "unknown-section": (_coords("1 0 0", "2 1 1", "3 2 2") + "DEMAND_SECTION\n1 1\n", 9,
                        "DEMAND_SECTION is not supported"),
    "section-twice": (_coords("1 0 0", "2 1 1", "3 2 2") + "NODE_COORD_SECTION\n", 9,
                      "appears twice"),
    "data-outside-section": (HEAD + "1 0 0\n", 5, "expected 'KEYWORD : value'"),
    "unknown-bare-word": ("NAME : x\nhello world\n", 2, "'hello world'"),
    "coord-type-mismatch": (HEAD + "NODE_COORD_TYPE : THREED_COORDS\n", 5, "does not match"),
    "display-short": (_coords("1 0 0", "2 1 1", "3 2 2") + "DISPLAY_DATA_SECTION\n1 0 0\n"
                      "EOF\n", 11, "DISPLAY_DATA_SECTION ends after 1 of 3"),
    "fixed-edge-id": (_coords("1 0 0", "2 1 1", "3 2 2") + "FIXED_EDGES_SECTION\n1 2\n"
                      "2 4\n-1\n", 11, "not in 1..3"),
    "fixed-edge-odd": (_coords("1 0 0", "2 1 1", "3 2 2") + "FIXED_EDGES_SECTION\n1 2 3\n"
                       "-1\n", 10, "incomplete"),
    "empty": ("", 1, "empty input"),
    "blank": ("\n  \n\t\n", 1, "empty input"),
    "only-eof": ("EOF\n", 1, "empty input"),
    "binary": ("NAME : x\nTYPE : TSP\x00\x01\x02\n", 2, "binary"),
    # EXPLICIT
    "explicit-short": (_explicit_text("UPPER_ROW", "3 4 2 7\n4 6 3\n5 8"), 10,
                       "ends after 9 of 10 weights"),
    "explicit-long": (_explicit_text("UPPER_ROW", "3 4 2 7\n4 6 3\n5 8\n6 1"), 10,
                      "more than the 10 weights"),
    "explicit-fraction": (_explicit_text("UPPER_ROW", "3 4 2 7\n4 6.5 3\n5 8\n6"), 8,
                          "expected an integer weight, got '6.5'"),
    "explicit-word": (_explicit_text("UPPER_ROW", "3 4 2 7\n4 6 3\n5 x8\n6"), 9,
                      "expected a number, got 'x8'"),
    "explicit-int32": (_explicit_text("UPPER_ROW", "3 4 2 7\n4 6 3\n5 3000000000\n6"), 9,
                       "32-bit"),
    "explicit-int32-low": (_explicit_text("UPPER_ROW", "3 4 2 7\n4 -2147483649 3\n5 8\n6"),
                           8, "32-bit"),
    "explicit-huge-integer": (_explicit_text("UPPER_ROW", "3 4 2 7\n4 6 3\n5 8\n" + "9" * 30),
                              10, "too large"),
    "explicit-underscore": (_explicit_text("UPPER_ROW", "3 4 2 7\n4 6 3\n5 1_0\n6"), 9,
                            "got '1_0'"),
    "explicit-fullwidth": (_explicit_text("UPPER_ROW", "3 4 2 7\n\uff14 6 3\n5 8\n6"), 8,
                           "expected a number"),
    "explicit-nan": (_explicit_text("UPPER_ROW", "3 4 2 7\n4 6 3\n5 8\nnan"), 10,
                     "expected numbers in EDGE_WEIGHT_SECTION or a keyword"),
    "explicit-inf-in-row": (_explicit_text("UPPER_ROW", "3 4 2 7\n4 inf 3\n5 8\n6"), 8,
                            "got 'inf'"),
    "explicit-asymmetric-tsp": (_explicit_text("FULL_MATRIX", "0 1 2\n1 0 3\n2 4 0", n=3), 9,
                                "symmetric"),
    "explicit-no-format": (_explicit_text("X", "1").replace("EDGE_WEIGHT_FORMAT : X\n", ""),
                           5, "missing EDGE_WEIGHT_FORMAT"),
    "explicit-function": (_explicit_text("FUNCTION", "1"), 5, "FUNCTION is not supported"),
    "explicit-atsp-upper": (_explicit_text("UPPER_ROW", "1 2 3", "ATSP", 3), 5,
                            "FULL_MATRIX"),
    "explicit-no-section": (_explicit_text("UPPER_ROW", "").replace(
        "EDGE_WEIGHT_SECTION\n", ""), 7, "missing EDGE_WEIGHT_SECTION"),
}


@pytest.mark.parametrize("explicit", [False, True])
def test_huge_dimension_fails_fast_without_allocating(explicit):
    if explicit:
        text = _explicit_text("FULL_MATRIX", "0 1 1 0", n=999999999)
        line = 8
    else:
        text = HEAD.replace(": 3", ": 999999999") + "NODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 2\n"
        line = 8
    tracemalloc.start()
    try:
        with pytest.raises(DataError) as e:
            parse_problem(text, "huge.tsp")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert e.value.line == line and "ends after" in str(e.value)
    assert peak < 1 << 20


BAD_TOURS = {
    "fraction": ("TOUR_SECTION\n1 2\n2.5\n-1\n", 3, "got '2.5'"),
    "zero": ("TOUR_SECTION\n1 0 2\n-1\n", 2, "got '0'"),
    "negative": ("TOUR_SECTION\n1\n2\n-3\n-1\n", 4, "got '-3'"),
    "word": ("TOUR_SECTION\n1\n2x\n-1\n", 3, "got '2x'"),
    "missing-section": ("NAME : t\nTYPE : TOUR\nEOF\n", 3, "missing TOUR_SECTION"),
    "empty-section": ("NAME : t\nTOUR_SECTION\n-1\nEOF\n", 3, "no cities"),
    "not-a-tour": ("TYPE : TSP\nTOUR_SECTION\n1\n-1\n", 1, "not a tour"),
    "dimension-mismatch": ("DIMENSION : 4\nTOUR_SECTION\n1 2\n3\n-1\nEOF\n", 5,
                           "3 cities, DIMENSION is 4"),
    "bad-dimension": ("DIMENSION : x\nTOUR_SECTION\n1\n", 1, "positive integer"),
    "underscore": ("TOUR_SECTION\n1\n1_0\n-1\n", 3, "got '1_0'"),
    "arabic-indic": ("TOUR_SECTION\n1 \u0662\n-1\n", 2, "expected a number"),
    "inf": ("TOUR_SECTION\n1 2\n3 inf\n-1\n", 3, "got 'inf'"),
    "huge": ("TOUR_SECTION\n1 99999999999999999999\n-1\n", 2, "too large"),
    "empty": ("", 1, "empty input"),
}


BAD_LOGS = {
    "parameter": ("TYPE : LOG\nPARAMETERS : a=1 b\n", 2, "key=value"),
    "seed": ("TYPE : LOG\nSEED : one\n", 2, "SEED must be an integer"),
    "fields": ("TYPE : LOG\nPROGRESS_SECTION\n0.1 2\n", 3, "3 fields"),
    "time": ("TYPE : LOG\nPROGRESS_SECTION\n0.1 2 3\n0.x 2 3\n", 4, "expected a number"),
    "iteration": ("TYPE : LOG\nPROGRESS_SECTION\n0.1 2.5 3\n", 3, "expected an integer"),
    "type": ("TYPE : TOUR\n", 1, "not a log"),
    "seed-underscore": ("TYPE : LOG\nSEED : 1_0\n", 2, "SEED must be an integer"),
    "time-nan": ("TYPE : LOG\nPROGRESS_SECTION\n0.1 2 3\n-nan 2 3\n", 4, "got '-nan'"),
    "time-inf": ("TYPE : LOG\nPROGRESS_SECTION\n0.1 2 3\n+inf 2 3\n", 4, "got '+inf'"),
    "best-fullwidth": ("TYPE : LOG\nPROGRESS_SECTION\n0.1 2 \uff13\n", 3,
                       "expected an integer"),
}


def test_fuzzed_problems_raise_only_data_errors(small_problem_text):
    """Random damage to a valid file never lets a raw Python exception escape."""
    rng = np.random.default_rng(7)
    base = _explicit_text("LOWER_DIAG_ROW", HAND_FORMATS["LOWER_DIAG_ROW"][0])
    for source in (small_problem_text, base):
        for _ in range(300):
            chars = list(source)
            for _ in range(rng.integers(1, 4)):
                k = int(rng.integers(len(chars)))
                op = rng.integers(3)
                if op == 0:
                    del chars[k]
                elif op == 1:
                    chars.insert(k, str(rng.choice(list("0123456789-.e:x \n\t"))))
                else:
                    chars[k] = str(rng.choice(list("0123456789-.eE+ \n")))
            text = "".join(chars)
            try:
                parse_problem(text)
            except DataError:
                pass


BAD_INPUTS = ([(parse_problem, "bad.tsp", name, case) for name, case in BAD_PROBLEMS.items()]
              + [(parse_tour, "bad.tour", name, case) for name, case in BAD_TOURS.items()]
              + [(parse_log, "run.log", name, case) for name, case in BAD_LOGS.items()])


@pytest.mark.parametrize("parse,source,name,case", BAD_INPUTS,
                         ids=[f"{src}-{name}" for _, src, name, _ in BAD_INPUTS])
def test_bad_input_names_file_and_line(parse, source, name, case):
    text, line, words = case
    with pytest.raises(DataError) as e:
        parse(text, source)
    assert e.value.line == line, str(e.value)
    assert str(e.value).startswith(f"{source}:{line}: ") and words in str(e.value)


def test_integer_coordinates_read_as_the_same_doubles_as_decimal_ones():
    """Tokens that are all integers are read through int64: the same doubles as float
    parsing gives (both round to nearest beyond 2**53), and a token too large for int64
    goes the float way."""
    from tspcl.tsplib import _floats

    rng = np.random.default_rng(3)
    ints = [str(v) for v in rng.integers(-2**63 + 1, 2**63 - 1, 5000)]
    edges = ["9007199254740993", "+12", "007", "18014398509481987", "0"]
    for tokens in (ints + edges, ["99999999999999999999", "1"]):
        assert _floats(tokens, None, "t").tolist() == [float(t) for t in tokens]
