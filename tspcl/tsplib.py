"""Read and write TSPLIB95 problems and tours, and tspcl's run logs (host code only).

Problems (``parse_problem`` / ``read_problem`` / ``format_problem``)
    ``TYPE`` TSP or ATSP (anything after the first word is ignored, so
    ``TSP (M.~Hofmeister)`` reads as TSP; a missing TYPE means TSP).  Every
    ``EDGE_WEIGHT_TYPE`` of :data:`tspcl.instance.COORD_DIMS` (2 or 3 coordinates per
    node, as the weight type says) and ``EXPLICIT`` with any of the nine
    ``EDGE_WEIGHT_FORMAT`` s (ATSP: ``FULL_MATRIX`` only).  Optional
    ``DISPLAY_DATA_SECTION`` (``id x y``) and ``FIXED_EDGES_SECTION`` (``a b`` pairs
    ending with ``-1``).  An EXPLICIT problem whose ``NODE_COORD_SECTION`` is only there
    for drawing gets those coordinates as display data.

Multi-instance files (``parse_problems`` / ``read_problems`` / ``format_problems``)
    Problems one after the other, each ending with its ``EOF`` line (the last one's
    may be missing), as ``tspcl gen --count N -o FILE.tsp`` writes them: a batch of
    instances in one file.  Each problem is read as a file of its own would be, its
    errors naming the multi-instance file and the line in it; blank lines between
    problems are ignored.  A file of one problem is a multi-instance file of one.

Tours (``parse_tour`` / ``read_tour`` / ``format_tour``)
    ``TYPE : TOUR`` (or no TYPE), optional ``DIMENSION``, ``TOUR_SECTION`` with any number
    of 1-based city numbers per line, ended by ``-1``, a keyword, ``EOF`` or the end of
    the text.  Only the first tour of a section is read (TSPLIB allows several, each
    ended by ``-1``).  City numbers become a 0-based order; whether that order is a tour
    of a given problem is :meth:`tspcl.instance.Instance.tour_problem`'s business.

Run logs (``format_log`` / ``parse_log`` / ``read_log``), a TSPLIB-style text file::

    NAME : pr1002
    TYPE : LOG
    ALGORITHM : nn
    PARAMETERS : key1=value1 key2=value2
    DEVICE : NVIDIA H100 80GB HBM3 (NVIDIA CUDA)
    SEED : 1
    VERSION : 0.1.0 (git abc1234)
    PROGRESS_SECTION
    0.012300 0 259045
    EOF

    ``PARAMETERS`` holds space-separated ``key=value`` pairs (neither part may contain
    white space; a key no ``=``).  Each ``PROGRESS_SECTION`` line is
    ``elapsed_seconds iteration best_length``; elapsed time is written with 6 decimals.

How lenient the reader is, and where it is strict
    * Lines may end in LF, CRLF or CR; fields are separated by any spaces or tabs; blank
      lines are ignored anywhere; ``KEY : v``, ``KEY: v``, ``KEY :v``, ``KEY:v`` and (for
      the known keywords) ``KEY v`` are all accepted; keywords are case-insensitive.
      Reading stops at ``EOF``; a missing ``EOF`` is fine.
    * The whole file is scanned before it is interpreted, so sections and keywords may
      come in any order (e.g. NODE_COORD_SECTION before EDGE_WEIGHT_TYPE).
    * A section's data runs until the next line that starts with a letter (a keyword).
      EXPLICIT weights, tour and fixed-edge numbers may be spread over lines in any way;
      node coordinate and display lines hold exactly one node each (``id x y [z]``, ids
      1..n in any order, each exactly once).
    * Unknown ``KEY : value`` lines are ignored (files in the wild carry extra keywords,
      e.g. ``EDGE_WEIGHT_FORMAT : FUNCTION`` for GEO).  A line that is neither
      ``KEY : value`` nor a known keyword, and any ``*_SECTION`` that the problem type
      does not use (DEMAND_SECTION, EDGE_DATA_SECTION, ...), are errors.  A TOUR_SECTION
      inside a problem file is read over and ignored.  A keyword given twice with
      different values (COMMENT excepted: the lines are joined with newlines) and a
      section given twice are errors.
    * Numbers are decimal, as C reads them: ASCII digits with an optional sign, decimal
      point and exponent (``-1.5e+03``); Python's other forms (``1_000``, non-ASCII
      digits, ``inf``, ``nan``) are errors, and so are values beyond a float's range.
      DIMENSION and SEED are integers (``12``); EXPLICIT weights, node ids and the
      city numbers of tours and fixed edges must be integral (``12.0`` is accepted,
      ``12.5`` is not).  DIMENSION is at most 2**31 - 1, EXPLICIT weights fit in a 32-bit signed int
      and a TSP FULL_MATRIX must be symmetric.  Coordinates must give distances the
      kernels hold exactly (:func:`tspcl.instance.coordinate_problem`: at most
      :data:`tspcl.instance.MAX_COORD_DISTANCE`, whatever the EDGE_WEIGHT_TYPE).
    * FIXED_EDGES_SECTION must be possible in a tour
      (:func:`tspcl.instance.fixed_edges_problem`: no city repeated in an edge, no edge
      twice, at most two edges at a city, no cycle through fewer than all cities);
      :meth:`tspcl.instance.Instance.tour_problem` checks a tour keeps every fixed edge,
      and the solvers refuse such problems (``tspcl.run.solve``).
    * Input given as bytes may be gzip-compressed (detected by its magic bytes, whatever
      the name); it is decoded as UTF-8, else Windows-1252, else Latin-1.  Control
      characters other than tab, CR and LF (NUL bytes, binary data) are an error.  Input
      is read in chunks and refused at its first NUL byte, at a line over
      :data:`MAX_LINE_BYTES` and at gzip data that expand over :data:`MAX_GZIP_RATIO`
      times (past :data:`MAX_LINE_BYTES`), so /dev/zero or a compression bomb never
      fills the memory.

Writing: every function here writes text that the readers take back.  NAME, COMMENT
and the log's free-text keywords go through :func:`one_line` (a COMMENT line by line):
line breaks, control characters and a file name's undecodable bytes become ``_``.

Every failure to read is a :class:`tspcl.errors.DataError` naming the file and the
1-based line (where there is one; or :class:`tspcl.errors.MissingInputError` for a file
that cannot be opened); nothing n-sized is allocated before the data has been counted,
so a huge DIMENSION with little data fails at once.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
import sys
import zlib
from dataclasses import dataclass, field

import numpy as np

from .errors import DataError, MissingInputError
from .instance import (COORD_DIMS, INT32_MAX, Instance, coordinate_problem,
                       fixed_edges_problem)

__all__ = [
    "Tour", "RunLog", "read_text", "parse_problem", "read_problem", "parse_problems",
    "read_problems", "format_problems", "parse_tour",
    "read_tour", "format_problem", "format_tour", "format_log", "parse_log", "read_log",
    "EXPLICIT_FORMATS", "one_line",
]

# Each EDGE_WEIGHT_FORMAT and the row-wise layout whose token order it shares (for a
# symmetric matrix, the entries of UPPER_COL listed column by column come in the same
# order as those of LOWER_ROW listed row by row, and so on).
EXPLICIT_FORMATS = {
    "FULL_MATRIX": "FULL_MATRIX",
    "UPPER_ROW": "UPPER_ROW", "LOWER_ROW": "LOWER_ROW",
    "UPPER_DIAG_ROW": "UPPER_DIAG_ROW", "LOWER_DIAG_ROW": "LOWER_DIAG_ROW",
    "UPPER_COL": "LOWER_ROW", "LOWER_COL": "UPPER_ROW",
    "UPPER_DIAG_COL": "LOWER_DIAG_ROW", "LOWER_DIAG_COL": "UPPER_DIAG_ROW",
}
_WITH_DIAG = {"FULL_MATRIX", "UPPER_DIAG_ROW", "LOWER_DIAG_ROW", "UPPER_DIAG_COL",
              "LOWER_DIAG_COL"}
_PROBLEM_SECTIONS = {"NODE_COORD_SECTION", "EDGE_WEIGHT_SECTION", "DISPLAY_DATA_SECTION",
                     "FIXED_EDGES_SECTION", "TOUR_SECTION"}
_KNOWN_KEYS = {
    "NAME", "TYPE", "COMMENT", "DIMENSION", "CAPACITY", "EDGE_WEIGHT_TYPE",
    "EDGE_WEIGHT_FORMAT", "EDGE_DATA_FORMAT", "NODE_COORD_TYPE", "DISPLAY_DATA_TYPE",
    "EOF", "ALGORITHM", "PARAMETERS", "DEVICE", "SEED", "VERSION",
}
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Control characters that never occur in a text file (tab, LF and CR are fine).
_JUNK_RE = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]")
_COORD_TYPES = {"TWOD_COORDS": 2, "THREED_COORDS": 3}


# ---------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Tour:
    """A tour as read from a TSPLIB tour file; ``order`` holds 0-based city numbers."""

    name: str
    comment: str
    order: np.ndarray
    source: str = "<memory>"
    dimension: int | None = None


@dataclass(frozen=True)
class RunLog:
    """What a solver run reports: settings, device and (elapsed_s, iteration, best)."""

    name: str
    algorithm: str
    parameters: dict[str, str]
    device: str
    seed: int
    version: str
    progress: list[tuple[float, int, int]] = field(default_factory=list)
    comment: str = ""


# ---------------------------------------------------------------------------------------
# Reading files
# ---------------------------------------------------------------------------------------
def read_text(path: str) -> tuple[str, str]:
    """The text of ``path`` ("-" = standard input; gzip is undone) and its display name."""
    if path == "-":
        stdin = getattr(sys.stdin, "buffer", sys.stdin)
        return _plain_text(_decode(_read_bytes(stdin, "<stdin>")), "<stdin>"), "<stdin>"
    try:
        with open(path, "rb") as f:
            data = _read_bytes(f, path)
    except FileNotFoundError:
        raise MissingInputError(f"{path}: No such file or directory") from None
    except IsADirectoryError:
        raise MissingInputError(f"{path}: Is a directory, not a file") from None
    except PermissionError:
        raise MissingInputError(f"{path}: Permission denied") from None
    except OSError as e:
        raise MissingInputError(f"{path}: cannot read ({e.strerror or e})") from None
    return _plain_text(_decode(data), path), path


# Input is read READ_CHUNK bytes at a time and refused as soon as it cannot be a text
# file, so that /dev/zero or a compression bomb never fills the memory: at its first NUL
# byte, at a line longer than MAX_LINE_BYTES (a FULL_MATRIX row of 100,000 cities on
# one line is about 1 MB), and for gzip input that, past MAX_LINE_BYTES, has grown
# MAX_GZIP_RATIO times its compressed size (TSPLIB files shrink 3 to 10 times).
READ_CHUNK = 1 << 20
MAX_LINE_BYTES = 64 << 20
MAX_GZIP_RATIO = 100
_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_WBITS = 16 + zlib.MAX_WBITS


def _read_bytes(stream, source: str) -> bytearray:
    """All of ``stream`` (binary, or text: encoded back to UTF-8), gunzipped if it starts
    with gzip's magic bytes; DataError at a NUL byte or an overlong line."""
    chunks = _chunks(stream, source)
    first = next(chunks, b"")
    chunks = itertools.chain([first], chunks)
    if first[:2] == _GZIP_MAGIC:
        chunks = _gunzipped(chunks, source)
    return _collected(chunks, source)


