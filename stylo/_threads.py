"""Threads: BLAS limits that do not re-read the process's libraries at every call, and the
threads that run a ``nogil`` kernel's blocks."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral

import numba
import numpy as np
from threadpoolctl import ThreadpoolController

__all__ = ["blas_limit", "kernel_threads", "map_blocks", "map_parallel"]

#: the controller and how many modules were imported when it listed the thread pools
_found: tuple[ThreadpoolController, int] | None = None


def blas_limit(n_threads: int):
    """A context manager capping every BLAS library at ``n_threads`` threads, restoring the
    previous limits on exit (``threadpoolctl.threadpool_limits(n_threads, "blas")``).

    ``threadpool_limits`` lists the process's thread-pool libraries at every call (about
    2.6 ms here, walking every loaded shared object), more than the small products it wraps
    take: 495 calls in one worker's 15 ``ensemble`` cells were 1.9 of their 39 s. The list is
    kept instead, and taken again whenever a module was imported since, as a new BLAS comes
    only with a new extension module (0.02 ms a call otherwise)."""
    global _found
    if _found is None or _found[1] != len(sys.modules):
        _found = (ThreadpoolController(), len(sys.modules))
    return _found[0].limit(limits=n_threads, user_api="blas")


def map_parallel(fn, items, n_threads: int) -> list:
    """``[fn(it) for it in items]``, on ``n_threads`` threads (the kernels release the GIL)."""
    items = list(items)
    if n_threads == 1 or len(items) <= 1:
        return [fn(it) for it in items]
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        return list(pool.map(fn, items))


def map_blocks(fn, n: int, n_threads: int) -> list:
    """``fn(lo, hi)`` for even blocks ``lo:hi`` (int64 bounds) of ``range(n)``, up to four a
    thread so that one slow block does not hold the others up, in block order, on
    ``n_threads`` threads (``map_parallel``); no block when ``n`` is 0."""
    bounds = np.linspace(0, n, min(n, 4 * n_threads) + 1).astype(np.int64)
    return map_parallel(lambda i: fn(bounds[i], bounds[i + 1]), range(len(bounds) - 1), n_threads)


def kernel_threads(n_jobs: int | None) -> int:
    """Threads for the blocks of a ``nogil`` Numba kernel: None every core Numba may use
    (``NUMBA_NUM_THREADS``, what its parallel kernels took by default), a negative number
    joblib's convention (-1: every core), never more than those cores."""
    limit = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        return limit
    if not isinstance(n_jobs, Integral) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero int or None, got {n_jobs!r}")
    return max(1, min(limit, int(n_jobs) if n_jobs > 0 else limit + 1 + int(n_jobs)))
