"""The Python API: solve a problem given as a TSPLIB path, an Instance or a numpy array,
and read and write TSPLIB files; ``tspcl.solve`` and the others are these functions.

A call means what the command line means (`tspcl solve`): the same algorithms, -p
parameters, ``--algo auto`` choice and budget, device choice and errors, raised as the
same :class:`tspcl.errors.TspclError` subclasses with the CLI's messages.  The library
installs no signal handlers: Ctrl-C during a solve is Python's KeyboardInterrupt, which
ends the run with the best tour so far (``Result.interrupted``), or propagates where no
tour exists yet.

Arrays are told apart by shape and type (``metric=`` decides where given):

* ``metric="EXPLICIT"``, or no metric and an integer (n, n) array: a distance matrix,
  row = from, column = to; symmetric: a TSP, else an ATSP.  Weights are 32-bit integers
  (a float array is taken with ``metric="EXPLICIT"`` if every weight is integral).
* any other ``metric`` (a weight type of :data:`tspcl.instance.COORD_DIMS`), or no
  metric and an (n, 2) or (n, 3) array that is not a square integer one: coordinates,
  one city a row, EUC_2D or EUC_3D by default (TSPLIB's rounded Euclidean distances).
  Integer coordinates of two or three cities (a square integer array) need
  ``metric="EUC_2D"`` (or "EUC_3D").
"""

from __future__ import annotations

import math
import numbers
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .errors import DataError, UsageError
from .instance import COORD_DIMS, Instance
from .device import Runtime, choose_device
from .run import Result

EXPLICIT = "EXPLICIT"
ARRAY_NAME = "array"          # the NAME of a problem given as an array
ARRAY_SOURCE = "<array>"      # its source, as error messages name it
MAX_SEED = 2**64 - 1          # the CLI's --seed range: 0 to this

ProblemLike = str | os.PathLike | Instance | np.ndarray   # what solve takes as a problem

_RUNTIMES: dict = {}          # OpenCL device -> its Runtime, for the life of the process


def runtime(device: str | None = None) -> Runtime:
    """The :class:`tspcl.device.Runtime` of ``device`` (as ``solve`` takes it), made once
    per OpenCL device in a process: its context, queue and built kernels serve every
    later call (so ``"auto"`` and ``"cpu"`` share one where they pick the same device)."""
    dev = choose_device(device)
    rt = _RUNTIMES.get(dev)
    if rt is None:
        rt = _RUNTIMES[dev] = Runtime(dev)
    return rt


