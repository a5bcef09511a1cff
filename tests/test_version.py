"""The version string says the commit a run's code came from, and whether the code
differs from it."""

from __future__ import annotations

import subprocess

from tspcl import __version__
from tspcl.version import describe


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def test_a_checkout_names_its_commit_and_says_when_its_code_is_modified(tmp_path):
    (tmp_path / "tspcl").mkdir()
    (tmp_path / "tspcl" / "a.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("read me\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "first")
    sha = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert describe(tmp_path) == f"{__version__} (git {sha})"
    (tmp_path / "README.md").write_text("read me again\n")      # not code
    assert describe(tmp_path) == f"{__version__} (git {sha})"
    (tmp_path / "tspcl" / "a.py").write_text("x = 2\n")
    assert describe(tmp_path) == f"{__version__} (git {sha}, modified)"


def test_outside_a_checkout_it_is_the_package_version(tmp_path):
    assert describe(tmp_path) == __version__
