"""Batch solving: multi-instance files, the batch kernels (against exact optima), and
solve-many's outputs, resume and failures (PoCL, tiny instances)."""

from __future__ import annotations

import csv
import itertools
import json
import os

import numpy as np
import pytest

from tspcl.device import Runtime
from tspcl.errors import DataError
from tspcl.gen import generate, generate_many, write_many
from tspcl.instance import Instance
from tspcl.many import ManyOptions, input_files, solve_many
from tspcl.solvers.batch import BatchParams, fits, most_cities, solve_batch
from tspcl.tsplib import format_problem, format_problems, parse_problems, read_problems, read_tour

SIZES = [8, 9, 10, 11, 12, 10, 9, 8, 12, 11]


@pytest.fixture(scope="module")
def rt() -> Runtime:
    return Runtime.from_spec("cpu")


def held_karp(inst: Instance) -> int:
    """The optimum by dynamic programming over subsets (city 0 first)."""
    d = inst.full_matrix().astype(np.int64)
    n = inst.n
    big = np.iinfo(np.int64).max // 4
    best = np.full((1 << (n - 1), n - 1), big, np.int64)   # best[set, last]: paths 0 .. last
    for j in range(n - 1):
        best[1 << j, j] = d[0, j + 1]
    for subset in range(1, 1 << (n - 1)):
        for j in range(n - 1):
            if not subset & (1 << j) or best[subset, j] >= big:
                continue
            rest = ~subset & ((1 << (n - 1)) - 1)
            for k in range(n - 1):
                if rest & (1 << k):
                    s = subset | (1 << k)
                    best[s, k] = min(best[s, k], best[subset, j] + d[j + 1, k + 1])
    return int(min(best[-1, j] + d[j + 1, 0] for j in range(n - 1)))


# ---- multi-instance files ------------------------------------------------------------------
def test_multi_instance_text_round_trips():
    insts = generate_many("uniform", 9, 3, seed=7)
    back = parse_problems(format_problems(insts))
    assert [b.name for b in back] == ["uniform9-7", "uniform9-8", "uniform9-9"]
    assert all(np.array_equal(a.coords, b.coords) for a, b in zip(insts, back))
    # the last problem may lack its EOF; blank lines between problems are fine
    text = format_problem(insts[0]) + "\n\n" + format_problem(insts[1]).replace("EOF\n", "")
    assert [b.name for b in parse_problems(text)] == ["uniform9-7", "uniform9-8"]


def test_multi_instance_errors_name_the_file_and_line(tmp_path):
    lines = format_problems(generate_many("uniform", 9, 2)).splitlines()
    second = lines.index("NAME : uniform9-2")
    bad = second + lines[second:].index("NODE_COORD_SECTION") + 3      # its third node
    lines[bad] = "3 x 7"
    path = tmp_path / "two.tsp"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=rf"two\.tsp:{bad + 1}: "):
        read_problems(str(path))
    with pytest.raises(DataError, match="empty input"):
        parse_problems("\n\n", "blank.tsp")


def test_written_batches_read_back(tmp_path):
    insts = generate_many("clustered", 20, 3, seed=2)
    paths = write_many(insts, str(tmp_path / "dir"))
    assert [os.path.basename(p) for p in paths] == [f"clustered20-{s}.tsp" for s in (2, 3, 4)]
    write_many(insts, str(tmp_path / "all.tsp"))
    assert [b.name for b in read_problems(str(tmp_path / "all.tsp"))] == [i.name for i in insts]
    listing = tmp_path / "list.txt"
    listing.write_text("# the batch\nall.tsp\n\ndir/clustered20-3.tsp\n")
    assert input_files([f"@{listing}", str(tmp_path / "dir")]) == [
        str(tmp_path / "all.tsp"), str(tmp_path / "dir" / "clustered20-3.tsp"),
        str(tmp_path / "dir" / "clustered20-2.tsp"), str(tmp_path / "dir" / "clustered20-4.tsp")]


# ---- the batch kernels ------------------------------------------------------------------------
def test_batch_finds_the_optimum_of_tiny_instances(rt):
    insts = [generate("uniform", n, seed=s) for s, n in enumerate(SIZES, start=1)]
    assert all(fits(inst, most_cities(rt, BatchParams())) for inst in insts)
    tours = solve_batch(rt, insts, BatchParams(), seed=1)
    for inst, tour in zip(insts, tours):
        assert sorted(tour.order.tolist()) == list(range(inst.n))
        assert tour.length == inst.tour_length(tour.order) == held_karp(inst)
        assert tour.kicks == 20 * inst.n
    # an instance's tour is the same alone as among others, and the same again
    again = solve_batch(rt, [insts[3]], BatchParams(), seed=1)[0]
    assert np.array_equal(again.order, tours[3].order)