def solve(problem: ProblemLike, *, algo: str = "auto",
          time_limit: float | None = None, iterations: int | str | None = None,
          seed: int = 1, device: str | None = None, metric: str | None = None,
          **params: bool | int | float | str | None) -> Result:
    """Solve ``problem`` and return the best tour found, as ``tspcl solve`` does.

    problem: a TSPLIB file's path (``.gz`` read transparently), an :class:`Instance`,
        an (n, 2) or (n, 3) array of coordinates or an (n, n) integer distance matrix
        (symmetric: TSP, else ATSP); the module docstring says how arrays are told apart.
    algo: an algorithm of `tspcl algorithms`, or "auto" (the default), which chooses as
        the CLI does (tspcl.auto): pils on symmetric instances (bridges=0.5 on a CPU
        device), the GA on asymmetric ones, and without ``time_limit`` or ``iterations``
        the CLI's default budget (the solver's own budget or n / 500 seconds, 2 to
        60 s, whichever comes first); ``Result.chosen`` says what and why.
    time_limit: seconds for the whole call, counted from its start; the best tour found
        by then is returned.
    iterations: the solver's own iteration budget (-i): a count, or for ils and pils a
        multiple of n such as "10n"; a solver whose budget parameter is named
        ``iterations`` (hc, tabu, mmas, acs) gets it there.
    seed: 0 to 2**64 - 1; the same seed on the same device gives the same tour.
    device: "auto" (a GPU if any, else the CPU), "gpu", "cpu" or "P:D" (`tspcl
        devices`); None reads $TSPCL_DEVICE, else auto, as the CLI does.  One runtime
        per device is kept for the process (:func:`runtime`): kernels are built once.
    metric: for an array only: a coordinate weight type (EUC_2D, CEIL_2D, GEO, ATT,
        EUC_3D, ...) or "EXPLICIT" for a matrix; a file or an Instance says its own.
    params: the algorithm's -p parameters as Python values (``bridges=0.5``,
        ``ls="lk"``, ``random_start=True``), over auto's; None leaves one at its default.

    Raises the CLI's errors: UsageError (an unknown algorithm, key or value, a bad
    keyword), DataError (a malformed file or array: NaN coordinates, a matrix that is
    not square or not integral), MissingInputError, NoDeviceError, DeviceMemoryError.
    """
    from .run import setup, solve as run_solve

    started = time.perf_counter()
    time_limit = _seconds(time_limit)
    seed = _seed(seed)
    budget = None if iterations is None else str(iterations)

    def values_for(spec, base):
        return _typed(spec, params, base)

    if algo != "auto":        # a bad parameter is said before the problem is read
        run = setup(algo, values_for, budget, time_limit)
    inst = as_instance(problem, metric)
    rt = runtime(device)
    if algo == "auto":
        run = setup(algo, values_for, budget, time_limit, inst, rt.limits.is_gpu)
    deadline = None if run.time_limit is None else started + run.time_limit
    return run_solve(inst, run.spec, run.params, rt, seed=seed, deadline=deadline,
                     iterations=run.iterations, started=started, chosen=run.chosen)


def as_instance(problem: ProblemLike, metric: str | None = None) -> Instance:
    """``problem`` as an :class:`Instance`: a path is read, an Instance kept, an array
    taken as coordinates or a matrix (module docstring); ``metric`` is for arrays only."""
    if isinstance(problem, (Instance, str, os.PathLike)):
        if metric is not None:
            raise UsageError("metric= applies to arrays only: a TSPLIB file or an Instance "
                             "gives its own EDGE_WEIGHT_TYPE")
        return problem if isinstance(problem, Instance) else read_problem(problem)
    weight_type = None if metric is None else _weight_type(metric)
    try:
        a = np.array(problem)  # a copy: the instance must not change with the caller's array
    except (TypeError, ValueError) as e:
        raise DataError(ARRAY_SOURCE, None, f"not an array of numbers ({e})") from None
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer)
                               or np.issubdtype(a.dtype, np.floating)):
        raise UsageError(f"problem must be a TSPLIB path, an Instance or an array of numbers "
                         f"(got {type(problem).__name__} of {a.dtype})")
    if a.ndim != 2 or not len(a):
        raise DataError(ARRAY_SOURCE, None, f"expected an (n, 2) or (n, 3) array of coordinates "
                                            f"or an (n, n) distance matrix, n >= 1, not shape "
                                            f"{a.shape}")
    square_ints = a.shape[0] == a.shape[1] and np.issubdtype(a.dtype, np.integer)
    if weight_type == EXPLICIT or (weight_type is None and square_ints):
        if a.shape[0] != a.shape[1]:
            raise DataError(ARRAY_SOURCE, None, f"a distance matrix must be square, not shape "
                                                f"{a.shape}")
        symmetric = np.array_equal(a, a.T)
        return Instance(ARRAY_NAME, "TSP" if symmetric else "ATSP", EXPLICIT, matrix=a,
                        source=ARRAY_SOURCE)
    if weight_type is None:
        if a.shape[1] not in (2, 3):
            raise DataError(ARRAY_SOURCE, None, f"expected coordinates with 2 or 3 columns or a "
                                                f"square integer distance matrix, not shape "
                                                f"{a.shape} of {a.dtype} (a float matrix "
                                                "needs metric='EXPLICIT')")
        weight_type = "EUC_2D" if a.shape[1] == 2 else "EUC_3D"
    if a.shape[1] != COORD_DIMS[weight_type]:
        raise DataError(ARRAY_SOURCE, None, f"{weight_type} takes {COORD_DIMS[weight_type]} "
                                            f"coordinates a city, the array has {a.shape[1]} "
                                            "columns")
    return Instance(ARRAY_NAME, "TSP", weight_type, coords=a, source=ARRAY_SOURCE)


