"""Device sort of 64-bit keys (kernels_cl/sort.cl), for constructions that order cities."""

from __future__ import annotations

import numpy as np


def padded_length(count: int) -> int:
    return 1 << max(1, (count - 1).bit_length())


def sort_keys(rt, keys, length: int) -> list:
    """Sort ``length`` (a power of two) ulong keys in the buffer in place; returns events."""
    k_step = rt.kernel("sort", "bitonic_step")
    events = []
    half = length // 2
    k = 2
    while k <= length:
        j = k // 2
        while j >= 1:
            events.append(k_step(rt.queue, (half,), None, keys, k, j))
            j //= 2
        k *= 2
    return events
