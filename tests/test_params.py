"""Solver parameters are checked, not cast: every value a user can give with -p KEY=VALUE
(SolverSpec.params_from, which the CLI's family flags and bench specs go through too) is
either used as given or refused with a one-line UsageError before anything is
allocated; memory plans come from numbers, and a plan the device cannot hold is refused
with options of that solver that need less."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tspcl import errors
from tspcl.bench import load_suite
from tspcl.device import DeviceLimits, Runtime
from tspcl.errors import DeviceMemoryError, UsageError
from tspcl.instance import Instance
from tspcl.run import plan_memory
from tspcl.solvers import REGISTRY, ga
from tspcl.solvers.base import MAX_BATCH, MAX_COUNT, MAX_SEED
from tspcl.solvers.localsearch import kick_budget

ROOT = Path(__file__).resolve().parents[1]
SPECS = list(REGISTRY.values())


def _kind(spec, f) -> str | None:
    """'int' or 'float' as SolverSpec.params_from types the field, else None."""
    default = getattr(spec.params_type(), f.name)
    if isinstance(default, bool):
        return None
    if isinstance(default, int) or (default is None and "int" in str(f.type)):
        return "int"
    if isinstance(default, float) or (default is None and "float" in str(f.type)):
        return "float"
    return None


def _fields(kind: str) -> list:
    return [pytest.param(spec, f.name, id=f"{spec.name}-{f.name}") for spec in SPECS
            for f in dataclasses.fields(spec.params_type) if _kind(spec, f) == kind]


def _refused(spec, values: dict) -> UsageError:
    with pytest.raises(UsageError) as caught:
        spec.params_from(values)
    assert "\n" not in caught.value.message
    return caught.value


@pytest.mark.parametrize("spec, name", _fields("float"))
@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "NaN", "1e400"])
def test_a_float_parameter_that_is_not_finite_is_a_usage_error(spec, name, text):
    assert name in _refused(spec, {name: text}).message


@pytest.mark.parametrize("spec, name", _fields("int"))
@pytest.mark.parametrize("text", ["-1", str(MAX_COUNT + 1), "99999999999999999999"])
def test_a_whole_number_parameter_is_bounded_on_both_sides(spec, name, text):
    """Negative counts, and counts beyond what the kernels' int arguments (and state
    words) hold, for every whole-number parameter of every algorithm."""
    assert name in _refused(spec, {name: text}).message


@pytest.mark.parametrize("spec", [s for s in SPECS if s.has_param("batch")], ids=lambda s: s.name)
def test_a_batch_is_bounded_before_it_queues_launches(spec):
    _refused(spec, {"batch": str(MAX_BATCH + 1)})
    assert spec.params_from({"batch": str(MAX_BATCH)}).batch == MAX_BATCH


@pytest.mark.parametrize("spec", [s for s in SPECS if s.budget_param], ids=lambda s: s.name)
def test_the_budget_parameter_takes_every_count_up_to_the_bound(spec):
    params = spec.params_type()
    for count in (0, 7, MAX_COUNT):
        assert str(getattr(spec.with_budget(params, count), spec.budget_param)) == str(count)
    with pytest.raises(UsageError):
        spec.with_budget(params, MAX_COUNT + 1)


@pytest.mark.parametrize("kicks", ["infn", "1e400n", "nann", "-1n", "-1", "99999999999999999999",
                                   "inf", "nan", "1e3", "n n", f"{MAX_COUNT + 1}n"])
def test_ils_kick_budgets_that_are_no_count_are_usage_errors(kicks):
    assert "kicks" in _refused(REGISTRY["ils"], {"kicks": kicks}).message


def test_a_kick_budget_is_checked_against_the_instance_it_runs_on():
    assert kick_budget("1000n", 1000) == 10**6 and kick_budget(str(MAX_COUNT), 5) == MAX_COUNT
    REGISTRY["ils"].params_from({"kicks": "1000000n"})  # fine on small instances
    with pytest.raises(UsageError, match="on 10000 cities"):
        kick_budget("1000000n", 10_000)


@pytest.mark.parametrize("seeds", [f"[{MAX_SEED + 1}]", "[-1]", "[1, 2e3]"])
def test_a_bench_seed_outside_64_bits_is_an_error_of_the_spec(tmp_path, seeds):
    """Seeds were taken modulo 2^64 (two 32-bit key words): a spec's seed is checked."""
    spec = tmp_path / "suite.toml"
    groups = '[[group]]\ninstances = ["gen:uniform:20"]\nalgorithms = ["nn"]\n'
    spec.write_text(f"seeds = [0, {MAX_SEED}]\n" + groups)
    assert load_suite(str(spec)).groups[0].seeds == [0, MAX_SEED]
    spec.write_text(f"seeds = {seeds}\n" + groups)
    with pytest.raises(UsageError, match=f"{re.escape(str(spec))} group 1: a seed must be"):
        load_suite(str(spec))