def read_problem(path: str | os.PathLike) -> Instance:
    """The TSP or ATSP problem of a TSPLIB file (``.gz`` read transparently; "-" is
    stdin); DataError naming file and line if it is malformed, MissingInputError if
    it cannot be read."""
    from . import tsplib

    return tsplib.read_problem(os.fspath(path))


def read_tour(path: str | os.PathLike) -> np.ndarray:
    """The tour of a TSPLIB TOUR file as 0-based city numbers in visiting order (its
    NAME and COMMENT: :func:`tspcl.tsplib.read_tour`); whether it is a tour of a given
    problem is ``Instance.tour_problem``'s business."""
    from . import tsplib

    return tsplib.read_tour(os.fspath(path)).order


def write_tour(path: str | os.PathLike, tour: np.ndarray | Sequence[int], problem: ProblemLike | None = None,
               comment: str = "") -> None:
    """Write ``tour`` (0-based city numbers in visiting order, as ``Result.tour``) to
    ``path`` as a TSPLIB TOUR file, atomically (an old file is replaced whole or kept;
    "-" is stdout).  ``problem`` (anything :func:`solve` takes) gives the NAME and the
    tour is checked against it, fixed edges included; without it the NAME is the file
    name's stem and the tour is checked to be a permutation of 0..n-1.  UsageError for
    a tour that is not one, OutputError for a file that cannot be written."""
    from .output import write_atomic
    from .tsplib import format_tour

    path = os.fspath(path)
    t = np.asarray(tour)
    if t.ndim != 1:
        raise UsageError(f"{path}: a tour is a 1-D array of city numbers, not shape {t.shape}")
    if problem is None:       # every n-city instance has the same tours without fixed edges
        inst = Instance(Path(path).stem, "TSP", "EUC_2D", coords=np.zeros((len(t), 2)))
    else:
        inst = as_instance(problem)
    why = inst.tour_problem(t)
    if why is not None:
        raise UsageError(f"{path}: not a tour{'' if problem is None else ' of ' + inst.name}: {why}")
    write_atomic(path, format_tour(t, inst.name, comment))


def _weight_type(metric: str) -> str:
    """``metric`` as a weight type (any case); UsageError naming the choices."""
    weight_type = metric.upper() if isinstance(metric, str) else None
    if weight_type not in (*COORD_DIMS, EXPLICIT):
        raise UsageError(f"metric must be one of {', '.join([*COORD_DIMS, EXPLICIT])} "
                         f"(got {metric!r})")
    return weight_type


def _seconds(value) -> float | None:
    """time_limit, checked as the CLI checks --time-limit."""
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not (math.isfinite(value) and value >= 0)):
        raise UsageError(f"time_limit: seconds must be a finite number, at least 0 (got {value!r})")
    return float(value)


def _seed(value) -> int:
    """seed, checked as the CLI checks --seed."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value <= MAX_SEED:
        raise UsageError(f"seed must be a whole number from 0 to {MAX_SEED} (got {value!r})")
    return int(value)


def _typed(spec, params: dict, base: dict | None = None) -> dict:
    """``spec``'s typed values: ``base`` (auto's), then ``params`` as the CLI's -p takes
    them (each value's text, typed and checked by the solver's parameters)."""
    from .params import value_text

    texts = {}
    for key, value in params.items():
        if value is None:
            continue
        if not isinstance(value, (bool, numbers.Real, str)):
            raise UsageError(f"parameter {key}: give a number, a string or a boolean "
                             f"(got {type(value).__name__})")
        texts[key] = value_text(value)
    return {**(base or {}), **spec.typed(texts)}


__all__ = ["ProblemLike", "as_instance", "read_problem", "read_tour", "runtime", "solve", "write_tour"]
