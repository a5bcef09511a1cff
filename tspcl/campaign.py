"""Campaigns: keyed tasks, each run once, their results journaled; a rerun resumes.

Any batch of independent runs (a benchmark suite's runs, ``solve-many``'s instances) is
a campaign::

    from tspcl.campaign import Journal, SerialRunner, run_tasks

    journal = Journal(out_dir / "results.jsonl")
    if fresh:
        journal.set_aside()               # the old journal is renamed, never deleted
    entries = run_tasks(tasks, execute, journal, runner, write=write, describe=describe)

* a **task** is any picklable object with a ``key`` attribute: a string that names what
  the task computes (its inputs and the code's version), the same in every rerun;
* ``execute(task) -> dict`` computes a task's **record** (JSON-able); it must be a
  module-level function, as it runs in a worker process (``tspcl.cluster``) or, for
  :class:`SerialRunner`, in this one;
* the **runner** is :class:`SerialRunner` or the Dask runner of
  :func:`tspcl.cluster.open_runner`; each yields an :class:`Entry` per task, ``ok`` with
  the record or ``failed`` with the reason (the exception's first line), in the order the
  tasks finish;
* the **journal** (:class:`Journal`) gets each entry as one JSON line, flushed at once (a
  crash of the process loses none) and fsynced at most every :data:`SYNC_S` seconds and
  on closing (a crash of the machine loses at most that last second's entries, whose
  tasks the rerun repeats; a task's own files are durable before its entry is written),
  written by this process only; reading it ignores a line a crash cut short and keeps
  the last entry of a key.  Tasks whose key has an ``ok`` entry are skipped (said on
  stderr); ``failed`` ones run again;
* ``write(entries)`` (the key's entries, the journal's and the new ones) rewrites the
  campaign's outputs: at most every :data:`REWRITE_S` seconds while entries come in and
  once at the end (a signal or an error that stops the campaign leaves them as they
  were: the journal holds every entry so far, and the rerun resumes);
* progress on stderr: a bar (done/total, failures, time left) on a terminal, else one
  line per task from ``describe(task, entry)`` (default: the key).

The runs of a benchmark suite (:mod:`tspcl.bench`) are :class:`RunTask` tasks from
:func:`suite_tasks`, executed by :func:`execute_run`: a process keeps one
:class:`~tspcl.device.Runtime` per device, so kernels are built once per worker, and its
loaded instances; warm-up runs are untimed and made once per worker process.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import OutputError

OK, FAILED = "ok", "failed"
REWRITE_S = 5.0        # the outputs are rewritten at most this often while entries come in
SYNC_S = 1.0           # the journal is fsynced at most this often while entries come in


# ---- entries and the journal -------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """One task's outcome: ``status`` :data:`OK` with ``record``, or :data:`FAILED` with
    ``reason`` (one line)."""

    key: str
    status: str
    record: dict | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK


def failure_reason(error: BaseException) -> str:
    """An exception in one line: its type and its message's first line."""
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


