"""Device buffers planned once.

A solver describes its device buffers as a `BufferPlan`: each buffer's name, element type
and element count.  The same plan answers the memory check before anything is allocated
(run.plan_memory, `tspcl info`: `nbytes` and `largest`) and makes the buffers
(`allocate`), so what is checked is what is allocated.  Where a count depends on the
device (local memory, compute units), the plan takes the device's `DeviceLimits`, and
without them (`tspcl info`, which opens no device) plans the largest count any device
would get.

    plan = BufferPlan().add("tours", np.int32, ants * n).add("lengths", np.int64, ants)
    plan.nbytes                     # what the memory check adds up
    bufs = plan.allocate(rt)        # bufs.tours, bufs.lengths: pyopencl buffers
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np


@dataclass(frozen=True)
class Planned:
    """One buffer of a plan: its element type and how many elements (at least one is
    allocated, as OpenCL has no empty buffers)."""

    dtype: np.dtype
    count: int

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize * max(int(self.count), 1)


@dataclass(frozen=True)
class BufferPlan:
    """Named device buffers (name -> Planned), in the order they were added."""

    buffers: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def add(self, name: str, dtype, count: int) -> "BufferPlan":
        """This plan and one more buffer of `count` elements of `dtype`."""
        if name in self.buffers:
            raise ValueError(f"buffer {name!r} is planned twice")
        if count < 0:
            raise ValueError(f"buffer {name!r}: {count} elements")
        return BufferPlan(MappingProxyType({**self.buffers,
                                            name: Planned(np.dtype(dtype), int(count))}))

    def merge(self, other: "BufferPlan") -> "BufferPlan":
        """Both plans' buffers (names must not clash)."""
        plan = self
        for name, b in other.buffers.items():
            plan = plan.add(name, b.dtype, b.count)
        return plan

    @property
    def nbytes(self) -> int:
        """The bytes of all buffers together."""
        return sum(b.nbytes for b in self.buffers.values())

    @property
    def largest(self) -> int:
        """The bytes of the largest buffer (0 for an empty plan)."""
        return max((b.nbytes for b in self.buffers.values()), default=0)

    def allocate(self, rt) -> "Buffers":
        """Every planned buffer on rt's device, uninitialised."""
        return Buffers({name: rt.empty(b.nbytes) for name, b in self.buffers.items()})


class Buffers:
    """A plan's buffers, by name as attributes (``bufs.tours``)."""

    def __init__(self, made: dict):
        self.__dict__.update(made)

    def __repr__(self) -> str:
        return f"Buffers({', '.join(self.__dict__)})"


__all__ = ["BufferPlan", "Buffers", "Planned"]
