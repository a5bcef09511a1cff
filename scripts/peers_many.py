"""The peers on many small instances (issue 42's batch figure): Concorde's linkern with its
defaults on every TSPLIB file of a folder, JOBS processes at once, and LKH (RUNS = 1, its
default trials) on a sample of them for a near-optimal reference.  Prints one JSON line:
linkern's total wall time and mean length, and per sampled instance LKH's length.

The peers are references only (../shared/peers): this script runs their binaries and
reads the lengths of the tours they write; nothing of theirs is kept in the project.

    python scripts/peers_many.py u100/ --bin .peers/bin --jobs 16 --sample 200 --lengths out.json \
        --ours tours.txt
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from tspcl.tsplib import read_problem


def linkern_length(binary: Path, problem: Path, work: Path, seed: int) -> int:
    """linkern's tour length: the sum of the weights of the edge file it writes with -o
    (first line 'n m', then 'a b weight' per edge)."""
    out = work / (problem.stem + ".lk")
    subprocess.run([str(binary), "-s", str(seed), "-o", str(out), str(problem)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = out.read_text().split("\n")[1:]
    return sum(int(r.split()[2]) for r in rows if r.strip())


def lkh_length(binary: Path, problem: Path, work: Path, seed: int) -> int:
    """LKH's tour length, recomputed exactly on the host from its TOUR file."""
    tour = work / (problem.stem + ".lkh.tour")
    par = work / (problem.stem + ".par")
    par.write_text(f"PROBLEM_FILE = {problem}\nRUNS = 1\nSEED = {seed}\nTRACE_LEVEL = 0\n"
                   f"OUTPUT_TOUR_FILE = {tour}\n")
    subprocess.run([str(binary), str(par)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    from tspcl.tsplib import read_tour

    return int(read_problem(str(problem)).tour_length(read_tour(str(tour)).order))


def compare(path: str, names: list[str], lk: list[int], ref: list[int]) -> dict:
    """Our lengths (a `name length city...` line an instance) against linkern's, and both
    against LKH's on the sample, over the instances both solved."""
    ours = {}
    with open(path) as f:
        for line in f:
            name, length = line.split()[:2]
            ours[name] = int(length)
    both = [i for i, name in enumerate(names) if name in ours]
    me = np.array([ours[names[i]] for i in both], np.int64)
    them = np.array([lk[i] for i in both], np.int64)
    sample = [i for i in both if i < len(ref)]
    best = np.array([ref[i] for i in sample], np.int64)
    mine = np.array([ours[names[i]] for i in sample], np.int64)
    return {"ours": path, "instances": len(both), "ours_mean": float(me.mean()),
            "linkern_mean": float(them.mean()), "ours_shorter": int((me < them).sum()),
            "equal": int((me == them).sum()), "sample": len(sample),
            "ours_gap_to_lkh_percent": float(100 * (mine.sum() / best.sum() - 1)),
            "linkern_gap_to_lkh_percent": float(
                100 * (np.array([lk[i] for i in sample]).sum() / best.sum() - 1)),
            "ours_at_lkh": int((mine <= best).sum())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="a folder of TSPLIB files (tspcl gen --count N -o FOLDER)")
    ap.add_argument("--bin", default=".peers/bin", help="folder holding linkern and LKH")
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sample", type=int, default=200, help="instances LKH solves (the first)")
    ap.add_argument("--lengths", help="write {name: [linkern, lkh or null]} here")
    ap.add_argument("--ours", nargs="*", default=[], metavar="TOURS",
                    help="files of scripts/many_small.py --tours: one more JSON line each, "
                         "its mean against linkern's and both against LKH on the sample")
    a = ap.parse_args()
    files = sorted(Path(a.folder).glob("*.tsp"), key=lambda p: p.name)
    bins = Path(a.bin)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(a.jobs) as pool:
            lk = list(pool.map(lambda p: linkern_length(bins / "linkern", p, work, a.seed), files))
        linkern_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        with ThreadPoolExecutor(a.jobs) as pool:
            ref = list(pool.map(lambda p: lkh_length(bins / "LKH", p, work, a.seed),
                                files[:a.sample]))
        lkh_s = time.perf_counter() - t0
    names = [p.stem for p in files]
    if a.lengths:
        Path(a.lengths).write_text(json.dumps(
            {name: [lk[i], ref[i] if i < len(ref) else None] for i, name in enumerate(names)}))
    for path in a.ours:
        print(json.dumps(compare(path, names, lk, ref)))
    print(json.dumps({
        "instances": len(files), "jobs": a.jobs, "linkern_wall_s": round(linkern_s, 3),
        "linkern_mean_length": float(np.mean(lk)), "lkh_sample": len(ref),
        "lkh_wall_s": round(lkh_s, 3),
        "sample_linkern_gap_to_lkh_percent": float(100 * (np.mean(lk[:len(ref)]) / np.mean(ref) - 1))
        if ref else None}))


if __name__ == "__main__":
    main()