class Journal:
    """A campaign's entries, one JSON line each, in a file that only grows."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._file = None
        self._synced = 0.0    # time.monotonic() of the last fsync

    def read(self) -> dict[str, Entry]:
        """The last entry of each key; lines that are not a whole entry (cut by a crash)
        are skipped, with a note on stderr."""
        entries: dict[str, Entry] = {}
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return entries
        except OSError as e:
            raise OutputError(f"{self.path}: cannot read the journal ({e.strerror})") from None
        bad = 0
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                entry = Entry(data["key"], data["status"], data.get("record"),
                              data.get("reason", ""))
            except (ValueError, KeyError, TypeError):
                bad += 1
                continue
            if entry.status in (OK, FAILED) and isinstance(entry.key, str):
                entries[entry.key] = entry
            else:
                bad += 1
        if bad:
            note(f"{self.path}: {bad} unreadable line{'s' if bad > 1 else ''} ignored "
                 "(cut by a crash?)")
        return entries

    def set_aside(self) -> Path | None:
        """Rename an existing journal to ``NAME.1`` (or the first free number) so that a
        campaign starts over; returns the new name, or None if there was none."""
        if not self.path.exists():
            return None
        number = 1
        while self.path.with_name(f"{self.path.name}.{number}").exists():
            number += 1
        aside = self.path.with_name(f"{self.path.name}.{number}")
        try:
            self.path.rename(aside)
        except OSError as e:
            raise OutputError(f"{self.path}: cannot move the journal aside ({e.strerror})") from None
        return aside

    def append(self, entry: Entry) -> None:
        """Write ``entry`` as one line, flushed; fsynced if the last fsync is
        :data:`SYNC_S` seconds old (:meth:`close` fsyncs the rest)."""
        if self._file is None:
            self._open()
        line = json.dumps({"key": entry.key, "status": entry.status, "reason": entry.reason,
                           "record": entry.record}, separators=(",", ":"))
        try:
            self._file.write(line + "\n")
            self._file.flush()
            if time.monotonic() - self._synced >= SYNC_S:
                self._sync()
        except OSError as e:
            raise OutputError(f"{self.path}: cannot write the journal ({e.strerror})") from None

    def _sync(self) -> None:
        os.fsync(self._file.fileno())
        self._synced = time.monotonic()

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a+", encoding="utf-8")
            self._file.seek(0, os.SEEK_END)
            if self._file.tell():  # a line cut by a crash must not swallow the next one
                self._file.seek(self._file.tell() - 1)
                last = self._file.read(1)
                if last != "\n":
                    self._file.write("\n")
        except OSError as e:
            raise OutputError(f"{self.path}: cannot open the journal ({e.strerror})") from None

    def close(self) -> None:
        """fsync and close the file (if open)."""
        if self._file is not None:
            try:
                self._sync()
            except OSError as e:
                raise OutputError(f"{self.path}: cannot write the journal ({e.strerror})") from None
            finally:
                self._file.close()
                self._file = None


# ---- running tasks -------------------------------------------------------------------------
class SerialRunner:
    """Runs the tasks one after another in this process; ``device`` is what tasks carry
    as their device (for :class:`RunTask`), ``description`` what the campaign says of it."""

    def __init__(self, device: str | None = None, description: str = "this process"):
        self.device = device
        self.description = description

    def run(self, tasks: Sequence, execute: Callable[[object], dict]) -> Iterator[Entry]:
        for task in tasks:
            try:
                record = execute(task)
            except Exception as e:  # noqa: BLE001 - a failed task is a row, not the end
                yield Entry(task.key, FAILED, reason=failure_reason(e))
            else:
                yield Entry(task.key, OK, record)


def note(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def unique_tasks(tasks: Iterable) -> list:
    """The tasks with their first of each key (a spec may name a run twice)."""
    seen, out = set(), []
    for task in tasks:
        if task.key not in seen:
            seen.add(task.key)
            out.append(task)
    return out


def run_tasks(tasks: Sequence, execute: Callable[[object], dict], journal: Journal, runner,
              write: Callable[[dict[str, Entry]], None] | None = None,
              describe: Callable[[object, Entry], str] | None = None,
              label: str = "runs") -> dict[str, Entry]:
    """Run the tasks that the journal holds no ``ok`` entry for, journal each entry as it
    comes and return every task's entry by key (see the module docstring)."""
    tasks = unique_tasks(tasks)
    wanted = {t.key for t in tasks}
    journaled = journal.read()
    entries = {k: e for k, e in journaled.items() if k in wanted}
    if len(journaled) > len(entries):
        note(f"{journal.path}: {len(journaled) - len(entries)} entries of other tasks (another "
             "version of tspcl, or another spec) left as they are")
    pending = [t for t in tasks if not (t.key in entries and entries[t.key].ok)]
    done = len(tasks) - len(pending)
    if entries:
        again = sum(1 for e in entries.values() if not e.ok)
        note(f"resuming from {journal.path}: {done} of {len(tasks)} {label} done, skipped"
             + (f"; {again} that failed run again" if again else ""))
    by_key = {t.key: t for t in pending}
    progress = CampaignProgress(len(tasks), done, label)
    last_write = time.monotonic()
    try:
        with progress:
            for entry in runner.run(pending, execute):
                journal.append(entry)
                entries[entry.key] = entry
                progress.advance(entry, describe(by_key[entry.key], entry) if describe
                                 else entry.key)
                if write is not None and time.monotonic() - last_write >= REWRITE_S:
                    write(entries)
                    last_write = time.monotonic()
    finally:
        journal.close()
    if write is not None:
        write(entries)
    return entries


