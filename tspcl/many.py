"""Batch solving (``tspcl solve-many``): every instance of many files, one algorithm and
budget, a tour each and one summary; resumable, in this process or on a Dask cluster.

Inputs (:func:`input_files`): problem files, folders (their ``*.tsp`` and ``*.tsp.gz``
files, by name), ``@LIST`` files (one path a line, relative to the list's folder; blank
lines and ``#`` comments ignored); any file may hold several problems (a multi-instance
file, :mod:`tspcl.tsplib`).  Every instance is a campaign task (:mod:`tspcl.campaign`)
keyed by its name, the sha256 of its problem (:func:`problem_sha256`), the algorithm,
parameters, seed, budget and tspcl's version; a file that cannot be read is one task,
failed with the reason, and the others are solved.

Outputs in ``--out-dir``: ``NAME.tour`` per instance (written atomically when it is
solved), ``summary.csv`` and ``summary.json`` (a row per instance: name, n, algorithm,
length, optimum and gap where known, wall seconds, status and reason; rewritten as rows
come in) and ``summary.jsonl``, the journal.  A rerun skips the instances whose journal
entry is ok and whose tour file exists.

With ``--algo auto`` the instances that fit one work-group (:mod:`tspcl.solvers.batch`)
are solved many per launch: in this process, on its device, or on a cluster in chunks
(two a worker), each on its worker's device (``-i``: kicks per instance, default 20n;
``-t``: seconds each wave of them searches at most, the instances of a wave searching at
once; a row's wall is its share of its wave's); every other instance runs alone as
``tspcl solve --algo auto`` would (``-t`` its time limit), in this process or on the
cluster's workers.  With ``--scheduler`` this machine may have no device: the instances
that may fit (:data:`tspcl.solvers.batch.MAX_CITIES`) go in chunks, and a worker solves
alone those its device's local memory does not hold.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .campaign import FAILED, OK, Entry, Journal, failure_reason, note, run_tasks, tour_hash
from .errors import TspclError, UsageError
from .version import version_string

BATCH = "batch"          # the algorithm a batched row names
SUMMARY_FIELDS = ("name", "n", "algorithm", "length", "optimum", "gap_percent", "wall_s",
                  "status", "reason", "seed", "source", "tour_sha256")
PROBLEM_SUFFIXES = (".tsp", ".tsp.gz")
READ_PROCESSES = 16      # processes that read many problem files at once, at most
PARALLEL_FILES = 32      # files a reading process gets at least


@dataclass(frozen=True)
class ManyOptions:
    """What every instance is solved with: ``algo`` (auto, or a solver's name) with its
    ``params`` (KEY=VALUE pairs, given an algorithm), a time limit in seconds and an
    iteration budget (``-i``) per instance, the seed and the device (None:
    $TSPCL_DEVICE, else auto)."""

    algo: str = "auto"
    params: tuple = ()
    time_limit: float | None = None
    iterations: str | None = None
    seed: int = 1
    device: str | None = None

    def text(self) -> str:
        """The options as a key shows them."""
        params = " ".join(self.params) or "-"
        return (f"{self.algo} {params} | seed {self.seed} | time {self.time_limit} | "
                f"iterations {self.iterations}")


@dataclass(frozen=True)
class InstanceTask:
    """One instance to solve: problem ``index`` of file ``source`` (None: the file could
    not be read, and solving it reports why), its name and size, where its tour goes."""

    key: str
    source: str
    index: int | None
    name: str
    n: int | None
    out_dir: str
    options: ManyOptions

    @property
    def tour_path(self) -> Path:
        return Path(self.out_dir) / f"{self.name}.tour"


# ---- inputs ------------------------------------------------------------------------------
def input_files(inputs: list[str]) -> list[str]:
    """The problem files that FILES names (see the module docstring), in order, each once."""
    files: list[str] = []
    for item in inputs:
        if item.startswith("@"):
            listing = Path(item[1:])
            try:
                lines = listing.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError as e:
                raise UsageError(f"{item}: cannot read the list ({e.strerror or e})") from None
            files += input_files([str(listing.parent / line.strip()) for line in lines
                                  if line.strip() and not line.strip().startswith("#")])
        elif Path(item).is_dir():
            files += sorted(str(p) for p in Path(item).iterdir()
                            if p.is_file() and p.name.endswith(PROBLEM_SUFFIXES))
        else:
            files.append(item)
    return list(dict.fromkeys(files))


@functools.lru_cache(maxsize=4)
def problems_of(path: str) -> tuple:
    """The problems of a file (a multi-instance file's every one), read once per process."""
    from .tsplib import read_problems

    return tuple(read_problems(path))


def problems_or_reason(path: str) -> tuple | str:
    """A file's problems (:func:`problems_of`), or why it cannot be read (the
    TspclError's message)."""
    try:
        return problems_of(path)
    except TspclError as e:
        return e.message


def read_files(paths: list[str]) -> list:
    """:func:`problems_or_reason` of every file, in order.  Parsing is Python (10,000
    files of 100 cities take seconds in one process): from :data:`PARALLEL_FILES` files a
    process on, up to :data:`READ_PROCESSES` forked processes read them at once, where
    this process may fork (no other Python thread; Linux and the like)."""
    import multiprocessing
    import os
    import threading

    processes = min(READ_PROCESSES, os.cpu_count() or 1, len(paths) // PARALLEL_FILES)
    if (processes < 2 or threading.active_count() > 1
            or "fork" not in multiprocessing.get_all_start_methods()):
        return [problems_or_reason(path) for path in paths]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(problems_or_reason, paths,
                             chunksize=max(1, len(paths) // (4 * processes))))


def problem_sha256(inst) -> str:
    """The sha256 of what defines the instance's tours: its name, kind, weight type and
    the arrays of its distances (coordinates or matrix) and fixed edges."""
    digest = hashlib.sha256(f"{inst.name}|{inst.kind}|{inst.weight_type}".encode())
    for array in (inst.coords, inst.matrix, inst.fixed_edges):
        if array is not None:
            digest.update(f"|{array.dtype}{array.shape}|".encode())
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def instance_tasks(files: list[str], out_dir: str,
                   options: ManyOptions) -> tuple[list[InstanceTask], dict]:
    """A task per instance of every file (a file that cannot be read: one task that
    fails), naming the file by its absolute path, and with ``--algo auto`` the instances
    the batch kernels may take (up to :data:`tspcl.solvers.batch.MAX_CITIES` cities) by
    task key, each file read once; UsageError when two instances have one name (their
    tours would collide)."""
    from .solvers.batch import MAX_CITIES

    version = version_string()
    tasks, where, small = [], {}, {}
    paths = [str(Path(f).absolute()) for f in files]   # workers may run elsewhere
    for path, problems in zip(paths, read_files(paths)):
        if isinstance(problems, str):
            name = Path(path).name
            tasks.append(InstanceTask(f"{path} | unreadable: {problems} | {options.text()} | "
                                      f"{version}", path, None, name, None, out_dir, options))
            continue
        for index, inst in enumerate(problems):
            if inst.name in where:
                raise UsageError(f"two instances named {inst.name!r} ({where[inst.name]} and "
                                 f"{path}): their tours would have one file name")
            where[inst.name] = path
            key = (f"{inst.name} | sha256:{problem_sha256(inst)[:16]} | {options.text()} | "
                   f"{version}")
            tasks.append(InstanceTask(key, path, index, inst.name, inst.n, out_dir, options))
            if options.algo == "auto" and inst.n <= MAX_CITIES:
                small[key] = inst
    return tasks, small


# ---- solving one instance ------------------------------------------------------------------
def execute_instance(task: InstanceTask) -> dict:
    """Solve one instance alone (the campaign's execute, in a worker or in this process)
    and write its tour; the record is ``{"row": summary row}``."""
    from .auto import choose
    from .campaign import process_runtime
    from .run import solve, solver_params
    from .solvers import get_solver
    from .tsplib import format_tour

    started = time.perf_counter()
    problems = problems_of(task.source)       # a file that cannot be read fails here
    inst, o = problems[task.index], task.options
    rt = process_runtime(o.device)
    time_limit, chosen, values = o.time_limit, None, {}
    if o.algo == "auto":
        choice = choose(inst, rt.limits.is_gpu, o.time_limit, o.iterations is not None)
        spec, time_limit, chosen = get_solver(choice.algorithm), choice.time_limit, choice.reason
        values = spec.typed(choice.values)
    else:
        spec = get_solver(o.algo)
        values = spec.typed(param_pairs(o))
    params, iterations = solver_params(spec, values, o.iterations)
    deadline = None if time_limit is None else started + time_limit
    res = solve(inst, spec, params, rt, seed=o.seed, deadline=deadline, iterations=iterations,
                started=started, chosen=chosen)
    write_tours([(task, format_tour(res.order, inst.name,
                                 f"length {res.length}; algorithm {spec.name}; seed {o.seed}; "
                                 f"device {res.device}; tspcl solve-many"))])
    return {"row": row(task, spec.name, res.length, res.optimum, res.wall_s, res.order)}


def write_tours(tours: list[tuple[InstanceTask, str]]) -> None:
    """Write each task's tour text to its file, all or none (:func:`tspcl.output.write_outputs`)."""
    from .output import output_target, write_outputs

    write_outputs([(output_target(str(task.tour_path), "--out-dir"), text)
                   for task, text in tours])


def row(task: InstanceTask, algorithm: str, length: int, optimum: int | None, wall_s: float,
        order) -> dict:
    """A solved instance's summary row."""
    from .optima import gap_percent

    gap = gap_percent(length, optimum)
    return {"name": task.name, "n": task.n, "algorithm": algorithm, "length": length,
            "optimum": optimum, "gap_percent": None if gap is None else round(gap, 4),
            "wall_s": round(wall_s, 6), "status": OK, "reason": "", "seed": task.options.seed,
            "source": task.source, "tour_sha256": tour_hash(order)}


def failed_row(task: InstanceTask, reason: str) -> dict:
    """The row of an instance that failed: what it was, ``status`` failed, the reason."""
    return {"name": task.name, "n": task.n, "algorithm": task.options.algo, "length": None,
            "optimum": None, "gap_percent": None, "wall_s": None, "status": FAILED,
            "reason": reason, "seed": task.options.seed, "source": task.source,
            "tour_sha256": None}


# ---- the batch path --------------------------------------------------------------------------
def solve_together(rt, tasks: list[InstanceTask], instances: list, params,
                   options: ManyOptions):
    """Solve the tasks' instances together with the batch kernels on ``rt``
    (:func:`tspcl.solvers.batch.solve_batch`, a wave at a time) and write their tours
    (:func:`write_tours`); yields an entry per task as its wave ends (a wave that raises:
    its tasks failed, with the reason)."""
    from .optima import known_optimum
    from .solvers.batch import most_cities, solve_batch, waves
    from .tsplib import format_tour

    for wave in waves(instances, most_cities(rt, params)):
        began = time.perf_counter()
        try:
            tours = solve_batch(rt, [instances[i] for i in wave], params, options.seed,
                                options.time_limit)
        except Exception as e:  # noqa: BLE001 - a failed wave is rows, not the end
            yield from (Entry(tasks[i].key, FAILED, reason=failure_reason(e)) for i in wave)
            continue
        share = (time.perf_counter() - began) / len(wave)
        write_tours([(tasks[i], format_tour(tour.order, instances[i].name,
                                            f"length {tour.length}; algorithm {BATCH}; seed "
                                            f"{options.seed}; kicks {tour.kicks}; device "
                                            f"{rt.name}; tspcl solve-many"))
                     for i, tour in zip(wave, tours)])
        for i, tour in zip(wave, tours):
            task = tasks[i]
            yield Entry(task.key, OK, {"row": row(task, BATCH, tour.length,
                                                  known_optimum(instances[i]), share,
                                                  tour.order)})


class BatchRunner:
    """A campaign runner (:func:`tspcl.campaign.run_tasks`) that solves its tasks together
    on this process's device (:func:`solve_together`), their instances given by task key;
    ``execute`` is unused: the batch is the execution."""

    def __init__(self, rt, params, options: ManyOptions, instances: dict):
        self.rt, self.params, self.options, self.instances = rt, params, options, instances

    def run(self, tasks, execute):
        yield from solve_together(self.rt, tasks, [self.instances[t.key] for t in tasks],
                                  self.params, self.options)


@dataclass(frozen=True)
class ChunkTask:
    """Batched instances that one worker solves together (:func:`execute_chunk`)."""

    key: str
    members: tuple          # the InstanceTasks
    params: object          # BatchParams


def execute_chunk(chunk: ChunkTask) -> dict:
    """Solve a chunk on this worker's device (its ``$TSPCL_DEVICE``, or the options'):
    together the instances that fit it, alone the others (:func:`execute_instance`); the
    record holds an entry per instance."""
    from .campaign import process_runtime
    from .solvers.batch import fits, most_cities

    options = chunk.members[0].options
    rt = process_runtime(options.device)
    most = most_cities(rt, chunk.params)
    instances = [problems_of(t.source)[t.index] for t in chunk.members]
    together = [(t, inst) for t, inst in zip(chunk.members, instances) if fits(inst, most)]
    entries = list(solve_together(rt, [t for t, _ in together], [inst for _, inst in together],
                                  chunk.params, options))
    batched = {t.key for t, _ in together}
    for task in chunk.members:
        if task.key not in batched:
            try:
                entries.append(Entry(task.key, OK, execute_instance(task)))
            except Exception as e:  # noqa: BLE001 - a failed instance is a row
                entries.append(Entry(task.key, FAILED, reason=failure_reason(e)))
    return {"entries": [(e.key, e.status, e.record, e.reason) for e in entries]}


class ChunkRunner:
    """A campaign runner that sends batched instances to a cluster's workers in chunks
    (``per_worker`` chunks a worker, as many instances each), each chunk solved together
    on its worker's device (:func:`execute_chunk`) and retried or failed as a
    whole by the inner runner (:class:`tspcl.cluster.DaskRunner`); yields an entry per
    instance.  An instance's tour is the same in any chunk (the batch kernels solve each
    instance alone in its work-group), so a cluster run gives the serial run's tours."""

    def __init__(self, inner, params, per_worker: int = 2):
        self.inner, self.params, self.per_worker = inner, params, per_worker

    def run(self, tasks, execute):
        if not tasks:
            return
        size = -(-len(tasks) // max(1, self.inner.worker_count() * self.per_worker))
        chunks = {}
        for first in range(0, len(tasks), size):
            members = tuple(tasks[first:first + size])
            key = "chunk " + hashlib.sha256("\n".join(t.key for t in members).encode()).hexdigest()
            chunks[key] = ChunkTask(key, members, self.params)
        for entry in self.inner.run(list(chunks.values()), execute_chunk):
            chunk = chunks[entry.key]
            if entry.ok:
                yield from (Entry(*fields) for fields in entry.record["entries"])
            else:
                yield from (Entry(t.key, FAILED, reason=entry.reason) for t in chunk.members)


def batch_params(options: ManyOptions):
    """The batch kernels' parameters: the defaults, with ``-i`` as the kicks per instance."""
    from .solvers.batch import BatchParams

    return BatchParams() if options.iterations is None else BatchParams(kicks=options.iterations)


# ---- the campaign ------------------------------------------------------------------------------
def check_options(options: ManyOptions) -> None:
    """UsageError for a bad algorithm or parameter, before any instance is read."""
    from .solvers import get_solver

    if options.algo == "auto":
        if options.params:
            raise UsageError("-p goes with an algorithm (--algo NAME); auto takes none")
        batch_params(options)
        return
    from .run import solver_params

    spec = get_solver(options.algo)
    solver_params(spec, spec.typed(param_pairs(options)), options.iterations)


def param_pairs(options: ManyOptions) -> dict[str, str]:
    """The -p KEY=VALUE pairs as a dict; UsageError for a pair without '='."""
    pairs = {}
    for pair in options.params:
        if "=" not in pair:
            raise UsageError(f"-p takes KEY=VALUE (got {pair!r})")
        key, value = pair.split("=", 1)
        pairs[key] = value
    return pairs


def solve_many(inputs: list[str], out_dir: str, options: ManyOptions, cluster: str | None = None,
               scheduler: str | None = None, workers: int | None = None,
               fresh: bool = False) -> dict[str, Entry]:
    """Solve every instance of ``inputs`` into ``out_dir`` (see the module docstring);
    returns every task's entry by key."""
    from .campaign import process_runtime
    from .cluster import open_runner
    from .solvers.batch import MAX_CITIES, fits, most_cities

    check_options(options)
    files = input_files(inputs)
    if not files:
        raise UsageError("no problem files in " + " ".join(inputs))
    out = Path(out_dir).absolute()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out-dir {out_dir}: cannot make the folder ({e.strerror or e})") from None
    tasks, small = instance_tasks(files, str(out), options)
    journal = Journal(out / "summary.jsonl")
    if fresh:
        journal.set_aside()
    known = journaled(journal, tasks)
    batched, alone = [], tasks
    if options.algo == "auto":
        params = batch_params(options)
        if scheduler is None:
            rt = process_runtime(options.device)
            most, where = most_cities(rt, params), f"on {rt.name}"
        else:    # the workers' devices decide (execute_chunk)
            rt, most, where = None, MAX_CITIES, "on the workers' devices"
        if cluster or scheduler:
            where = "in chunks " + ("on the local cluster's workers" if cluster else where)
        fit = {key for key, inst in small.items() if fits(inst, most)}
        batched = [t for t in tasks if t.key in fit]
        alone = [t for t in tasks if t.key not in fit]
        if batched:
            note(f"tspcl: {len(batched)} instances of {len(tasks)} fit one work-group (up to "
                 f"{most} cities): the batch kernel solves them many per launch {where}"
                 + (f"; the other {len(alone)} run one by one" if alone else ""))

    def write(entries: dict[str, Entry]) -> None:
        write_summary(out, tasks, {**known, **entries})

    def describe(task: InstanceTask, entry: Entry) -> str:
        if not entry.ok:
            return task.name
        r = entry.record["row"]
        gap = "" if r["gap_percent"] is None else f" gap {r['gap_percent']:.2f}%"
        return f"{task.name} ({r['algorithm']}): length {r['length']}{gap}"

    with open_runner(cluster, scheduler, workers, options.device) as runner:
        if batched:
            together = (ChunkRunner(runner, params) if cluster or scheduler
                        else BatchRunner(rt, params, options, small))
            known.update(run_tasks(batched, execute_instance, journal, together, write=write,
                                   describe=describe, label="instances (batched)"))
        if alone:
            note(f"tspcl: solving on {runner.description}")
            known.update(run_tasks(alone, execute_instance, journal, runner, write=write,
                                   describe=describe, label="instances"))
    return known


def journaled(journal: Journal, tasks: list[InstanceTask]) -> dict[str, Entry]:
    """The journal's entries of the tasks; a task whose ok entry's tour file is gone gets
    a failed entry (journaled), so that the campaign solves it again."""
    old, known = journal.read(), {}
    for task in tasks:
        entry = old.get(task.key)
        if entry is not None and entry.ok and not task.tour_path.is_file():
            entry = Entry(task.key, FAILED, reason=f"{task.tour_path} is missing")
            journal.append(entry)
        if entry is not None:
            known[task.key] = entry
    journal.close()
    return known


def summary_rows(tasks: list[InstanceTask], entries: dict[str, Entry]) -> list[dict]:
    """A row per task with an entry, in the tasks' order."""
    rows = []
    for task in tasks:
        entry = entries.get(task.key)
        if entry is not None:
            rows.append(entry.record["row"] if entry.ok else failed_row(task, entry.reason))
    return rows


def write_summary(out: Path, tasks: list[InstanceTask], entries: dict[str, Entry]) -> None:
    """summary.csv and summary.json in ``out``, atomically."""
    from .output import output_target, write_outputs

    rows = summary_rows(tasks, entries)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=SUMMARY_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_outputs([(output_target(str(out / "summary.csv"), "--out-dir"), text.getvalue()),
                   (output_target(str(out / "summary.json"), "--out-dir"),
                    json.dumps(rows, indent=1) + "\n")])


__all__ = ["BATCH", "BatchRunner", "InstanceTask", "ManyOptions", "execute_instance",
           "input_files", "instance_tasks", "solve_many"]