def _chunks(stream, source: str):
    """``stream``'s data in chunks of READ_CHUNK, as bytes."""
    while True:
        try:
            chunk = stream.read(READ_CHUNK)
        except OSError as e:
            raise MissingInputError(f"{source}: cannot read ({e.strerror or e})") from None
        if not chunk:
            return
        yield chunk.encode("utf-8", "surrogatepass") if isinstance(chunk, str) else chunk


def _gunzipped(chunks, source: str):
    """The decompressed data of gzip ``chunks`` (any number of members, zero padding
    after them), at most READ_CHUNK bytes at a time; DataError for a bomb or bad data."""
    inflater = zlib.decompressobj(_GZIP_WBITS)
    read = written = 0
    for data in chunks:
        read += len(data)
        while True:
            if inflater.eof:                       # a member ended: another, or padding
                if not data.strip(b"\0"):
                    break
                inflater = zlib.decompressobj(_GZIP_WBITS)
            try:
                out = inflater.decompress(data, READ_CHUNK)
            except zlib.error as e:
                raise DataError(source, None, f"not a valid gzip file ({e})") from None
            data = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
            written += len(out)
            if written > MAX_LINE_BYTES and written > MAX_GZIP_RATIO * read:
                raise DataError(source, None, f"gzip data expand more than {MAX_GZIP_RATIO}"
                                              f" times (over {written >> 20} MiB from "
                                              f"{read >> 10} KiB): not a TSPLIB file")
            yield out
            if not data and len(out) < READ_CHUNK:
                break
    if not inflater.eof:
        raise DataError(source, None, "not a valid gzip file (it ends in the middle)")


