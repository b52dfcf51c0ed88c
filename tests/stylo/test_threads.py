"""``blas_limit``: threadpoolctl's BLAS limit with the list of libraries kept between calls;
``map_parallel`` and ``kernel_threads``, which run the ``nogil`` kernels' blocks; no kernel on
Numba's own thread pool."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import types

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from stylo import _threads
from stylo._threads import blas_limit, kernel_threads, map_blocks, map_parallel


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_limits_blas_inside_and_restores_it_after():
    np.ones((4, 4)) @ np.ones((4, 4))  # BLAS loaded
    before = _blas_threads()
    assert before, "no BLAS library found to limit"
    with blas_limit(1):
        assert _blas_threads() == [1] * len(before)
    assert _blas_threads() == before


def test_the_library_list_is_kept_until_a_module_is_imported(monkeypatch):
    with blas_limit(1):
        pass
    kept = _threads._found[0]
    with blas_limit(1):
        pass
    assert _threads._found[0] is kept
    # a new extension module may bring a BLAS of its own: the libraries are listed again
    monkeypatch.setitem(sys.modules, "stylo_test_new_module", types.ModuleType("x"))
    with blas_limit(1):
        pass
    assert _threads._found[0] is not kept


def test_map_parallel_keeps_the_items_order_on_any_number_of_threads():
    items = list(range(37))
    for n_threads in (1, 2, 5):
        assert map_parallel(lambda i: i * i, items, n_threads) == [i * i for i in items]
    assert map_parallel(lambda i: i, range(0), 2) == []


@pytest.mark.parametrize("n", [0, 1, 5, 37])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_map_blocks_cover_the_range_in_order_in_at_most_four_blocks_a_thread(n, n_threads):
    got = map_blocks(lambda lo, hi: (lo, hi), n, n_threads)
    assert len(got) == min(n, 4 * n_threads)
    assert [b for _, b in got[:-1]] == [a for a, _ in got[1:]]  # contiguous, in order
    if n:
        assert got[0][0] == 0 and got[-1][1] == n and all(a < b for a, b in got)
        assert all(isinstance(a, np.int64) for pair in got for a in pair)


def test_kernel_threads_follow_joblib_within_numbas_cores(monkeypatch):
    import numba

    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 4)
    assert kernel_threads(None) == 4
    assert [kernel_threads(n) for n in (1, 3, 4, 9, -1, -2, -9)] == [1, 3, 4, 4, 4, 3, 1]
    for bad in (0, 1.5, "2", True):
        with pytest.raises(ValueError, match="n_jobs must be a non-zero int or None"):
            kernel_threads(bad)


def _modules(package: str):
    root = importlib.import_module(package)
    yield root
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        try:
            yield importlib.import_module(info.name)
        except ImportError:  # an optional extra (torch, llama.cpp) not installed
            continue


def test_no_kernel_runs_on_numbas_own_thread_pool():
    # a parallel=True kernel starts Numba's threading layer (OpenMP by default), whose idle
    # threads fought torch's own OpenMP over the cores: a later torch cell in the same worker
    # took 83-98 s instead of 7 s. Kernels release the GIL and run on map_parallel instead.
    from numba.core.registry import CPUDispatcher

    kernels = {
        f"{module.__name__}.{name}": obj
        for package in ("stylo", "baselines")
        for module in _modules(package)
        for name, obj in vars(module).items()
        if isinstance(obj, CPUDispatcher)
    }
    assert len(kernels) > 40  # the scan reaches them
    assert [name for name, k in kernels.items() if k.targetoptions.get("parallel")] == []
