"""Many small instances with the batch kernels (issue 42): total wall time and mean length.

Generates COUNT uniform N-city instances (seeds 1..COUNT, as `tspcl gen uniform -n N
--count COUNT` does), solves them all with tspcl.solvers.batch.solve_batch on one device
and prints one JSON line: the device, the instances, the kick budget, the wall seconds of
the batch (kernels built beforehand, by a warm-up batch of one instance: build_s), the
mean and total exact length.  --write FILE.tsp also writes the instances as one
multi-instance file (for linkern or LKH on the same instances); --tours FILE writes each
instance's length and tour (one line each) for a closer look.

    python scripts/many_small.py --count 10000 -n 100 --device gpu -p kicks=30n --write u100/
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import numpy as np

from tspcl.device import Runtime
from tspcl.gen import generate_many, write_many
from tspcl.params import typed_values
from tspcl.solvers.batch import BatchParams, solve_batch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                    help="a batch parameter (tspcl.solvers.batch.BatchParams), e.g. kicks=30n")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default=None)
    ap.add_argument("--write", help="also write the instances here (FILE.tsp or a folder)")
    ap.add_argument("--tours", help="write 'name length city...' per instance here")
    a = ap.parse_args()

    instances = generate_many("uniform", a.n, a.count)
    if a.write:
        write_many(instances, a.write)
    rt = Runtime.from_spec(a.device)
    fields = typed_values(BatchParams, dict(kv.partition("=")[::2] for kv in a.param), "batch")
    p = BatchParams(**fields)
    began = time.perf_counter()
    solve_batch(rt, instances[:1], p, a.seed)          # builds the kernels
    build_s = time.perf_counter() - began
    began = time.perf_counter()
    tours = solve_batch(rt, instances, p, a.seed)
    wall_s = time.perf_counter() - began
    lengths = np.array([t.length for t in tours], np.int64)
    for inst, tour in zip(instances, tours):
        assert np.array_equal(np.sort(tour.order), np.arange(inst.n)), inst.name
    if a.tours:
        with open(a.tours, "w") as f:
            for inst, tour in zip(instances, tours):
                f.write(f"{inst.name} {tour.length} {' '.join(map(str, tour.order.tolist()))}\n")
    print(json.dumps({"device": rt.name, "instances": a.count, "n": a.n, "params": dataclasses.asdict(p),
                      "seed": a.seed, "build_s": round(build_s, 3), "wall_s": round(wall_s, 3),
                      "mean_length": round(float(lengths.mean()), 1),
                      "total_length": int(lengths.sum())}))


if __name__ == "__main__":
    main()
