"""Campaigns (tspcl.campaign, tspcl.cluster): the journal, resume, failed runs, a local
Dask cluster that loses a worker mid-suite and still gives the serial run's table, a
running cluster (--scheduler) that gives it too, and a task that kills its worker every
time, failed after the allowed deaths, without the tasks beside it; a result lost
with its worker, waited for."""

from __future__ import annotations

import json
import os
import signal
import sys
import types

import pytest
from kernel_fixtures import rt  # noqa: F401  (rt skips when there is no OpenCL device)

from tspcl import campaign, interrupts
from tspcl.bench import JOURNAL, run_suite
from tspcl.campaign import FAILED, OK, Entry, Journal, SerialRunner, run_tasks
from tspcl.errors import UsageError

DEVICE = os.environ.get("TSPCL_TEST_DEVICE")

# 2 instances x 2 algorithms x 3 seeds; iteration budgets, so that timings do not matter
SPEC = """
name = "campaign"
warmup = 1
seeds = [1, 2, 3]

[[group]]
instances = ["gen:uniform:60:4", "gen:clustered:40:2"]
algorithms = ["ga", "2opt"]
params = { population = 256 }
iterations = 20
"""


def _spec(tmp_path) -> str:
    path = tmp_path / "campaign.toml"
    path.write_text(SPEC)
    return str(path)


def _journal_keys(out) -> list[str]:
    return [json.loads(line)["key"] for line in (out / JOURNAL).read_text().splitlines()]


def _tours(rows) -> list[tuple]:
    return [(r["instance"], r["algorithm"], r["seed"], r["length"], r["tour_sha256"]) for r in rows]


def test_journal_ignores_a_cut_line_and_appends_after_it(tmp_path, capsys):
    journal = Journal(tmp_path / "j.jsonl")
    journal.append(Entry("a", OK, {"x": 1}))
    journal.append(Entry("b", FAILED, reason="ValueError: no"))
    journal.append(Entry("a", OK, {"x": 2}))  # a key's last entry wins
    journal.close()
    with open(journal.path, "a") as f:
        f.write('{"key": "c", "status": "ok", "rec')  # a crash in the middle of a line
    entries = journal.read()
    assert sorted(entries) == ["a", "b"]
    assert entries["a"].record == {"x": 2} and entries["b"].reason == "ValueError: no"
    assert "1 unreadable line ignored" in capsys.readouterr().err
    journal.append(Entry("c", OK, {"x": 3}))  # on a line of its own, not glued to the cut one
    journal.close()
    assert sorted(journal.read()) == ["a", "b", "c"]
    assert journal.set_aside() == tmp_path / "j.jsonl.1" and journal.read() == {}
    assert (tmp_path / "j.jsonl.1").is_file()


def test_failed_tasks_become_failed_entries_and_run_again(tmp_path):
    """A task that raises is a failed entry with its reason; the others go on; a rerun
    runs the failed one only."""
    calls = []

    def execute(task):
        calls.append(task.key)
        if task.key == "bad" and len(calls) < 4:
            raise ValueError("no good\nsecond line")
        return {"key": task.key}

    tasks = [types.SimpleNamespace(key=k) for k in ("one", "bad", "two", "one")]
    journal = Journal(tmp_path / "j.jsonl")
    entries = run_tasks(tasks, execute, journal, SerialRunner())
    assert calls == ["one", "bad", "two"]  # a key named twice runs once
    assert entries["bad"] == Entry("bad", FAILED, None, "ValueError: no good")
    assert entries["one"].ok and entries["two"].ok
    entries = run_tasks(tasks, execute, journal, SerialRunner())
    assert calls[3:] == ["bad"] and entries["bad"].ok


