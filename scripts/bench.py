"""Run a benchmark suite: python scripts/bench.py SPEC [--device D] [--out DIR].

The same as ``tspcl bench``; the spec format is in tspcl/bench.py.  Writes
DIR/results.csv, results.json and results.md (default DIR: bench-out/SPEC-NAME).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tspcl.bench import run_suite  # noqa: E402
from tspcl.errors import TspclError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec", help="suite spec (TOML)")
    ap.add_argument("--device", "-d", default=None, help="auto, gpu, cpu or P:D (default: $TSPCL_DEVICE or auto)")
    ap.add_argument("--out", default=None, help="output folder (default bench-out/<spec name>)")
    args = ap.parse_args(argv)
    out = args.out or str(Path("bench-out") / Path(args.spec).stem)
    command = shlex.join(["python", "scripts/bench.py", *(sys.argv[1:] if argv is None else argv)])
    try:
        run_suite(args.spec, args.device, out, command=command)
    except TspclError as e:
        print(f"bench: {e.message}", file=sys.stderr)
        return e.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
