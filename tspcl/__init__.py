"""tspcl: travelling-salesman search in OpenCL kernels, driven from Python.

The Python API (tspcl/api.py)::

    import numpy as np, tspcl
    r = tspcl.solve(np.random.rand(300, 2) * 1000, time_limit=10)
    r.tour, r.length            # 0-based visiting order, exact TSPLIB length

``solve``, ``Result``, ``Instance``, ``read_problem``, ``read_tour``, ``write_tour`` and
the error classes are imported on first use, so that ``import tspcl`` (and ``tspcl
--help``) imports neither numpy nor pyopencl.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# name -> the module that defines it
_EXPORTS = {
    "solve": "api", "read_problem": "api", "read_tour": "api", "write_tour": "api",
    "Result": "run", "Instance": "instance",
    "TspclError": "errors", "UsageError": "errors", "DataError": "errors",
    "MissingInputError": "errors", "NoDeviceError": "errors", "DeviceMemoryError": "errors",
    "OutputError": "errors", "StdoutError": "errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    """The exported names, imported from their modules when first asked for."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