class CampaignProgress:
    """Done/total, failures and the time left: a rich bar when stderr is a terminal,
    else a line per task, ``[DONE] line`` (DONE counting the tasks skipped on resuming)."""

    def __init__(self, total: int, done: int, label: str, enabled: bool | None = None):
        self.total, self.done, self.failed, self.label = total, done, 0, label
        self.bar = sys.stderr.isatty() if enabled is None else enabled
        self._progress = self._task = None
        if self.bar:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("{task.fields[failed]}"),
                                      TimeRemainingColumn(), console=Console(stderr=True))
            self._task = self._progress.add_task(label, total=total, completed=done, failed="")

    def __enter__(self):
        if self._progress is not None:
            self._progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def advance(self, entry: Entry, line: str) -> None:
        self.done += 1
        self.failed += not entry.ok
        if self._progress is not None:
            self._progress.update(self._task, completed=self.done,
                                  failed=f"{self.failed} failed" if self.failed else "")
            return
        status = line if entry.ok else f"{line}: FAILED, {entry.reason}"
        note(f"[{self.done}] {status}")


# ---- the runs of a benchmark suite ---------------------------------------------------------
@dataclass(frozen=True)
class RunTask:
    """One measured run of a suite: what :func:`execute_run` needs, and its key."""

    key: str
    ref: object              # tspcl.bench.InstanceRef
    instance: str            # the instance's name
    n: int
    algorithm: str
    warm_key: str            # instance, algorithm and parameters: what warm-up runs warm
    variant: dict            # the spec's parameter table (the algorithm takes its keys)
    params_text: str         # the run's effective parameters, as rows show them
    seed: int
    repeat: int
    time_limit: float | None
    iterations: int | None
    warmup: int              # untimed runs (seed warmup_seed) before a worker's first run
    warmup_seed: int
    device: str | None       # --device; None: $TSPCL_DEVICE, else auto
    version: str


