"""Delta (Burrows 2002 and descendants): distances between z-scored most-frequent-feature
profiles, each variant one small class on one kernel.

Fit :class:`DeltaScaler` on a reference corpus, transform both sides, then compare rows with a
:class:`Delta` (``BurrowsDelta().pairwise(Z1, Z2)``, ``.paired(Z1, Z2)``), or by name with
``pairwise_delta(Z1, Z2, kind)`` / ``paired_delta``; ``DELTAS`` maps the names to the classes.
Distances: lower = more similar. With z-scores ``a`` and ``b`` of length k (columns ordered
by decreasing frequency, as ``DeltaScaler`` orders them):

- ``burrows``: ``mean_k |a_k - b_k|`` (Burrows 2002)
- ``argamon``: ``sqrt(sum_k (a_k - b_k)^2)``, Argamon's quadratic Delta as a Euclidean
  distance (Argamon 2008)
- ``eder``: ``(1/k) sum_i |a_i - b_i| (k - i) / k`` for the i-th column (i = 0 .. k-1), so
  frequent features weigh more (Eder 2015, R ``stylo``'s ``dist.eder``)
- ``cosine``: ``1 - cos(a, b)``, 1 when a vector is all zero (Smith & Aldridge 2011; Jannidis
  et al. 2015)
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import (
    _check_feature_names_in,
    check_is_fitted,
    check_non_negative,
    validate_data,
)

from stylo._threads import map_blocks
from stylo.features._validation import effective_n_jobs

__all__ = [
    "DELTAS",
    "ArgamonDelta",
    "BurrowsDelta",
    "CosineDelta",
    "Delta",
    "DeltaScaler",
    "EderDelta",
    "WeightedManhattanDelta",
    "get_delta",
    "paired_delta",
    "pairwise_delta",
    "standardise",
]

_CONSTANT = 1e-12  # a standard deviation of relative frequencies this small is rounding noise


def standardise(freqs: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """z-scores ``(freqs - mean) / std`` of relative frequencies (n_docs, k) against a
    reference's per-column ``mean`` and ``std`` (k,); 0 in a column whose ``std`` is rounding
    noise (the reference has it constant)."""
    varies = std > _CONSTANT
    return np.where(varies, (freqs - mean) / np.where(varies, std, 1.0), 0.0)


class DeltaScaler(TransformerMixin, BaseEstimator):
    """z-scores of relative frequencies of the most frequent features (Burrows' Delta input).

    ``fit`` takes a non-negative count matrix (n_docs, n_features), dense or sparse, e.g. from
    ``WordNgrams``: each row is divided by its total (relative frequencies; an all-zero row
    stays zero), the ``max_features`` columns with the highest mean relative frequency are
    kept, ordered by decreasing mean frequency (so column k has frequency rank k + 1, which
    Eder's Delta uses), and their mean and standard deviation (``ddof``, default 1 as in R
    ``stylo``) are stored. ``transform`` returns the dense (n_docs, k) float64 array
    ``(freq - mean_) / std_``; a feature with no deviation in the reference (std <= 1e-12,
    relative frequencies being <= 1, so rounding noise of a constant column) gets z = 0.
    Ties in mean frequency (equal to 12 decimals) are broken by column index.

    Input is checked as scikit-learn's estimators check it (2-D, finite, at least ``ddof + 1``
    rows, non-negative, the fitted number of columns; a DataFrame's column names are kept in
    ``feature_names_in_``), and ``get_feature_names_out`` names the kept columns, so that
    ``set_output(transform="pandas")`` works. It passes ``check_estimator``.
    """

    def __init__(self, max_features=None, ddof=1):
        self.max_features = max_features
        self.ddof = ddof

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True  # counts
        return tags

    def _relative(self, X, reset):
        """Checked ``X`` (CSR float64) divided by its row totals."""
        X = validate_data(
            self,
            X,
            reset=reset,
            accept_sparse="csr",
            dtype=np.float64,
            ensure_min_samples=self.ddof + 1 if reset else 1,
        )
        check_non_negative(X, "DeltaScaler")
        X = sp.csr_matrix(X)
        totals = np.asarray(X.sum(axis=1)).ravel()
        totals[totals == 0] = 1.0
        return sp.diags(1.0 / totals) @ X

    def fit(self, X, y=None):
        """Learn the kept columns (``columns_``), ``mean_`` and ``std_`` from counts ``X``."""
        mf = self.max_features
        if mf is not None and (
            isinstance(mf, bool) or not isinstance(mf, (int, np.integer)) or mf < 1
        ):
            raise ValueError(f"max_features must be a positive int or None, got {mf!r}")
        if self.ddof not in (0, 1):
            raise ValueError(f"ddof must be 0 or 1, got {self.ddof!r}")
        F = self._relative(X, reset=True)
        mean = np.asarray(F.mean(axis=0)).ravel()
        # means equal to 12 decimals are ties (summation order must not decide the ranking)
        order = np.lexsort((np.arange(mean.shape[0]), -np.round(mean, 12)))
        self.columns_ = order[:mf] if mf is not None else order
        dense = F[:, self.columns_].toarray()
        self.mean_ = dense.mean(axis=0)
        self.std_ = dense.std(axis=0, ddof=self.ddof)
        return self

    def frequencies(self, X):
        """Relative frequencies of the kept columns, dense (n_docs, len(columns_)): what
        ``transform`` z-scores."""
        check_is_fitted(self, "columns_")
        return self._relative(X, reset=False)[:, self.columns_].toarray()

    def transform(self, X):
        """Dense z-scores, shape (n_docs, len(columns_))."""
        return standardise(self.frequencies(X), self.mean_, self.std_)

    def get_feature_names_out(self, input_features=None):
        """Names of the kept columns in output order: ``input_features``, else the fitted
        DataFrame's column names, else ``x0 .. x{n_features_in_ - 1}``, taken at
        ``columns_``."""
        check_is_fitted(self, "columns_")
        return _check_feature_names_in(self, input_features)[self.columns_]


def _check_z(Z1, Z2, paired):
    """Both z-score blocks as C-contiguous float64 2-D arrays with the same, non-zero number
    of columns (and rows, if ``paired``), finite."""
    Z1 = np.asarray(Z1.toarray() if sp.issparse(Z1) else Z1, dtype=np.float64)
    Z2 = np.asarray(Z2.toarray() if sp.issparse(Z2) else Z2, dtype=np.float64)
    if Z1.ndim != 2 or Z2.ndim != 2 or Z1.shape[1] != Z2.shape[1] or Z1.shape[1] == 0:
        raise ValueError(
            f"Z1 and Z2 must be 2-D with the same, non-zero number of columns; "
            f"got {Z1.shape} and {Z2.shape}"
        )
    if paired and Z1.shape[0] != Z2.shape[0]:
        raise ValueError(
            f"paired_delta needs as many rows in Z1 ({Z1.shape[0]}) as in Z2 ({Z2.shape[0]})"
        )
    if not (np.isfinite(Z1).all() and np.isfinite(Z2).all()):
        raise ValueError("z-scores contain NaN or infinity")
    return np.ascontiguousarray(Z1), np.ascontiguousarray(Z2)


class Delta:
    """A Delta distance between rows of z-scores (from :class:`DeltaScaler`).

    ``pairwise(Z1, Z2)`` gives every row of Z1 against every row of Z2, (n_1, n_2);
    ``paired(Z1, Z2)`` row i against row i, (n,). Both check their input once, here; a
    variant overrides the kernels ``_pairwise`` and ``_paired`` (or, for a weighted
    Manhattan distance, only ``weights``), which get checked float64 arrays.
    """

    #: the name ``pairwise_delta``, the registry and the CLI know the variant by
    name = ""

    def pairwise(self, Z1, Z2, n_jobs=None) -> np.ndarray:
        """Distance of every row of ``Z1`` to every row of ``Z2``, shape (n_1, n_2)."""
        A, B = _check_z(Z1, Z2, paired=False)
        return self._pairwise(A, B, effective_n_jobs(n_jobs))

    def paired(self, Z1, Z2) -> np.ndarray:
        """Distance of row i of ``Z1`` to row i of ``Z2``, shape (n,)."""
        A, B = _check_z(Z1, Z2, paired=True)
        return self._paired(A, B)

    def _pairwise(self, A, B, n_jobs):
        """The (n_a, n_b) distances of checked arrays, on up to ``n_jobs`` threads."""
        raise NotImplementedError

    def _paired(self, A, B):
        """The (n,) distances of aligned rows of checked arrays."""
        raise NotImplementedError


@numba.njit(cache=True, nogil=True)
def _weighted_l1_block(A, B, w, r0, r1):
    out = np.empty((r1 - r0, B.shape[0]))
    for r in range(r0, r1):
        for c in range(B.shape[0]):
            acc = 0.0
            for k in range(A.shape[1]):
                acc += w[k] * abs(A[r, k] - B[c, k])
            out[r - r0, c] = acc
    return out


class WeightedManhattanDelta(Delta):
    """``sum_i w_i |a_i - b_i|`` with a weight per frequency rank (``weights``): the shared
    kernels of Burrows' and Eder's Delta."""

    def weights(self, k: int) -> np.ndarray:
        """The k weights, most frequent column first."""
        raise NotImplementedError

    def _pairwise(self, A, B, n_jobs):
        w = self.weights(A.shape[1])
        if A.shape[0] == 0:
            return np.zeros((0, B.shape[0]))
        blocks = map_blocks(lambda lo, hi: _weighted_l1_block(A, B, w, lo, hi), A.shape[0], n_jobs)
        return np.concatenate(blocks, axis=0)

    def _paired(self, A, B):
        return np.abs(A - B) @ self.weights(A.shape[1])


class BurrowsDelta(WeightedManhattanDelta):
    """Burrows' Delta (2002): the mean absolute difference of z-scores."""

    name = "burrows"

    def weights(self, k):
        return np.full(k, 1.0 / k)


