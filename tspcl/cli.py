"""The tspcl command line (Typer): solve, solve-many, verify, info, algorithms, devices, gen, plot,
bench.

stdout carries data only (a tour, a JSON summary, a problem); diagnostics and progress
go to stderr.  Errors are one line, ``tspcl: FILE:LINE: what``, with the exit statuses
listed in tspcl/errors.py; ``--debug`` anywhere on the line shows tracebacks instead.
Importing this module installs tspcl's signal handlers (tspcl/interrupts.py): it is the
command line's, the library's modules are elsewhere.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import List, Optional


def process_start() -> float:
    """time.perf_counter()'s reading when this process started, so that the interpreter's
    start-up and the imports count too.  Linux gives the start in clock ticks since boot
    (/proc/self/stat) and the time since boot (/proc/uptime), both in 10 ms steps;
    elsewhere: now."""
    now = time.perf_counter()
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/uptime") as f:
            since_boot = float(f.read().split()[0])
        return now - max(0.0, since_boot - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return now


_STARTED = process_start()  # --time-limit and the log's times count from here

from . import interrupts  # noqa: E402

interrupts.install()  # before the slow imports: a signal during them ends in one line too

import typer  # noqa: E402
import typer.core  # noqa: E402

from . import errors  # noqa: E402
from .errors import MissingInputError, TspclError, UsageError  # noqa: E402
from .output import STDOUT, STDOUT_TARGET, Target  # noqa: E402

app = typer.Typer(
    name="tspcl", add_completion=True, no_args_is_help=True,
    pretty_exceptions_enable=False, rich_markup_mode=None,
    help="Travelling-salesman search in OpenCL kernels, on a GPU or on a CPU (PoCL).\n\n"
         "Problems are TSPLIB files (a path, '-' for stdin, .gz read transparently); "
         "tours come out as TSPLIB TOUR files on stdout or -o FILE.  Add --debug "
         "anywhere for tracebacks.")


def _version(value: bool) -> None:
    if value:
        from .version import version_string

        print(f"tspcl {version_string()}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version (and git commit) and exit."),
) -> None:
    """Travelling-salesman search in OpenCL kernels, on a GPU or on a CPU (PoCL)."""


def _check_stdin(*paths: str) -> None:
    """MissingInputError if an input is '-' and stdin is closed (`<&-`)."""
    from .output import stdin_closed

    if "-" in paths and stdin_closed():
        raise MissingInputError("-: cannot read stdin: it is closed (give a file, or pipe one in)")


def _finite_seconds(value: Optional[float]) -> Optional[float]:
    """--time-limit: a finite number of seconds, at least 0 (typer's min lets NaN by)."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise typer.BadParameter(f"seconds must be a finite number, at least 0 (got {value})")
    return value


def _solve_targets(problem: str, output: Optional[str], log: Optional[str],
                   as_json: bool) -> tuple[Optional[Target], Optional[Target]]:
    """Where the tour and the log go, checked before the run: at most one of them and
    --json on stdout, neither replacing the problem file nor the other, each writable.
    The tour's target is None when --json alone goes to stdout."""
    from .output import check_stdout, output_target, same_file

    tour_to = output_target(output, "-o") if output is not None else (
        None if as_json else STDOUT_TARGET)
    log_to = output_target(log, "--log") if log is not None else None
    on_stdout = [what for what, there in (("the tour", tour_to), ("--log", log_to))
                 if there is not None and there.kind == STDOUT] + (["--json"] if as_json else [])
    if len(on_stdout) > 1:
        raise UsageError(f"only one of {', '.join(on_stdout)} can go to stdout; give -o FILE or --log FILE")
    for option, target in (("-o", tour_to), ("--log", log_to)):
        if target is not None and problem != "-" and same_file(target, problem):
            raise UsageError(f"{option} {target.name}: that is the problem file, which the "
                             "output would replace; give another name")
    if tour_to is not None and log_to is not None and STDOUT not in (tour_to.kind, log_to.kind) and (
            same_file(tour_to, log_to.path) or same_file(log_to, tour_to.path)):
        raise UsageError(f"-o and --log name the same file ({log_to.name}); the log would replace the tour")
    if on_stdout:
        check_stdout()
    return tour_to, log_to


def _key_values(pairs: List[str]) -> dict[str, str]:
    out = {}
    for p in pairs:
        if "=" not in p:
            raise UsageError(f"--param takes KEY=VALUE (got {p!r})")
        k, v = p.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _finite(value):
    """``value`` with every non-finite float written as a string ('nan', 'inf'), which
    JSON has no number for."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _comment(res) -> str:
    params = " ".join(f"{k}={v}" for k, v in res.params.items())
    return (f"length {res.length}; algorithm {res.algorithm}"
            f"{' ' + params if params else ''}; seed {res.seed}; device {res.device}"
            f"{'; auto: ' + res.chosen if res.chosen else ''}")


BHH_MIN_CITIES = 1000  # the BHH estimate is said for large instances only (asymptotic)


def _final_line(res, time_limit: Optional[float]) -> str:
    """The run in one line: length, gap, time and why it stopped."""
    if res.gap is not None:
        quality = f", gap {res.gap:.3f} % (optimum {res.optimum})"
    elif res.bhh is not None and res.n >= BHH_MIN_CITIES:
        quality = (f", {100.0 * (res.length / res.bhh - 1.0):+.1f} % against the BHH estimate "
                   f"{res.bhh:.0f} (for uniform cities)")
    else:
        quality = ""
    why = {"time limit": f"the time limit ({time_limit:g} s)" if time_limit is not None else "the time limit",
           "interrupted": "a signal", "done": "its own end (budget or local optimum)"}[res.stopped]
    return (f"tspcl: {res.algorithm} on {res.instance}: length {res.length}{quality}, "
            f"{res.wall_s:.2f} s; stopped by {why}")


@dataclass(frozen=True)
class FamilyFlag:
    """A flag that users of a family expect: it sets parameter `key` of any algorithm
    that has one, or the key `by_algo` names for that algorithm (where a paper's name,
    --rho, --alpha, means another parameter in each family).  Its help is the docs of
    the parameters it sets (_SolveCommand)."""

    names: tuple
    type: type
    key: str
    by_algo: tuple = ()   # (algorithm, key) pairs

    @property
    def dest(self) -> str:
        return self.names[0].lstrip("-").replace("-", "_")

    def key_for(self, algorithm: str) -> str:
        return dict(self.by_algo).get(algorithm, self.key)

    def help(self, specs) -> str:
        """The algorithms that take this flag, grouped by the key it sets and its doc."""
        from .params import param_doc

        groups: dict = {}
        for spec in specs:
            key = self.key_for(spec.name)
            if spec.has_param(key):
                groups.setdefault((key, param_doc(spec.params_type, key)), []).append(spec.name)
        return "; ".join(f"{', '.join(names)}: -p {key}, {doc}" for (key, doc), names in groups.items()) + "."


FAMILY_FLAGS = (
    FamilyFlag(("--ls",), str, "ls"),
    FamilyFlag(("--candidates", "-m", "--cl"), int, "candidates"),
    FamilyFlag(("--candidate-kind", "--neighbors"), str, "candidate_kind"),
    FamilyFlag(("--neighborhood",), str, "neighborhood"),
    FamilyFlag(("--tenure",), int, "tenure"),
    FamilyFlag(("--accept",), str, "accept"),
    FamilyFlag(("--kick",), str, "kick"),
    FamilyFlag(("--variant",), str, "variant"),
    FamilyFlag(("--ants",), int, "ants"),
    FamilyFlag(("--rho",), float, "persistence", (("acs", "local_evaporation"),)),
    FamilyFlag(("--alpha",), float, "alpha", (("acs", "global_evaporation"),)),
    FamilyFlag(("--beta",), float, "beta"),
    FamilyFlag(("--q0",), float, "q0"),
    FamilyFlag(("--k",), int, "local_update_every"),
    FamilyFlag(("--crossover",), str, "crossover"),
    FamilyFlag(("--population",), int, "population"),
    FamilyFlag(("--groups",), int, "groups"),
    FamilyFlag(("--generations",), int, "generations"),
    FamilyFlag(("--mutation-rate",), float, "mutation_rate"),
    FamilyFlag(("--migration-interval",), int, "migration_interval"),
    FamilyFlag(("--init",), str, "init"),
)


class _SolveCommand(typer.core.TyperCommand):
    """solve's command: the family flags' help is written from the parameter docs when
    the help is shown (the solvers are imported only then)."""

    def format_help(self, ctx, formatter) -> None:
        from .solvers import REGISTRY

        flags = {f.dest: f for f in FAMILY_FLAGS}
        for option in self.params:
            if option.name in flags:
                option.help = flags[option.name].help(REGISTRY.values())
        super().format_help(ctx, formatter)


def _with_family_flags(command):
    """`command` with one keyword option per FAMILY_FLAGS entry (its **flags)."""
    sig = inspect.signature(command)
    fixed = [p for p in sig.parameters.values() if p.kind != inspect.Parameter.VAR_KEYWORD]
    extra = [inspect.Parameter(f.dest, inspect.Parameter.KEYWORD_ONLY, annotation=Optional[f.type],
                               default=typer.Option(None, *f.names))
             for f in FAMILY_FLAGS]
    command.__signature__ = sig.replace(parameters=fixed + extra)
    command.__annotations__ = {**command.__annotations__, **{p.name: p.annotation for p in extra}}
    return command


def solver_values(spec, params_file: Optional[str], pairs: List[str], flags: dict,
                  base: Optional[dict] = None) -> dict:
    """A solver's parameters as typed values: `base` (--algo auto's), --params FILE,
    then -p KEY=VALUE, then the family flags, each overriding the one before; a file's
    bad key or value is reported with the file's name."""
    from .params import params_file as read_params_file

    typed = dict(base or {})
    if params_file is not None:
        try:
            typed.update(spec.typed(read_params_file(params_file)))
        except UsageError as e:
            raise UsageError(f"{params_file}: {e.message}") from None
    typed.update(spec.typed(_key_values(pairs)))
    for f in FAMILY_FLAGS:
        value = flags.get(f.dest)
        if value is not None:
            key = f.key_for(spec.name)
            if not spec.has_param(key):
                raise UsageError(f"{f.names[0]} does not apply to --algo {spec.name}")
            typed.update(spec.typed({key: str(value)}))
    return typed


