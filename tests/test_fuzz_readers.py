"""Fuzzing the TSPLIB, tour and log readers (Hypothesis): whatever the input, a valid
record or a TspclError with a one-line message and a documented exit status, never
another exception, and bounded memory; the CLI end to end on a few nasty inputs."""

from __future__ import annotations

import gzip
import io
import resource
import subprocess
import sys
import tracemalloc
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tspcl.errors import EXIT_DATA, EXIT_NO_INPUT, TspclError
from tspcl.instance import INT32_MAX, Instance, coordinate_problem, fixed_edges_problem
from tspcl.tsplib import (
    READ_CHUNK, RunLog, Tour, format_log, format_problem, format_tour, one_line, parse_log,
    parse_problem, parse_tour, read_problem, read_text, read_tour,
)

# Deterministic, so that CI fails only for a change of the code; each test stays
# within a few seconds on one core.
FUZZ = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
PEAK_BYTES = 32 << 20           # memory one small input may take, whatever it says

SEEDS = {
    "euc2d": ("NAME : s\nTYPE : TSP\nCOMMENT : seed\nDIMENSION : 4\n"
              "EDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 3 0\n3 3 4\n"
              "4 -1.5e1 2.25\nEOF\n"),
    "geo-fixed": ("NAME : g\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : GEO\n"
                  "FIXED_EDGES_SECTION\n1 2\n3 4\n-1\nNODE_COORD_SECTION\n1 16.47 96.10\n"
                  "2 16.47 94.44\n3 20.09 92.54\n4 22.39 93.37\nEOF\n"),
    "euc3d": ("NAME : t\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EUC_3D\nNODE_COORD_SECTION\n"
              "1 0 0 0\n2 1 2 2\n3 5 5 5\n"),
    "upper-row": ("NAME : u\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
                  "EDGE_WEIGHT_FORMAT : UPPER_ROW\nEDGE_WEIGHT_SECTION\n3 4 2\n5 6\n7\n"
                  "DISPLAY_DATA_SECTION\n1 0 0\n2 1 0\n3 1 1\n4 0 1\nEOF\n"),
    "lower-diag-col": ("NAME : l\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
                       "EDGE_WEIGHT_FORMAT : LOWER_DIAG_COL\nEDGE_WEIGHT_SECTION\n"
                       "0 1 2 0 3 0\nEOF\n"),
    "atsp": ("NAME : a\nTYPE : ATSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
             "EDGE_WEIGHT_FORMAT : FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1 2\n3 0 4\n5 6 0\n"
             "EOF\n"),
}
TOUR_SEEDS = ["NAME : s.tour\nTYPE : TOUR\nDIMENSION : 4\nTOUR_SECTION\n1\n3\n2\n4\n-1\nEOF\n",
              "TOUR_SECTION\n3 1 2 -1\n"]
LOG_SEEDS = [format_log(RunLog("s", "nn", {"k": "10"}, "CPU", 1, "0.1.0",
                               [(0.5, 0, 100), (1.25, 3, 90)]))]

# Pieces that break readers: number forms Python takes and TSPLIB does not, numbers
# out of range, line breaks, control characters, keywords and terminators.
NASTY = ["0", "1", "7", "-1", "-", ".", "e", "E", "+", ":", " ", "\t", "\n", "\r", "\r\n",
         "\x00", "\x1a", "\x0c", "\x85", "\u2028", "\ufeff", "_", "1_000", "\u0661",
         "\uff11", "inf", "-inf", "nan", "Infinity", "1e400", "1e19", "-1e308", "9" * 25,
         "2147483648", "EOF", "TOUR_SECTION", "NODE_COORD_SECTION", "FIXED_EDGES_SECTION",
         "DIMENSION : ", "TYPE : ATSP", "EDGE_WEIGHT_TYPE : MAX_3D", "COMMENT : x",
         "\u00e4", "\U0001f600"]


@st.composite
def mutated(draw, seeds):
    """A seed text with a few pieces inserted, deleted or replaced."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        k = draw(st.integers(0, len(text)))
        piece = draw(st.sampled_from(NASTY) | st.text(max_size=3))
        op = draw(st.sampled_from(["insert", "replace", "delete"]))
        if op == "insert":
            text = text[:k] + piece + text[k:]
        elif op == "replace":
            text = text[:k] + piece + text[k + len(piece):]
        else:
            text = text[:k] + text[k + draw(st.integers(1, 8)):]
    return text


def assert_reported(e: TspclError, source: str):
    """A documented exit status and one line that names the source."""
    assert e.exit_code in (EXIT_DATA, EXIT_NO_INPUT)
    assert len(e.message.splitlines()) == 1 and "\r" not in e.message, e.message
    assert e.message.startswith(source), e.message


def within_memory(read):
    """``read()``'s result (or TspclError, re-raised), its peak memory below PEAK_BYTES."""
    tracemalloc.start()
    try:
        return read()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < PEAK_BYTES, f"peak {peak >> 20} MiB"


