"""SIGINT, SIGTERM and SIGHUP stop a run alike: the best tour so far is written and the
exit status is 128 + the signal's number; before any tour exists, one line and the status.

Real processes get real signals.  A run's tour exists once its progress line (shown on
a terminal: the test gives stderr a pseudo-terminal) shows a best length; start-up is
under way once tspcl's handlers are installed (SigCgt in /proc/PID/status).  Waits poll
for those conditions with generous limits, for slow machines.
"""

from __future__ import annotations

import math
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from test_cli import ROOT, tspcl

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")

WAIT_S = 600     # for a tour to exist, or a stopped run to end
START_UP_S = 120  # for tspcl to install its handlers (the first thing it does)
N = 2000


def command(*args) -> list[str]:
    return [sys.executable, "-m", "tspcl", *args]


def environment() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "TERM": "xterm", "COLUMNS": "200"}


@pytest.fixture(scope="module")
def problem(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("signals") / "u2000.tsp"
    r = tspcl("gen", "uniform", "-n", str(N), "--seed", "5", "-o", str(path))
    assert r.returncode == 0, r.stderr
    return path


class TerminalStderr:
    """A pseudo-terminal for a child's stderr, read continuously in a thread."""

    def __init__(self):
        self.master, self.slave = pty.openpty()
        self.seen = bytearray()
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)

    def started(self):
        os.close(self.slave)
        self._reader.start()

    def _read(self):
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the child closed the terminal (exited)
                chunk = b""
            with self._changed:
                self.seen += chunk
                self._changed.notify_all()
            if not chunk:
                return

    def wait_for(self, text: bytes, proc) -> bool:
        """Whether ``text`` appeared before the process ended (or WAIT_S passed)."""
        deadline = time.monotonic() + WAIT_S
        with self._changed:
            while text not in self.seen and proc.poll() is None and time.monotonic() < deadline:
                self._changed.wait(timeout=1.0)
            return text in self.seen

    def text(self) -> str:
        self._reader.join(timeout=60)
        os.close(self.master)
        return self.seen.decode(errors="replace")


def solve_until_a_tour_exists(problem, *args, preexec_fn=None):
    """A long ILS run, returned once its progress line shows a best tour."""
    tty = TerminalStderr()
    proc = subprocess.Popen(command("solve", str(problem), "--algo", "ils", "--iterations", "100n",
                                    *args),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=tty.slave,
                            env=environment(), preexec_fn=preexec_fn)
    tty.started()
    assert tty.wait_for(b"best ", proc), tty.text()
    return proc, tty


def cities_and_coordinates(problem: Path) -> dict[int, tuple[float, float]]:
    """NODE_COORD_SECTION of an EUC_2D problem, read without tspcl."""
    lines = problem.read_text().splitlines()
    coords = {}
    for line in lines[lines.index("NODE_COORD_SECTION") + 1:]:
        if line.strip() == "EOF":
            break
        i, x, y = line.split()
        coords[int(i)] = (float(x), float(y))
    return coords


def check_tour(text: str, problem: Path) -> None:
    """The tour visits every city once and its COMMENT states its EUC_2D length."""
    lines = text.splitlines()
    cities = []
    for line in lines[lines.index("TOUR_SECTION") + 1:]:
        if line.strip() in ("-1", "EOF"):
            break
        cities += [int(t) for t in line.split()]
    coords = cities_and_coordinates(problem)
    assert sorted(cities) == sorted(coords)
    length = sum(int(math.hypot(coords[a][0] - coords[b][0], coords[a][1] - coords[b][1]) + 0.5)
                 for a, b in zip(cities, cities[1:] + cities[:1]))
    comment = next(line for line in lines if line.startswith("COMMENT"))
    assert f"length {length};" in comment, comment


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_writes_the_best_tour_so_far(problem, tmp_path, signum):
    out = tmp_path / "best.tour"
    proc, tty = solve_until_a_tour_exists(problem, "-o", str(out))
    proc.send_signal(signum)
    proc.wait(timeout=WAIT_S)
    err = tty.text()
    assert proc.returncode == 128 + signum, err
    assert "writing the best tour found so far" in err and "Traceback" not in err
    check_tour(out.read_text(), problem)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.tour"]


