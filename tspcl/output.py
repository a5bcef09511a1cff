"""Writing results: atomically to files (temp file + rename), or to stdout."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from .errors import OutputError


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one."""
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                   dir=str(target.parent if str(target.parent) else "."))
    except OSError as e:
        raise OutputError(f"{path}: cannot create output file ({e.strerror})") from None
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give what open() would
        os.replace(tmp, target)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OutputError(f"{path}: cannot write output file ({e.strerror})") from None


def write_stdout(text: str) -> None:
    """Data to stdout; a closed pipe (e.g. `| head`) is not an error."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
