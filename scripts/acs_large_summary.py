"""Summarise ACS-GPU-SPM run logs on the paper's Table 10 instances (issue 5):
python scripts/acs_large_summary.py OPTIMA_CSV LOG... prints a Markdown table with, per
instance, the runs' final errors (best, mean), when they last improved (median
iteration and time), and when each run first reached the paper's best-of-5 error
(Skinderowicz 2016, Table 10).

A log is what `tspcl solve --log` writes (elapsed seconds, iteration, best length, a
line each time the best improves, at most once a second); its NAME names the instance.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from tspcl.optima import gap_percent, read_optima_csv
from tspcl.scripting import run_script
from tspcl.tsplib import parse_log

# Table 10: best of 5 runs of 1000 n solutions (error %, total time s).
PAPER_TABLE10 = {
    "pcb3038": (4.96, 252.20), "rl5915": (8.48, 1344.87), "pla7397": (8.25, 1957.77),
    "rl11849": (15.12, 8262.88), "usa13509": (18.31, 11863.45), "brd14051": (14.14, 11730.20),
}


def reached(progress, limit: int):
    """(seconds, iteration) of the first logged best at or below ``limit``, else None."""
    return next(((t, it) for t, it, best in progress if best <= limit), None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("optima", help="optima.csv (name,...,optimum,...)")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()
    optima = read_optima_csv(args.optima)
    runs = defaultdict(list)
    for path in args.logs:
        log = parse_log(Path(path).read_text(), path)
        runs[log.name].append(log)
    print("| instance | runs | last improvement: iteration | time | best % | mean % "
          "| paper best % (time) | paper's error reached at, each run |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for name in [n for n in PAPER_TABLE10 if n in runs] + sorted(set(runs) - set(PAPER_TABLE10)):
        logs = sorted(runs[name], key=lambda log: log.seed)
        opt = optima[name]
        errors = [gap_percent(log.progress[-1][2], opt) for log in logs]
        paper_error, paper_time = PAPER_TABLE10.get(name, (None, None))
        hits = []
        if paper_error is not None:
            limit = int(opt * (1 + paper_error / 100))
            hits = [f"{hit[0]:.1f} s (it. {hit[1]:,})" if hit else "not reached"
                    for hit in (reached(log.progress, limit) for log in logs)]
        paper = f"{paper_error:.2f} ({paper_time:.0f} s)" if paper_error else "-"
        print(f"| {name} | {len(logs)} "
              f"| {statistics.median(log.progress[-1][1] for log in logs):,.0f} "
              f"| {statistics.median(log.progress[-1][0] for log in logs):.0f} s "
              f"| {min(errors):.2f} | {statistics.mean(errors):.2f} | {paper} "
              f"| {'; '.join(hits) or '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
