"""The version string recorded in tours, logs and benchmark rows."""

from __future__ import annotations

import subprocess
from functools import lru_cache
from pathlib import Path

from . import __version__


@lru_cache(maxsize=None)
def version_string() -> str:
    """``0.1.0 (git abc1234)`` in a git checkout, else the package version."""
    here = Path(__file__).resolve().parent.parent
    try:
        sha = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=5)
        if sha.returncode == 0 and sha.stdout.strip():
            return f"{__version__} (git {sha.stdout.strip()})"
    except (OSError, subprocess.SubprocessError):
        pass
    return __version__