def _collected(chunks, source: str) -> bytearray:
    """The chunks joined; DataError at the first NUL byte or a line over MAX_LINE_BYTES."""
    data = bytearray()
    lines = 0                   # newlines before the current chunk
    line_bytes = 0              # bytes of the current (last, unfinished) line
    for chunk in chunks:
        nul = chunk.find(b"\0")
        if nul >= 0:
            line = lines + chunk.count(b"\n", 0, nul) + 1
            raise DataError(source, line, "binary data (character 0x00): expected a TSPLIB "
                                          "text file")
        first_newline = chunk.find(b"\n")
        if first_newline < 0:
            line_bytes += len(chunk)
        else:
            line_bytes += first_newline
            if line_bytes <= MAX_LINE_BYTES:
                line_bytes = len(chunk) - chunk.rfind(b"\n") - 1
        if line_bytes > MAX_LINE_BYTES:
            raise DataError(source, lines + 1, f"a line longer than {MAX_LINE_BYTES >> 20} "
                                               "MiB: expected a TSPLIB text file")
        lines += chunk.count(b"\n")
        data += chunk
    return data


def read_problem(path: str) -> Instance:
    text, source = read_text(path)
    return parse_problem(text, source)


def read_problems(path: str) -> list[Instance]:
    """Every problem of a multi-instance file (see the module docstring)."""
    text, source = read_text(path)
    return parse_problems(text, source)


# The EOF line that ends each problem of a multi-instance file.
_EOF_LINE_RE = re.compile(r"^[ \t\f\v]*EOF[ \t\f\v]*(:[ \t\f\v]*)?$", re.M | re.I)


def parse_problems(text: str, source: str = "<memory>") -> list[Instance]:
    """The problems of a multi-instance text, in order; a DataError names ``source`` and
    the line in the whole text."""
    text = _plain_text(text, source)
    problems, pos, line = [], 0, 1          # ``line`` is the line number at offset ``pos``
    ends = [m.end() for m in _EOF_LINE_RE.finditer(text)]
    if text[ends[-1] if ends else 0:].strip():
        ends.append(len(text))              # the last problem without its EOF line
    for end in ends:
        try:
            problems.append(parse_problem(text[pos:end], source))
        except DataError as e:
            if e.line is None:
                raise
            raise DataError(e.source, e.line + line - 1, e.what) from None
        line += text.count("\n", pos, end)
        pos = end
    if not problems:
        raise DataError(source, line, "empty input: expected TSPLIB problems")
    return problems


def read_tour(path: str) -> Tour:
    text, source = read_text(path)
    return parse_tour(text, source)


def read_log(path: str) -> RunLog:
    text, source = read_text(path)
    return parse_log(text, source)


def _decode(data: bytes) -> str:
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return _clean_text(data.decode(encoding))
        except UnicodeDecodeError:
            pass
    return _clean_text(data.decode("latin-1"))