class EderDelta(WeightedManhattanDelta):
    """Eder's Delta (2015): |z_a - z_b| weighted by (k - rank + 1) / k, rank 1 = most
    frequent, averaged over the k columns."""

    name = "eder"

    def weights(self, k):
        return (k - np.arange(k)) / k / k


class ArgamonDelta(Delta):
    """Argamon's quadratic Delta (2008) as a Euclidean distance of z-scores."""

    name = "argamon"

    def _pairwise(self, A, B, n_jobs):
        return cdist(A, B, "euclidean")

    def _paired(self, A, B):
        return np.sqrt(((A - B) ** 2).sum(axis=1))


class CosineDelta(Delta):
    """Cosine (Wuerzburg) Delta: ``1 - cos(z_a, z_b)``, 1 when a vector is all zero."""

    name = "cosine"

    def _pairwise(self, A, B, n_jobs):
        na = np.linalg.norm(A, axis=1)
        nb = np.linalg.norm(B, axis=1)
        den = np.outer(na, nb)
        return 1.0 - np.divide(A @ B.T, den, out=np.zeros(den.shape), where=den > 0)

    def _paired(self, A, B):
        na = np.linalg.norm(A, axis=1) * np.linalg.norm(B, axis=1)
        dots = np.einsum("ij,ij->i", A, B)
        return 1.0 - np.divide(dots, na, out=np.zeros(na.shape), where=na > 0)


#: Delta variants by name, in the order the reports list them
DELTAS: dict[str, type[Delta]] = {
    cls.name: cls for cls in (BurrowsDelta, ArgamonDelta, EderDelta, CosineDelta)
}


def get_delta(kind: str) -> Delta:
    """The Delta variant called ``kind`` (a key of ``DELTAS``)."""
    if kind not in DELTAS:
        raise ValueError(f"unknown delta kind {kind!r}; expected one of {tuple(DELTAS)}")
    return DELTAS[kind]()


def pairwise_delta(Z1, Z2, kind="burrows", n_jobs=None):
    """Delta distance of every row of Z1 to every row of Z2 (z-scores from ``DeltaScaler``),
    shape (n_1, n_2), for the variant ``kind`` (see the module docstring)."""
    return get_delta(kind).pairwise(Z1, Z2, n_jobs)


def paired_delta(Z1, Z2, kind="burrows"):
    """Delta distance of row i of Z1 to row i of Z2, shape (n,); see :func:`pairwise_delta`."""
    return get_delta(kind).paired(Z1, Z2)
