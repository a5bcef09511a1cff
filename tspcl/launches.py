"""Many launches of one kernel, enqueued without events.

PyOpenCL wraps every enqueue in a new event object.  For a kernel launched once per
construction step (acs-gpu: n launches an iteration) the host's enqueue rate then bounds
the iteration: on the H100 machine about 23 us a launch, where the kernel itself takes
15 us on a280 (docs/notebook/acs.md, "How it got there").  ``enqueue_repeated`` calls
clEnqueueNDRangeKernel of the ICD loader that PyOpenCL itself links (so the queue and
kernel handles are that loader's) through ctypes with no event: the launches are then
timed by the events of what the caller enqueues around them.  Where no loader can be
found it falls back to PyOpenCL's enqueue, dropping the events.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache
from pathlib import Path

from .errors import TspclError


@lru_cache(maxsize=1)
def _enqueue_nd_range():
    """clEnqueueNDRangeKernel of PyOpenCL's ICD loader, or None."""
    import pyopencl

    here = Path(pyopencl.__file__).resolve().parent
    found = sorted(here.joinpath(".libs").glob("libOpenCL*.so*")) + sorted(
        here.parent.joinpath("pyopencl.libs").glob("libOpenCL*.so*"))
    names = [str(p) for p in found] or [ctypes.util.find_library("OpenCL")]
    for name in names:
        if not name:
            continue
        try:
            fn = ctypes.CDLL(name).clEnqueueNDRangeKernel
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_int32
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p,
                       ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t),
                       ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p]
        return fn
    return None


def enqueue_repeated(rt, kernel, count: int, global_size: int, local_size: int,
                     use_loader: bool = True) -> None:
    """Enqueue `count` one-dimensional launches of `kernel` (arguments already set) on
    the runtime's queue, without events.  `use_loader` False: through PyOpenCL (the
    tests compare both)."""
    fn = _enqueue_nd_range() if use_loader else None
    if fn is None:
        for _ in range(count):
            rt.cl.enqueue_nd_range_kernel(rt.queue, kernel, (global_size,), (local_size,))
        return
    gws, lws = (ctypes.c_size_t * 1)(global_size), (ctypes.c_size_t * 1)(local_size)
    q, k = ctypes.c_void_p(rt.queue.int_ptr), ctypes.c_void_p(kernel.int_ptr)
    for _ in range(count):
        status = fn(q, k, 1, None, gws, lws, 0, None, None)
        if status != 0:
            raise TspclError(f"clEnqueueNDRangeKernel failed with status {status} for kernel "
                             f"{kernel.function_name}")
