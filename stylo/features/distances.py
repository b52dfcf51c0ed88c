"""Similarity and distance kernels between rows of feature matrices, for the verifiers.

Sparse kernels (CSR input, any numeric dtype, computed in float64):

* ``paired_*(X, Y)`` compares row i of X with row i of Y -> shape (n,).
* ``pairwise_*(X, Y)`` compares every row of X with every row of Y -> shape (n_x, n_y).

``minmax`` is the Ruzicka (min-max) SIMILARITY ``sum_j min(x_j, y_j) / sum_j max(x_j, y_j)``
for non-negative vectors (negative entries raise ``ValueError``); it is defined as 0 when both
rows are all zero. ``cosine`` is the cosine SIMILARITY, 0 when either row is all zero.
``manhattan`` is the L1 DISTANCE ``sum_j |x_j - y_j|``.

Delta (Burrows 2002 and descendants) works on z-scored relative frequencies of the most
frequent features: fit :class:`DeltaScaler` on a reference corpus, transform both sides, then
``pairwise_delta`` / ``paired_delta`` (distances: lower = more similar).

How (``numba`` ``nogil`` kernels, blocks of x rows on ``n_jobs`` threads): all-vs-all walks an
inverted index of Y (its CSC form) from each x non-zero, so only common non-zeros cost work;
paired merges the two sorted column lists of each row pair. Plain Python references
of every kernel are in ``_reference`` and tests check they agree.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import (_check_feature_names_in, check_is_fitted,
                                      check_non_negative, validate_data)
from threadpoolctl import threadpool_limits

from stylo.features._validation import effective_n_jobs

__all__ = ["paired_minmax", "paired_cosine", "paired_manhattan", "pairwise_minmax",
           "pairwise_cosine", "pairwise_manhattan", "DeltaScaler", "pairwise_delta",
           "paired_delta"]

_MINMAX, _COSINE, _MANHATTAN, _DOT = 0, 1, 2, 3


@numba.njit(cache=True, nogil=True, inline="always")
def _finish(kind, acc, x_sum, x_l1, x_sq, y_sum, y_l1, y_sq):
    if kind == _MINMAX:
        den = x_sum + y_sum - acc  # sum max = sum x + sum y - sum min
        return acc / den if den > 0 else 0.0
    if kind == _COSINE:
        den = np.sqrt(x_sq) * np.sqrt(y_sq)
        return acc / den if den > 0 else 0.0
    if kind == _DOT:
        return acc
    # |x - y| summed over the union = |x|_1 + |y|_1 + correction on common columns
    return max(x_l1 + y_l1 + acc, 0.0)


@numba.njit(cache=True, nogil=True, inline="always")
def _common(kind, xv, yv):
    if kind == _MINMAX:
        return min(xv, yv)
    if kind == _COSINE or kind == _DOT:
        return xv * yv
    return abs(xv - yv) - abs(xv) - abs(yv)


@numba.njit(cache=True, nogil=True)
def _row_stats(data, indptr):
    n = indptr.shape[0] - 1
    s = np.zeros(n)
    l1 = np.zeros(n)
    sq = np.zeros(n)
    for r in range(n):
        for k in range(indptr[r], indptr[r + 1]):
            v = data[k]
            s[r] += v
            l1[r] += abs(v)
            sq[r] += v * v
    return s, l1, sq


@numba.njit(cache=True, nogil=True)
def _pairwise_block(kind, xd, xi, xp, yd, yrow, ycol_ptr, n_y, skip, r0, r1, xs, ys):
    """Rows r0:r1 of X against all rows of Y -> (r1 - r0, n_y) array, ignoring the columns
    where ``skip`` is true.

    Y comes column-wise (CSC: ``ycol_ptr``, row ids ``yrow``), an inverted index: each x
    non-zero visits only the y rows sharing its column, so work is the number of common
    non-zeros, as in a sparse matrix product.
    """
    out = np.empty((r1 - r0, n_y))
    acc = np.zeros(n_y)
    for r in range(r0, r1):
        acc[:] = 0.0
        for k in range(xp[r], xp[r + 1]):
            j = xi[k]
            if skip[j]:
                continue
            xv = xd[k]
            for t in range(ycol_ptr[j], ycol_ptr[j + 1]):
                acc[yrow[t]] += _common(kind, xv, yd[t])
        for c in range(n_y):
            out[r - r0, c] = _finish(kind, acc[c], xs[0][r], xs[1][r], xs[2][r],
                                     ys[0][c], ys[1][c], ys[2][c])
    return out


@numba.njit(cache=True, nogil=True)
def _paired_block(kind, xd, xi, xp, yd, yi, yp, r0, r1, xs, ys):
    """Row i of X against row i of Y for i in r0:r1, by merging the sorted column lists."""
    out = np.empty(r1 - r0)
    for r in range(r0, r1):
        acc = 0.0
        a = xp[r]
        b = yp[r]
        while a < xp[r + 1] and b < yp[r + 1]:
            if xi[a] == yi[b]:
                acc += _common(kind, xd[a], yd[b])
                a += 1
                b += 1
            elif xi[a] < yi[b]:
                a += 1
            else:
                b += 1
        out[r - r0] = _finish(kind, acc, xs[0][r], xs[1][r], xs[2][r],
                              ys[0][r], ys[1][r], ys[2][r])
    return out


def _as_csr(X, name, kind):
    X = sp.csr_matrix(X, dtype=np.float64)
    if not X.has_canonical_format or (X.data == 0).any():
        X = X.copy()  # never modify the caller's arrays
        X.sum_duplicates()  # sorted columns, no duplicates
        X.eliminate_zeros()
    if not np.all(np.isfinite(X.data)):
        raise ValueError(f"{name} contains NaN or infinity")
    if kind == _MINMAX and X.data.size and X.data.min() < 0:
        raise ValueError(f"{name} has negative entries: min-max similarity needs "
                         "non-negative features (counts or frequencies)")
    return X


def _check(kind, X, Y, paired):
    X = _as_csr(X, "X", kind)
    Y = _as_csr(Y, "Y", kind)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}")
    if paired and X.shape[0] != Y.shape[0]:
        raise ValueError(f"paired kernels need as many rows in X ({X.shape[0]}) as in Y "
                         f"({Y.shape[0]})")
    return X, Y


def _run(kind, X, Y, paired, n_jobs, skip=None):
    """The kernel of ``kind`` on checked CSR float64 ``X``, ``Y`` (all-vs-all ignores the
    columns where the boolean array ``skip`` is true)."""
    xs = _row_stats(X.data, X.indptr)
    ys = _row_stats(Y.data, Y.indptr)
    if paired:
        fn, y_arrays = _paired_block, (Y.data, Y.indices, Y.indptr)
    else:
        Yc = Y.tocsc()
        Yc.sort_indices()
        if skip is None:
            skip = np.zeros(Y.shape[1], dtype=np.bool_)
        fn, y_arrays = _pairwise_block, (Yc.data, Yc.indices, Yc.indptr, Y.shape[0], skip)
    n = X.shape[0]
    n_jobs = effective_n_jobs(n_jobs)
    bounds = np.linspace(0, n, min(n, 4 * n_jobs) + 1 if n else 2).astype(np.int64)

    def block(i):
        return fn(kind, X.data, X.indices, X.indptr, *y_arrays, bounds[i], bounds[i + 1],
                  xs, ys)

    if n_jobs == 1:
        parts = [block(i) for i in range(len(bounds) - 1)]
    else:
        with ThreadPoolExecutor(n_jobs) as pool:
            parts = list(pool.map(block, range(len(bounds) - 1)))
    if not parts:
        return np.zeros(0) if paired else np.zeros((0, Y.shape[0]))
    return np.concatenate(parts, axis=0)


def paired_minmax(X, Y, n_jobs=None):
    """Ruzicka similarity of row i of X and row i of Y, shape (n,); 0 for two zero rows."""
    return _run(_MINMAX, *_check(_MINMAX, X, Y, True), True, n_jobs)


def paired_cosine(X, Y, n_jobs=None):
    """Cosine similarity of row i of X and row i of Y, shape (n,); 0 if a row is zero."""
    return _run(_COSINE, *_check(_COSINE, X, Y, True), True, n_jobs)


def paired_manhattan(X, Y, n_jobs=None):
    """L1 distance between row i of X and row i of Y, shape (n,)."""
    return _run(_MANHATTAN, *_check(_MANHATTAN, X, Y, True), True, n_jobs)


def pairwise_minmax(X, Y, n_jobs=None):
    """Ruzicka similarity of every row of X with every row of Y, shape (n_x, n_y)."""
    return _run(_MINMAX, *_check(_MINMAX, X, Y, False), False, n_jobs)


def pairwise_cosine(X, Y, n_jobs=None):
    """Cosine similarity of every row of X with every row of Y, shape (n_x, n_y).

    Rows are scaled to unit length, then their dot products are summed in two parts: the
    columns shared by many rows of both sides (a few thousand frequent n-grams carry most of
    a sparse product's work) go through one dense BLAS product, limited to ``n_jobs``
    threads; the other columns through the sparse kernel.
    """
    X, Y = _check(_COSINE, X, Y, False)
    X, Y = _unit_rows(X), _unit_rows(Y)
    busy = _busy_columns(X, Y)
    skip = np.zeros(X.shape[1], dtype=np.bool_)
    skip[busy] = True
    out = _run(_DOT, X, Y, False, n_jobs, skip)
    if busy.shape[0]:
        with threadpool_limits(limits=effective_n_jobs(n_jobs), user_api="blas"):
            for a in range(0, busy.shape[0], _DENSE_BLOCK):
                cols = busy[a: a + _DENSE_BLOCK]
                out += X[:, cols].toarray() @ Y[:, cols].toarray().T
    return out


# a multiply-add costs ~1/30 as much in a dense BLAS product as in the sparse kernel
_BLAS_GAIN = 32
_DENSE_BLOCK = 2048  # columns per dense product (bounds its memory)
_DENSE_MIN_PAIRS = 10_000


def _unit_rows(X):
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return sp.csr_matrix(sp.diags(inv) @ X)


def _busy_columns(X, Y):
    """Columns whose sparse work (common non-zeros) beats a dense product over them (none for
    small blocks, where setting up the dense product would cost more)."""
    if X.shape[0] * Y.shape[0] < _DENSE_MIN_PAIRS:
        return np.zeros(0, dtype=np.int64)
    work = (np.bincount(X.indices, minlength=X.shape[1]).astype(np.float64)
            * np.bincount(Y.indices, minlength=Y.shape[1]))
    return np.flatnonzero(work * _BLAS_GAIN >= X.shape[0] * Y.shape[0] * 1.0)


def pairwise_manhattan(X, Y, n_jobs=None):
    """L1 distance between every row of X and every row of Y, shape (n_x, n_y)."""
    return _run(_MANHATTAN, *_check(_MANHATTAN, X, Y, False), False, n_jobs)


# ------------------------------------------------------------------------------------ Delta
_CONSTANT = 1e-12  # a standard deviation of relative frequencies this small is rounding noise


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
        X = validate_data(self, X, reset=reset, accept_sparse="csr", dtype=np.float64,
                          ensure_min_samples=self.ddof + 1 if reset else 1)
        check_non_negative(X, "DeltaScaler")
        X = sp.csr_matrix(X)
        totals = np.asarray(X.sum(axis=1)).ravel()
        totals[totals == 0] = 1.0
        return sp.diags(1.0 / totals) @ X

    def fit(self, X, y=None):
        """Learn the kept columns (``columns_``), ``mean_`` and ``std_`` from counts ``X``."""
        mf = self.max_features
        if mf is not None and (isinstance(mf, bool) or not isinstance(mf, (int, np.integer))
                               or mf < 1):
            raise ValueError(f"max_features must be a positive int or None, got {mf!r}")
        if self.ddof not in (0, 1):
            raise ValueError(f"ddof must be 0 or 1, got {self.ddof!r}")
        F = self._relative(X, reset=True)
        mean = np.asarray(F.mean(axis=0)).ravel()
        # means equal to 12 decimals are ties (summation order must not decide the ranking)
        order = np.lexsort((np.arange(mean.shape[0]), -np.round(mean, 12)))
        self.columns_ = order[: mf] if mf is not None else order
        dense = F[:, self.columns_].toarray()
        self.mean_ = dense.mean(axis=0)
        self.std_ = dense.std(axis=0, ddof=self.ddof)
        return self

    def transform(self, X):
        """Dense z-scores, shape (n_docs, len(columns_))."""
        check_is_fitted(self, "columns_")
        dense = self._relative(X, reset=False)[:, self.columns_].toarray()
        varies = self.std_ > _CONSTANT
        safe = np.where(varies, self.std_, 1.0)
        return np.where(varies, (dense - self.mean_) / safe, 0.0)

    def get_feature_names_out(self, input_features=None):
        """Names of the kept columns in output order: ``input_features``, else the fitted
        DataFrame's column names, else ``x0 .. x{n_features_in_ - 1}``, taken at
        ``columns_``."""
        check_is_fitted(self, "columns_")
        return _check_feature_names_in(self, input_features)[self.columns_]


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


def _delta_weights(kind, k):
    if kind == "burrows":
        return np.full(k, 1.0 / k)
    # Eder (2015): |z_a - z_b| weighted by (k - rank + 1) / k, rank 1 = most frequent
    return (k - np.arange(k)) / k / k


def _check_z(Z1, Z2, kind, paired):
    if kind not in ("burrows", "cosine", "eder"):
        raise ValueError(f"kind must be 'burrows', 'cosine' or 'eder', got {kind!r}")
    Z1 = np.asarray(Z1.toarray() if sp.issparse(Z1) else Z1, dtype=np.float64)
    Z2 = np.asarray(Z2.toarray() if sp.issparse(Z2) else Z2, dtype=np.float64)
    if Z1.ndim != 2 or Z2.ndim != 2 or Z1.shape[1] != Z2.shape[1] or Z1.shape[1] == 0:
        raise ValueError(f"Z1 and Z2 must be 2-D with the same, non-zero number of columns; "
                         f"got {Z1.shape} and {Z2.shape}")
    if paired and Z1.shape[0] != Z2.shape[0]:
        raise ValueError(f"paired_delta needs as many rows in Z1 ({Z1.shape[0]}) as in Z2 "
                         f"({Z2.shape[0]})")
    if not (np.isfinite(Z1).all() and np.isfinite(Z2).all()):
        raise ValueError("z-scores contain NaN or infinity")
    return np.ascontiguousarray(Z1), np.ascontiguousarray(Z2)


def _cosine_distance(A, B):
    na = np.linalg.norm(A, axis=1)
    nb = np.linalg.norm(B, axis=1)
    den = np.outer(na, nb)
    sim = np.divide(A @ B.T, den, out=np.zeros(den.shape), where=den > 0)
    return 1.0 - sim


def pairwise_delta(Z1, Z2, kind="burrows", n_jobs=None):
    """Delta distance of every row of Z1 to every row of Z2 (z-scores from ``DeltaScaler``),
    shape (n_1, n_2).

    * ``burrows``: ``mean_k |z1_k - z2_k|`` (Burrows 2002).
    * ``cosine``: ``1 - cos(z1, z2)`` (Cosine / Wuerzburg Delta, Smith & Aldridge 2011;
      Jannidis et al. 2015); 1 when a vector is all zero.
    * ``eder``: ``(1/k) sum_k |z1_k - z2_k| (k_max - rank_k + 1) / k_max`` with rank_k = k + 1
      the frequency rank of column k (Eder 2015, as in R ``stylo``'s ``dist.eder``).
    """
    A, B = _check_z(Z1, Z2, kind, False)
    if kind == "cosine":
        return _cosine_distance(A, B)
    w = _delta_weights(kind, A.shape[1])
    n_jobs = effective_n_jobs(n_jobs)
    bounds = np.linspace(0, A.shape[0], min(A.shape[0], 4 * n_jobs) + 1).astype(np.int64)
    if A.shape[0] == 0:
        return np.zeros((0, B.shape[0]))

    def block(i):
        return _weighted_l1_block(A, B, w, bounds[i], bounds[i + 1])

    with ThreadPoolExecutor(n_jobs) as pool:
        return np.concatenate(list(pool.map(block, range(len(bounds) - 1))), axis=0)


def paired_delta(Z1, Z2, kind="burrows"):
    """Delta distance of row i of Z1 to row i of Z2, shape (n,); see :func:`pairwise_delta`."""
    A, B = _check_z(Z1, Z2, kind, True)
    if kind == "cosine":
        na = np.linalg.norm(A, axis=1) * np.linalg.norm(B, axis=1)
        dots = np.einsum("ij,ij->i", A, B)
        return 1.0 - np.divide(dots, na, out=np.zeros(na.shape), where=na > 0)
    return np.abs(A - B) @ _delta_weights(kind, A.shape[1])
