"""Fitting the verifiers' small models with one BLAS thread."""

from __future__ import annotations

from stylo._threads import blas_limit

__all__ = ["fit_one_thread"]


def fit_one_thread(model, X, y):
    """``model.fit(X, y)`` with BLAS capped at one thread; returns what ``fit`` returns.

    The logistic maps of the verifiers fit one to a few features, where BLAS threads buy
    nothing, while OpenBLAS's threads spin for about 0.1 s after a threaded call: a parallel
    Numba kernel started in that window (scoring right after fitting) loses a core to them.
    Measured on 2 cores: PPM on PAN15-en's 500 test pairs took 0.16 s when scored right after
    ``fit``, 0.105 s with the fit here (``benchmarks.bench_pancode_baselines``).
    """
    with blas_limit(1):
        return model.fit(X, y)