def test_batch_tours_follow_the_seed_and_budget(rt):
    insts = generate_many("uniform", 40, 3, seed=11)
    p = BatchParams(kicks="2n", launch_kicks=16)
    a = solve_batch(rt, insts, p, seed=3)
    b = solve_batch(rt, insts, p, seed=3)
    assert all(np.array_equal(x.order, y.order) for x, y in zip(a, b))
    assert [t.kicks for t in a] == [80, 80, 80]
    cut = solve_batch(rt, insts, p, seed=3, time_limit=0.0)    # the first launch only
    assert [t.kicks for t in cut] == [16, 16, 16]


@pytest.mark.parametrize("slack", [0.0, 4.0, 30.0])
def test_batch_launches_end_on_their_best_tour(rt, slack):
    """With slack the search goes on from longer tours, but each launch ends on its best:
    more launches (the same first ones, same seed) never give a longer tour; and the
    tours are exact permutations."""
    insts = generate_many("uniform", 60, 4, seed=21)
    lengths = []
    for launches in (1, 2, 3):
        p = BatchParams(kicks=str(40 * launches), launch_kicks=40, slack=slack)
        tours = solve_batch(rt, insts, p, seed=5)
        for inst, tour in zip(insts, tours):
            assert sorted(tour.order.tolist()) == list(range(inst.n))
            assert tour.length == inst.tour_length(tour.order)
        lengths.append([t.length for t in tours])
    assert all(a >= b for x, y in itertools.pairwise(lengths) for a, b in zip(x, y))


