"""Outputs lose nothing and say what went wrong: special files are written through, a
symbolic link's target is replaced with its mode kept, inputs are never overwritten,
both outputs or neither are written, and every failure is one line with its status."""

from __future__ import annotations

import json
import os
import pty
import stat
import subprocess
import sys
import threading

import pytest

from tspcl import errors
from test_cli import ROOT, SMALL, tspcl

ROOT_USER = os.geteuid() == 0


def tour_cities(text: str) -> list[int]:
    """The cities of a TSPLIB tour, read without tspcl: the numbers after TOUR_SECTION."""
    lines = text.splitlines()
    cities = []
    for line in lines[lines.index("TOUR_SECTION") + 1:]:
        for token in line.split():
            if token in ("-1", "EOF"):
                return cities
            cities.append(int(token))
    return cities


def is_tour_of_small(text: str) -> bool:
    return sorted(tour_cities(text)) == list(range(1, 9))


def one_line_error(r) -> bool:
    return r.stderr.count("\n") == 1 and r.stderr.startswith("tspcl: ") and "Traceback" not in r.stderr


def popen_tspcl(*args, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "tspcl", *args], env=env, **kwargs)


def files_in(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ---- special files are written through ------------------------------------------------
def test_a_fifo_is_written_through_not_replaced(small, tmp_path):
    fifo = tmp_path / "tour.fifo"
    os.mkfifo(fifo)
    got = {}
    reader = threading.Thread(target=lambda: got.update(text=fifo.read_text()), daemon=True)
    reader.start()
    r = tspcl("solve", str(small), "-a", "nn", "-o", str(fifo), "-q")
    reader.join(timeout=60)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert is_tour_of_small(got["text"])


def test_a_fifo_nobody_reads_is_an_error_not_a_hang(small, tmp_path):
    fifo = tmp_path / "tour.fifo"
    os.mkfifo(fifo)
    r = tspcl("solve", str(small), "-a", "nn", "-o", str(fifo), "--log", str(tmp_path / "run.log"), "-q")
    assert r.returncode == errors.EXIT_CANT_CREATE and one_line_error(r), r.stderr
    assert "no process reads it" in r.stderr and files_in(tmp_path) == ["small8.tsp", "tour.fifo"]


def test_a_character_device_is_written_through(small, tmp_path):
    """A terminal's device node (the slave of a pseudo-terminal this test opens) gets
    the tour and stays a device node."""
    master, slave = pty.openpty()
    device = os.ttyname(slave)
    try:
        r = tspcl("solve", str(small), "-a", "nn", "-o", device, "--log", device, "-q")
        assert r.returncode == 0, r.stderr
        assert stat.S_ISCHR(os.stat(device).st_mode)
        seen = b""
        while b"PROGRESS_SECTION" not in seen or seen.count(b"EOF") < 2:
            seen += os.read(master, 65536)
        assert is_tour_of_small(seen.decode().replace("\r\n", "\n"))
    finally:
        os.close(master)
        os.close(slave)


@pytest.mark.skipif(ROOT_USER, reason="a regression would replace /dev/null itself as root")
@pytest.mark.parametrize("command", [["solve", "SMALL", "-a", "nn", "-o", "/dev/null", "-q"],
                                     ["solve", "SMALL", "-a", "nn", "-o", "OUT", "--log", "/dev/null", "-q"],
                                     ["gen", "uniform", "-n", "10", "-o", "/dev/null"]])
def test_dev_null_is_written_through(small, tmp_path, command):
    args = [str(small) if a == "SMALL" else str(tmp_path / "t.tour") if a == "OUT" else a
            for a in command]
    r = tspcl(*args)
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_link_to_dev_stdout_writes_stdout(small, tmp_path):
    link = tmp_path / "out"
    link.symlink_to("/dev/stdout")
    r = tspcl("solve", str(small), "-a", "nn", "-o", str(link), "-q")
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and is_tour_of_small(r.stdout)
    r = tspcl("solve", str(small), "-a", "nn", "-o", "/dev/fd/1", "-q")
    assert r.returncode == 0 and is_tour_of_small(r.stdout), r.stderr


# ---- regular files: the link's target replaced, its mode kept --------------------------
def test_a_symlink_s_target_is_replaced_and_keeps_its_mode(small, tmp_path):
    target, link = tmp_path / "target.tour", tmp_path / "link.tour"
    target.write_text("old\n")
    target.chmod(0o600)
    link.symlink_to(target.name)
    r = tspcl("solve", str(small), "-a", "nn", "-o", str(link), "-q")
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == target.name
    assert is_tour_of_small(target.read_text())
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert files_in(tmp_path) == ["link.tour", "small8.tsp", "target.tour"]


def test_an_old_file_keeps_its_mode(small, tmp_path):
    out = tmp_path / "t.tour"
    out.write_text("old\n")
    out.chmod(0o640)
    r = tspcl("solve", str(small), "-a", "nn", "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o640 and is_tour_of_small(out.read_text())


# ---- nothing overwritten that the command reads or writes twice -----------------------
@pytest.mark.parametrize("via", ["itself", "symlink", "dot"])
def test_the_problem_file_is_never_overwritten(small, tmp_path, via):
    name = {"itself": str(small), "dot": str(tmp_path / "." / small.name)}.get(via)
    if via == "symlink":
        name = str(tmp_path / "alias.tsp")
        os.symlink(small, name)
    for option in ("-o", "--log"):
        r = tspcl("solve", str(small), "-a", "nn", option, name, "-q")
        assert r.returncode == errors.EXIT_USAGE and one_line_error(r), r.stderr
        assert "problem file" in r.stderr and small.read_text() == SMALL and r.stdout == ""


def test_output_and_log_in_one_file_are_refused(small, tmp_path):
    out = tmp_path / "x"
    r = tspcl("solve", str(small), "-a", "nn", "-o", str(out), "--log", str(out), "-q")
    assert r.returncode == errors.EXIT_USAGE and one_line_error(r), r.stderr
    assert not out.exists()
    out.write_text("old\n")
    link = tmp_path / "y"
    link.symlink_to(out)
    r = tspcl("solve", str(small), "-a", "nn", "-o", str(out), "--log", str(link), "-q")
    assert r.returncode == errors.EXIT_USAGE and out.read_text() == "old\n"


@pytest.mark.parametrize("args", [["solve", "SMALL", "-a", "nn", "-o", ""], ["solve", "SMALL", "--log", ""],
                                  ["gen", "uniform", "-n", "10", "-o", ""]])
def test_an_empty_file_name_is_refused(small, args):
    r = tspcl(*[str(small) if a == "SMALL" else a for a in args])
    assert r.returncode == errors.EXIT_USAGE and one_line_error(r), r.stderr
    assert r.stdout == "" and "empty" in r.stderr


@pytest.mark.parametrize("option", ["-o", "--log"])
def test_a_bad_output_fails_before_the_problem_is_read(tmp_path, option):
    """stdin stays open and empty: a command that read the problem first would wait."""
    bad = str(tmp_path / "no" / "such" / "dir" / "x.out")
    proc = popen_tspcl("solve", "-", option, bad, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == errors.EXIT_CANT_CREATE and "x.out" in err and err.count("\n") == 1
    assert out == ""


@pytest.mark.parametrize("name", ["DIR", "DIR/", "MISSING/"])
def test_a_folder_is_not_an_output_file(small, tmp_path, name):
    (tmp_path / "d").mkdir()
    name = name.replace("DIR", str(tmp_path / "d")).replace("MISSING", str(tmp_path / "m"))
    r = tspcl("solve", str(small), "-a", "nn", "-o", name, "-q")
    assert r.returncode == errors.EXIT_CANT_CREATE and one_line_error(r), r.stderr
    assert files_in(tmp_path) == ["d", "small8.tsp"] and files_in(tmp_path / "d") == []


# ---- both outputs or neither ------------------------------------------------------------
@pytest.fixture
def full_device(tmp_path_factory) -> str:
    """A device whose writes fail with ENOSPC: /dev/full, or as root a node of our own
    like it (a regression that replaced special files would replace /dev/full itself)."""
    if not ROOT_USER:
        return "/dev/full"
    node = tmp_path_factory.mktemp("dev") / "full"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        os.close(os.open(node, os.O_WRONLY))
    except OSError as e:
        pytest.skip(f"cannot make a device node of our own as root ({e.strerror})")
    return str(node)


@pytest.mark.parametrize("failing", ["--log", "-o"])
def test_a_failed_output_leaves_no_new_file(small, tmp_path, full_device, failing):
    other = "-o" if failing == "--log" else "--log"
    kept = tmp_path / "kept"
    r = tspcl("solve", str(small), "-a", "nn", failing, full_device, other, str(kept), "-q")
    assert r.returncode == errors.EXIT_CANT_CREATE and one_line_error(r), r.stderr
    assert full_device in r.stderr and files_in(tmp_path) == ["small8.tsp"]
    kept.write_text("old\n")
    r = tspcl("solve", str(small), "-a", "nn", failing, full_device, other, str(kept), "-q")
    assert r.returncode == errors.EXIT_CANT_CREATE and kept.read_text() == "old\n"
    assert files_in(tmp_path) == ["kept", "small8.tsp"]
    assert stat.S_ISCHR(os.stat(full_device).st_mode)


def test_many_files_written_at_once_are_all_or_none(tmp_path, monkeypatch):
    """(write_outputs stages many files in threads, as solve-many writes a wave's tours)"""
    from tspcl import output
    from tspcl.errors import OutputError

    targets = [output.output_target(str(tmp_path / f"t{i}.tour"), "-o") for i in range(40)]
    (tmp_path / "t7.tour").write_text("old\n")
    stage = output._stage

    def full_at_t31(target, text):
        if target.name.endswith("t31.tour"):
            raise OutputError(f"{target.name}: cannot write output file (No space left on device)")
        return stage(target, text)

    monkeypatch.setattr(output, "_stage", full_at_t31)
    with pytest.raises(OutputError, match="t31.tour"):
        output.write_outputs([(t, f"tour {i}\n") for i, t in enumerate(targets)])
    assert files_in(tmp_path) == ["t7.tour"] and (tmp_path / "t7.tour").read_text() == "old\n"
    monkeypatch.setattr(output, "_stage", stage)
    output.write_outputs([(t, f"tour {i}\n") for i, t in enumerate(targets)])
    assert len(files_in(tmp_path)) == 40 and (tmp_path / "t7.tour").read_text() == "tour 7\n"


def test_a_failed_stdout_leaves_no_new_file(small, tmp_path):
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "tspcl", "solve", str(small), "-a", "nn", "--log",
                            str(tmp_path / "run.log"), "-q"], stdout=full, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert r.returncode == errors.EXIT_IO_ERROR and one_line_error(r), r.stderr
    assert files_in(tmp_path) == ["small8.tsp"]


def test_names_that_are_not_utf8_are_written_and_no_temp_is_left(tmp_path):
    """A file name from bytes that are not UTF-8 is those bytes; a locale that cannot
    encode the text (LC_ALL=C without Python's UTF-8 mode) writes UTF-8 all the same."""
    r = subprocess.run([sys.executable, "-m", "tspcl", "gen", "uniform", "-n", "5", "-o",
                        os.fsdecode(b"p\xff.tsp")], capture_output=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert r.returncode == 0, r.stderr
    assert os.listdir(bytes(tmp_path)) == [b"p\xff.tsp"]
    problem = tmp_path / "e.tsp"
    problem.write_text(SMALL.replace("NAME : small8", "NAME : \u00e9t\u00e9"), encoding="utf-8")
    r = tspcl("solve", str(problem), "-o", str(tmp_path / "e.tour"), "-q",
              env_extra={"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"})
    assert r.returncode == 0, r.stderr
    assert "NAME : \u00e9t\u00e9\n" in (tmp_path / "e.tour").read_text(encoding="utf-8")
    assert sorted(os.listdir(bytes(tmp_path))) == [b"e.tour", b"e.tsp", b"p\xff.tsp"]


# ---- standard streams ------------------------------------------------------------------
def run_with_closed(fd: int, *args, **kwargs):
    """tspcl with standard descriptor ``fd`` closed, as a shell's `>&-` or `<&-` does."""
    return subprocess.run([sys.executable, "-m", "tspcl", *args], preexec_fn=lambda: os.close(fd),
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300, text=True,
                          **kwargs)


def test_closed_stdout_is_an_io_error_before_solving(small, tmp_path):
    r = run_with_closed(1, "solve", str(small), "-a", "nn", "-q", stderr=subprocess.PIPE)
    assert r.returncode == errors.EXIT_IO_ERROR and one_line_error(r) and "stdout" in r.stderr
    r = run_with_closed(1, "solve", str(small), "-a", "nn", "-o", str(tmp_path / "t.tour"), "-q",
                        stderr=subprocess.PIPE)
    assert r.returncode == 0 and is_tour_of_small((tmp_path / "t.tour").read_text()), r.stderr
    r = run_with_closed(1, "gen", "uniform", "-n", "10", stderr=subprocess.PIPE)
    assert r.returncode == errors.EXIT_IO_ERROR and one_line_error(r)


def test_closed_stdin_is_missing_input(small):
    for args in (["solve", "-"], ["verify", str(small), "-"], ["info", "-"]):
        r = run_with_closed(0, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert r.returncode == errors.EXIT_NO_INPUT and one_line_error(r), r.stderr
        assert "stdin" in r.stderr and r.stdout == ""


def test_closed_stderr_keeps_diagnostics_out_of_stdout(small):
    r = run_with_closed(2, "solve", str(small), "-a", "nn", stdout=subprocess.PIPE)
    assert r.returncode == 0 and is_tour_of_small(r.stdout)
    assert r.stdout.startswith("NAME") and "tspcl:" not in r.stdout


def test_a_full_stdout_is_an_io_error(small):
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "tspcl", "solve", str(small), "-a", "nn", "-q"], stdout=full,
                           stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert r.returncode == errors.EXIT_IO_ERROR and one_line_error(r), r.stderr


# ---- honest messages -----------------------------------------------------------------
def test_a_binary_optima_file_is_bad_data(small, tmp_path):
    optima = tmp_path / "optima.bin"
    optima.write_bytes(bytes(range(256)) * 4)
    r = tspcl("solve", str(small), "-a", "nn", "-q", env_extra={"TSPCL_OPTIMA": str(optima)})
    assert r.returncode == errors.EXIT_DATA and one_line_error(r) and str(optima) in r.stderr


def test_a_binary_bench_spec_is_bad_data(tmp_path):
    spec = tmp_path / "suite.toml"
    spec.write_bytes(bytes(range(255, -1, -1)) * 4)
    r = tspcl("bench", str(spec), "--out", str(tmp_path / "out"))
    assert r.returncode == errors.EXIT_DATA and one_line_error(r) and str(spec) in r.stderr


@pytest.mark.slow
def test_an_unwritable_cache_folder_still_finds_the_device(small, tmp_path):
    """PoCL finds no device when it cannot create its kernel cache (and pyopencl fails a
    build): tspcl builds without the caches and says so, except with -q."""
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file\n")
    env = {"XDG_CACHE_HOME": str(not_a_folder)}
    r = tspcl("solve", str(small), "-a", "nn", "--algo", "2opt", "-q", env_extra=env)
    assert r.returncode == 0 and r.stderr == "" and is_tour_of_small(r.stdout), r.stderr
    r = tspcl("solve", str(small), "-a", "nn", env_extra=env)
    assert r.returncode == 0 and f"cache folder {not_a_folder} is not writable" in r.stderr
    d = tspcl("devices", env_extra=env)
    assert d.returncode == 0 and "platform 0" in d.stdout, d.stderr


@pytest.mark.parametrize("args", [["--algo", "mmas", "--beta", "nan"], ["--algo", "mmas", "--alpha", "inf"],
                                  ["--algo", "acs", "--beta", "-inf"]])
def test_json_stays_json(small, args):
    """No NaN or Infinity in --json, whatever the parameters (a run with such a
    parameter may be refused instead)."""
    r = tspcl("solve", str(small), *args, "--iterations", "2", "--json", "-q")
    assert r.returncode in (0, errors.EXIT_USAGE), r.stderr
    if r.returncode == 0:
        def refuse(constant):
            raise ValueError(constant)

        json.loads(r.stdout, parse_constant=refuse)
    else:
        assert one_line_error(r) and r.stdout == ""


@pytest.mark.parametrize("args", [["--time-limit", "nan"], ["--time-limit", "inf"],
                                  ["--time-limit", "-1"], ["--time-limit", "1e999"],
                                  ["--seed", "-1"], ["--seed", str(2**64)],
                                  ["--iterations", "99999999999999999999"],
                                  ["--iterations", "infn"], ["--iterations", "-3"]])
def test_bad_numbers_are_one_line_usage_errors(small, args):
    r = tspcl("solve", str(small), "-a", "nn", "--algo", "nn", *args, "-q")
    assert r.returncode == errors.EXIT_USAGE and one_line_error(r), r.stderr
    assert r.stdout == ""