def comment_as_written(comment: str) -> str:
    return "\n".join(one_line(line) for line in comment.splitlines())


def assert_valid_instance(inst: Instance):
    """What the solvers and writers rely on, and a round trip that keeps it."""
    assert inst.kind in ("TSP", "ATSP") and inst.n >= 1
    if inst.coords is not None:
        assert coordinate_problem(inst.weight_type, inst.coords) is None
    assert fixed_edges_problem(inst.fixed_edges, inst.n, not inst.symmetric) is None
    m = inst.full_matrix()
    assert (np.abs(m) <= INT32_MAX).all() and (inst.matrix is not None or (m >= 0).all())
    back = parse_problem(format_problem(inst))
    assert (back.name, back.comment) == (one_line(inst.name), comment_as_written(inst.comment))
    assert back.n == inst.n and format_problem(back) == format_problem(inst)
    assert np.array_equal(back.full_matrix(), inst.full_matrix())
    assert np.array_equal(back.fixed_edges, inst.fixed_edges)


def read_problem_or_error(text: str):
    try:
        return within_memory(lambda: parse_problem(text, "fuzz.tsp"))
    except TspclError as e:
        assert_reported(e, "fuzz.tsp")
        return None


@FUZZ
@given(mutated(list(SEEDS.values())))
def test_mutated_problems(text):
    inst = read_problem_or_error(text)
    if inst is not None:
        assert_valid_instance(inst)


@FUZZ
@given(mutated(TOUR_SEEDS))
def test_mutated_tours(text):
    try:
        tour = within_memory(lambda: parse_tour(text, "fuzz.tour"))
    except TspclError as e:
        assert_reported(e, "fuzz.tour")
        return
    assert isinstance(tour, Tour) and tour.order.dtype == np.int64
    assert tour.order.size >= 1 and (tour.order >= 0).all()
    text = format_tour(tour.order, tour.name, tour.comment)
    back = parse_tour(text)
    assert np.array_equal(back.order, tour.order)
    assert (back.name, back.comment) == (one_line(tour.name), comment_as_written(tour.comment))
    assert format_tour(back.order, back.name, back.comment) == text


@FUZZ
@given(mutated(LOG_SEEDS))
def test_mutated_logs(text):
    try:
        log = within_memory(lambda: parse_log(text, "fuzz.log"))
    except TspclError as e:
        assert_reported(e, "fuzz.log")
        return
    text = format_log(log)
    back = parse_log(text)
    assert (back.name, back.algorithm) == (one_line(log.name), one_line(log.algorithm))
    assert (back.parameters, back.seed) == (log.parameters, log.seed)
    assert back.progress == [(float(f"{t:.6f}"), i, b) for t, i, b in log.progress]
    assert format_log(back) == text


class _Stdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


def _bytes_of(text: str) -> st.SearchStrategy:
    """``text`` as UTF-8, Latin-1 or gzip bytes, some of them flipped or cut."""
    return st.sampled_from([
        text.encode("utf-8", "surrogatepass"), text.encode("latin-1", "replace"),
        gzip.compress(text.encode("utf-8", "surrogatepass"))])