def instance_id(ref) -> str:
    """What a key says of an instance: a generated one's ``gen:`` text, else its file
    name and the start of the sha256 of its bytes."""
    if ref.gen is not None:
        return "gen:" + ":".join(str(x) for x in ref.gen)
    digest = hashlib.sha256()
    with open(ref.path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return f"{Path(ref.path).name}@sha256:{digest.hexdigest()[:16]}"


def tour_hash(order) -> str:
    """The sha256 of a tour's order as little-endian 32-bit city numbers (0-based)."""
    return hashlib.sha256(np.asarray(order, dtype="<i4").tobytes()).hexdigest()


def suite_tasks(suite, device: str | None, version: str) -> list[RunTask]:
    """The suite's measured runs in the spec's order (instances loaded here to skip the
    pairs a solver does not support, with a note)."""
    from .bench import applicable, format_params
    from .run import params_dict
    from .solvers import get_solver

    tasks: list[RunTask] = []
    ids: dict = {}
    for group in suite.groups:
        for ref in group.instances:
            inst = loaded_instance(ref)
            iid = ids.get(ref) or ids.setdefault(ref, instance_id(ref))
            for alg in group.algorithms:
                spec = get_solver(alg)
                reason = spec.unsupported(inst)
                if reason:
                    note(f"skip {alg} on {inst.name}: {reason}")
                    continue
                for variant in group.variants:
                    ptext = format_params(params_dict(spec.effective(inst, applicable(spec, variant))))
                    warm = f"{iid} | {alg} | {ptext}"
                    for seed in group.seeds:
                        for rep in range(1, group.repeats + 1):
                            key = (f"{warm} | seed {seed} | repeat {rep} | time {group.time_limit}"
                                   f" | iterations {group.iterations} | {version}")
                            tasks.append(RunTask(key, ref, inst.name, inst.n, alg, warm, dict(variant),
                                                 ptext, seed, rep, group.time_limit,
                                                 group.iterations, group.warmup, group.seeds[0],
                                                 device, version))
    return tasks


# A process's state: built kernels and loaded instances outlive a task.
_runtimes: dict = {}
_instances: dict = {}
_warmed: set = set()
_one_run = threading.Lock()   # one run at a time per process (a worker with more threads)


def process_runtime(device: str | None):
    """This process's Runtime of ``device`` (None: $TSPCL_DEVICE, else auto), made once."""
    from .device import Runtime

    rt = _runtimes.get(device)
    if rt is None:
        rt = _runtimes[device] = Runtime.from_spec(device)
    return rt


def loaded_instance(ref):
    """``ref`` loaded, once per process (loading is announced on stderr)."""
    inst = _instances.get(ref)
    if inst is None:
        t0 = time.perf_counter()
        inst = _instances[ref] = ref.load()
        note(f"loaded {inst.name} (n={inst.n}) in {time.perf_counter() - t0:.1f} s")
    return inst


def execute_run(task: RunTask) -> dict:
    """Run ``task`` (after this process's warm-up runs of its instance, algorithm and
    parameters); the record is ``{"row": bench row, "history": [[seconds, best], ...]}``."""
    from .bench import applicable
    from .run import solve
    from .solvers import get_solver

    with _one_run:
        rt = process_runtime(task.device)
        inst = loaded_instance(task.ref)
        spec = get_solver(task.algorithm)
        params = applicable(spec, task.variant)

        def one(seed: int):
            s = time.perf_counter()
            deadline = None if task.time_limit is None else s + task.time_limit
            return solve(inst, spec, params, rt, seed=seed, deadline=deadline,
                         iterations=task.iterations, started=s)

        warm = (task.warm_key, rt.name)
        if warm not in _warmed:
            for _ in range(task.warmup):
                one(task.warmup_seed)
            _warmed.add(warm)
        res = one(task.seed)
    row = {"instance": inst.name, "n": inst.n, "algorithm": task.algorithm,
           "params": task.params_text, "seed": task.seed, "device": rt.name,
           "length": res.length, "optimum": res.optimum,
           "gap_percent": None if res.gap is None else round(res.gap, 4),
           "wall_s": round(res.wall_s, 6), "kernel_s": round(res.kernel_s, 6),
           "iterations": res.iterations, "repeat": task.repeat, "version": task.version,
           "status": OK, "reason": "", "tour_sha256": tour_hash(res.order)}
    return {"row": row, "history": [[p.elapsed, p.best_length] for p in res.history],
            "notes": list(res.notes)}


def failed_row(task: RunTask, reason: str) -> dict:
    """The row of a run that failed: what it was, ``status`` failed and the reason."""
    return {"instance": task.instance, "n": task.n, "algorithm": task.algorithm,
            "params": task.params_text, "seed": task.seed, "device": None, "length": None,
            "optimum": None, "gap_percent": None, "wall_s": None, "kernel_s": None,
            "iterations": None, "repeat": task.repeat, "version": task.version,
            "status": FAILED, "reason": reason, "tour_sha256": None}


def describe_run(task: RunTask, entry: Entry) -> str:
    """A finished run in one line (the progress lines when stderr is not a terminal)."""
    head = f"{task.instance} {task.algorithm} {task.params_text or '-'} seed {task.seed} rep {task.repeat}"
    if not entry.ok:
        return head
    r = entry.record["row"]
    gap = "" if r["gap_percent"] is None else f" gap {r['gap_percent']:.2f}%"
    return (f"{head}: length {r['length']}{gap} wall {r['wall_s']:.4f} s kernel "
            f"{r['kernel_s']:.4f} s, {r['iterations']} iterations"
            + "".join(f"; {n}" for n in entry.record.get("notes", [])))


__all__ = [
    "FAILED",
    "OK",
    "REWRITE_S",
    "Entry",
    "Journal",
    "RunTask",
    "SerialRunner",
    "describe_run",
    "execute_run",
    "failed_row",
    "failure_reason",
    "run_tasks",
    "suite_tasks",
    "tour_hash",
]
