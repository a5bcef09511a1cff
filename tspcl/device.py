"""OpenCL devices: listing, choosing, building kernels, planning memory.

A :class:`Runtime` wraps one device with a profiling-enabled queue.  Programs are built
from ``kernels_cl/`` (or from a kernel file elsewhere, such as the tests' checks, with the
headers of ``kernels_cl/`` at hand) with local ``#include "x.h"`` lines inlined in Python
(so that a driver build cache keyed on the source string sees every header edit) and
memoized per (program, defines); kernels are fetched once per program.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from .errors import DeviceMemoryError, NoDeviceError, OutputError, UsageError
from .interrupts import reclaim

DEVICE_ENV = "TSPCL_DEVICE"
INSTALL_HINT = ("no OpenCL platform found: install the CPU driver with "
                "pip install 'tspcl[pocl]' (or a GPU vendor's OpenCL ICD)")

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.M)


def kernel_dir() -> Path:
    """kernels_cl/: inside the installed package, or beside it in a source checkout."""
    here = Path(__file__).resolve().parent
    for cand in (here / "kernels_cl", here.parent / "kernels_cl"):
        if (cand / "common.h").is_file():
            return cand
    raise FileNotFoundError("kernels_cl/ not found beside the tspcl package")


def load_source(name: str | Path, seen: set[Path] | None = None) -> str:
    """Source of kernels_cl/NAME, or of the file at path NAME, with local includes inlined
    (each header once): a header is looked up beside the file that includes it, then in
    kernels_cl/."""
    seen = set() if seen is None else seen
    path = name if isinstance(name, Path) else kernel_dir() / name
    text = path.read_text()

    def inline(m: re.Match) -> str:
        beside = path.parent / m.group(1)
        header = (beside if beside.is_file() else kernel_dir() / m.group(1)).resolve()
        if header in seen:
            return ""
        seen.add(header)
        return load_source(header, seen)

    return _INCLUDE.sub(inline, text)


def _cl():
    _CACHES.prepare()
    try:
        import pyopencl as cl
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise NoDeviceError(f"pyopencl is not importable ({e}); pip install pyopencl") from e
    if _CACHES.note is not None:
        cl._PYOPENCL_NO_CACHE = True  # in case pyopencl was imported before
    return cl


def opencl():
    """The pyopencl module, its caches made usable first (see _Caches)."""
    return _cl()


def cache_note() -> str | None:
    """Why kernels are built without the usual caches in this process, or None."""
    return _CACHES.note


class _Caches:
    """PoCL finds no device when it cannot create its kernel cache folder, and pyopencl
    fails building a kernel when it cannot create its own: where the cache folder
    ($XDG_CACHE_HOME, else ~/.cache) is not writable, PoCL gets a private folder
    (removed at exit) and pyopencl's cache is turned off, and ``note`` says so."""

    def __init__(self):
        self.prepared = False
        self.note: str | None = None

    def prepare(self) -> None:
        if self.prepared:
            return
        self.prepared = True
        root = _cache_root()
        why = next(filter(None, map(_unwritable, _cache_folders(root))), None)
        if why is None:
            return
        import atexit
        import shutil
        import tempfile

        try:
            private = tempfile.mkdtemp(prefix="tspcl-pocl-cache-")
        except OSError as e:
            raise OutputError(f"cache folder {root} is not writable ({why}) and no temporary "
                              f"one can be made ({e.strerror}): point XDG_CACHE_HOME at a "
                              "writable folder") from None
        atexit.register(shutil.rmtree, private, True)
        os.environ["POCL_CACHE_DIR"] = private
        os.environ["PYOPENCL_NO_CACHE"] = "1"
        self.note = (f"cache folder {root} is not writable ({why}); kernels are built "
                     "without a cache (point XDG_CACHE_HOME at a writable folder)")


def _cache_root() -> Path:
    """Where PoCL, pyopencl and pytools keep their caches: $XDG_CACHE_HOME, else ~/.cache."""
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return Path(xdg) if xdg else Path(os.environ.get("HOME") or Path.home()) / ".cache"