def test_sigterm_writes_the_tour_to_stdout_and_the_log(problem, tmp_path):
    log = tmp_path / "run.log"
    proc, tty = solve_until_a_tour_exists(problem, "--log", str(log))
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 143, tty.text()
    check_tour(out.decode(), problem)
    assert "PROGRESS_SECTION" in log.read_text()


def test_signals_while_the_tour_is_written_wait_for_it(problem, tmp_path):
    """A Ctrl-C, then SIGTERMs and SIGINTs until the process ends: none of the later
    ones loses the tour or changes the status (the first one's)."""
    out = tmp_path / "best.tour"
    proc, tty = solve_until_a_tour_exists(problem, "-o", str(out))
    proc.send_signal(signal.SIGINT)
    for i in range(2000):
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGTERM if i % 2 else signal.SIGINT)
        time.sleep(0.002)
    proc.wait(timeout=WAIT_S)
    err = tty.text()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    check_tour(out.read_text(), problem)


def test_a_background_run_that_ignores_sigint_stops_on_sigterm(problem, tmp_path):
    """A shell starts background jobs with SIGINT ignored: it stays ignored, and SIGTERM
    still stops the run with its tour."""
    out = tmp_path / "best.tour"
    proc, tty = solve_until_a_tour_exists(problem, "-o", str(out),
                                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    proc.send_signal(signal.SIGINT)  # discarded by the kernel: the disposition is SIG_IGN
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=WAIT_S)
    assert proc.returncode == 143, tty.text()
    check_tour(out.read_text(), problem)


def handles_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (bit 15 of SigCgt)."""
    with open(f"/proc/{pid}/status") as f:
        caught = next(line for line in f if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (signal.SIGTERM - 1) & 1)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_start_up_is_one_line(tmp_path, signum):
    """The problem comes from a stdin that stays open: no tour can exist.  The signal
    comes as soon as tspcl handles signals, during its imports or parsing."""
    out = tmp_path / "t.tour"
    proc = subprocess.Popen(command("solve", "-", "-o", str(out)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment())
    try:
        deadline = time.monotonic() + START_UP_S
        while proc.poll() is None and not handles_sigterm(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.001)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=WAIT_S)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum, stderr
    assert stderr == b"tspcl: interrupted\n" and stdout == b""
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_signal_ends_a_bench_suite(tmp_path):
    """bench keeps no tour: a signal during a run ends the suite.  Before, SIGTERM killed
    it, and SIGINT ended only the run under way, recorded as if it were complete."""
    spec = tmp_path / "suite.toml"
    spec.write_text('name = "long"\n\n[[group]]\ninstances = ["gen:uniform:2000:5"]\n'
                    'algorithms = ["nn"]\n\n[[group]]\ninstances = ["gen:uniform:2000:5"]\n'
                    'algorithms = ["ils"]\nseeds = [1, 2]\nparams = { kicks = 100000 }\n')
    proc = subprocess.Popen(command("bench", str(spec), "--out", str(tmp_path / "out")),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=environment(), text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("[1] "):  # nn's row: the long ILS run has begun
            time.sleep(5)  # so that it holds a tour, on most machines
            proc.send_signal(signal.SIGTERM)
        if line.startswith("[2] "):  # the signal ended only the run: the suite goes on
            proc.kill()
    proc.wait(timeout=WAIT_S)
    assert proc.returncode == 143, "".join(lines)
    assert lines[-1] == "tspcl: interrupted\n" and not any(line.startswith("[2] ") for line in lines)
    assert not (tmp_path / "out" / "results.csv").exists()