@app.command(cls=_SolveCommand)
@_with_family_flags
def solve(
    problem: str = typer.Argument(..., help="TSPLIB problem file, or '-' for stdin (.gz ok)."),
    algo: str = typer.Option("auto", "--algo", "-a",
                             help="Algorithm: auto, nn, greedy, sfc, random, 2opt, oropt, 3opt, lk, ils, "
                                  "pils, hc, tabu, mmas, acs, ga (`tspcl algorithms`).  auto picks the best "
                                  "measured for the instance and device (pils for symmetric instances, "
                                  "the GA for asymmetric ones) and, without -t or -i, the solver's own "
                                  "budget or n / 500 seconds (2 to 60), whichever comes first; it says "
                                  "its choice on stderr and in the tour's COMMENT."),
    param: List[str] = typer.Option([], "--param", "-p", metavar="KEY=VALUE",
                                    help="Algorithm parameter, repeatable (e.g. -p candidates=16); "
                                         "`tspcl algorithms` lists every algorithm's."),
    params_file: Optional[str] = typer.Option(
        None, "--params", metavar="FILE.toml",
        help="Algorithm parameters from a TOML file: KEY = VALUE lines, the keys of -p, values "
             "typed (numbers, strings, booleans); -p and the flags below override it.  An "
             "unknown key or a bad value exits 2 naming file and key, a missing file 66, a "
             "file that is not TOML 65."),
    seed: int = typer.Option(1, "--seed", "-s", min=0, max=2**64 - 1,
                             help="Random seed: the same seed on the same device gives the same tour."),
    time_limit: Optional[float] = typer.Option(
        None, "--time-limit", "-t", min=0.0, callback=_finite_seconds,
        help="Seconds for the whole run, parsing included; the best tour so far is written. "
             "Solvers stop between slices of an iteration (ants, crossovers, cells, moves), "
             "so a run ends within max(0.5 s, 5 %) of it, except that the start tour (NN or "
             "greedy) and candidate lists are always built, and a kernel build (a first run "
             "with an empty cache) cannot be stopped."),
    iterations: Optional[str] = typer.Option(
        None, "--iterations", "-i",
        help="Iteration budget, the solver's own and exact whatever the timing: for ils and "
             "pils the kicks, a count or a multiple of n such as 0.1n, 1n, 10n (ils: 1n; "
             "pils: until the time limit, else 100n); for hc and tabu the moves at most "
             "(10000, the paper's); for mmas and acs the colony iterations (1000); for ga "
             "the generations (1000); for 2opt, oropt, 3opt and lk the improving moves at "
             "most (checked after each batch of steps)."),
    device: Optional[str] = typer.Option(
        None, "--device", "-d", help="auto (GPU if any, else CPU), gpu, cpu or P:D "
        "(platform:device from `tspcl devices`); default $TSPCL_DEVICE or auto."),
    output: Optional[str] = typer.Option(None, "--output", "-o",
                                         help="Write the tour here (atomically) instead of stdout ('-': "
                                         "stdout)."),
    log: Optional[str] = typer.Option(None, "--log", help="Write a TSPLIB-style run log here ('-': stdout, "
                                      "with the tour in a file)."),
    as_json: bool = typer.Option(False, "--json",
                                 help="Print a JSON summary on stdout instead of the tour."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or device line on stderr."),
    **flags,
):
    """Solve PROBLEM and write the best tour found as a TSPLIB TOUR file.

    Example: tspcl solve pr1002.tsp --algo nn --seed 7 -o pr1002.tour
    """
    from .device import Runtime, cache_note, log as say
    from .output import write_outputs
    from .progress import ProgressDisplay
    from .run import setup, solve as run_solve
    from .tsplib import RunLog, format_log, format_tour, read_problem

    tour_to, log_to = _solve_targets(problem, output, log, as_json)

    def values_for(spec, base):
        return solver_values(spec, params_file, param, flags, base)

    if algo != "auto":        # a bad parameter is said before the problem is read
        run = setup(algo, values_for, iterations, time_limit)
    _check_stdin(problem)
    inst = read_problem(problem)
    rt = Runtime.from_spec(device)
    if algo == "auto":
        run = setup(algo, values_for, iterations, time_limit, inst, rt.limits.is_gpu)
    spec, time_limit = run.spec, run.time_limit
    if not quiet:
        say(f"tspcl: device {rt.name}")
        if cache_note():
            say(f"tspcl: {cache_note()}")
        if run.chosen is not None:
            say(f"tspcl: auto: {run.chosen}")
    deadline = None if time_limit is None else _STARTED + time_limit
    from .optima import bhh_estimate, known_optimum

    interrupts.keep_best_tour()
    optimum = known_optimum(inst)
    with ProgressDisplay(f"{spec.name} on {inst.name}", optimum,
                         enabled=None if not quiet else False, time_limit=time_limit,
                         reference=bhh_estimate(inst) if optimum is None and inst.n >= BHH_MIN_CITIES
                         else None) as show:
        res = run_solve(inst, spec, run.params, rt, seed=seed, deadline=deadline,
                        iterations=run.iterations, on_progress=show, started=_STARTED,
                        chosen=run.chosen)
    if not quiet:
        for note in res.notes:
            say(f"tspcl: {note}")
    if res.interrupted and not quiet:
        say("tspcl: interrupted; writing the best tour found so far")
    outputs = []
    if tour_to is not None:
        outputs.append((tour_to, format_tour(res.order, inst.name, _comment(res))))
    if log_to is not None:
        outputs.append((log_to, format_log(RunLog(
            name=inst.name, algorithm=spec.name,
            parameters={k: "".join(str(v).split()) for k, v in res.params.items()},
            device=res.device,
            seed=seed, version=res.version, comment="" if run.chosen is None else f"auto: {run.chosen}",
            progress=[(p.elapsed, p.iteration, p.best_length) for p in res.history]))))
    if as_json:
        outputs.append((STDOUT_TARGET, json.dumps(_finite(res.summary()), allow_nan=False) + "\n"))
    write_outputs(outputs)
    if not quiet:
        say(_final_line(res, time_limit))
    status = interrupts.exit_status()
    if status is None and res.interrupted:
        status = errors.EXIT_INTERRUPTED  # a KeyboardInterrupt raised by hand
    if status is not None:
        raise typer.Exit(status)


@app.command("solve-many")
def solve_many(
    files: List[str] = typer.Argument(
        ..., help="Problem files, folders (their *.tsp and *.tsp.gz) and @LIST files (a path a "
                  "line); a file may hold many problems (tspcl gen --count N -o FILE.tsp)."),
    out_dir: str = typer.Option(..., "--out-dir", help="Folder for NAME.tour per instance, "
                                "summary.csv/.json and the journal summary.jsonl."),
    algo: str = typer.Option("auto", "--algo", "-a",
                             help="Algorithm for every instance (as solve).  auto: instances of 8 "
                                  "to 1024 cities (as local memory allows) with 2-D "
                                  "coordinates are solved many per "
                                  "launch by the batch kernel (a work-group each), the others "
                                  "as solve --algo auto."),
    param: List[str] = typer.Option([], "--param", "-p", metavar="KEY=VALUE",
                                    help="Parameter of --algo, repeatable (not with auto)."),
    seed: int = typer.Option(1, "--seed", "-s", min=0, max=2**64 - 1,
                             help="Random seed of every instance."),
    time_limit: Optional[float] = typer.Option(
        None, "--time-limit", "-t", min=0.0, callback=_finite_seconds,
        help="Seconds per instance; batched instances search at once, each wave of them at "
             "most this long."),
    iterations: Optional[str] = typer.Option(
        None, "--iterations", "-i", help="Iteration budget per instance, as solve's (batched "
                                         "instances: kicks, a count or a multiple of n; "
                                         "default 20n)."),
    device: Optional[str] = typer.Option(None, "--device", "-d", help="As for solve."),
    fresh: bool = typer.Option(False, "--fresh", help="Start over: move the journal aside "
                               "(summary.jsonl.N) instead of resuming from it."),
    cluster: Optional[str] = typer.Option(
        None, "--cluster", metavar="local", help="Solve on a local Dask cluster, one worker per "
                                                 "OpenCL device (tspcl[cluster]): batched "
                                                 "instances in chunks, two a worker, the "
                                                 "others one by one."),
    workers: Optional[int] = typer.Option(
        None, "--workers", min=1, help="With --cluster local: this many workers."),
    scheduler: Optional[str] = typer.Option(
        None, "--scheduler", metavar="tcp://HOST:PORT",
        help="Solve on a running Dask cluster (the files and --out-dir must be reachable "
             "there at the same absolute paths); with auto, instances of up to 1024 cities in "
             "chunks, each worker batching those its device holds."),
):
    """Solve every instance of FILES with one algorithm and budget: a TOUR file each and a
    summary table.  Rerunning the command resumes (solved instances are skipped, failed
    ones run again).

    Example: tspcl gen uniform -n 100 --count 1000 -o u100.tsp; tspcl solve-many u100.tsp --out-dir tours
    """
    from .many import ManyOptions, solve_many as run_many

    entries = run_many(files, out_dir, ManyOptions(algo, tuple(param), time_limit, iterations,
                                                   seed, device),
                       cluster=cluster, scheduler=scheduler, workers=workers, fresh=fresh)
    failed = sum(not e.ok for e in entries.values())
    _say(f"tspcl: {len(entries) - failed} of {len(entries)} instances solved"
         + (f", {failed} failed (summary.csv says why)" if failed else "")
         + f"; tours and summary in {out_dir}")
    if failed:
        raise typer.Exit(errors.EXIT_DATA)


@app.command()
def verify(
    problem: str = typer.Argument(..., help="TSPLIB problem file, or '-' for stdin."),
    tour: str = typer.Argument(..., help="TSPLIB tour file, or '-' for stdin."),
    optimum: Optional[int] = typer.Option(None, "--optimum",
                                          help="Known optimum, for the gap (else looked up)."),
):
    """Check TOUR is a tour of PROBLEM; print its exact length (and gap). Exit 1 if invalid."""
    from .optima import gap_percent, known_optimum
    from .output import write_stdout
    from .tsplib import read_problem, read_tour

    if problem == "-" and tour == "-":
        raise UsageError("only one of PROBLEM and TOUR can be '-' (stdin)")
    _check_stdin(problem, tour)
    inst = read_problem(problem)
    t = read_tour(tour)
    why = inst.tour_problem(t.order)
    if why is not None:
        print(f"tspcl: {t.source}: invalid tour: {why}", file=sys.stderr)
        raise typer.Exit(errors.EXIT_INVALID_TOUR)
    length = inst.tour_length(t.order)
    best = optimum if optimum is not None else known_optimum(inst)
    gap = gap_percent(length, best)
    line = f"{inst.name}: valid tour, length {length}"
    if gap is not None:
        line += f", optimum {best}, gap {gap:.4f}%"
    write_stdout(line + "\n")


@app.command()
def info(
    problem: str = typer.Argument(..., help="TSPLIB problem file, or '-' for stdin."),
    candidates: Optional[int] = typer.Option(
        None, "--candidates", "-m", "--k",
        help="Candidates per city assumed for the memory estimates (default: each algorithm's "
             "own; an algorithm that cannot take that many keeps its own)."),
):
    """Size and type of PROBLEM, and the device memory each algorithm would need."""
    from .optima import known_optimum
    from .output import write_stdout
    from .run import unsolvable
    from .solvers import REGISTRY
    from .tsplib import read_problem

    _check_stdin(problem)
    inst = read_problem(problem)
    lines = [f"name        {inst.name}", f"type        {inst.kind}", f"dimension   {inst.n}",
             f"weights     {inst.weight_type}"
             + (f" ({inst.edge_weight_format})" if inst.edge_weight_format else ""),
             f"fixed edges {len(inst.fixed_edges)}"]
    opt = known_optimum(inst)
    if opt is not None:
        lines.append(f"optimum     {opt}")
    lines.append("algorithm   device memory   note")
    for spec in REGISTRY.values():
        params = spec.params_type()
        if candidates is not None and spec.has_param("candidates"):
            try:
                params = spec.params_from({"candidates": str(candidates)})
            except UsageError:
                pass
        why = unsolvable(inst, spec)
        mem = spec.buffers(inst, params, None).nbytes
        lines.append(f"{spec.name:<11} {mem / 2**20:>10.1f} MiB   {why or spec.summary}")
    write_stdout("\n".join(lines) + "\n")


@app.command()
def algorithms(
    markdown: bool = typer.Option(False, "--markdown", help="The README's markdown table instead."),
):
    """Every algorithm with its parameters (-p KEY=VALUE, --params FILE.toml): default
    and meaning."""
    from .output import write_stdout
    from .params import algorithm_listing
    from .solvers import REGISTRY

    write_stdout(algorithm_listing(REGISTRY.values(), markdown))


@app.command()
def devices():
    """List OpenCL platforms and devices with the limits kernels are sized from."""
    from .device import INSTALL_HINT, all_devices, cache_note, is_gpu, log as say, opencl
    from .output import write_stdout

    cl = opencl()
    if cache_note():
        say(f"tspcl: {cache_note()}")
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    if not platforms or not all_devices():
        raise errors.NoDeviceError(INSTALL_HINT)
    out = []
    for p_i, p in enumerate(platforms):
        out.append(f"platform {p_i}: {p.name.strip()} ({p.version.strip()})")
        try:
            devs = p.get_devices()
        except cl.Error:
            devs = []
        for d_i, d in enumerate(devs):
            kind = "GPU" if is_gpu(d) else "CPU"
            fp64 = "yes" if "cl_khr_fp64" in d.extensions else "no"
            out.append(
                f"  {p_i}:{d_i}  {kind}  {d.name.strip()}  compute units {d.max_compute_units}, "
                f"max work-group {d.max_work_group_size}, local {d.local_mem_size // 1024} KiB, "
                f"global {d.global_mem_size // 2**20} MiB, max alloc {d.max_mem_alloc_size // 2**20} MiB, "
                f"fp64 {fp64}")
    write_stdout("\n".join(out) + "\n")


@app.command()
def gen(
    kind: str = typer.Argument(..., help="uniform, clustered, circle (known optimum) or grid (known optimum)."),
    n: int = typer.Option(..., "-n", help="Number of cities."),
    seed: int = typer.Option(1, "--seed", "-s", min=0, help="Seed of the random layouts (with --count: the first)."),
    name: Optional[str] = typer.Option(None, "--name", help="NAME in the file (default KIND+N)."),
    count: Optional[int] = typer.Option(
        None, "--count", min=1, help="Make COUNT instances, seeds SEED to SEED+COUNT-1, named "
                                     "KIND+N-SEED: one file each into the folder -o, or one "
                                     "multi-instance file when -o ends in .tsp (or stdout)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write here instead of stdout ('-': stdout)."),
):
    """Generate an instance as a TSPLIB file (circle and grid state their optimum in COMMENT),
    or with --count a batch of them."""
    from .gen import GENERATORS, generate, generate_many, write_many
    from .output import check_stdout, output_target, write_outputs
    from .tsplib import format_problem, format_problems

    if kind not in GENERATORS:
        raise UsageError(f"unknown generator {kind!r}; choose one of {', '.join(GENERATORS)}")
    if count is not None and name is not None:
        raise UsageError("--name names one instance; with --count the names are KIND+N-SEED")
    if count is not None and output not in (None, "-"):
        write_many(generate_many(kind, n, count, seed), output)
        return
    target = STDOUT_TARGET if output is None else output_target(output, "-o")
    if target.kind == STDOUT:
        check_stdout()
    text = (format_problem(generate(kind, n, seed=seed, name=name)) if count is None
            else format_problems(generate_many(kind, n, count, seed)))
    write_outputs([(target, text)])


@app.command()
def plot(
    problem: Optional[str] = typer.Argument(
        None, help="TSPLIB problem file ('-' for stdin) whose tour is drawn."),
    tour: Optional[str] = typer.Argument(None, help="TSPLIB tour file ('-' for stdin)."),
    output: str = typer.Option(..., "--output", "-o",
                               help="The picture: a file ending in .png, .svg or .pdf."),
    log: Optional[List[str]] = typer.Option(
        None, "--log", help="A run log (solve --log): draws best length against time; "
                            "repeat for several runs in one picture."),
    optimum_of: Optional[str] = typer.Option(
        None, "--problem", help="With --log: the problem the runs solved; with its optimum "
                                "known, the y axis is the gap in %."),
):
    """Draw a tour (PROBLEM TOUR -o tour.png) or runs' best length against time
    (--log run.log [--log more.log] -o curve.png).  Needs matplotlib:
    pip install 'tspcl[plot]'."""
    from pathlib import Path

    from .plot import figure_target, plot_curves, plot_tour
    from .tsplib import read_log, read_problem, read_tour

    logs = log or []
    if logs and (problem is not None or tour is not None):
        raise UsageError("give PROBLEM TOUR to draw a tour or --log FILE to draw runs, not both")
    if not logs and (problem is None or tour is None):
        raise UsageError("give PROBLEM TOUR to draw a tour, or --log FILE (repeatable) to draw runs")
    if optimum_of is not None and not logs:
        raise UsageError("--problem goes with --log (a tour's problem is PROBLEM)")
    inputs = [p for p in (problem, tour, optimum_of, *logs) if p is not None]
    if inputs.count("-") > 1:
        raise UsageError("only one input can be '-' (stdin)")
    _check_stdin(*inputs)
    figure_target(output, tuple(inputs))  # a bad -o fails before anything is read
    if not logs:
        plot_tour(read_problem(problem), read_tour(tour).order, output)
        return
    runs = []
    for path in logs:
        run = read_log(path)
        if not run.progress:
            _say(f"tspcl: {path}: no progress lines, left out")
        runs.append((f"{Path(path).name} ({run.algorithm}, seed {run.seed})", run))
    optimum = None
    if optimum_of is not None:
        from .optima import known_optimum

        inst = read_problem(optimum_of)
        optimum = known_optimum(inst)
        if optimum is None:
            _say(f"tspcl: no known optimum for {inst.name}: drawing lengths, not gaps")
    plot_curves(runs, output, optimum)


@app.command()
def bench(
    spec_file: str = typer.Argument(..., help="Suite spec (TOML): instances x algorithms x seeds."),
    device: Optional[str] = typer.Option(
        None, "--device", "-d", help="As for solve; with --cluster local, the one device all "
                                     "workers use (default: one worker per GPU, else per device)."),
    out: Optional[str] = typer.Option(None, "--out", help="Folder for results.csv/.json/.md "
                                      "and the journal results.jsonl (default bench-out/SPEC, "
                                      "SPEC without its suffix)."),
    figure: Optional[bool] = typer.Option(
        None, "--figure/--no-figure", help="Also draw gap.png, the gap against time of each "
                                           "row group (default: when matplotlib is installed)."),
    fresh: bool = typer.Option(False, "--fresh", help="Start over: move the journal aside "
                               "(results.jsonl.N) instead of resuming from it."),
    cluster: Optional[str] = typer.Option(
        None, "--cluster", metavar="local", help="Run the runs on a local Dask cluster, one "
                                                 "worker per OpenCL device (tspcl[cluster])."),
    workers: Optional[int] = typer.Option(
        None, "--workers", min=1, help="With --cluster local: this many workers, given the "
                                       "devices in turn (N on one device where there is one)."),
    scheduler: Optional[str] = typer.Option(
        None, "--scheduler", metavar="tcp://HOST:PORT",
        help="Run the runs on a running Dask cluster (workers: `TSPCL_DEVICE=P:D dask worker "
             "ADDRESS --nworkers 1 --nthreads 1`, one per device)."),
):
    """Run a benchmark suite and write CSV, JSON and a markdown table (suites: scripts/suites/).

    Rows go to the journal results.jsonl as runs finish; rerunning the command resumes
    (runs already there are skipped, failed ones run again)."""
    from .bench import run_suite

    run_suite(spec_file, device, out, figure=figure, fresh=fresh, cluster=cluster,
              scheduler=scheduler, workers=workers)


def main(argv: list[str] | None = None) -> None:
    """Entry point: runs the command and exits with its status; every failure is one
    stderr line (``--debug`` anywhere: its traceback instead)."""
    interrupts.start()
    from .output import guard_standard_streams

    guard_standard_streams()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        status = _run([a for a in argv if a != "--debug"], debug)
    except (KeyboardInterrupt, interrupts.Stopped) as e:  # a signal while a failure was reported
        if debug:
            raise
        status = getattr(e, "exit_code", errors.EXIT_INTERRUPTED)
    interrupts.ignore()  # the outputs are written: nothing may change the status now
    sys.exit(status)


def _run(argv: list[str], debug: bool) -> int:
    """The command's exit status, its failure reported on stderr."""
    from .output import discard_stdout

    # Typer vendors click: take its classes from Typer's public ones.
    click_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    cmd = typer.main.get_command(app)
    try:
        with cmd.make_context("tspcl", argv) as ctx:
            cmd.invoke(ctx)
        return 0
    except typer.Exit as e:
        return e.exit_code
    except click_error as e:
        _report_usage(e)
        return errors.EXIT_USAGE
    except BrokenPipeError:  # --help into `| head`
        discard_stdout()
        return 0
    except (KeyboardInterrupt, interrupts.Stopped) as e:  # a signal, or a KeyboardInterrupt by hand
        if debug:
            raise
        _say(interrupts.MESSAGE)
        return getattr(e, "exit_code", errors.EXIT_INTERRUPTED)
    except TspclError as e:
        if debug:
            raise
        _say(f"tspcl: {e.message}")
        return e.exit_code
    except Exception as e:  # noqa: BLE001 - the last line of defence
        if debug:
            raise
        msg = str(e).splitlines()[0] if str(e) else ""
        _say(f"tspcl: internal error: {type(e).__name__}: {msg} (rerun with --debug)")
        return errors.EXIT_INTERNAL


def _report_usage(e) -> None:
    """A command-line error in one line (no arguments at all: the help)."""
    if type(e).__name__ == "NoArgsIsHelpError":
        e.show()
        return
    ctx = getattr(e, "ctx", None)
    hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
    _say(f"tspcl: {'; '.join(e.format_message().splitlines())}{hint}")


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