def test_failed_runs_are_rows_with_the_reason(tmp_path, monkeypatch, rt):  # noqa: F811
    import tspcl.run

    solve = tspcl.run.solve

    def seed_two_fails(inst, spec, params, runtime, seed=1, **kw):
        if seed == 2:
            raise UsageError("seed 2 is not welcome")
        return solve(inst, spec, params, runtime, seed=seed, **kw)

    monkeypatch.setattr(tspcl.run, "solve", seed_two_fails)
    spec = tmp_path / "s.toml"
    spec.write_text('seeds = [1, 2]\n[[group]]\ninstances = ["gen:circle:20"]\nalgorithms = ["nn"]\n')
    out = tmp_path / "out"
    rows = run_suite(str(spec), DEVICE, str(out), figure=False)
    assert [(r["seed"], r["status"], r["reason"]) for r in rows] == [
        (1, "ok", ""), (2, "failed", "UsageError: seed 2 is not welcome")]
    assert rows[1]["length"] is None and rows[0]["length"] > 0
    md = (out / "results.md").read_text()
    assert "| circle20 | 20 | nn |" in md and "| 1 |" in md  # one measured run
    assert "- circle20 nn start_city=0 candidates=10 seed 2 repeat 1: UsageError: seed 2 is not welcome" in md


def test_interrupted_campaign_resumes(tmp_path, monkeypatch, capsys, rt):  # noqa: F811
    """A signal after k rows keeps them in the journal; the rerun runs the rest only,
    and the table is complete without duplicates."""
    spec, out = _spec(tmp_path), tmp_path / "out"
    execute, ran, stop_after = campaign.execute_run, [], [4]

    def counted(task):
        if len(ran) in stop_after:
            raise interrupts.Stopped(signal.SIGINT)
        ran.append(task.key)
        return execute(task)

    monkeypatch.setattr(campaign, "execute_run", counted)
    with pytest.raises(interrupts.Stopped):
        run_suite(spec, DEVICE, str(out), figure=False)
    assert _journal_keys(out) == ran
    first = list(ran)
    capsys.readouterr()
    ran.clear()
    stop_after.clear()
    rows = run_suite(spec, DEVICE, str(out), figure=False)
    assert f"resuming from {out / JOURNAL}: 4 of 12 runs done, skipped" in capsys.readouterr().err
    assert not set(ran) & set(first) and len(ran) == 8
    keys = _journal_keys(out)
    assert len(keys) == len(set(keys)) == 12 and len(rows) == 12
    assert all(r["status"] == "ok" for r in rows)


def test_fresh_moves_the_journal_aside(tmp_path, rt):  # noqa: F811
    spec = tmp_path / "s.toml"
    spec.write_text('[[group]]\ninstances = ["gen:circle:20"]\nalgorithms = ["nn"]\n')
    out = tmp_path / "out"
    run_suite(str(spec), DEVICE, str(out), figure=False)
    first = (out / JOURNAL).read_text()
    rows = run_suite(str(spec), DEVICE, str(out), figure=False, fresh=True)
    assert len(rows) == 1 and (out / f"{JOURNAL}.1").read_text() == first
    assert len(_journal_keys(out)) == 1


def test_cluster_without_dask_says_how_to_get_it(monkeypatch):
    from tspcl.cluster import open_runner

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(UsageError, match=r"pip install 'tspcl\[cluster\]'"):
        with open_runner("local", None, 2, None):
            pass


@pytest.mark.slow
def test_local_cluster_loses_a_worker_and_gives_the_serial_table(tmp_path, monkeypatch, rt):  # noqa: F811
    """Two workers on one device; one is killed (SIGKILL) while it runs a task: Dask runs
    the task again, and the table equals the serial run's, row by row (tour hashes and
    lengths), without duplicates."""
    pytest.importorskip("distributed")
    from tspcl import cluster

    spec = _spec(tmp_path)
    serial = run_suite(spec, DEVICE, str(tmp_path / "serial"), figure=False)
    killed = []
    run = cluster.DaskRunner.run

    def kill_one_worker(self, tasks, execute):
        for entry in run(self, tasks, execute):
            yield entry
            if not killed:
                busy = [w for w, keys in self.client.processing().items() if keys]
                pids = self.client.run(os.getpid, workers=busy[:1])
                for pid in pids.values():
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)

    monkeypatch.setattr(cluster.DaskRunner, "run", kill_one_worker)
    out = tmp_path / "cluster"
    rows = run_suite(spec, DEVICE, str(out), figure=False, cluster="local", workers=2)
    assert killed  # a worker was running a task when it was killed
    keys = _journal_keys(out)
    assert len(keys) == len(set(keys)) == 12
    assert all(r["status"] == "ok" for r in rows)
    assert _tours(rows) == _tours(serial)