def _cache_folders(root: Path) -> list[Path]:
    """PoCL's kernel cache ($POCL_CACHE_DIR where it exists, as PoCL takes it), and
    pyopencl's and pytools' folders."""
    pocl = os.environ.get("POCL_CACHE_DIR")
    pocl_folder = Path(pocl) if pocl and os.path.exists(pocl) else root / "pocl" / "kcache"
    return [pocl_folder, root / "pyopencl", root / "pytools"]


def _unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot be created or written, or None if it can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return e.strerror or str(e)
    return None if os.access(folder, os.W_OK | os.X_OK) else "Permission denied"


_CACHES = _Caches()


def all_devices() -> list:
    """Every OpenCL device of every platform, in platform order."""
    cl = _cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    devices = []
    for p in platforms:
        try:
            devices.extend(p.get_devices())
        except cl.Error:
            continue
    return devices


def is_gpu(dev) -> bool:
    return bool(dev.type & _cl().device_type.GPU)


def choose_device(spec: str | None = None):
    """Pick a device by spec: auto (GPU if any, else CPU), gpu, cpu, or P:D indices.

    ``None`` reads the TSPCL_DEVICE environment variable, then falls back to auto.
    """
    spec = (spec or os.environ.get(DEVICE_ENV) or "auto").strip().lower()
    cl = _cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    if not platforms:
        raise NoDeviceError(INSTALL_HINT)
    if re.fullmatch(r"\d+:\d+", spec):
        p, d = (int(x) for x in spec.split(":"))
        try:
            return platforms[p].get_devices()[d]
        except (IndexError, cl.Error):
            raise NoDeviceError(f"no OpenCL device {spec}; `tspcl devices` lists them") from None
    if spec not in ("auto", "gpu", "cpu"):
        raise UsageError(f"--device must be auto, gpu, cpu or P:D (got {spec!r})")
    devices = all_devices()
    gpus = [d for d in devices if is_gpu(d)]
    cpus = [d for d in devices if not is_gpu(d)]
    if spec == "gpu" and not gpus:
        raise NoDeviceError("no OpenCL GPU found (see README: 'No GPU in tspcl devices')")
    if spec == "cpu" and not cpus:
        raise NoDeviceError("no CPU OpenCL device found; pip install 'tspcl[pocl]'")
    pick = (gpus if spec in ("auto", "gpu") and gpus else cpus) or devices
    if not pick:
        raise NoDeviceError(INSTALL_HINT)
    return pick[0]


def describe(dev) -> str:
    return f"{dev.name.strip()} ({dev.platform.name.strip()})"


@dataclass(frozen=True)
class DeviceLimits:
    """The queried limits that kernels are sized from."""

    max_work_group: int
    local_mem: int
    global_mem: int
    max_alloc: int
    compute_units: int
    is_gpu: bool