def _clean_text(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.rstrip("\x1a")      # a DOS end-of-file mark


def _plain_text(text: str, source: str) -> str:
    """``text`` with LF line ends (CRLF and a lone CR, of old Mac files, end a line too);
    DataError at a control character that no text file holds."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    m = _JUNK_RE.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise DataError(source, line, f"binary data (character {ord(m.group()):#04x}): "
                                      "expected a TSPLIB text file")
    return text


# ---------------------------------------------------------------------------------------
# Scanning: keywords and the raw lines of each section, before any interpretation
# ---------------------------------------------------------------------------------------
@dataclass
class _Section:
    name: str
    line: int                 # 1-based line of the keyword
    head: str                 # text after the keyword on its own line (usually empty)
    start: int                # text[start:end] holds the data (offsets; starts at "\n")
    end: int = -1
    end_line: int = -1        # 1-based line where the data ended (keyword, EOF or last)


@dataclass
class _Scan:
    source: str
    text: str
    header: dict[str, tuple[str, int]]
    comments: list[str]
    sections: dict[str, _Section]
    end_line: int             # the EOF line, else the last non-blank line
    header_end: int           # line of the first section keyword, else end_line


# A keyword line: its first visible character is a letter (data lines start with a digit,
# a sign or a dot), so section data are skipped at regex speed.
_KEYWORD_LINE_RE = re.compile(r"^[ \t\r\f\v]*[A-Za-z_][^\n]*", re.M)


def _split_key(s: str, lineno: int, source: str) -> tuple[str, str]:
    if ":" in s:
        key, value = s.split(":", 1)
        key, value = key.strip(), value.strip()
        known = True
    else:
        parts = s.split(None, 1)
        key = parts[0]
        value = parts[1].strip() if len(parts) > 1 else ""
        known = key.upper() in _KNOWN_KEYS or key.upper().endswith("_SECTION")
    if not known or not _KEY_RE.fullmatch(key):
        raise DataError(source, lineno, "expected 'KEYWORD : value' or a *_SECTION "
                                        f"keyword, got {_shown(s)}")
    return key.upper(), value


def _shown(s: str) -> str:
    """``s`` quoted for a one-line message (escaped, cut to about 40 characters)."""
    return repr(s if len(s) <= 40 else s[:37] + "...")


def _keyword_value(value: str) -> str:
    """A keyword's value for a message: as it is when short and printable."""
    if not value:
        return "(empty)"
    return value if value.isprintable() and len(value) <= 40 else _shown(value)


def _scan(text: str, source: str, what: str) -> _Scan:
    """Keywords (value, line) and where each section's data lie; nothing interpreted."""
    text = _plain_text(text, source)
    header: dict[str, tuple[str, int]] = {}
    comments: list[str] = []
    sections: dict[str, _Section] = {}
    current: _Section | None = None
    end_line = None
    pos, line = 0, 1                       # ``line`` is the line number at offset ``pos``
    for m in _KEYWORD_LINE_RE.finditer(text):
        gap = text[pos:m.start()]
        if current is None and gap.strip():  # data outside any section
            for k, g in enumerate(gap.split("\n")):
                if g.strip():
                    raise DataError(source, line + k, "expected 'KEYWORD : value' or a "
                                                      f"*_SECTION keyword, got {_shown(g.strip())}")
        line += gap.count("\n")
        pos = m.end()
        in_section = None
        if current is not None:
            current.end, current.end_line = m.start(), line
            in_section, current = current.name, None
        try:
            key, value = _split_key(m.group().strip(), line, source)
        except DataError:
            if not in_section:
                raise
            raise DataError(source, line, f"expected numbers in {in_section} or a keyword, "
                                          f"got {_shown(m.group().strip())}") from None
        if key == "EOF":
            end_line = line
            break
        if key.endswith("_SECTION"):
            if key in sections:
                raise DataError(source, line, f"{key} appears twice "
                                              f"(first on line {sections[key].line})")
            current = sections[key] = _Section(key, line, value, m.end())
        elif key == "COMMENT":
            comments.append(value)
        elif key in header and header[key][0] != value:
            raise DataError(source, line, f"{key} given twice (first on line "
                                          f"{header[key][1]}, as {_shown(header[key][0])})")
        else:
            header.setdefault(key, (value, line))
    else:
        rest = text[pos:]
        if current is None and rest.strip():
            for k, g in enumerate(rest.split("\n")):
                if g.strip():
                    raise DataError(source, line + k, "expected 'KEYWORD : value' or a "
                                                      f"*_SECTION keyword, got {_shown(g.strip())}")
        end_line = text.rstrip().count("\n") + 1
        if current is not None:
            current.end, current.end_line = len(text), end_line
    if not header and not sections:
        raise DataError(source, end_line, f"empty input: expected a TSPLIB {what}")
    first = min((sec.line for sec in sections.values()), default=end_line)
    return _Scan(source, text, header, comments, sections, end_line, first)


def _chunk(scan: _Scan, sec: _Section) -> str:
    """The section's data text; its k-th line ("\n"-separated) is line sec.line + k."""
    return sec.head + scan.text[sec.start:sec.end]


def _items(scan: _Scan, sec: _Section) -> list[tuple[int, list[str]]]:
    """The non-blank data lines of ``sec`` as (1-based line, fields)."""
    return [(sec.line + k, f) for k, g in enumerate(_chunk(scan, sec).split("\n"))
            if (f := g.split())]


def _tokens(scan: _Scan, sec: _Section) -> list[str]:
    """All data tokens of ``sec`` (fast; line numbers come from :func:`_items` if needed)."""
    return _chunk(scan, sec).split()


class _LazyItems:
    """:func:`_items` computed on first iteration: error paths only need line numbers."""

    def __init__(self, scan: _Scan, sec: _Section):
        self._args, self._items = (scan, sec), None

    def __iter__(self):
        if self._items is None:
            self._items = _items(*self._args)
        return iter(self._items)

    def __getitem__(self, k):
        return list(self)[k]

    def __bool__(self):
        return bool(list(self))


def _line_of_token(items, k: int) -> int:
    """1-based line of the k-th token (0-based) of ``items``."""
    for line, fields in items:
        if k < len(fields):
            return line
        k -= len(fields)
    return items[-1][0] if items else 0


# TSPLIB's numbers are decimal: ASCII digits, a sign, a decimal point, an exponent.
# Python's float() and int() read more ("1_000", non-ASCII digits, "inf", "nan"), so
# tokens are checked first; among the characters of a decimal number float() and int()
# read exactly these patterns, so one scan of a section's tokens for any other
# character leaves only malformed tokens ("1e", "--1") for the conversion to refuse.
_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER_RE = re.compile(r"[+-]?[0-9]+")
_NOT_IN_NUMBERS_RE = re.compile(r"[^0-9eE.+\- ]")
_NOT_IN_INTEGERS_RE = re.compile(r"[^0-9+\- ]")


def _bad_token(tokens: list[str], items, source: str, pattern: re.Pattern,
               what: str) -> DataError:
    """The error for the first token that ``pattern`` does not match, with its line."""
    k = next((k for k, t in enumerate(tokens) if not pattern.fullmatch(t)), 0)
    return DataError(source, _line_of_token(items, k), f"expected {what}, got "
                                                      f"{_shown(tokens[k])}")


def _floats(tokens: list[str], items, source: str) -> np.ndarray:
    """Decimal tokens as finite float64; a bad token is reported with its line.  Tokens
    that are all integers go through int64, which numpy reads in a third of the time
    (the same doubles: both round to nearest; "-0" gives 0.0)."""
    a = None
    text = " ".join(tokens)
    if not _NOT_IN_INTEGERS_RE.search(text):
        try:
            a = np.array(tokens, dtype=np.int64).astype(np.float64)
        except (ValueError, OverflowError):
            pass
    if a is None and not _NOT_IN_NUMBERS_RE.search(text):
        try:
            a = np.array(tokens, dtype=np.float64)
        except ValueError:
            pass
    if a is None:
        raise _bad_token(tokens, items, source, _NUMBER_RE, "a number")
    infinite = np.flatnonzero(~np.isfinite(a))
    if infinite.size:
        k = int(infinite[0])
        raise DataError(source, _line_of_token(items, k), f"number {_shown(tokens[k])} is "
                                                          "beyond a 64-bit float's range")
    return a


def _dimension(scan: _Scan) -> int | None:
    """DIMENSION, at most INT32_MAX (the kernels number cities with 32-bit ints)."""
    if "DIMENSION" not in scan.header:
        return None
    value, line = scan.header["DIMENSION"]
    if not _INTEGER_RE.fullmatch(value) or not 1 <= int(value) <= INT32_MAX:
        raise DataError(scan.source, line, f"DIMENSION must be a positive integer up to "
                                           f"{INT32_MAX}, got {_shown(value)}")
    return int(value)


def _type(scan: _Scan) -> tuple[str | None, int]:
    if "TYPE" not in scan.header:
        return None, scan.header_end
    value, line = scan.header["TYPE"]
    return (value.split()[0].upper() if value.split() else ""), line


def _default_name(source: str) -> str:
    if source.startswith("<"):
        return ""
    base = os.path.basename(source)
    if base.endswith(".gz"):
        base = base[:-3]
    return one_line(base.split(".")[0] if "." in base else base)


# ---------------------------------------------------------------------------------------
# Problems
# ---------------------------------------------------------------------------------------
def parse_problem(text: str, source: str = "<memory>") -> Instance:
    """A TSPLIB TSP/ATSP problem (see the module docstring for what is accepted)."""
    scan = _scan(text, source, "problem")
    header = scan.header
    kind, type_line = _type(scan)
    if kind is None:
        kind = "TSP"
    if kind not in ("TSP", "ATSP"):
        raise DataError(source, type_line, f"TYPE : {_keyword_value(header['TYPE'][0])} is "
                                           "not supported (tspcl reads TSP and ATSP problems)")
    n = _dimension(scan)
    if n is None:
        raise DataError(source, scan.header_end,
                        "missing DIMENSION (expected 'DIMENSION : <number of cities>')")
    if "EDGE_WEIGHT_TYPE" not in header:
        raise DataError(source, scan.header_end, "missing EDGE_WEIGHT_TYPE "
                                                 "(e.g. 'EDGE_WEIGHT_TYPE : EUC_2D')")
    wt_value, wt_line = header["EDGE_WEIGHT_TYPE"]
    weight_type = wt_value.upper()
    if weight_type not in COORD_DIMS and weight_type != "EXPLICIT":
        supported = ", ".join(list(COORD_DIMS) + ["EXPLICIT"])
        raise DataError(source, wt_line, f"EDGE_WEIGHT_TYPE : {_keyword_value(wt_value)} is "
                                         f"not supported (supported: {supported})")
    for name, sec in scan.sections.items():
        if name not in _PROBLEM_SECTIONS:
            raise DataError(source, sec.line, f"{name} is not supported in a {kind} problem")

    coords = matrix = display = None
    fmt = None
    coord_dims = None
    if "NODE_COORD_TYPE" in header:
        value, line = header["NODE_COORD_TYPE"]
        coord_dims = _COORD_TYPES.get(value.upper())
        if (weight_type in COORD_DIMS and coord_dims is not None
                and coord_dims != COORD_DIMS[weight_type]):
            raise DataError(source, line, f"NODE_COORD_TYPE : {_keyword_value(value)} does "
                                          f"not match EDGE_WEIGHT_TYPE : {weight_type}")
    if weight_type in COORD_DIMS:
        sec = _need_section(scan, "NODE_COORD_SECTION",
                            f"needed with EDGE_WEIGHT_TYPE : {weight_type}")
        coords = _read_nodes(scan, sec, n, COORD_DIMS[weight_type])
        problem = coordinate_problem(weight_type, coords)
        if problem:
            city, why = problem
            raise DataError(source, _node_line(scan, sec, city), why)
    else:
        if "EDGE_WEIGHT_FORMAT" not in header:
            raise DataError(source, scan.header_end, "missing EDGE_WEIGHT_FORMAT (needed "
                                                     "with EDGE_WEIGHT_TYPE : EXPLICIT)")
        fmt_value, fmt_line = header["EDGE_WEIGHT_FORMAT"]
        fmt = fmt_value.upper()
        if fmt not in EXPLICIT_FORMATS:
            raise DataError(source, fmt_line, "EDGE_WEIGHT_FORMAT : "
                                              f"{_keyword_value(fmt_value)} is not supported "
                                              f"(supported: {', '.join(EXPLICIT_FORMATS)})")
        if kind == "ATSP" and fmt != "FULL_MATRIX":
            raise DataError(source, fmt_line, f"an ATSP needs EDGE_WEIGHT_FORMAT : "
                                              f"FULL_MATRIX, not {fmt}")
        sec = _need_section(scan, "EDGE_WEIGHT_SECTION",
                            "needed with EDGE_WEIGHT_TYPE : EXPLICIT")
        matrix = _read_matrix(scan, sec, n, fmt, kind)
        if "NODE_COORD_SECTION" in scan.sections and "DISPLAY_DATA_SECTION" not in scan.sections:
            sec = scan.sections["NODE_COORD_SECTION"]
            if coord_dims is None:                         # infer from the first line
                items = _items(scan, sec)
                coord_dims = 3 if items and len(items[0][1]) == 4 else 2
            display = _read_nodes(scan, sec, n, coord_dims)[:, :2].copy()
    if "DISPLAY_DATA_SECTION" in scan.sections:
        display = _read_nodes(scan, scan.sections["DISPLAY_DATA_SECTION"], n, 2)
    fixed = np.zeros((0, 2), np.int64)
    if "FIXED_EDGES_SECTION" in scan.sections:
        fixed = _read_fixed_edges(scan, scan.sections["FIXED_EDGES_SECTION"], n, kind)

    name = header["NAME"][0] if "NAME" in header else _default_name(source)
    try:
        return Instance(name=name, kind=kind, weight_type=weight_type, coords=coords,
                        matrix=matrix, display=display, fixed_edges=fixed,
                        comment="\n".join(scan.comments), edge_weight_format=fmt,
                        source=source)
    except DataError:
        raise
    except (ValueError, TypeError, IndexError, OverflowError) as e:
        raise DataError(source, None, str(e)) from None


def _need_section(scan: _Scan, name: str, why: str) -> _Section:
    if name not in scan.sections:
        raise DataError(scan.source, scan.end_line, f"missing {name} ({why})")
    return scan.sections[name]


@functools.lru_cache(maxsize=None)
def _bad_node_line(width: int) -> re.Pattern:
    """Finds a non-blank line that does not hold exactly ``width`` fields."""
    ws = r"[ \t\r\f\v]"
    return re.compile(rf"^(?!{ws}*$)(?!{ws}*\S+(?:{ws}+\S+){{{width - 1}}}{ws}*$)", re.M)


_APART = np.zeros(256, bool)   # the ASCII bytes between fields: the pattern's blanks and \n
_APART[[9, 10, 11, 12, 13, 32]] = True


def _has_bad_node_line(chunk: str, width: int) -> bool:
    """Whether a non-blank line of ``chunk`` does not hold exactly ``width`` fields, as
    _bad_node_line finds; in ASCII text (where _plain_text left no character that is
    neither a blank nor a field's) numpy counts the fields a line, faster than the
    pattern (a million lines: 0.18 s against 0.58 s); other text goes to the pattern."""
    if not chunk.isascii():
        return _bad_node_line(width).search(chunk) is not None
    b = np.frombuffer(chunk.encode("ascii"), np.uint8)
    newline = b == 10
    apart = _APART[b]
    starts = ~apart                      # a field starts after a separator, or at 0
    starts[1:] &= apart[:-1]
    firsts = np.flatnonzero(starts)
    before = np.searchsorted(firsts, np.flatnonzero(newline))   # fields before each line end
    fields = np.diff(before, prepend=0, append=firsts.size)     # a line each
    return bool(((fields != 0) & (fields != width)).any())


def _read_nodes(scan: _Scan, sec: _Section, n: int, d: int) -> np.ndarray:
    """``id x y [z]`` lines of ``sec``: an n x d float64 array, row = id - 1."""
    source = scan.source
    width = d + 1
    chunk = _chunk(scan, sec)
    tokens = chunk.split()
    if len(tokens) != n * width or _has_bad_node_line(chunk, width):
        items = _items(scan, sec)
        if len(items) < n:
            raise DataError(source, sec.end_line, f"{sec.name} ends after {len(items)} of "
                                                  f"{n} nodes (DIMENSION : {n})")
        if len(items) > n:
            raise DataError(source, items[n][0], f"{sec.name} has more nodes than "
                                                 f"DIMENSION : {n}")
        for line, fields in items:
            if len(fields) != width:
                form = "id x y" + (" z" if d == 3 else "")
                raise DataError(source, line, f"expected {width} fields '{form}', got "
                                              f"{len(fields)}: {_shown(' '.join(fields))}")
    items = _LazyItems(scan, sec)
    a = _floats(tokens, items, source).reshape(n, width)
    ids = a[:, 0]
    bad = np.flatnonzero((ids != np.floor(ids)) | (ids < 1) | (ids > n))
    if bad.size:
        k = int(bad[0])
        raise DataError(source, items[k][0], f"node id {_shown(items[k][1][0])} is not an "
                                             f"integer in 1..{n}")
    order = ids.astype(np.int64) - 1
    _, first = np.unique(order, return_index=True)
    if first.size != n:
        repeated = np.ones(n, bool)
        repeated[first] = False
        k = int(np.flatnonzero(repeated)[0])
        earlier = items[int(np.flatnonzero(order[:k] == order[k])[0])][0]
        raise DataError(source, items[k][0], f"node {order[k] + 1} appears twice "
                                             f"(first on line {earlier})")
    out = np.empty((n, d), np.float64)
    out[order] = a[:, 1:]
    return out


def _node_line(scan: _Scan, sec: _Section, city: int) -> int:
    """The line of ``sec`` (read by :func:`_read_nodes`) that holds the 0-based ``city``."""
    return next(line for line, fields in _items(scan, sec) if float(fields[0]) == city + 1)


def _explicit_count(layout: str, n: int) -> int:
    return {
        "FULL_MATRIX": n * n,
        "UPPER_ROW": n * (n - 1) // 2, "LOWER_ROW": n * (n - 1) // 2,
        "UPPER_DIAG_ROW": n * (n + 1) // 2, "LOWER_DIAG_ROW": n * (n + 1) // 2,
    }[layout]


def _ints(tokens: list[str], items, source: str, what: str) -> np.ndarray:
    """Integral decimal tokens as int64 (``12.0`` is fine, ``12.5`` is not)."""
    if not _NOT_IN_INTEGERS_RE.search(" ".join(tokens)):
        try:
            return np.array(tokens, dtype=np.int64)
        except (ValueError, OverflowError):
            pass
    a = _floats(tokens, items, source)
    bad = np.flatnonzero(a != np.round(a))
    if bad.size:
        k = int(bad[0])
        raise DataError(source, _line_of_token(items, k), f"expected an integer {what}, "
                                                          f"got {_shown(tokens[k])}")
    big = np.flatnonzero(np.abs(a) > 2.0**62)
    if big.size:
        k = int(big[0])
        raise DataError(source, _line_of_token(items, k), f"{what} {_shown(tokens[k])} is "
                                                          "too large")
    return a.astype(np.int64)


def _read_matrix(scan: _Scan, sec: _Section, n: int, fmt: str, kind: str) -> np.ndarray:
    source = scan.source
    layout = EXPLICIT_FORMATS[fmt]
    expected = _explicit_count(layout, n)
    tokens = _tokens(scan, sec)
    items = _LazyItems(scan, sec)
    total = len(tokens)
    if total < expected:
        raise DataError(source, sec.end_line, f"EDGE_WEIGHT_SECTION ends after {total} of "
                                              f"{expected} weights ({fmt}, DIMENSION : {n})")
    if total > expected:
        raise DataError(source, _line_of_token(items, expected),
                        f"EDGE_WEIGHT_SECTION has more than the {expected} weights of "
                        f"{fmt} with DIMENSION : {n}")
    vals = _ints(tokens, items, source, "weight")
    bad = np.flatnonzero((vals > INT32_MAX) | (vals < -INT32_MAX - 1))
    if bad.size:
        k = int(bad[0])
        raise DataError(source, _line_of_token(items, k), f"weight {tokens[k]} does not fit "
                                                          "in a 32-bit integer")
    vals = vals.astype(np.int32)
    m = np.zeros((n, n), np.int32)
    if layout == "FULL_MATRIX":
        m[:] = vals.reshape(n, n)
        if kind == "TSP":
            asym = np.argwhere(np.triu(m != m.T, 1))
            if asym.size:
                i, j = (int(v) for v in asym[0])
                raise DataError(source, _line_of_token(items, j * n + i),
                                f"TYPE : TSP needs a symmetric matrix, but weight "
                                f"({i + 1},{j + 1}) = {m[i, j]} and ({j + 1},{i + 1}) = "
                                f"{m[j, i]} (use TYPE : ATSP)")
        return m
    k = {"UPPER_ROW": 1, "LOWER_ROW": -1, "UPPER_DIAG_ROW": 0, "LOWER_DIAG_ROW": 0}[layout]
    rows, cols = (np.triu_indices(n, k) if layout.startswith("UPPER")
                  else np.tril_indices(n, k))
    m[rows, cols] = vals
    m[cols, rows] = vals
    return m


def _read_fixed_edges(scan: _Scan, sec: _Section, n: int, kind: str) -> np.ndarray:
    source = scan.source
    tokens = _tokens(scan, sec)
    items = _LazyItems(scan, sec)
    stop = tokens.index("-1") if "-1" in tokens else len(tokens)
    if stop < len(tokens) - 1:
        raise DataError(source, _line_of_token(items, stop + 1),
                        "unexpected data after the -1 that ends FIXED_EDGES_SECTION")
    if stop % 2:
        raise DataError(source, _line_of_token(items, stop - 1),
                        "FIXED_EDGES_SECTION needs pairs of nodes 'a b'; the last pair is "
                        "incomplete")
    edges = _ints(tokens[:stop], items, source, "node id").reshape(-1, 2) - 1
    problem = fixed_edges_problem(edges, n, directed=kind == "ATSP")
    if problem:
        k, why = problem
        raise DataError(source, _line_of_token(items, 2 * k), why)
    return edges


# ---------------------------------------------------------------------------------------
# Tours
# ---------------------------------------------------------------------------------------
def parse_tour(text: str, source: str = "<memory>") -> Tour:
    """A TSPLIB tour: the first tour of TOUR_SECTION as a 0-based int64 order."""
    scan = _scan(text, source, "tour")
    kind, type_line = _type(scan)
    if kind is not None and kind != "TOUR":
        raise DataError(source, type_line, f"TYPE : {_keyword_value(scan.header['TYPE'][0])} "
                                           "is not a tour (expected TYPE : TOUR)")
    dimension = _dimension(scan)
    sec = _need_section(scan, "TOUR_SECTION", "a tour file needs one")
    tokens = _tokens(scan, sec)
    items = _LazyItems(scan, sec)
    stop = tokens.index("-1") if "-1" in tokens else len(tokens)
    end_line = _line_of_token(items, stop) if stop < len(tokens) else sec.end_line
    if stop == 0:
        raise DataError(source, end_line, "TOUR_SECTION holds no cities")
    ids = _ints(tokens[:stop], items, source, "city number")
    below = np.flatnonzero(ids < 1)
    if below.size:
        k = int(below[0])
        raise DataError(source, _line_of_token(items, k), "expected a city number (integer "
                                                          f">= 1), got {_shown(tokens[k])}")
    if dimension is not None and len(ids) != dimension:
        raise DataError(source, end_line, f"TOUR_SECTION has {len(ids)} cities, "
                                          f"DIMENSION is {dimension}")
    name = scan.header["NAME"][0] if "NAME" in scan.header else _default_name(source)
    return Tour(name=name, comment="\n".join(scan.comments), order=ids - 1, source=source,
                dimension=dimension)


# ---------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------
def _fmt_float(x: float) -> str:
    """Shortest text that reads back as the same float64 (integers without '.0')."""
    if x.is_integer() and abs(x) < 1e15 and not (x == 0 and str(x).startswith("-")):
        return str(int(x))
    return repr(x)


# What the value of a keyword line cannot hold: line breaks, the control characters the
# reader refuses, lone surrogates (a file name's undecodable bytes, which UTF-8 cannot
# write) and Unicode's line and paragraph separators.
_NOT_ON_A_LINE_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]+")