# ---- solve-many -----------------------------------------------------------------------------
def read_summary(out):
    with open(out / "summary.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_solve_many_writes_tours_and_summary_and_resumes(tmp_path, capsys):
    write_many(generate_many("uniform", 10, 4, seed=1), str(tmp_path / "four.tsp"))
    write_many(generate_many("uniform", 12, 2, seed=9), str(tmp_path / "dir"))
    (tmp_path / "dir" / "broken.tsp").write_text(
        "NAME : broken\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EUC_2D\n"
        "NODE_COORD_SECTION\n1 0 0\n2 x 1\nEOF\n")
    inputs, out = [str(tmp_path / "four.tsp"), str(tmp_path / "dir")], tmp_path / "out"
    options = ManyOptions(iterations="5n", device="cpu")
    entries = solve_many(inputs, str(out), options)
    assert "the batch kernel solves them" in capsys.readouterr().err
    rows = read_summary(out)
    assert [r["name"] for r in rows] == ["uniform10-1", "uniform10-2", "uniform10-3",
                                         "uniform10-4", "broken.tsp", "uniform12-10",
                                         "uniform12-9"]
    failed = rows[4]
    assert failed["status"] == "failed" and "broken.tsp:8: NODE_COORD_SECTION" in failed["reason"]
    solved = {i.name: i for i in read_problems(str(tmp_path / "four.tsp"))}
    solved.update((i.name, i) for i in generate_many("uniform", 12, 2, seed=9))
    for r in rows[:4] + rows[5:]:
        assert r["status"] == "ok" and r["algorithm"] == "batch"
        order = read_tour(str(out / f"{r['name']}.tour")).order
        assert solved[r["name"]].tour_length(order) == int(r["length"])
    as_json = json.loads((out / "summary.json").read_text())
    assert [(r["name"], r["length"]) for r in as_json] == \
        [(r["name"], None if r["length"] == "" else int(r["length"])) for r in rows]
    assert sum(not e.ok for e in entries.values()) == 1

    # a rerun solves nothing again but the failed file; a lost tour is solved again
    os.remove(out / "uniform10-2.tour")
    before = len((out / "summary.jsonl").read_text().splitlines())
    solve_many(inputs, str(out), options)
    journal = (out / "summary.jsonl").read_text().splitlines()
    new = [json.loads(line) for line in journal[before:]]
    assert [(e["status"], e.get("reason", "")[-10:]) for e in new] == [
        ("failed", "is missing"), ("ok", ""), ("failed", "NSION : 3)")]
    assert (out / "uniform10-2.tour").is_file()
    unclocked = lambda rows: [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]  # noqa: E731
    assert unclocked(read_summary(out)) == unclocked(rows)    # the same tour, solved alone


def test_many_files_read_in_processes_give_the_tasks_of_one_process(tmp_path, monkeypatch):
    """(80 files, one unreadable; PARALLEL_FILES 32: two processes read them)"""
    from tspcl import many

    write_many(generate_many("uniform", 9, 79, seed=3), str(tmp_path / "dir"))
    (tmp_path / "dir" / "broken.tsp").write_text("NAME : broken\nTYPE : TSP\nDIMENSION : 2\n")
    files = input_files([str(tmp_path / "dir")])
    options = ManyOptions(iterations="2n", device="cpu")
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    tasks, small = many.instance_tasks(files, str(tmp_path), options)
    monkeypatch.setattr(many, "READ_PROCESSES", 1)
    alone, alone_small = many.instance_tasks(files, str(tmp_path), options)
    assert len(tasks) == 80 and tasks == alone
    assert [t.name for t in tasks if t.index is None] == ["broken.tsp"]
    assert "unreadable" in next(t.key for t in tasks if t.index is None)
    assert small.keys() == alone_small.keys()
    assert all(np.array_equal(small[k].coords, alone_small[k].coords) for k in small)


def test_solve_many_runs_a_named_algorithm_one_by_one(tmp_path):
    write_many(generate_many("uniform", 9, 2, seed=3), str(tmp_path / "two.tsp"))
    solve_many([str(tmp_path / "two.tsp")], str(tmp_path / "out"),
               ManyOptions(algo="nn", device="cpu"))
    rows = read_summary(tmp_path / "out")
    assert [(r["name"], r["algorithm"], r["status"]) for r in rows] == [
        ("uniform9-3", "nn", "ok"), ("uniform9-4", "nn", "ok")]


def test_solve_many_sends_batched_instances_to_a_local_cluster_in_chunks(tmp_path, capsys):
    """Two workers, each solving chunks of the batched instances on its device: the same
    tours and summary as the serial run (an instance's tour does not depend on which
    others share its launch)."""
    pytest.importorskip("distributed")
    write_many(generate_many("uniform", 11, 6, seed=4), str(tmp_path / "six.tsp"))
    options = ManyOptions(iterations="4n", device="cpu")
    solve_many([str(tmp_path / "six.tsp")], str(tmp_path / "serial"), options)
    solve_many([str(tmp_path / "six.tsp")], str(tmp_path / "cluster"), options,
               cluster="local", workers=2)
    assert "in chunks on the local cluster's workers" in capsys.readouterr().err
    serial, cluster = read_summary(tmp_path / "serial"), read_summary(tmp_path / "cluster")
    assert len(cluster) == 6 and all(r["algorithm"] == "batch" for r in cluster)
    keep = ("name", "length", "status", "tour_sha256")
    assert [[r[k] for k in keep] for r in cluster] == [[r[k] for k in keep] for r in serial]
    for r in cluster:
        assert (tmp_path / "cluster" / f"{r['name']}.tour").read_text() == \
            (tmp_path / "serial" / f"{r['name']}.tour").read_text()


def test_solve_many_batches_on_a_running_cluster(tmp_path, capsys):
    """--scheduler: this process sizes nothing on a device; the chunks go to the
    workers, which batch them; the serial run's tours."""
    distributed = pytest.importorskip("distributed")
    write_many(generate_many("uniform", 10, 4, seed=8), str(tmp_path / "four.tsp"))
    options = ManyOptions(iterations="3n", device="cpu")
    solve_many([str(tmp_path / "four.tsp")], str(tmp_path / "serial"), options)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        solve_many([str(tmp_path / "four.tsp")], str(tmp_path / "running"), options,
                   scheduler=cluster.scheduler_address)
    assert "in chunks on the workers' devices" in capsys.readouterr().err
    keep = ("name", "algorithm", "length", "status", "tour_sha256")
    assert [[r[k] for k in keep] for r in read_summary(tmp_path / "running")] == \
        [[r[k] for k in keep] for r in read_summary(tmp_path / "serial")]


def test_a_chunk_solves_alone_what_its_device_cannot_batch(tmp_path, monkeypatch):
    """(a device whose local memory holds 12 cities: the 30-city instance runs alone)"""
    from tspcl import many
    from tspcl.solvers import batch

    write_many(generate_many("uniform", 12, 1, seed=2) + generate_many("uniform", 30, 1, seed=3),
               str(tmp_path / "two.tsp"))
    options = ManyOptions(iterations="2n", device="cpu")
    tasks, _ = many.instance_tasks([str(tmp_path / "two.tsp")], str(tmp_path), options)
    monkeypatch.setattr(batch, "most_cities", lambda rt, p: 12)
    record = many.execute_chunk(many.ChunkTask("chunk", tuple(tasks), BatchParams(kicks="2n")))
    rows = {key: rec["row"] for key, status, rec, reason in record["entries"]}
    assert [rows[t.key]["algorithm"] for t in tasks] == ["batch", "pils"]
    assert all(rows[t.key]["status"] == "ok" for t in tasks)
