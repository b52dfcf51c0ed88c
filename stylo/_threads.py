"""BLAS thread limits that do not re-read the process's libraries at every call."""

from __future__ import annotations

import sys

from threadpoolctl import ThreadpoolController

__all__ = ["blas_limit"]

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