def one_line(text: str) -> str:
    """``text`` as the value of a keyword line, which reads back unchanged: each run of
    line breaks, control characters or undecodable bytes becomes '_', blanks around go."""
    return _NOT_ON_A_LINE_RE.sub("_", text).strip()


def _comment_lines(comment: str) -> list[str]:
    """One COMMENT line per line of ``comment`` (the reader joins them with newlines)."""
    return [f"COMMENT : {one_line(c)}" for c in comment.splitlines()]


def _header_lines(name: str, comment: str, kind: str, n: int) -> list[str]:
    return ([f"NAME : {one_line(name)}"] + _comment_lines(comment)
            + [f"TYPE : {kind}", f"DIMENSION : {n}"])


def _node_lines(a: np.ndarray) -> list[str]:
    return [f"{i} " + " ".join(_fmt_float(x) for x in row)
            for i, row in enumerate(a.tolist(), start=1)]


def _writable_format(inst: Instance) -> str:
    """The instance's EDGE_WEIGHT_FORMAT if it can hold the matrix exactly, else FULL."""
    fmt = (inst.edge_weight_format or "FULL_MATRIX").upper()
    m = inst.matrix
    if fmt not in EXPLICIT_FORMATS or inst.kind == "ATSP":
        return "FULL_MATRIX"
    if fmt != "FULL_MATRIX" and not np.array_equal(m, m.T):
        return "FULL_MATRIX"
    if fmt not in _WITH_DIAG and np.diagonal(m).any():
        return "FULL_MATRIX"
    return fmt


