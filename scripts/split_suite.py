"""Split a benchmark suite into K suites of about equal work, one per GPU:
python scripts/split_suite.py SPEC K OUTDIR writes OUTDIR/part<i>.toml (i = 0..K-1).

Each (group, instance, seed) run becomes a job, weighted by the instance file's size
(a proxy for n); jobs go, largest first, to the part with the least work so far.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import tomllib

from tspcl.bench import load_suite
from tspcl.scripting import run_script


def toml_value(v) -> str:
    """A TOML value: tables inline, strings and numbers as JSON writes them."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(v)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec")
    ap.add_argument("k", type=int)
    ap.add_argument("outdir")
    args = ap.parse_args()
    raw = tomllib.loads(Path(args.spec).read_text())
    suite = load_suite(args.spec)
    jobs = []
    for raw_group, group in zip(raw["group"], suite.groups):
        for ref in group.instances:
            for seed in group.seeds:
                weight = ref.path.stat().st_size if ref.path else 1
                jobs.append((weight, raw_group, ref.text, seed))
    parts = [[] for _ in range(args.k)]
    load = [0] * args.k
    for job in sorted(jobs, key=lambda j: -j[0]):
        i = load.index(min(load))
        parts[i].append(job)
        load[i] += job[0]
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    top = {k: v for k, v in raw.items() if k not in ("group", "seeds")}
    for i, part in enumerate(parts):
        lines = [f"{k} = {toml_value(v)}" for k, v in top.items()]
        for _, raw_group, path, seed in part:
            group = {k: v for k, v in raw_group.items() if k not in ("instances", "seeds")}
            lines += ["", "[[group]]", f"instances = [{json.dumps(path)}]", f"seeds = [{seed}]"]
            lines += [f"{k} = {toml_value(v)}" for k, v in group.items()]
        (out / f"part{i}.toml").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
