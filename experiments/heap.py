"""Keep freed memory in the process that runs grid cells, for its next cell to reuse.

glibc's malloc gives every large block (from 128 kB up, its mmap threshold adapting up to 32 MB)
its own memory map and unmaps it when freed, and trims freed memory off the top of its heap. A
cell allocates and frees arrays of tens to hundreds of MB again and again (pair features, count
matrices, Gram matrices), so each one is faulted in page by page afresh. On a virtual machine
that reports freed pages to its host (this project's machines do, about 2 s after the free),
each of those faults goes to the host: building 1,000 Guardian pair rows for ``logreg-pair``
(170 MB) took 0.8-1.3 s when the previous one had been freed 3 s before, and 0.13-0.16 s when
malloc kept the memory (``MALLOC_MMAP_MAX_=0``, ``MALLOC_TRIM_THRESHOLD_`` above any size). The
same setting in the quick run's workers: 65.9 worker-seconds against 71.0 (medians of three
interleaved runs; ``logreg-pair`` 4.2 against 6.9).

The cost is that a worker's resident memory stays at its peak until it exits (loky restarts a
worker whose memory grew past ``runner.WORKER_MEMORY_GROWTH``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

__all__ = ["keep_freed_memory"]

# glibc's <malloc.h> parameter numbers
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
#: mallopt takes a C int: free memory at the heap's top is handed back only beyond 2 GB
_TRIM_ABOVE = 2**31 - 1


def keep_freed_memory() -> bool:
    """Make this process's malloc serve large blocks from its heap and keep up to 2 GB of
    free memory at the heap's top (glibc's ``mallopt``). Returns whether it did: False where
    the C library is not glibc (macOS, musl), which keep their own policy."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_ABOVE))