def _cli(*args: str):
    return subprocess.run([sys.executable, "-m", "tspcl", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


@pytest.mark.parametrize("args", [
    ["--algo", "mmas", "--rho", "nan"], ["--algo", "acs", "--beta", "inf"],
    ["--algo", "ga", "--mutation-rate", "nan"], ["--algo", "ga", "--population", "2147483648"],
    ["--algo", "ils", "--iterations", "infn"], ["--algo", "ils", "--iterations", "99999999999999999999"],
    ["--algo", "tabu", "--iterations", "-1"], ["--algo", "mmas", "-p", "batch=2147483648"],
    ["--algo", "ils", "-p", "slack=nan"], ["--algo", "acs", "--q0", "nan"],
])
def test_the_command_line_refuses_them_in_one_line(tmp_path, args):
    problem = tmp_path / "p.tsp"
    problem.write_text("NAME : p\nTYPE : TSP\nDIMENSION : 5\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
                       + "".join(f"{i + 1} {i * 10} {i * i}\n" for i in range(5)) + "EOF\n")
    r = _cli("solve", str(problem), *args, "-q")
    assert r.returncode == errors.EXIT_USAGE, r.stderr
    assert r.stderr.startswith("tspcl: ") and r.stderr.count("\n") == 1 and r.stdout == ""


# ---- memory: planned from numbers, refused with options that help ---------------------------
class TinyDevice:
    """Enough of a Runtime for run.plan_memory: a device of 512 KiB."""

    name = "a 512 KiB device"
    limits = DeviceLimits(max_work_group=256, local_mem=48 * 1024, global_mem=2**19, max_alloc=2**18,
                          compute_units=1, is_gpu=False)
    check_fits = Runtime.check_fits


def _big(n: int = 30_000) -> Instance:
    coords = np.random.default_rng(1).uniform(0, 10**6, (n, 2))
    return Instance(f"uniform{n}", "TSP", "EUC_2D", coords=coords)


HINT_OPTION = re.compile(r"-p (\w+)=(\S+?)[),]?(?:\s|$)|--([a-z][\w-]*) (\S+?)[),]?(?:\s|$)")


def hinted_values(hint: str) -> list[dict]:
    """The options a memory hint names, each as params_from's {key: value}."""
    out = []
    for key, value, flag, flag_value in HINT_OPTION.findall(hint):
        out.append({key: value} if key else {flag.replace("-", "_"): flag_value})
    return out


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_a_refused_plan_names_options_of_that_solver(spec):
    inst = _big()
    params = spec.params_type()
    with pytest.raises(DeviceMemoryError) as caught:
        plan_memory(TinyDevice(), inst, spec, params)
    message = caught.value.message
    assert "\n" not in message and "a smaller instance" in message
    if spec.memory_hint is None:
        return
    assert spec.memory_hint in message
    options = hinted_values(spec.memory_hint)
    assert options, f"{spec.name}'s hint names no option: {spec.memory_hint!r}"
    def need(p) -> int:
        return spec.buffers(inst, p, TinyDevice.limits).nbytes

    for values in options:  # each is this solver's, and needs no more than the defaults
        assert need(spec.params_from(values)) <= need(params), values
    together = spec.params_from({k: v for values in options for k, v in values.items()})
    assert need(together) < need(params)


def test_the_hint_parser_reads_both_option_forms():
    assert hinted_values("-p store=candidates (pheromone) or fewer ants (e.g. --ants 256)") == \
        [{"store": "candidates"}, {"ants": "256"}]


def test_a_huge_population_is_planned_from_numbers_and_refused(monkeypatch):
    """The plan must not build the population-sized task list that the run builds."""
    with pytest.raises(UsageError, match="population"):
        ga.GaParams(population=2**31)

    def built(p):
        raise AssertionError("the memory plan built the crossover tasks")

    monkeypatch.setattr(ga, "crossover_tasks", built)
    p = ga.GaParams(population=2**30, groups=8)
    assert ga.task_count(p) == 2**29
    with pytest.raises(DeviceMemoryError, match="--population 256"):
        plan_memory(TinyDevice(), _big(1000), REGISTRY["ga"], p)


def test_task_count_counts_the_crossover_tasks():
    for population, groups in ((64, 2), (48, 3), (2048, 8), (4, 1)):
        p = ga.GaParams(population=population, groups=groups)
        assert ga.task_count(p) == len(ga.crossover_tasks(p))


# ---- one vocabulary, documented once: renamed keys, --params FILE.toml, the listing ----------
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_every_parameter_has_one_line_of_doc_and_every_old_key_a_field(spec):
    from tspcl.params import fields_of

    for name, _, doc in fields_of(spec.params_type):
        assert doc and "\n" not in doc, name
    names = {f.name for f in dataclasses.fields(spec.params_type)}
    for old, new in getattr(spec.params_type, "RENAMED", {}).items():
        assert old not in names and new in names, (old, new)


@pytest.mark.parametrize("algo, old, new, value", [
    ("nn", "k", "candidates", "7"), ("2opt", "m", "candidates", "8"), ("hc", "neighbors", "candidate_kind", "knn"),
    ("mmas", "cl", "candidates", "16"), ("mmas", "rho", "persistence", "0.7"),
    ("acs", "rho", "local_evaporation", "0.05"), ("acs", "alpha", "global_evaporation", "0.3"),
    ("acs", "k", "local_update_every", "4"), ("ga", "ls_neighbors", "ls_candidates", "12"),
    ("pils", "polish_m", "polish_candidates", "8")])
def test_an_old_key_sets_its_new_parameter(algo, old, new, value):
    spec = REGISTRY[algo]
    assert spec.params_from({old: value}) == spec.params_from({new: value})


def _problem(tmp_path) -> Path:
    problem = tmp_path / "p.tsp"
    problem.write_text("NAME : p\nTYPE : TSP\nDIMENSION : 12\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
                       + "".join(f"{i + 1} {i * 10} {(i * i) % 37}\n" for i in range(12)) + "EOF\n")
    return problem


def test_an_old_key_on_the_command_line_says_its_new_name_once(tmp_path):
    r = _cli("solve", str(_problem(tmp_path)), "--algo", "nn", "-p", "k=5", "--json", "-q")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("'k' is now 'candidates'") == 1
    assert json.loads(r.stdout)["params"]["candidates"] == 5


def test_params_file_sets_typed_values_and_p_overrides_it(tmp_path):
    params = tmp_path / "p.toml"
    params.write_text('variant = "gpu"\nants = 6\nq0 = 0.5\nbeta = 2\nlocal_update_every = 2\n')
    r = _cli("solve", str(_problem(tmp_path)), "--algo", "acs", "--params", str(params), "-p", "ants=4",
             "--iterations", "2", "--json", "-q")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["params"]
    assert (got["variant"], got["ants"], got["q0"], got["beta"], got["local_update_every"]) == ("gpu", 4, 0.5, 2.0, 2)


@pytest.mark.parametrize("text, status, words", [
    ("nope = 3\n", errors.EXIT_USAGE, ["no parameter 'nope'"]),
    ('candidates = "many"\n', errors.EXIT_USAGE, ["parameter candidates", "'many'"]),
    ("candidates = true\n", errors.EXIT_USAGE, ["parameter candidates"]),
    ("candidates = [1, 2]\n", errors.EXIT_USAGE, ["parameter candidates", "list"]),
    ("candidates = \n", errors.EXIT_DATA, ["not valid TOML"]),
    (None, errors.EXIT_NO_INPUT, ["no such parameter file"]),
])
def test_a_bad_params_file_is_one_line_naming_file_and_key(tmp_path, text, status, words):
    params = tmp_path / "p.toml"
    if text is not None:
        params.write_text(text)
    r = _cli("solve", str(_problem(tmp_path)), "--algo", "nn", "--params", str(params), "-q")
    assert r.returncode == status, r.stderr
    assert r.stderr.startswith(f"tspcl: {params}") and r.stderr.count("\n") == 1 and r.stdout == ""
    for word in words:
        assert word in r.stderr


def test_a_family_flag_sets_the_parameter_its_family_names_so():
    from tspcl.cli import solver_values

    assert solver_values(REGISTRY["mmas"], None, [], {"rho": 0.7}) == {"persistence": 0.7}
    assert solver_values(REGISTRY["acs"], None, [], {"rho": 0.05, "alpha": 0.3}) == \
        {"local_evaporation": 0.05, "global_evaporation": 0.3}
    with pytest.raises(UsageError, match="--tenure does not apply to --algo mmas"):
        solver_values(REGISTRY["mmas"], None, [], {"tenure": 3})


def test_solve_help_documents_each_family_flag_from_the_parameters_it_sets():
    r = _cli("solve", "--help")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "mmas: -p persistence, pheromone kept per iteration" in text
    assert "acs: -p local_evaporation, evaporation of the local update" in text
    assert "-m, --candidates, --cl" in text and "--candidate-kind, --neighbors" in text


def test_algorithms_lists_every_algorithm_and_parameter():
    r = _cli("algorithms")
    assert r.returncode == 0, r.stderr
    for spec in SPECS:
        assert f"\n{spec.name}: " in "\n" + r.stdout
    assert "    persistence = 0.5  " in r.stdout and "    local_evaporation = 0.01  " in r.stdout


def test_the_readme_table_is_the_generated_one():
    """README.md holds `tspcl algorithms --markdown` between its two markers."""
    from tspcl.params import algorithm_listing

    readme = (ROOT / "README.md").read_text()
    begin, end = "<!-- tspcl algorithms --markdown -->\n", "<!-- end of tspcl algorithms --markdown -->"
    assert begin in readme and end in readme
    table = readme.split(begin, 1)[1].split(end, 1)[0]
    assert table == algorithm_listing(SPECS, markdown=True), \
        "README's algorithm table is stale: replace it with `tspcl algorithms --markdown`"


def test_auto_or_number_reads_auto_counts_and_shares_and_refuses_the_rest():
    from tspcl.params import auto_or_number

    assert auto_or_number("k", "auto", int, 0, 9, "a count") is None
    assert auto_or_number("k", "7", int, 0, 9, "a count") == 7
    assert auto_or_number("s", "0.25", float, 0, 1, "a share") == 0.25
    for kind, text in ((int, "1.5"), (int, "10"), (int, "-1"), (int, "x"), (float, "nan"),
                       (float, "1.01"), (float, "inf"), (float, "")):
        with pytest.raises(UsageError, match=r"^k must be auto or a \w+ from 0 to"):
            auto_or_number("k", text, kind, 0, 1 if kind is float else 9,
                           "a share" if kind is float else "a count")
