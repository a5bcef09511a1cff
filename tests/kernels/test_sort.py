"""Bitonic sort of 64-bit keys on the device (kernels_cl/sort.cl) against np.sort."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_fixtures import rt
from tspcl.sort import padded_length, sort_keys

ALL_ONES = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def device_sort(rt, keys: np.ndarray) -> np.ndarray:
    keys = np.ascontiguousarray(keys, np.uint64)
    buf = rt.to_device(keys)
    events = sort_keys(rt, buf, len(keys))
    rt.queue.finish()
    assert all(e.command_execution_status == rt.cl.command_execution_status.COMPLETE
               for e in events)
    return rt.read(buf, np.uint64, len(keys))


def _keys(rng, length: int, flavour: str) -> np.ndarray:
    if flavour == "full-range":
        return rng.integers(0, 2**64, length, dtype=np.uint64, endpoint=False)
    if flavour == "duplicates":
        return rng.integers(0, max(2, length // 8), length).astype(np.uint64) << np.uint64(40)
    if flavour == "padded":
        # what the constructions sort: (primary << 32 | payload), ~0 padding at the end
        count = max(1, (3 * length) // 4 - 1)
        keys = np.full(length, ALL_ONES, np.uint64)
        primary = rng.integers(0, 1000, count).astype(np.uint64)
        keys[:count] = (primary << np.uint64(32)) | np.arange(count, dtype=np.uint64)
        return keys[rng.permutation(length)]
    if flavour == "top-bit":
        # straddling 2^63 catches a signed comparison
        base = np.uint64(2**63)
        off = rng.integers(-1000, 1000, length)
        return np.where(off < 0, base - np.abs(off).astype(np.uint64),
                        base + off.astype(np.uint64)).astype(np.uint64)
    if flavour == "sorted":
        return np.sort(rng.integers(0, 2**64, length, dtype=np.uint64))
    if flavour == "reversed":
        return np.sort(rng.integers(0, 2**64, length, dtype=np.uint64))[::-1].copy()
    if flavour == "constant":
        return np.full(length, np.uint64(12345), np.uint64)
    raise ValueError(flavour)


FLAVOURS = ["full-range", "duplicates", "padded", "top-bit", "sorted", "reversed", "constant"]


@pytest.mark.parametrize("log2", range(1, 17))
def test_bitonic_sort_matches_numpy(rt, log2):
    length = 1 << log2
    rng = np.random.default_rng(log2)
    for flavour in FLAVOURS:
        keys = _keys(rng, length, flavour)
        got = device_sort(rt, keys)
        want = np.sort(keys)
        assert np.array_equal(got, want), (
            f"length {length} ({flavour}): first difference at "
            f"{int(np.flatnonzero(got != want)[0])}")


def test_sort_extremes(rt):
    keys = np.array([ALL_ONES, 0, 2**63, 2**63 - 1, 1, ALL_ONES - np.uint64(1), 2**32, 2**32 - 1],
                    np.uint64)
    assert np.array_equal(device_sort(rt, keys), np.sort(keys))


@pytest.mark.parametrize("count,length", [(1, 2), (2, 2), (3, 4), (4, 4), (5, 8), (1000, 1024),
                                          (1025, 2048), (65536, 65536), (65537, 131072)])
def test_padded_length(count, length):
    assert padded_length(count) == length
