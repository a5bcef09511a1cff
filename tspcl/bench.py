"""Benchmark suites: instances x algorithms x parameters x seeds, timed, to CSV/JSON/MD.

``tspcl bench SPEC`` reads a TOML suite spec::

    name = "construct"
    warmup = 1            # untimed runs of each (instance, algorithm, params) before measuring
    repeats = 3           # measured runs per seed
    seeds = [1, 2, 3]

    [[group]]             # any number of groups; each is a cross product
    instances = ["{shared}/tsplib/pr1002.tsp", "gen:uniform:100000"]
    algorithms = ["nn", "greedy", "sfc", "random"]
    params = { k = 10 }   # optional; each algorithm takes the keys it has (others skipped);
                          # an array of tables ([{k = 8}, {k = 16}]) runs each variant
    time_limit = 10       # optional, seconds per run
    iterations = 100      # optional, iteration limit per run

Instances are problem files or ``gen:KIND:N[:SEED]`` (:func:`tspcl.gen.generate`, seed
1 by default).  ``{shared}`` is the shared instances folder: ``$TSPCL_SHARED_INSTANCES``,
else ``shared/instances`` inside or beside the checkout, else ``./.bench/instances``.
Relative paths are read from the current folder, then from the spec's folder.
``warmup``, ``repeats``, ``seeds``, ``time_limit`` and ``iterations`` may also be set per
group (a group's value wins).

The whole spec is checked before anything runs: an unknown algorithm, parameter or key
is a :class:`~tspcl.errors.UsageError`, a missing instance file a
:class:`~tspcl.errors.MissingInputError`.  Pairs a solver does not support (greedy on
ATSP, sfc without coordinates) are skipped with a note on stderr.

A suite runs as a campaign (:mod:`tspcl.campaign`): each measured run is a task keyed by
its instance (a file's name and content hash, or its ``gen:`` text), algorithm,
parameters, seed, repeat, budget and tspcl's version.  Its row goes to the journal
``results.jsonl`` in ``out_dir`` as it finishes, and a rerun of the suite skips the
runs the journal holds (failed ones run again; ``fresh`` moves the journal aside).  The
runs go one after another through one :class:`~tspcl.device.Runtime` (kernels built
once), or to a Dask cluster (:mod:`tspcl.cluster`); a worker's warm-up runs are untimed.

Output (in ``out_dir``, by default ``bench-out/`` and the spec file's name without its
suffix), rewritten from the journal every few seconds and at the end: ``results.csv``
and ``results.json`` with one row per run (:data:`COLUMNS`; a failed run has ``status``
failed, its reason, and no length or times; ``tour_sha256`` is
:func:`tspcl.campaign.tour_hash` of its tour), in the spec's order, and ``results.md``:
a header line (devices, suite, version, date, command), a table with one line per
(instance, algorithm, params) giving the measured runs, median length, mean gap %,
median wall seconds, median kernel seconds and median iterations (a solver's own steps:
colony iterations, generations, local-search rounds; 0 for a construction), so that a
time-limited run says how far it got, and the failed runs with their reasons.  Kernel
seconds are OpenCL profiling-event times; wall seconds include upload and readback.
With matplotlib (``tspcl[plot]``), ``gap.png`` as well: the gap against time of each
(instance, algorithm, params) (:func:`gap_series`).  Progress goes to stderr.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shlex
import statistics
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .errors import MissingInputError, OutputError, UsageError
from .params import accepted_keys, read_toml, value_text

SHARED_ENV = "TSPCL_SHARED_INSTANCES"
FIGURE = "gap.png"
COLUMNS = ["instance", "n", "algorithm", "params", "seed", "device", "length", "optimum",
           "gap_percent", "wall_s", "kernel_s", "iterations", "repeat", "version", "status",
           "reason", "tour_sha256"]
JOURNAL = "results.jsonl"
SUITE_KEYS = {"name", "warmup", "repeats", "seeds", "group", "time_limit", "iterations"}
GROUP_KEYS = {"instances", "algorithms", "params", "warmup", "repeats", "seeds",
              "time_limit", "iterations"}


def shared_instances_dir() -> Path:
    """Where ``{shared}`` points (see the module docstring); the last fallback may not exist."""
    env = os.environ.get(SHARED_ENV)
    if env:
        return Path(env)
    root = Path(__file__).resolve().parent.parent
    for cand in (root / "shared" / "instances", root.parent / "shared" / "instances",
                 Path.cwd().parent / "shared" / "instances"):
        if cand.is_dir():
            return cand
    return Path(".bench") / "instances"


# ---- the spec --------------------------------------------------------------------------
@dataclass(frozen=True)
class InstanceRef:
    """A problem file or a generated instance, resolved but not yet loaded."""

    text: str                  # as written in the spec
    path: Path | None = None
    gen: tuple | None = None   # (kind, n, seed)

    def load(self):
        if self.gen is not None:
            from .gen import generate

            kind, n, seed = self.gen
            return generate(kind, n, seed=seed, name=None if seed == 1 else f"{kind}{n}s{seed}")
        from .tsplib import read_problem

        return read_problem(str(self.path))


@dataclass
class Group:
    instances: list[InstanceRef]
    algorithms: list[str]
    variants: list[dict]       # raw parameter tables (each applied per algorithm)
    warmup: int
    repeats: int
    seeds: list[int]
    time_limit: float | None
    iterations: int | None


@dataclass
class Suite:
    name: str
    source: str
    groups: list[Group] = field(default_factory=list)


def _int(value, what: str, spec: str, minimum: int = 0, maximum: int | None = None) -> int:
    if (isinstance(value, bool) or not isinstance(value, int) or value < minimum
            or (maximum is not None and value > maximum)):
        within = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        raise UsageError(f"{spec}: {what} must be an integer {within} (got {value!r})")
    return value


def _opt_number(value, what: str, spec: str):
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0
            or not math.isfinite(value)):
        raise UsageError(f"{spec}: {what} must be a positive finite number (got {value!r})")
    return value


def resolve_instance(text: str, spec_dir: Path, spec: str) -> InstanceRef:
    """``gen:KIND:N[:SEED]`` or a path (``{shared}`` expanded); MissingInputError if absent."""
    if not isinstance(text, str):
        raise UsageError(f"{spec}: instances must be strings (got {text!r})")
    if text.startswith("gen:"):
        from .gen import GENERATORS, _check_args

        parts = text.split(":")
        if len(parts) not in (3, 4) or parts[1] not in GENERATORS:
            raise UsageError(f"{spec}: {text!r}: expected gen:KIND:N[:SEED] with KIND one of "
                             f"{', '.join(GENERATORS)}")
        try:
            n = int(parts[2].replace("_", ""))
            seed = int(parts[3]) if len(parts) == 4 else 1
        except ValueError:
            raise UsageError(f"{spec}: {text!r}: N and SEED must be integers") from None
        _check_args(parts[1], n, seed)
        if parts[1] == "grid":
            from .gen import grid_shape

            grid_shape(n)
        return InstanceRef(text, gen=(parts[1], n, seed))
    path = Path(text.replace("{shared}", str(shared_instances_dir()))).expanduser()
    cands = [path] if path.is_absolute() else [path, spec_dir / path]
    for cand in cands:
        if cand.is_file():
            return InstanceRef(text, path=cand)
    where = " or ".join(str(c) for c in cands)
    hint = (f" (the shared instances folder is {shared_instances_dir()}; set ${SHARED_ENV})"
            if "{shared}" in text else "")
    raise MissingInputError(f"{spec}: instance {text!r} not found at {where}{hint}")


def applicable(spec, variant: dict):
    """The solver's parameters from the variant's keys that it has (others skipped)."""
    names = accepted_keys(spec.params_type)
    return spec.params_from({k: value_text(v) for k, v in variant.items()
                             if k.replace("-", "_") in names})


def load_suite(spec_file: str) -> Suite:
    """Parse and check the whole spec (every instance, algorithm and parameter)."""
    from .solvers import get_solver
    from .solvers.base import MAX_COUNT, MAX_SEED

    data = read_toml(spec_file, "suite spec")
    spec_dir = Path(spec_file).resolve().parent
    unknown = set(data) - SUITE_KEYS
    if unknown:
        raise UsageError(f"{spec_file}: unknown key(s) {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(sorted(SUITE_KEYS))})")
    groups = data.get("group")
    if not isinstance(groups, list) or not groups:
        raise UsageError(f"{spec_file}: no [[group]] tables: nothing to run")
    suite = Suite(str(data.get("name", Path(spec_file).stem)), spec_file)
    for gi, g in enumerate(groups, 1):
        where = f"{spec_file} group {gi}"
        if not isinstance(g, dict):
            raise UsageError(f"{where}: must be a table")
        unknown = set(g) - GROUP_KEYS
        if unknown:
            raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} "
                             f"(known: {', '.join(sorted(GROUP_KEYS))})")
        get = lambda key, default: g.get(key, data.get(key, default))  # noqa: E731
        insts, algs = g.get("instances"), g.get("algorithms")
        if not isinstance(insts, list) or not insts:
            raise UsageError(f"{where}: 'instances' must be a non-empty list")
        if not isinstance(algs, list) or not algs:
            raise UsageError(f"{where}: 'algorithms' must be a non-empty list")
        for a in algs:
            if not isinstance(a, str):
                raise UsageError(f"{where}: algorithm names must be strings (got {a!r})")
            get_solver(a)
        raw = g.get("params", {})
        variants = raw if isinstance(raw, list) else [raw]
        if not variants or not all(isinstance(v, dict) for v in variants):
            raise UsageError(f"{where}: 'params' must be a table or an array of tables")
        for v in variants:
            used = set()
            for a in algs:
                spec = get_solver(a)
                applicable(spec, v)  # raises on a bad value
                used |= accepted_keys(spec.params_type)
            unused = [k for k in v if k.replace("-", "_") not in used]
            if unused:
                raise UsageError(f"{where}: no algorithm of the group has parameter(s) "
                                 f"{', '.join(unused)}")
        seeds = get("seeds", [1])
        if not isinstance(seeds, list) or not seeds:
            raise UsageError(f"{where}: 'seeds' must be a non-empty list of integers")
        suite.groups.append(Group(
            instances=[resolve_instance(t, spec_dir, where) for t in insts],
            algorithms=list(algs), variants=variants,
            warmup=_int(get("warmup", 0), "warmup", where),
            repeats=_int(get("repeats", 1), "repeats", where, 1),
            seeds=[_int(s, "a seed", where, 0, MAX_SEED) for s in seeds],
            time_limit=_opt_number(get("time_limit", None), "time_limit", where),
            iterations=None if get("iterations", None) is None
            else _int(get("iterations", None), "iterations", where, 1, MAX_COUNT)))
    return suite


# ---- running ---------------------------------------------------------------------------
def format_params(params: dict) -> str:
    return " ".join(f"{k}={value_text(v)}" for k, v in params.items())


def _note(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def default_out_dir(spec_file: str) -> Path:
    """Where a suite's results go unless told: bench-out/SPEC, SPEC the spec file's name
    without its suffix, so that suites run one after another keep their results."""
    return Path("bench-out") / Path(spec_file).stem


def run_suite(spec_file: str, device: str | None, out_dir: str | None = None,
              command: str | None = None, figure: bool | None = None, fresh: bool = False,
              cluster: str | None = None, scheduler: str | None = None,
              workers: int | None = None) -> list[dict]:
    """Run the suite in ``spec_file`` as a campaign (:mod:`tspcl.campaign`): its runs are
    tasks, each row goes to ``out_dir``'s :data:`JOURNAL` as it comes, and the outputs are
    rewritten from the journal as rows come in and at the end; a rerun skips the runs the
    journal holds (``fresh``: the old journal is moved aside and all run again).
    ``out_dir`` None: :func:`default_out_dir`.  ``cluster`` ("local"), ``scheduler``
    (an address) and ``workers``: where the runs go (:func:`tspcl.cluster.open_runner`;
    none of them: one after another in this process on ``device``).  ``figure``: write
    :data:`FIGURE` too (True: UsageError before running if matplotlib is missing; None:
    if it imports, else a note on stderr).  Returns the rows in the spec's order, a
    failed run's with status ``failed`` and its reason."""
    from . import plot
    from .campaign import Journal, describe_run, execute_run, run_tasks, suite_tasks
    from .cluster import open_runner
    from .version import version_string

    suite = load_suite(spec_file)
    if figure is None:
        figure = plot.available()
        if not figure:
            _note(f"no {FIGURE}: drawing needs matplotlib ({plot.INSTALL_HINT})")
    elif figure:
        plot.matplotlib_figure()  # UsageError now, not after the runs
    out = default_out_dir(spec_file) if out_dir is None else Path(out_dir)
    version = version_string()
    command = command if command is not None else shlex.join(sys.argv)
    started = datetime.now(timezone.utc)
    with open_runner(cluster, scheduler, workers, device) as runner:
        tasks = suite_tasks(suite, runner.device, version)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"{out}: cannot create output folder ({e.strerror})") from None
        journal = Journal(out / JOURNAL)
        if fresh:
            aside = journal.set_aside()
            if aside:
                _note(f"--fresh: the old journal is now {aside}")
        _note(f"bench {suite.name}: {len(tasks)} runs on {runner.description}, {version}")
        meta = {"suite": suite.name, "spec": str(spec_file), "version": version,
                "date": started.strftime("%Y-%m-%d %H:%M UTC"), "command": command}

        def write(entries) -> None:
            rows, histories = results_of(tasks, entries)
            write_results(out, rows, meta, histories if figure else None)

        entries = run_tasks(tasks, execute_run, journal, runner, write=write,
                            describe=describe_run)
    rows, _ = results_of(tasks, entries)
    failed = sum(r["status"] != "ok" for r in rows)
    _note(f"wrote {out / 'results.csv'}, results.json, results.md"
          + (f", {FIGURE}" if figure and len(rows) > failed else "")
          + f" ({len(rows)} runs" + (f", {failed} failed)" if failed else ")"))
    return rows


