"""Errors a user can cause, each with the exit status the CLI returns for it.

Exit statuses follow BSD sysexits where one fits (documented in the README):

    0   success
    1   `tspcl verify`: the tour is not a valid tour of the problem
    2   usage error (bad option or argument)
    65  bad data: the problem or tour file is malformed (file and line are named), or an
        optima file or suite spec is not text
    66  missing input: a file that does not exist or cannot be read, or a closed stdin
    69  no OpenCL device (or the one asked for does not exist)
    70  internal error: a bug; rerun with --debug for the traceback
    71  the device cannot hold what the solver needs (says what would fit)
    73  an output file cannot be created or written (the old file, if any, is kept)
    74  writing to stdout failed (closed, disk full, an I/O error)
    129 SIGHUP, 130 SIGINT (Ctrl-C), 143 SIGTERM: stopped by that signal (128 + its
        number); the best tour so far is written if one existed (tspcl/interrupts.py)
"""

from __future__ import annotations

EXIT_INVALID_TOUR = 1
EXIT_USAGE = 2
EXIT_DATA = 65
EXIT_NO_INPUT = 66
EXIT_NO_DEVICE = 69
EXIT_INTERNAL = 70
EXIT_NO_MEMORY = 71
EXIT_CANT_CREATE = 73
EXIT_IO_ERROR = 74
EXIT_SIGNAL_BASE = 128  # a run stopped by signal N exits 128 + N
EXIT_INTERRUPTED = 130


class TspclError(Exception):
    """An error with a one-line message meant for the user and an exit status."""

    exit_code = EXIT_INTERNAL

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class DataError(TspclError):
    """Malformed input data; the message names the file and line."""

    exit_code = EXIT_DATA

    def __init__(self, source: str, line: int | None, what: str):
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {what}")
        self.source = source
        self.line = line
        self.what = what


class MissingInputError(TspclError):
    exit_code = EXIT_NO_INPUT


class UsageError(TspclError):
    exit_code = EXIT_USAGE


class NoDeviceError(TspclError):
    exit_code = EXIT_NO_DEVICE


class DeviceMemoryError(TspclError):
    exit_code = EXIT_NO_MEMORY


class OutputError(TspclError):
    """An output file (-o, --log) that cannot be created or written."""

    exit_code = EXIT_CANT_CREATE


class StdoutError(TspclError):
    """Standard output that cannot be written: closed, a full disk, an I/O error."""

    exit_code = EXIT_IO_ERROR
