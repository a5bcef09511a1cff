"""Signals: SIGINT (Ctrl-C), SIGTERM and SIGHUP stop tspcl, all three the same way.

Where a command writes the best tour (:func:`keep_best_tour`, `tspcl solve`) and its
solver holds one, a signal raises :class:`Interrupted`, a KeyboardInterrupt: the solver
stops, run.solve keeps the tour and the command writes it.  Anywhere else (no tour yet,
or a command such as bench that keeps none) it raises :class:`Stopped`, which nothing
but cli.main catches: the command ends with ``tspcl: interrupted`` (bench no longer
takes a signal for the end of one run).  The exit status is 128 plus the number of the
first signal: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.

No signal loses a tour: once a solver holding one has been stopped or has ended, later
signals wait until the outputs are written, and the command then exits with the first
one's status (:func:`exit_status`).  A signal that ends the command has later ones
ignored, so that none interrupts the message or the exit.

The handlers are installed when tspcl.cli is imported, before its slow imports; until
:func:`start` a signal ends the process at once with the message.  Signals that were
ignored when tspcl started (``nohup``, SIGINT of a shell's background job) stay ignored.
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager

from .errors import EXIT_SIGNAL_BASE

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
MESSAGE = "tspcl: interrupted"


class _BySignal:
    """Raised for signal ``signum``; the command exits ``exit_code``."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.exit_code = EXIT_SIGNAL_BASE + signum


class Interrupted(_BySignal, KeyboardInterrupt):
    """Stops a solver whose best tour the command writes (run.solve keeps it)."""


class Stopped(_BySignal, BaseException):
    """Ends the command: not a KeyboardInterrupt, so that no run.solve keeps a tour
    nobody writes (bench would go on with its next run)."""


def _no_tour() -> bool:
    return False


class _State:
    """What the handler decides from; changed only by this module's functions."""

    first: int | None = None      # the first signal received
    started = False               # cli.main is running: signals raise Interrupted or Stopped
    keeping = False               # the command writes the best tour when stopped (solve)
    has_tour = staticmethod(_no_tour)  # whether the current solver holds a tour
    solving = False               # a solver is running
    stopping = False              # a solver holding a tour was stopped: it is being written


_state = _State()


def install() -> None:
    """Handle SIGINT, SIGTERM and SIGHUP (those not ignored at start-up)."""
    for signum in SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _on_signal)


def reclaim() -> None:
    """Take the signals back from a library that installed its own handlers over these:
    PoCL's LLVM does when a device is opened, and its handler resets a signal to the
    default action on entry (a second Ctrl-C kills the process, whatever it was
    writing) and deletes the files of a build under way.  Only where tspcl's handlers
    are the ones Python knows of, and in the main thread (the only one that may)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in SIGNALS:
        if signal.getsignal(signum) is _on_signal:
            signal.signal(signum, _on_signal)


def start() -> None:
    """From now on signals raise Interrupted or Stopped (cli.main catches both)."""
    _state.started = True


def keep_best_tour() -> None:
    """This command writes the best tour when stopped: see the module's docstring."""
    _state.keeping = True


def ignore() -> None:
    """Ignore the three signals from now on (the process is ending)."""
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def exit_status() -> int | None:
    """128 + the first signal received, or None if none was."""
    return None if _state.first is None else EXIT_SIGNAL_BASE + _state.first


@contextmanager
def solving(has_tour):
    """Around a solver's run; ``has_tour()`` says whether it holds a tour yet."""
    _state.has_tour, _state.stopping, _state.solving = has_tour, False, True
    try:
        yield
    finally:
        _state.solving = False


def _on_signal(signum: int, frame) -> None:
    if _state.first is None:
        _state.first = signum
    if not _state.started:
        _exit_during_start_up(signum)
    if _state.keeping and _state.has_tour():
        if _state.stopping or not _state.solving:
            return  # the tour is being written; exit_status() reports the signal after
        _state.stopping = True
        raise Interrupted(signum)
    ignore()  # nothing to keep: this signal ends the command
    raise Stopped(signum)


def _exit_during_start_up(signum: int) -> None:
    ignore()
    try:
        os.write(2, (MESSAGE + "\n").encode())
    except OSError:
        pass  # stderr closed: the exit status still says it
    raise SystemExit(EXIT_SIGNAL_BASE + signum)
