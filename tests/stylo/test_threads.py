"""``blas_limit``: threadpoolctl's BLAS limit with the list of libraries kept between calls."""

from __future__ import annotations

import sys
import types

import numpy as np
from threadpoolctl import threadpool_info

from stylo import _threads
from stylo._threads import blas_limit


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
