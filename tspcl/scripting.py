"""Setup shared by the programs under scripts/: OpenCL runtimes opened as the command line
opens them, a solve context holding the nearest-neighbour tour, and a script's exit status
and error line as the command line gives them."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from .device import Runtime, all_devices, cache_note, choose_device, describe, log
from .device_instance import DeviceInstance
from .errors import TspclError
from .instance import Instance
from .solvers import SolveContext
from .solvers.construct import NearestNeighborParams, run_nn


def _announce(rt: Runtime) -> Runtime:
    """The runtime, its device said on stderr (and why kernels go uncached, if they do)."""
    log(f"device {rt.name}")
    if cache_note():
        log(cache_note())
    return rt


def open_runtime(spec: str | None = None) -> Runtime:
    """The runtime of one ``--device`` spec: auto, gpu, cpu or P:D (None: $TSPCL_DEVICE,
    else auto), as ``tspcl solve --device`` picks it."""
    return _announce(Runtime.from_spec(spec))


def open_runtimes(specs: Iterable[str | None]) -> list[Runtime]:
    """One runtime per distinct device the specs name, in their order; the spec ``all``
    names every device of every platform."""
    devices = []
    for spec in specs:
        devices += all_devices() if spec and spec.lower() == "all" else [choose_device(spec)]
    seen, runtimes = set(), []
    for dev in devices:
        key = (describe(dev), dev.int_ptr)
        if key not in seen:
            seen.add(key)
            runtimes.append(_announce(Runtime(dev)))
    return runtimes


def nn_context(rt: Runtime, inst: Instance, seed: int = 1) -> SolveContext:
    """A solve context of ``inst`` on ``rt`` whose best tour is the nearest-neighbour tour:
    the start the timing scripts measure a solver's kernels from."""
    ctx = SolveContext(rt, DeviceInstance(rt, inst), seed=seed)
    run_nn(ctx, NearestNeighborParams())
    return ctx


def run_script(main: Callable[[], int]) -> int:
    """``main()``'s exit status; a TspclError (no device, unreadable instance, ...) becomes
    one stderr line, ``SCRIPT: message``, and its exit status, as on the command line."""
    try:
        return main()
    except TspclError as e:
        print(f"{Path(sys.argv[0]).stem}: {e.message}", file=sys.stderr)
        return e.exit_code