def results_of(tasks: list, entries: dict) -> tuple[list[dict], list[list[tuple[float, int]]]]:
    """The rows of the tasks that have an entry, in the tasks' order, and each row's
    history (``(seconds, best length)`` of each better tour; empty for a failed run)."""
    from .campaign import failed_row

    rows, histories = [], []
    for task in tasks:
        entry = entries.get(task.key)
        if entry is None:
            continue
        if entry.ok:
            rows.append(entry.record["row"])
            histories.append([tuple(p) for p in entry.record["history"]])
        else:
            rows.append(failed_row(task, entry.reason))
            histories.append([])
    return rows, histories


# ---- writing ---------------------------------------------------------------------------
def summarize(rows: list[dict]) -> list[dict]:
    """One line per (instance, algorithm, params) of the measured runs (failed ones
    left out), in first-seen order."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["status"] != "ok":
            continue
        groups.setdefault((r["instance"], r["algorithm"], r["params"]), []).append(r)
    out = []
    for (inst, alg, params), rs in groups.items():
        gaps = [r["gap_percent"] for r in rs if r["gap_percent"] is not None]
        out.append({"instance": inst, "n": rs[0]["n"], "algorithm": alg, "params": params,
                    "runs": len(rs),
                    "median_length": statistics.median(r["length"] for r in rs),
                    "mean_gap_percent": statistics.fmean(gaps) if gaps else None,
                    "median_wall_s": statistics.median(r["wall_s"] for r in rs),
                    "median_kernel_s": statistics.median(r["kernel_s"] for r in rs),
                    "median_iterations": statistics.median(r["iterations"] for r in rs)})
    return out


def gap_series(rows: list[dict], histories: list[list[tuple[float, int]]]) -> list:
    """The figure's curves: one :class:`tspcl.plot.Series` per (instance, algorithm,
    params), in first-seen order, of the gap in % to the instance's optimum, else to the
    shortest tour any run of the suite found on it (the label then says "vs best").
    A label names the instance, the algorithm and the parameters in which the
    algorithm's groups differ.

    Where a run's history (``(seconds, best length)`` of each better tour, the row's
    run) holds more than one tour, the curve is the median over the runs of their
    best-so-far gap, from when every run has a tour to the end of the longest run (a
    run's last gap holds until its wall time).  Otherwise (constructions) the points
    are the runs' final gaps at their wall times."""
    from .plot import Series

    best: dict[str, int] = {}
    for r in rows:
        best[r["instance"]] = min(best.get(r["instance"], r["length"]), r["length"])
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["instance"], r["algorithm"], r["params"]), []).append(i)
    shared: dict[str, set[str]] = {}  # parameters every group of an algorithm has
    for _, alg, params in groups:
        shared[alg] = shared.get(alg, set(params.split())) & set(params.split())
    series = []
    for (inst, alg, params), members in groups.items():
        reference = rows[members[0]]["optimum"] or best[inst]
        if not reference:
            continue  # every tour has length 0: no gap to speak of
        own = " ".join(p for p in params.split() if p not in shared[alg])
        label = f"{inst} {alg} {own}".rstrip() + ("" if rows[members[0]]["optimum"]
                                                  else " (vs best)")
        runs = [histories[i] + [(rows[i]["wall_s"], rows[i]["length"])] for i in members]
        if max(len(histories[i]) for i in members) > 1:
            seconds, lengths = _median_best(runs)
            series.append(Series(label, seconds, 100.0 * (lengths - reference) / reference))
        else:
            seconds = np.array([rows[i]["wall_s"] for i in members], float)
            lengths = np.array([rows[i]["length"] for i in members], float)
            series.append(Series(label, seconds, 100.0 * (lengths - reference) / reference,
                                 steps=False))
    return series