def _matrix_lines(m: np.ndarray, fmt: str) -> list[str]:
    n = len(m)
    pieces = {
        "FULL_MATRIX": lambda i: m[i, :],
        "UPPER_ROW": lambda i: m[i, i + 1:], "LOWER_ROW": lambda i: m[i, :i],
        "UPPER_DIAG_ROW": lambda i: m[i, i:], "LOWER_DIAG_ROW": lambda i: m[i, :i + 1],
        "UPPER_COL": lambda j: m[:j, j], "LOWER_COL": lambda j: m[j + 1:, j],
        "UPPER_DIAG_COL": lambda j: m[:j + 1, j], "LOWER_DIAG_COL": lambda j: m[j:, j],
    }[fmt]
    out = []
    for i in range(n):
        row = pieces(i)
        if row.size:
            out.append(" ".join(map(str, row.tolist())))
    return out


def format_problem(inst: Instance) -> str:
    """TSPLIB text for ``inst``; :func:`parse_problem` reads back the same instance.

    An EXPLICIT matrix is written in ``inst.edge_weight_format`` when that format can hold
    it exactly (symmetric; zero diagonal for the formats without one), else as FULL_MATRIX.
    """
    out = _header_lines(inst.name, inst.comment, inst.kind, inst.n)
    out.append(f"EDGE_WEIGHT_TYPE : {inst.weight_type}")
    if inst.matrix is not None:
        fmt = _writable_format(inst)
        out.append(f"EDGE_WEIGHT_FORMAT : {fmt}")
    if inst.display is not None:
        out.append("DISPLAY_DATA_TYPE : TWOD_DISPLAY")
    if inst.coords is not None:
        out.append("NODE_COORD_SECTION")
        out += _node_lines(inst.coords)
    else:
        out.append("EDGE_WEIGHT_SECTION")
        out += _matrix_lines(inst.matrix, fmt)
    if inst.display is not None:
        out.append("DISPLAY_DATA_SECTION")
        out += _node_lines(np.asarray(inst.display, np.float64)[:, :2])
    if len(inst.fixed_edges):
        out.append("FIXED_EDGES_SECTION")
        out += [f"{a + 1} {b + 1}" for a, b in np.asarray(inst.fixed_edges).tolist()]
        out.append("-1")
    out.append("EOF")
    return "\n".join(out) + "\n"