class Runtime:
    """One device, its context and an in-order profiling queue, and built programs."""

    def __init__(self, device):
        cl = _cl()
        self.cl = cl
        self.device = device
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
        reclaim()  # PoCL's LLVM has put its signal handlers over tspcl's by now
        self._programs: dict = {}
        self._kernels: dict = {}

    @classmethod
    def from_spec(cls, spec: str | None = None) -> "Runtime":
        return cls(choose_device(spec))

    @property
    def name(self) -> str:
        return describe(self.device)

    @cached_property
    def limits(self) -> DeviceLimits:
        d = self.device
        return DeviceLimits(
            max_work_group=int(d.max_work_group_size), local_mem=int(d.local_mem_size),
            global_mem=int(d.global_mem_size), max_alloc=int(d.max_mem_alloc_size),
            compute_units=int(d.max_compute_units), is_gpu=is_gpu(d))

    # ---- programs and kernels -------------------------------------------------------
    def program(self, name: str | Path, defines: dict | None = None, options: tuple = ()):
        """Build (once) kernels_cl/NAME.cl, or the kernel file at path NAME, with ``-D``
        defines and further build options (none for the solvers;
        scripts/kernel_resources.py asks for a compiler report)."""
        key = (name, tuple(sorted((defines or {}).items())), tuple(options))
        prog = self._programs.get(key)
        if prog is None:
            src = load_source(name if isinstance(name, Path) else f"{name}.cl")
            opts = [f"-D{k}={v}" for k, v in key[1]] + [ARG_INFO, *options]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # compiler chatter is not the user's business
                prog = self.cl.Program(self.context, src).build(options=opts)
            reclaim()  # in case a compiler installed its signal handlers only now
            self._programs[key] = prog
        return prog

    def kernel(self, name: str | Path, kernel_name: str, defines: dict | None = None):
        """A kernel object, fetched once per (program, defines, kernel), its scalar
        arguments typed from the kernel's own declaration (`typed_arguments`)."""
        key = (name, tuple(sorted((defines or {}).items())), kernel_name)
        k = self._kernels.get(key)
        if k is None:
            k = typed_arguments(self.cl, getattr(self.program(name, defines), kernel_name))
            self._kernels[key] = k
        return k

    def work_group_size(self, kernel, want: int = 256) -> int:
        """Largest power of two <= want that the kernel and device allow."""
        cl = self.cl
        limit = min(want, self.limits.max_work_group, kernel.get_work_group_info(
            cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device))
        return 1 << (int(limit).bit_length() - 1)

    # ---- buffers --------------------------------------------------------------------
    def to_device(self, array: np.ndarray):
        mf = self.cl.mem_flags
        array = np.ascontiguousarray(array)
        if array.nbytes == 0:
            array = np.zeros(1, array.dtype)
        return self.cl.Buffer(self.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=array)

    def empty(self, nbytes: int):
        return self.cl.Buffer(self.context, self.cl.mem_flags.READ_WRITE, size=max(int(nbytes), 1))

    def read(self, buf, dtype, count: int) -> np.ndarray:
        out = np.empty(count, dtype)
        self.cl.enqueue_copy(self.queue, out, buf)
        return out

    def check_fits(self, need_bytes: int, largest_buffer: int, what: str, hint: str):
        """Refuse before allocating when the plan does not fit the device."""
        lim = self.limits
        if need_bytes > 0.9 * lim.global_mem or largest_buffer > lim.max_alloc:
            raise DeviceMemoryError(
                f"{what} needs {need_bytes / 2**20:.0f} MiB (largest buffer "
                f"{largest_buffer / 2**20:.0f} MiB) but {self.name} has "
                f"{lim.global_mem / 2**20:.0f} MiB ({lim.max_alloc / 2**20:.0f} MiB per "
                f"buffer); {hint}")


ARG_INFO = "-cl-kernel-arg-info"   # every build keeps its kernels' argument types
SCALAR_DTYPES = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
                 "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
                 "float": np.float32, "double": np.float64}


def typed_arguments(cl, kernel):
    """The kernel, told the type of each scalar argument as its OpenCL C source declares
    it (the build's argument info), so that a call passes plain Python numbers and
    pyopencl converts each to the declared type; buffers and local memory stay untyped.
    A by-value argument of another type (a struct, a vector) is refused here, not at a
    call."""
    dtypes = []
    for i in range(kernel.get_info(cl.kernel_info.NUM_ARGS)):
        if kernel.get_arg_info(i, cl.kernel_arg_info.ADDRESS_QUALIFIER) != \
                cl.kernel_arg_address_qualifier.PRIVATE:
            dtypes.append(None)
            continue
        name = kernel.get_arg_info(i, cl.kernel_arg_info.TYPE_NAME).strip().rstrip("\0")
        if name.endswith("*"):
            dtypes.append(None)
            continue
        name = re.sub(r"^unsigned\s+(char|short|int|long)$", r"u\1", name)
        if name not in SCALAR_DTYPES:
            raise TypeError(f"kernel {kernel.function_name}: argument {i} is a {name!r}, "
                            f"not a scalar type tspcl passes")
        dtypes.append(SCALAR_DTYPES[name])
    kernel.set_scalar_arg_dtypes(dtypes)
    return kernel


def round_up(x: int, m: int) -> int:
    """A launch size: x rounded up to a multiple of the work-group size m (at least m)."""
    return max(m, -(-x // m) * m)


def log(msg: str):
    """One line of diagnostics on stderr (never stdout: stdout carries data)."""
    print(msg, file=sys.stderr)