def _median_best(runs: list[list[tuple[float, int]]]) -> tuple[np.ndarray, np.ndarray]:
    """The median over ``runs`` (each ``(seconds, best length)`` in time order) of the
    best length so far, at every time any run reports, from when all have one."""
    times = [np.array([t for t, _ in run], float) for run in runs]
    lengths = [np.minimum.accumulate(np.array([b for _, b in run], float)) for run in runs]
    start = max(t[0] for t in times)
    union = np.unique(np.concatenate(times))
    union = union[union >= start]
    at = np.array([b[np.searchsorted(t, union, side="right") - 1]
                   for t, b in zip(times, lengths)])
    return union, np.median(at, axis=0)


def _count_text(median: float) -> str:
    """A median of whole counts: whole, or with one decimal (the mean of two middles)."""
    return f"{int(median)}" if float(median).is_integer() else f"{median:.1f}"


def format_markdown(rows: list[dict], meta: dict) -> str:
    lines = [f"Device: {meta['device']}; suite: {meta['suite']}; version: {meta['version']}; "
             f"date: {meta['date']}; command: `{meta['command']}`", "",
             "| instance | n | algorithm | params | runs | median length | mean gap % "
             "| median wall s | median kernel s | median iterations |",
             "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for s in summarize(rows):
        gap = "–" if s["mean_gap_percent"] is None else f"{s['mean_gap_percent']:.2f}"
        med, its = _count_text(s["median_length"]), _count_text(s["median_iterations"])
        lines.append(f"| {s['instance']} | {s['n']} | {s['algorithm']} | {s['params'] or '–'} "
                     f"| {s['runs']} | {med} | {gap} | {s['median_wall_s']:.4f} "
                     f"| {s['median_kernel_s']:.4f} | {its} |")
    failed = [r for r in rows if r["status"] != "ok"]
    if failed:
        lines += ["", f"Failed runs ({len(failed)}):", ""]
        lines += [f"- {r['instance']} {r['algorithm']} {r['params'] or '–'} seed {r['seed']} "
                  f"repeat {r['repeat']}: {r['reason']}" for r in failed]
    return "\n".join(lines) + "\n"


def write_results(out: Path, rows: list[dict], meta: dict,
                  histories: list[list[tuple[float, int]]] | None = None) -> None:
    """results.csv, .json and .md of ``rows`` (each file replaced whole), and with
    ``histories`` (one per row) :data:`FIGURE` where a run succeeded.  ``meta``'s device
    is the devices the rows ran on."""
    from .output import write_atomic

    devices = list(dict.fromkeys(r["device"] for r in rows if r["device"]))
    meta = {"suite": meta["suite"], "spec": meta["spec"], "device": ", ".join(devices) or "-",
            **{k: v for k, v in meta.items() if k not in ("suite", "spec")}}
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: "" if r[k] is None else r[k] for k in COLUMNS})
    write_atomic(str(out / "results.csv"), buf.getvalue())
    write_atomic(str(out / "results.json"),
                 json.dumps({**meta, "rows": rows}, indent=1) + "\n")
    write_atomic(str(out / "results.md"), format_markdown(rows, meta))
    measured = [i for i, r in enumerate(rows) if r["status"] == "ok"]
    series = (gap_series([rows[i] for i in measured], [histories[i] for i in measured])
              if histories is not None and measured else [])
    if series:
        from .plot import plot_series

        plot_series(series, str(out / FIGURE), "gap % (median of the runs)",
                    f"{meta['suite']}: gap against time")


__all__ = ["COLUMNS", "FIGURE", "gap_series", "load_suite", "run_suite", "shared_instances_dir",
           "summarize"]