def format_problems(instances) -> str:
    """Problems one after the other (each ends with EOF): a multi-instance file."""
    return "".join(format_problem(inst) for inst in instances)


def format_tour(order, name: str, comment: str = "") -> str:
    """A TSPLIB tour file for the 0-based city ``order``."""
    t = np.asarray(order, dtype=np.int64).ravel()
    out = [f"NAME : {one_line(name)}", "TYPE : TOUR", *_comment_lines(comment),
           f"DIMENSION : {t.size}", "TOUR_SECTION"]
    out += map(str, (t + 1).tolist())
    out += ["-1", "EOF"]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------
# Run logs
# ---------------------------------------------------------------------------------------
def format_log(log: RunLog) -> str:
    """The log as text (format in the module docstring); ValueError for parameters that
    cannot be written and times that are not finite.  NAME, ALGORITHM, DEVICE and
    VERSION are written :func:`one_line`."""
    for k, v in log.parameters.items():
        k, v = str(k), str(v)
        if (not k or "=" in k or any(c.isspace() for c in k + v)
                or _NOT_ON_A_LINE_RE.search(k + v)):
            raise ValueError(f"parameter {k}={v} cannot be written: keys and values must "
                             "not contain white space or control characters, keys no '='")
    if not all(math.isfinite(t) for t, _, _ in log.progress):
        raise ValueError("progress times must be finite numbers")
    params = " ".join(f"{k}={v}" for k, v in log.parameters.items())
    out = [f"NAME : {one_line(log.name)}", "TYPE : LOG",
           f"ALGORITHM : {one_line(log.algorithm)}", f"PARAMETERS : {params}",
           f"DEVICE : {one_line(log.device)}", f"SEED : {int(log.seed)}",
           f"VERSION : {one_line(log.version)}"]
    out += _comment_lines(log.comment)
    out.append("PROGRESS_SECTION")
    out += [f"{float(t):.6f} {int(it)} {int(best)}" for t, it, best in log.progress]
    out.append("EOF")
    return "\n".join(out) + "\n"