@pytest.mark.slow
def test_a_running_cluster_gives_the_serial_table(tmp_path, rt):  # noqa: F811
    """bench --scheduler: the runs go to a cluster started beforehand (two workers)."""
    distributed = pytest.importorskip("distributed")
    spec = _spec(tmp_path)
    serial = run_suite(spec, DEVICE, str(tmp_path / "serial"), figure=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as running:
        rows = run_suite(spec, DEVICE, str(tmp_path / "running"), figure=False,
                         scheduler=running.scheduler_address)
    assert all(r["status"] == "ok" for r in rows)
    assert _tours(rows) == _tours(serial)


@pytest.mark.slow
def test_a_task_that_kills_its_worker_each_time_fails_after_three_deaths():
    """A worker that dies is replaced and its task runs again, up to ALLOWED_FAILURES
    deaths; the next one makes the task a failed entry with the reason, and the other
    tasks are done."""
    pytest.importorskip("distributed")
    from tspcl.cluster import ALLOWED_FAILURES, open_runner

    def execute(task):              # pickled by value: a worker runs it
        if task.key == "dies":
            os._exit(3)
        return {"value": task.key}

    tasks = [types.SimpleNamespace(key=k) for k in ("a", "dies", "b")]
    with open_runner("local", None, 2, DEVICE or "auto") as runner:
        entries = {e.key: e for e in runner.run(tasks, execute)}
    assert entries["a"].ok and entries["b"].ok and entries["a"].record == {"value": "a"}
    assert entries["dies"].status == FAILED
    assert entries["dies"].reason == f"KilledWorker: its worker died {ALLOWED_FAILURES + 1} times"


class _Settled:
    """A Dask future as the runner sees it once ``as_completed`` gives it: its status
    when given, and what ``result()`` returns or raises then."""

    def __init__(self, status, value=None, error=None):
        self.status, self.value, self.error = status, value, error

    def result(self):
        if self.error is not None:
            raise self.error
        return self.value

    def exception(self):
        return self.error

    def release(self):
        pass


def test_a_result_lost_with_its_worker_is_waited_for_not_failed(monkeypatch):
    """A task that finished, then lost its result with its worker before the runner read
    it, is "lost" until Dask has run it again; result() waits for that.  It is an ok
    entry; a task killed too often, or one that raised, is a failed one."""
    distributed = pytest.importorskip("distributed")
    from distributed.scheduler import KilledWorker

    from tspcl.cluster import ALLOWED_FAILURES, DaskRunner

    settled = {"lost": _Settled("lost", {"value": "lost"}),
               "killed": _Settled("error", error=KilledWorker("k", None, ALLOWED_FAILURES)),
               "raised": _Settled("error", error=ValueError("no good\nsecond line")),
               "done": _Settled("finished", {"value": "done"})}

    class Client:
        def submit(self, execute, task, key, retries):
            return settled[task.key]

    class AsCompleted(list):  # the futures in the order they were added
        add = list.append

    monkeypatch.setattr(distributed, "as_completed", AsCompleted)
    runner = DaskRunner(Client, "fake", None, workers=1)
    tasks = [types.SimpleNamespace(key=k) for k in settled]
    entries = {e.key: e for e in runner.run(tasks, lambda task: None)}
    assert entries["lost"] == Entry("lost", OK, {"value": "lost"})
    assert entries["done"] == Entry("done", OK, {"value": "done"})
    assert entries["killed"].reason == f"KilledWorker: its worker died {ALLOWED_FAILURES + 1} times"
    assert entries["raised"] == Entry("raised", FAILED, None, "ValueError: no good")


@pytest.mark.slow
def test_a_local_worker_holds_one_task_at_a_time():
    """A worker's death counts against every task it holds, so a local worker is given
    the next task only when it has finished the last: each task sees itself alone."""
    pytest.importorskip("distributed")
    from tspcl.cluster import open_runner

    def execute(task):              # pickled by value: a worker runs it
        import time

        from distributed import get_worker

        time.sleep(0.2)             # the scheduler has time to send the next task
        held = [k for k, t in get_worker().state.tasks.items()
                if t.state in ("executing", "ready", "constrained", "waiting", "fetch")]
        return {"held": len(held)}

    tasks = [types.SimpleNamespace(key=str(k)) for k in range(4)]
    with open_runner("local", None, 1, DEVICE or "auto") as runner:
        entries = list(runner.run(tasks, execute))
    assert [e.record for e in entries] == [{"held": 1}] * 4
