"""Open-addressing hash tables and growable arrays, shared by the counting and token kernels.

A table of ``2**k`` int64 slots holds ``tag << 32 | id + 1`` per key (0 = empty), ``tag`` the
high 31 bits of the key's mixed hash and its home slot ``tag >> (31 - k)``: rehashing needs no
keys, and probes of other keys mostly fail without reading the keys.
"""

from __future__ import annotations

import numba
import numpy as np

HASH_MUL = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: spreads packed keys


@numba.njit(cache=True, nogil=True, inline="always")
def tag(key):
    """The high 31 bits of ``key``'s mixed hash (see the module docstring)."""
    h = np.uint64(key)
    h ^= h >> np.uint64(31)
    h *= HASH_MUL
    h ^= h >> np.uint64(29)
    return np.int64(h >> np.uint64(33))


@numba.njit(cache=True, nogil=True, inline="always")
def probe(tab, keys, key, key_tag, shift, mask):
    """The slot of ``key`` (tag ``key_tag``) in ``tab``, or the empty slot where it would go."""
    g = key_tag >> shift
    while True:
        s = tab[g]
        if s == 0 or (s >> 32) == key_tag and keys[(s & 0xFFFFFFFF) - 1] == key:
            return g
        g = (g + 1) & mask


@numba.njit(cache=True, nogil=True, inline="always")
def slot_id(s):
    return (s & 0xFFFFFFFF) - 1


@numba.njit(cache=True, nogil=True)
def rehash(tab, new_cap, shift):
    """``tab``'s slots in a table of ``new_cap`` slots whose homes are ``tag >> shift``."""
    out = np.zeros(new_cap, dtype=np.int64)
    mask = new_cap - 1
    for i in range(tab.shape[0]):
        s = tab[i]
        if s != 0:
            h = (s >> 32) >> shift
            while out[h] != 0:
                h = (h + 1) & mask
            out[h] = s
    return out


@numba.njit(cache=True, nogil=True)
def grow(arr, need):
    """``arr``, or a copy of it with room for at least ``need`` items (and at least twice
    its size, so that growing item by item costs linear time)."""
    if need <= arr.shape[0]:
        return arr
    cap = max(need, 2 * arr.shape[0])
    out = np.empty(cap, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out