@st.composite
def raw_inputs(draw):
    """Random bytes, or a mutated seed as (damaged) bytes."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=300))
    data = bytearray(draw(mutated(list(SEEDS.values())).flatmap(_bytes_of)))
    for _ in range(draw(st.integers(0, 3))):
        if data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return bytes(data)


@FUZZ
@given(raw_inputs())
def test_raw_bytes_on_stdin(data):
    with mock.patch.object(sys, "stdin", _Stdin(data)):
        try:
            inst = within_memory(lambda: read_problem("-"))
        except TspclError as e:
            assert_reported(e, "<stdin>")
            return
    assert_valid_instance(inst)


@FUZZ
@given(raw_inputs())
def test_raw_bytes_as_a_tour(data):
    with mock.patch.object(sys, "stdin", _Stdin(data)):
        try:
            within_memory(lambda: read_tour("-"))
        except TspclError as e:
            assert_reported(e, "<stdin>")


@FUZZ
@given(st.text(max_size=200))
def test_any_text(text):
    for parse, source in ((parse_problem, "t.tsp"), (parse_tour, "t.tour"),
                          (parse_log, "t.log")):
        try:
            within_memory(lambda: parse(text, source))
        except TspclError as e:
            assert_reported(e, source)


# ---- huge claims in small files -----------------------------------------------------
@pytest.mark.parametrize("text", [
    "DIMENSION : 2147483647\nEDGE_WEIGHT_TYPE : EXPLICIT\nEDGE_WEIGHT_FORMAT : FULL_MATRIX\n"
    "EDGE_WEIGHT_SECTION\n0 1 1 0\n",
    "DIMENSION : 2147483647\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n1 0 0\n",
    "DIMENSION : 2147483647\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n1 0 0\n"
    "FIXED_EDGES_SECTION\n1 2147483647\n-1\n",
    "TYPE : TOUR\nDIMENSION : 2147483647\nTOUR_SECTION\n1 2 3\n-1\n",
    "TYPE : TOUR\nTOUR_SECTION\n99999999999999999999 1\n-1\n",
])
def test_huge_claims_fail_small(text):
    parse = parse_tour if "TOUR" in text else parse_problem
    with pytest.raises(TspclError) as e:
        within_memory(lambda: parse(text, "huge"))
    assert_reported(e.value, "huge:")


class _EndlessZeros:
    """A stream of NUL bytes without end that counts what it served."""

    def __init__(self):
        self.served = 0

    def read(self, size=-1):
        assert size > 0, "read everything at once"
        self.served += size
        return bytes(size)


@FUZZ
@given(st.text(alphabet=" \t\n\r\x0b\x0c12.-xé", max_size=40), st.integers(2, 4))
def test_the_fast_count_of_fields_a_line_is_the_patterns(chunk, width):
    """The node section's check of fields a line: numpy's count in ASCII text (the other
    text goes to the pattern) finds a bad line exactly where the pattern does."""
    from tspcl.tsplib import _bad_node_line, _has_bad_node_line

    assert _has_bad_node_line(chunk, width) == (_bad_node_line(width).search(chunk) is not None)


def test_endless_zeros_stop_at_the_first_chunk():
    stdin = _EndlessZeros()
    with mock.patch.object(sys, "stdin", mock.Mock(buffer=stdin)):
        with pytest.raises(TspclError) as e:
            within_memory(lambda: read_text("-"))
    assert_reported(e.value, "<stdin>:1: binary data (character 0x00)")
    assert stdin.served <= READ_CHUNK


# ---- the command line ---------------------------------------------------------------
NASTY_FILES = {
    "nul.tsp": b"NAME : x\nDIMENSION : 3\n\x00\x00",
    "overflow.tsp": (b"NAME : o\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EUC_2D\n"
                     b"NODE_COORD_SECTION\n1 0 0\n2 1e19 0\n3 1 1\nEOF\n"),
    "infinite.tsp": (b"NAME : i\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : ATT\n"
                     b"NODE_COORD_SECTION\n1 0 0\n2 infinity 0\n3 1 1\nEOF\n"),
    "digits.tsp": ("NAME : d\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EUC_2D\n"
                   "NODE_COORD_SECTION\n1 0 0\n2 \u0661\u0662 0\n3 1 1\nEOF\n").encode(),
    "loop.tsp": (b"NAME : f\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EUC_2D\n"
                 b"NODE_COORD_SECTION\n1 0 0\n2 1 0\n3 1 1\nFIXED_EDGES_SECTION\n2 2\n-1\n"),
}
NASTY_LINES = {"nul.tsp": 3, "overflow.tsp": 7, "infinite.tsp": 7, "digits.tsp": 7,
               "loop.tsp": 10}


def _tspcl(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "tspcl", *args], input=stdin,
                          capture_output=True, timeout=120)


@pytest.mark.parametrize("name", list(NASTY_FILES))
def test_cli_reports_bad_data_in_one_line(tmp_path, name):
    problem = tmp_path / name
    problem.write_bytes(NASTY_FILES[name])
    tour = tmp_path / "t.tour"
    tour.write_text("TOUR_SECTION\n1 2 3\n-1\n")
    for args in (("verify", str(problem), str(tour)), ("info", str(problem))):
        r = _tspcl(*args)
        stderr = r.stderr.decode()
        assert r.returncode == EXIT_DATA, stderr
        assert r.stdout == b""
        assert stderr.count("\n") == 1
        assert stderr.startswith(f"tspcl: {problem}:{NASTY_LINES[name]}: "), stderr


def _gzip_bomb(path, members: int):
    """``members`` gzip members of 1 MiB of newlines each (about 1 KiB apiece)."""
    member = gzip.compress(b"\n" * (1 << 20))
    path.write_bytes(member * members)


def _limited_memory():
    resource.setrlimit(resource.RLIMIT_DATA, (1 << 30, 1 << 30))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA is Linux's")
@pytest.mark.parametrize("command, message", [
    ("info - < /dev/zero", "<stdin>:1: binary data (character 0x00)"),
    ("verify /dev/zero /dev/null", "/dev/zero:1: binary data (character 0x00)"),
    ("info bomb.tsp.gz", "bomb.tsp.gz: gzip data expand more than 100 times"),
])
def test_cli_refuses_endless_input_in_bounded_memory(tmp_path, command, message):
    """Run with 1 GiB of data memory: reading it all would end in MemoryError (70)."""
    _gzip_bomb(tmp_path / "bomb.tsp.gz", members=1500)
    r = subprocess.run(f"{sys.executable} -m tspcl {command}", shell=True, cwd=tmp_path,
                       capture_output=True, timeout=120, preexec_fn=_limited_memory)
    stderr = r.stderr.decode()
    assert r.returncode == EXIT_DATA, stderr
    assert stderr.startswith(f"tspcl: {message}") and stderr.count("\n") == 1, stderr
