"""One JSON line for a finished `tspcl solve-many` (issue 42's end-to-end batch figure): the
wall seconds since START (a `date +%s.%N` taken before the command), the instances solved
and their mean length from its summary.csv; --same TOURS (a scripts/many_small.py --tours
file) also counts the instances whose length equals that run's.

    s=$(date +%s.%N); tspcl solve-many u100/ --out-dir sm; python scripts/summary_wall.py sm/summary.csv $s
"""

from __future__ import annotations

import argparse
import csv
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("summary", help="solve-many's summary.csv")
    ap.add_argument("start", type=float, help="epoch seconds before the command started")
    ap.add_argument("--same", help="a many_small.py --tours file to compare lengths with")
    a = ap.parse_args()
    wall_s = time.time() - a.start
    with open(a.summary, newline="") as f:
        rows = list(csv.DictReader(f))
    solved = [r for r in rows if r["status"] == "ok"]
    lengths = [int(r["length"]) for r in solved]
    out = {"command": "tspcl solve-many", "wall_s": round(wall_s, 3), "instances": len(rows),
           "solved": len(solved), "algorithms": sorted({r["algorithm"] for r in solved}),
           "mean_length": round(sum(lengths) / max(1, len(lengths)), 1)}
    if a.same:
        with open(a.same) as f:
            theirs = {line.split()[0]: int(line.split()[1]) for line in f if line.strip()}
        out["same_length_as"] = a.same
        out["same_length"] = sum(theirs.get(r["name"]) == int(r["length"]) for r in solved)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
