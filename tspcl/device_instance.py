"""An Instance uploaded to a device: coordinate or matrix buffer plus its build defines."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .buffers import BufferPlan
from .device import Runtime, round_up
from .instance import Instance

PAIR_BATCH = 1 << 22  # pairs per pair_distances launch


def instance_plan(inst: Instance) -> BufferPlan:
    """The buffers DeviceInstance uploads: coordinates and matrix, one element where the
    instance has none."""
    coords, matrix = inst.device_coords, inst.matrix
    return (BufferPlan()
            .add("coords", np.float64 if coords is None else coords.dtype,
                 1 if coords is None else coords.size)
            .add("matrix", np.int32 if matrix is None else matrix.dtype,
                 1 if matrix is None else matrix.size))


class DeviceInstance:
    """Buffers every distance-using kernel takes first (``DIST_PARAMS`` in distance.h)."""

    def __init__(self, rt: Runtime, inst: Instance):
        self.rt = rt
        self.inst = inst
        self.n = inst.n
        coords = inst.device_coords
        self.coords = rt.to_device(coords if coords is not None else np.zeros(1))
        self.matrix = rt.to_device(inst.matrix if inst.matrix is not None
                                   else np.zeros(1, np.int32))
        self.defines = {"METRIC": inst.metric_code}

    @property
    def dist_args(self) -> tuple:
        return (self.coords, self.matrix, self.n)

    def kernel(self, program: str, name: str, **extra_defines):
        return self.rt.kernel(program, name, {**self.defines, **extra_defines})

    def pair_distances(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Device distances of city pairs (a[t], b[t]); used to prove device == host."""
        rt = self.rt
        k = self.kernel("distance", "pair_distances")
        out = np.empty(len(a), np.int32)
        for s in range(0, len(a), PAIR_BATCH):
            aa = np.ascontiguousarray(a[s:s + PAIR_BATCH], np.int32)
            bb = np.ascontiguousarray(b[s:s + PAIR_BATCH], np.int32)
            cnt = len(aa)
            ob = rt.empty(4 * cnt)
            k(rt.queue, (round_up(cnt, 256),), None, *self.dist_args,
              rt.to_device(aa), rt.to_device(bb), ob, cnt)
            out[s:s + cnt] = rt.read(ob, np.int32, cnt)
        return out

    def tour_length(self, tour_buf) -> int:
        """Length of the tour in a device buffer (int32 order), reduced on the device."""
        rt = self.rt
        k = self.kernel("distance", "tour_length")
        wg = rt.work_group_size(k, 256)
        groups = max(1, min(self.num_groups, -(-self.n // wg)))
        partial = rt.empty(8 * groups)
        k(rt.queue, (groups * wg,), (wg,), *self.dist_args, tour_buf, partial,
          rt.cl.LocalMemory(8 * wg))
        return int(rt.read(partial, np.int64, groups).sum())

    @cached_property
    def num_groups(self) -> int:
        return 4 * self.rt.limits.compute_units


