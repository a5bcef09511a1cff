"""What a kernel costs the device per work-item and work-group, to explain occupancy:
python scripts/kernel_resources.py PROGRAM KERNEL [KEY=VALUE ...] [--device gpu]
builds kernels_cl/PROGRAM.cl with -D KEY=VALUE (as the solvers do) and prints the
kernel's private and local memory and its largest work-group; on NVIDIA's OpenCL also
ptxas's report (registers, spills), asked for with -cl-nv-verbose, a diagnostic option
that no solver uses.

Example, ACS-GPU-SPM's construction on a EUC_2D instance:
  python scripts/kernel_resources.py acs acs_construct METRIC=0 CL=32 STORE=1 SPM_S=8 \\
      ATOMIC_UPDATE=0 COUNT_UPDATES=0 FRESH_READS=1 BETA_WHOLE=3 SYMMETRIC=1 --device gpu
"""

from __future__ import annotations

import argparse
import sys

from tspcl.scripting import open_runtime, run_script


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program")
    ap.add_argument("kernel")
    ap.add_argument("defines", nargs="*", help="KEY=VALUE, passed as -D KEY=VALUE")
    ap.add_argument("--device", default="auto")
    args = ap.parse_args()
    rt = open_runtime(args.device)
    cl, dev = rt.cl, rt.device
    nvidia = "NVIDIA" in dev.platform.name.upper()
    defines = dict(d.split("=", 1) for d in args.defines)
    prog = rt.program(args.program, defines, ("-cl-nv-verbose",) if nvidia else ())
    print(f"device {dev.name} ({dev.platform.name})")
    if nvidia:  # ptxas's lines for the kernel: its name, then stack, spills, registers
        lines = prog.get_build_info(dev, cl.program_build_info.LOG).splitlines()
        at = next((i for i, line in enumerate(lines) if f"'{args.kernel}'" in line), None)
        if at is not None:
            print("\n".join(x.strip() for x in lines[at:at + 4] if x.strip()))
    k = getattr(prog, args.kernel)
    info = cl.kernel_work_group_info
    for name in ("PRIVATE_MEM_SIZE", "LOCAL_MEM_SIZE", "WORK_GROUP_SIZE"):
        print(f"{name.lower()}: {k.get_work_group_info(getattr(info, name), dev)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
