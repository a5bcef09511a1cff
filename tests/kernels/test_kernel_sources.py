"""Kernel sources: local headers inlined before the build, found beside the including file
or in kernels_cl/, so that a kernel file outside kernels_cl/ (the tests' checks) builds
with the production headers, and a header edit changes the source a build cache sees."""

from __future__ import annotations

import numpy as np

from kernel_fixtures import rt  # noqa: F401
from tspcl.device import kernel_dir, load_source

CHECK = """#include "own.h"
#include "common.h"
__kernel void check(__global uint *out) { out[0] = OWN + rng_below(0xFFFFFFFFu, 10u); }
"""


def write_check(folder, own_value: int):
    (folder / "own.h").write_text(f'#include "common.h"\n#define OWN {own_value}u\n')
    path = folder / "check.cl"
    path.write_text(CHECK)
    return path


def test_headers_are_found_beside_the_file_then_in_kernels_cl_and_inlined_once(tmp_path):
    src = load_source(write_check(tmp_path, 5))
    assert "#include" not in src.replace("#include <pyopencl-random123/philox.cl>", "")
    assert src.count("#define OWN 5u") == 1
    common = (kernel_dir() / "common.h").read_text()
    assert src.count(common) == 1


def test_a_header_edit_changes_the_source_of_the_file_that_includes_it(tmp_path):
    path = write_check(tmp_path, 5)
    before = load_source(path)
    write_check(tmp_path, 6)
    assert load_source(path) != before


def test_a_kernel_file_outside_kernels_cl_builds_and_runs(rt, tmp_path):  # noqa: F811
    k = rt.kernel(write_check(tmp_path, 5), "check")
    out = rt.empty(4)
    k(rt.queue, (1,), None, out)
    assert rt.read(out, np.uint32, 1)[0] == 5 + 9