# elapsed_s, iteration, best_length: how each is written, and what a message calls it
_PROGRESS_FIELDS = ((_NUMBER_RE, "a number"), (_INTEGER_RE, "an integer"),
                    (_INTEGER_RE, "an integer"))


def parse_log(text: str, source: str = "<memory>") -> RunLog:
    """A run log written by :func:`format_log` (missing keywords read as empty / 0)."""
    scan = _scan(text, source, "log")
    header = scan.header
    kind, type_line = _type(scan)
    if kind is not None and kind != "LOG":
        raise DataError(source, type_line, f"TYPE : {_keyword_value(header['TYPE'][0])} is "
                                           "not a log (expected TYPE : LOG)")
    for name, sec in scan.sections.items():
        if name != "PROGRESS_SECTION":
            raise DataError(source, sec.line, f"{name} is not part of a log")
    params: dict[str, str] = {}
    if "PARAMETERS" in header:
        value, line = header["PARAMETERS"]
        for tok in value.split():
            k, eq, v = tok.partition("=")
            if not eq or not k:
                raise DataError(source, line, "expected key=value in PARAMETERS, got "
                                              f"{_shown(tok)}")
            params[k] = v
    seed = 0
    if "SEED" in header:
        value, line = header["SEED"]
        if not _INTEGER_RE.fullmatch(value):
            raise DataError(source, line, f"SEED must be an integer, got {_shown(value)}")
        seed = int(value)
    progress: list[tuple[float, int, int]] = []
    if "PROGRESS_SECTION" in scan.sections:
        for line, fields in _items(scan, scan.sections["PROGRESS_SECTION"]):
            if len(fields) != 3:
                raise DataError(source, line, "expected 3 fields 'elapsed_s iteration "
                                              f"best_length', got {len(fields)}")
            for field, (pattern, what) in zip(fields, _PROGRESS_FIELDS):
                if not pattern.fullmatch(field):
                    raise DataError(source, line, f"expected {what}, got {_shown(field)}")
            if not math.isfinite(float(fields[0])):
                raise DataError(source, line, f"number {_shown(fields[0])} is beyond a "
                                              "64-bit float's range")
            progress.append((float(fields[0]), int(fields[1]), int(fields[2])))

    def get(key):
        return header[key][0] if key in header else ""

    return RunLog(name=get("NAME"), algorithm=get("ALGORITHM"), parameters=params,
                  device=get("DEVICE"), seed=seed, version=get("VERSION"), progress=progress,
                  comment="\n".join(scan.comments))
