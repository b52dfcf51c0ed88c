"""The small-model fit helper caps BLAS at one thread, only while it fits."""

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_info

from baselines._blas import fit_one_thread


def _blas_threads() -> list[int]:
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


class _Probe:
    def fit(self, X, y):
        self.threads_ = _blas_threads()
        return self


def test_fit_runs_with_one_blas_thread_and_restores_the_limit():
    before = _blas_threads()
    probe = fit_one_thread(_Probe(), None, None)
    assert probe.threads_ and set(probe.threads_) == {1}
    assert _blas_threads() == before


def test_fit_result_is_the_plain_fit():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), rng.random(60) < 0.5
    a = fit_one_thread(LogisticRegression(), X, y)
    b = LogisticRegression().fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
