"""The version string recorded in tours, logs and benchmark rows."""

from __future__ import annotations

import subprocess
from functools import lru_cache
from pathlib import Path

from . import __version__

CODE = ("tspcl", "kernels_cl")   # what a run's results depend on, in a checkout


@lru_cache(maxsize=None)
def version_string() -> str:
    """``0.1.0 (git abc1234)`` in a git checkout, ``0.1.0 (git abc1234, modified)`` where
    the checkout's code differs from that commit, else the package version."""
    return describe(Path(__file__).resolve().parent.parent)


def describe(root: Path) -> str:
    """The version string of the checkout at `root` (see version_string)."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5)

    try:
        sha = git("rev-parse", "--short", "HEAD")
        if sha.returncode != 0 or not sha.stdout.strip():
            return __version__
        changed = git("status", "--porcelain", "--", *CODE)
    except (OSError, subprocess.SubprocessError):
        return __version__
    modified = ", modified" if changed.returncode == 0 and changed.stdout.strip() else ""
    return f"{__version__} (git {sha.stdout.strip()}{modified})"
