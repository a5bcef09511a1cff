"""Time to target from tspcl run logs: per log, the final gap and the first elapsed
second (from process start) at which the best tour was within 1 / 0.5 / 0.2 % of the
optimum, as CSV (the same columns as ../shared/peers/run_peers.sh's ttt*_s).

    python scripts/time_to_target.py --optima optima.csv run1.log run2.log ...
"""

from __future__ import annotations

import argparse
import csv
import sys

from tspcl.tsplib import parse_log

TARGETS = (1.0, 0.5, 0.2)


def optima(path: str) -> dict[str, int]:
    with open(path, newline="") as f:
        return {row["name"]: int(row["optimum"]) for row in csv.DictReader(f) if row.get("optimum")}


def row(log_path: str, best: dict[str, int]) -> list:
    with open(log_path) as f:
        log = parse_log(f.read(), source=log_path)
    opt = best.get(log.name)
    progress = log.progress
    final = progress[-1][2] if progress else None
    gap = None if opt is None or final is None else 100.0 * (final - opt) / opt
    ttt = []
    for target in TARGETS:
        hit = next((t for t, _, length in progress
                    if opt is not None and 100.0 * (length - opt) / opt <= target), None)
        ttt.append("" if hit is None else f"{hit:.2f}")
    last = progress[-1][0] if progress else None
    return [log_path, log.name, log.seed, final, "" if gap is None else f"{gap:.4f}",
            "" if last is None else f"{last:.2f}", *ttt]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--optima", required=True, help="CSV with name and optimum columns")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args(argv)
    best = optima(args.optima)
    out = csv.writer(sys.stdout)
    out.writerow(["log", "instance", "seed", "length", "gap_percent", "last_improvement_s",
                  "ttt1_s", "ttt05_s", "ttt02_s"])
    for path in args.logs:
        out.writerow(row(path, best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
