"""Writing results to stdout, to special files and to regular files, losing nothing.

An output (``-o``, ``--log``) is checked when the command starts (:func:`output_target`),
so that a bad path fails before the run, and resolved to one of three kinds:

* ``-``: standard output;
* a special file (a device such as /dev/null, a FIFO, /dev/stdout, /dev/fd/N: anything
  that exists and is not a regular file once symbolic links are followed) is opened and
  written through, never replaced;
* anything else is a regular file, new or old, replaced atomically: a temporary file in
  the target's folder, then a rename onto the target.  A symbolic link's target is
  replaced, not the link, and an old file keeps its mode.

:func:`write_outputs` writes all of a command's outputs or leaves no new file.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .errors import OutputError, StdoutError, UsageError

STDOUT, SPECIAL, FILE = "stdout", "special", "file"
STAGING_THREADS = 16   # files written at once by one write_outputs (many tours at a time)

_CLOSED_AT_START: set[int] = set()  # standard descriptors that were closed (`>&-`)
_DESCRIPTOR_PATH = re.compile(r"/proc/(self|thread-self|\d+)(/task/\d+)?/fd/\d+")


@dataclass(frozen=True)
class Target:
    """Where an output goes: ``kind`` STDOUT, SPECIAL (``path`` is opened and written) or
    FILE (``path``, symbolic links resolved, is replaced); ``name`` as the user gave it."""

    name: str
    kind: str
    path: str = ""


STDOUT_TARGET = Target("-", STDOUT)


def output_target(name: str, option: str) -> Target:
    """The target of ``option NAME``, checked: UsageError for an empty name, OutputError
    for a file that cannot be created or a special file that cannot be opened."""
    if name == "-":
        return STDOUT_TARGET
    if name == "":
        raise UsageError(f"{option} '': the file name is empty (give a file, or - for stdout)")
    if name.endswith("/"):
        raise OutputError(f"{name}: cannot create output file (Is a directory)")
    if _names_descriptor(name) or _is_special(name):
        _check_special(name)
        return Target(name, SPECIAL, name)
    return _file_target(name)


def same_file(target: Target, other: str) -> bool:
    """Whether writing ``target`` would replace the file ``other`` (an input or another
    output); only regular files are replaced."""
    if target.kind != FILE:
        return False
    if os.path.realpath(other) == target.path:
        return True
    try:
        return os.path.samefile(target.path, other)
    except OSError:
        return False


def write_outputs(outputs: list[tuple[Target, str]]) -> None:
    """Write each text to its target, all or none: regular files are written to temporary
    files first, then special files and stdout are written, and only then are the
    temporary files renamed onto their targets.  A failure before the renames removes
    the temporary files and raises (an old file stays as it was)."""
    staged: list[tuple[str, Target]] = []
    try:
        _stage_all([(target, text) for target, text in outputs if target.kind == FILE], staged)
        for target, text in outputs:
            if target.kind == SPECIAL:
                _write_through(target, text)
            elif target.kind == STDOUT:
                write_stdout(text)
        while staged:
            _rename(*staged[0])
            staged.pop(0)
    finally:
        for tmp, _ in staged:
            _remove(tmp)


def _stage_all(files: list[tuple[Target, str]], staged: list[tuple[str, Target]]) -> None:
    """:func:`_stage` each (target, text), appending (temporary file, target) to
    ``staged``; many at once in threads (their fsyncs overlap), raising the first
    failure after every other has finished.  A signal that stops the wait waits again
    (later ones are ignored, tspcl.interrupts), so every temporary file is in ``staged``
    for the caller to remove."""
    if len(files) < 2:
        staged.extend((_stage(target, text), target) for target, text in files)
        return
    pool = ThreadPoolExecutor(min(STAGING_THREADS, len(files)))
    futures = []
    try:
        for target, text in files:
            futures.append((pool.submit(_stage, target, text), target))
        pool.shutdown(wait=True)
    finally:
        if not all(future.done() for future, _ in futures):
            pool.shutdown(wait=True)
        staged.extend((future.result(), target) for future, target in futures
                      if future.exception() is None)
    failures = [future.exception() for future, _ in futures if future.exception() is not None]
    if failures:
        raise failures[0]


def write_atomic(path: str, text: str) -> None:
    """Write one file (bench results, scripts): :func:`write_outputs` of one target."""
    write_outputs([(output_target(path, "the output"), text)])


def write_stdout(text: str) -> None:
    """Data to stdout (UTF-8); a closed pipe (e.g. `| head`) is not an error, a closed
    stdout, a full disk or an I/O error is StdoutError."""
    check_stdout()
    try:
        sys.stdout.flush()
        binary = getattr(sys.stdout, "buffer", None)
        if binary is None:  # a text-only stream put in its place (tests)
            sys.stdout.write(text)
        else:
            binary.write(_encode(text))
            binary.flush()
    except BrokenPipeError:
        discard_stdout()
    except OSError as e:
        discard_stdout()
        raise StdoutError(f"cannot write to stdout ({e.strerror or e})") from None


def check_stdout() -> None:
    """StdoutError if stdout was closed when tspcl started."""
    if 1 in _CLOSED_AT_START or sys.stdout is None:
        raise StdoutError("cannot write to stdout: it is closed (give -o FILE)")


def stdin_closed() -> bool:
    """Whether stdin was closed when tspcl started (`<&-`)."""
    return 0 in _CLOSED_AT_START or sys.stdin is None


def discard_stdout() -> None:
    """Point stdout at /dev/null, so that what is still buffered fails no more at exit."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)


def guard_standard_streams() -> None:
    """Put /dev/null on each standard descriptor that is closed (or open only the other
    way), so that no file tspcl opens lands there (a C library's messages would go into
    it), and remember which were; a closed stderr becomes /dev/null for Python too (else
    print() to it writes to stdout)."""
    for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        if not _open_for(fd, flags):
            _CLOSED_AT_START.add(fd)
            null = os.open(os.devnull, flags)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stderr is None or 2 in _CLOSED_AT_START:
        sys.stderr = open(os.devnull, "w")


def _open_for(fd: int, flags: int) -> bool:
    """Whether descriptor ``fd`` is open for reading (flags O_RDONLY) or writing."""
    try:
        mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
    except OSError:
        return False
    return mode == os.O_RDWR or mode == flags


def _names_descriptor(name: str) -> bool:
    """Whether ``name`` leads, through symbolic links, to an open descriptor's entry
    (/dev/stdout, /dev/fd/N, /proc/self/fd/N): the descriptor's file is written through."""
    path = os.path.abspath(name)
    for _ in range(40):  # the kernel's limit on links followed
        path = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        if _DESCRIPTOR_PATH.fullmatch(path):
            return True
        if not os.path.islink(path):
            return False
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return False


def _is_special(name: str) -> bool:
    """Whether ``name`` exists and, links followed, is neither a regular file nor a folder."""
    try:
        mode = os.stat(name).st_mode
    except FileNotFoundError:
        return False
    except OSError as e:
        raise OutputError(f"{name}: cannot create output file ({e.strerror})") from None
    if stat.S_ISDIR(mode):
        raise OutputError(f"{name}: cannot create output file (Is a directory)")
    return not stat.S_ISREG(mode)


def _check_special(name: str) -> None:
    """OutputError unless the special file ``name`` can be opened for writing (a FIFO's
    reader may come later: only its permission is checked)."""
    try:
        if stat.S_ISFIFO(os.stat(name).st_mode):
            if not os.access(name, os.W_OK):
                raise PermissionError(13, "Permission denied")
            return
        os.close(os.open(name, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY))
    except FileNotFoundError:
        raise OutputError(f"{name}: cannot write (no such open file descriptor)") from None
    except OSError as e:
        raise OutputError(f"{name}: cannot write ({e.strerror})") from None


def _file_target(name: str) -> Target:
    """A regular file to replace: its folder must exist and be writable."""
    path = os.path.realpath(name)
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise OutputError(f"{name}: cannot create output file (no folder {folder})")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{name}: cannot create output file (Permission denied in {folder})")
    return Target(name, FILE, path)


def _stage(target: Target, text: str) -> str:
    """A temporary file beside ``target`` holding ``text``, with the mode the target
    will have; removed again on any failure."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target.path)}.", suffix=".tmp",
                                   dir=os.path.dirname(target.path))
    except OSError as e:
        raise OutputError(f"{target.name}: cannot create output file ({e.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_encode(text))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _mode_for(target.path))
    except OSError as e:
        _remove(tmp)
        raise OutputError(f"{target.name}: cannot write output file ({e.strerror})") from None
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def _write_through(target: Target, text: str) -> None:
    """Open the special file and write ``text`` to it (appending, where it is a file a
    descriptor names, as a shell's `>>` would).  The open does not wait: a FIFO that no
    process reads is an error, not a run that hangs with its tour."""
    try:
        fd = os.open(target.path, os.O_WRONLY | os.O_APPEND | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as e:
        why = "no process reads it" if e.errno == errno.ENXIO else e.strerror
        raise OutputError(f"{target.name}: cannot write ({why})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            os.set_blocking(fd, True)
            f.write(_encode(text))
    except OSError as e:
        raise OutputError(f"{target.name}: cannot write ({e.strerror})") from None


def _rename(tmp: str, target: Target) -> None:
    try:
        os.replace(tmp, target.path)
    except OSError as e:
        raise OutputError(f"{target.name}: cannot write output file ({e.strerror})") from None


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _mode_for(path: str) -> int:
    """An old file's mode, or what open() would give a new one."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _encode(text: str) -> bytes:
    """UTF-8; names that came from undecodable bytes (a file name, NAME) get them back."""
    return text.encode("utf-8", "surrogateescape")
