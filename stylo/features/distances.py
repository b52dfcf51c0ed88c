"""Similarity and distance kernels between rows of feature matrices, for the verifiers.

Sparse kernels (CSR input, any numeric dtype, computed in float64):

* ``paired_*(X, Y)`` compares row i of X with row i of Y -> shape (n,).
* ``pairwise_*(X, Y)`` compares every row of X with every row of Y -> shape (n_x, n_y).
* ``nearest_minmax(X, Y, k)``: the k rows of Y most similar to each row of X -> (n_x, k).
* ``gram(X)``: the dot products of every two rows of X -> (n, n).

``minmax`` is the Ruzicka (min-max) SIMILARITY ``sum_j min(x_j, y_j) / sum_j max(x_j, y_j)``
for non-negative vectors (negative entries raise ``ValueError``); it is defined as 0 when both
rows are all zero. ``cosine`` is the cosine SIMILARITY, 0 when either row is all zero.
``manhattan`` is the L1 DISTANCE ``sum_j |x_j - y_j|``.

Delta distances, on z-scores rather than counts, are in ``delta``.

How (``numba`` ``nogil`` kernels, blocks of x rows on ``n_jobs`` threads): all-vs-all walks an
inverted index of Y (its CSC form) from each x non-zero, so only common non-zeros cost work;
paired merges the two sorted column lists of each row pair. Plain Python references
of every kernel are in ``_reference`` and tests check they agree.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from stylo._threads import blas_limit, map_parallel
from stylo.features._validation import effective_n_jobs

__all__ = [
    "paired_minmax",
    "paired_cosine",
    "paired_manhattan",
    "pairwise_minmax",
    "pairwise_cosine",
    "pairwise_manhattan",
    "nearest_minmax",
    "gram",
]

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


#: x rows ``_pairwise_rows_block`` takes at a time (its inner loop is written out for four)
_ROWS = 4


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
            out[r - r0, c] = _finish(
                kind, acc[c], xs[0][r], xs[1][r], xs[2][r], ys[0][c], ys[1][c], ys[2][c]
            )
    return out


@numba.njit(cache=True, nogil=True)
def _pairwise_rows_block(kind, xd, xi, xp, yd, yrow, ycol_ptr, n_y, r0, r1, xs, ys):
    """``_pairwise_block``'s result (no column skipped), bit for bit, with the x rows taken
    ``_ROWS`` at a time: their sorted column lists are merged, so that a column of Y shared by
    several of them is read once and each y row's sums for them share a cache line (20-40 %
    less time on char 4-gram and word frequencies). Every sum still runs over its columns in
    increasing order; where an x row lacks a column its term is an exact zero, which leaves a
    float sum unchanged. Where the rows share few columns the merge costs more than it saves
    (the sparse remainder of ``pairwise_cosine``'s dense split: 10-20 % slower)."""
    out = np.empty((r1 - r0, n_y))
    acc = np.zeros((n_y, _ROWS))
    at = np.zeros(_ROWS, dtype=np.int64)
    end = np.zeros(_ROWS, dtype=np.int64)
    vals = np.zeros(_ROWS)
    none = np.iinfo(np.int64).max
    for r in range(r0, r1, _ROWS):
        rows = min(_ROWS, r1 - r)
        acc[:, :] = 0.0
        for q in range(_ROWS):
            at[q] = xp[r + q] if q < rows else 0
            end[q] = xp[r + q + 1] if q < rows else 0
        while True:
            j = none
            for q in range(_ROWS):
                if at[q] < end[q] and xi[at[q]] < j:
                    j = xi[at[q]]
            if j == none:
                break
            holders = 0
            holder = 0
            for q in range(_ROWS):
                vals[q] = 0.0
                if at[q] < end[q] and xi[at[q]] == j:
                    vals[q] = xd[at[q]]
                    at[q] += 1
                    holders += 1
                    holder = q
            if holders == 1:
                v = vals[holder]
                for t in range(ycol_ptr[j], ycol_ptr[j + 1]):
                    acc[yrow[t], holder] += _common(kind, v, yd[t])
            else:
                v0, v1, v2, v3 = vals[0], vals[1], vals[2], vals[3]
                for t in range(ycol_ptr[j], ycol_ptr[j + 1]):
                    c = yrow[t]
                    y = yd[t]
                    acc[c, 0] += _common(kind, v0, y)
                    acc[c, 1] += _common(kind, v1, y)
                    acc[c, 2] += _common(kind, v2, y)
                    acc[c, 3] += _common(kind, v3, y)
        for q in range(rows):
            i = r + q
            for c in range(n_y):
                out[i - r0, c] = _finish(
                    kind, acc[c, q], xs[0][i], xs[1][i], xs[2][i], ys[0][c], ys[1][c], ys[2][c]
                )
    return out


@numba.njit(cache=True, nogil=True)
def _paired_block(kind, xd, xi, xp, yd, yi, yp, x_row, y_row, r0, r1, xs, ys):
    """Row ``x_row[i]`` of X against row ``y_row[i]`` of Y for i in r0:r1, by merging the
    sorted column lists."""
    out = np.empty(r1 - r0)
    for i in range(r0, r1):
        r = x_row[i]
        s = y_row[i]
        acc = 0.0
        a = xp[r]
        b = yp[s]
        while a < xp[r + 1] and b < yp[s + 1]:
            if xi[a] == yi[b]:
                acc += _common(kind, xd[a], yd[b])
                a += 1
                b += 1
            elif xi[a] < yi[b]:
                a += 1
            else:
                b += 1
        out[i - r0] = _finish(kind, acc, xs[0][r], xs[1][r], xs[2][r], ys[0][s], ys[1][s], ys[2][s])
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
        raise ValueError(
            f"{name} has negative entries: min-max similarity needs "
            "non-negative features (counts or frequencies)"
        )
    return X


def _check(kind, X, Y):
    same = Y is X
    X = _as_csr(X, "X", kind)
    # one matrix on both sides (a verifier's pairs among its distinct texts): checked once
    Y = X if same else _as_csr(Y, "Y", kind)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}")
    return X, Y


def _paired(kind, X, Y, rows, n_jobs):
    """A paired kernel: row ``rows[0][i]`` of X against row ``rows[1][i]`` of Y, or row i
    against row i when ``rows`` is None. Rows are read where they are: attribution pairs one
    long profile with thousands of texts, and copying it into each pair (``X[rows]``) took
    longer than comparing them."""
    X, Y = _check(kind, X, Y)
    if rows is None:
        if X.shape[0] != Y.shape[0]:
            raise ValueError(
                f"paired kernels need as many rows in X ({X.shape[0]}) as in Y ({Y.shape[0]})"
            )
        x_row = y_row = np.arange(X.shape[0], dtype=np.int64)
    else:
        x_row, y_row = (np.asarray(r, dtype=np.int64) for r in rows)
        if x_row.shape != y_row.shape or x_row.ndim != 1:
            raise ValueError(
                f"rows must be two 1-d arrays of one length, got {x_row.shape} and {y_row.shape}"
            )
        for name, r, n in (("X", x_row, X.shape[0]), ("Y", y_row, Y.shape[0])):
            if r.size and (r.min() < 0 or r.max() >= n):
                raise ValueError(f"rows of {name} must be in [0, {n}), got {r.min()}..{r.max()}")
    return _run(kind, X, Y, (x_row, y_row), n_jobs)


def _run(kind, X, Y, paired, n_jobs, skip=None, select=None, block_rows=None):
    """The kernel of ``kind`` on checked CSR float64 ``X``, ``Y``: all-vs-all when ``paired``
    is None (ignoring the columns where the boolean array ``skip`` is true), else row
    ``paired[0][i]`` of X against row ``paired[1][i]`` of Y. With ``select``, each block of at
    most ``block_rows`` x rows is passed through it, and only what it returns is kept."""
    xs = _row_stats(X.data, X.indptr)
    ys = xs if Y is X else _row_stats(Y.data, Y.indptr)
    n = X.shape[0]
    if paired is not None:
        fn, y_arrays = _paired_block, (Y.data, Y.indices, Y.indptr, *paired)
        n = paired[0].shape[0]
    else:
        Yc = Y.tocsc()
        Yc.sort_indices()
        y_arrays = (Yc.data, Yc.indices, Yc.indptr, Y.shape[0])
        if skip is None:
            fn = _pairwise_rows_block
        else:
            # a skip leaves the rare columns of a dense split, which rows seldom share
            fn, y_arrays = _pairwise_block, (*y_arrays, skip)
    n_jobs = effective_n_jobs(n_jobs)
    n_blocks = min(n, 4 * n_jobs)
    if block_rows:
        n_blocks = max(n_blocks, -(-n // block_rows))
    bounds = np.linspace(0, n, n_blocks + 1 if n else 2).astype(np.int64)

    def block(i):
        got = fn(kind, X.data, X.indices, X.indptr, *y_arrays, bounds[i], bounds[i + 1], xs, ys)
        return got if select is None else select(got)

    parts = map_parallel(block, range(len(bounds) - 1), n_jobs)
    if not parts:
        return np.zeros(0) if paired is not None else np.zeros((0, Y.shape[0]))
    return np.concatenate(parts, axis=0)


def _top_columns(sim: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` columns of ``np.argsort(-sim, axis=1, kind="stable")`` (largest first,
    ties: lower column), found by a partition rather than a sort of every row."""
    if k >= sim.shape[1]:
        return np.argsort(-sim, axis=1, kind="stable")[:, :k]
    neg = -sim
    kth = np.partition(neg, k - 1, axis=1)[:, k - 1]
    out = np.empty((sim.shape[0], k), dtype=np.int64)
    for i in range(sim.shape[0]):
        # every value up to the k-th smallest, ties at it included, then sorted stably
        idx = np.flatnonzero(neg[i] <= kth[i])
        out[i] = idx[np.argsort(neg[i, idx], kind="stable")[:k]]
    return out


#: a column held by more than this share of the rows is multiplied densely, through BLAS: a
#: multiply-add through the inverted index costs about 3 ns (a scattered read and write), one
#: in a BLAS product about 0.02 ns plus the column's n zeros and values written out, so a column
#: of df rows costs df^2 / 2 x 3 ns sparse and n^2 / 2 x 0.02 + n ns dense: even at about a
#: tenth of the rows (measured on PAN19 problems of 624 texts: the char 2-5-gram view's Gram
#: matrix 1.85 s sparse; with the columns above 2, 5, 10, 20 and 40 % of the rows dense 0.53,
#: 0.36, 0.38, 0.43 and 0.56 s)
_GRAM_DENSE_SHARE = 0.1
#: dense columns written out and multiplied this many at a time (a block of 4096 x n floats)
_GRAM_BLOCK = 4096


@numba.njit(cache=True, nogil=True)
def _gram_kernel(xd, xi, xp, cd, crow, cptr, n, skip):
    """Dot products of every two rows of a CSR matrix (``xd``, ``xi``, ``xp``) whose CSC form,
    rows sorted within each column, is ``cd``, ``crow``, ``cptr``, over the columns j without
    ``skip[j]``: each pair once, row r against the rows from r on, through the inverted index.
    ``at[j]`` is row r's place in column j (every earlier row holding j has moved it on), so
    row r reads only the rest."""
    out = np.empty((n, n))
    acc = np.zeros(n)
    at = cptr[:-1].copy()
    for r in range(n):
        for k in range(xp[r], xp[r + 1]):
            j = xi[k]
            if skip[j]:
                continue
            xv = xd[k]
            for t in range(at[j], cptr[j + 1]):
                acc[crow[t]] += xv * cd[t]
            at[j] += 1
        for c in range(r, n):
            out[r, c] = acc[c]
            out[c, r] = acc[c]
            acc[c] = 0.0
    return out


@numba.njit(cache=True, nogil=True)
def _dense_columns(cd, crow, cptr, cols, n):
    """The CSC matrix's columns ``cols`` as the rows of a dense array (len(cols), n)."""
    out = np.zeros((cols.shape[0], n))
    for i in range(cols.shape[0]):
        j = cols[i]
        for t in range(cptr[j], cptr[j + 1]):
            out[i, crow[t]] = cd[t]
    return out


def gram(X) -> np.ndarray:
    """The dot products of every two rows of the sparse matrix ``X`` (n, n_features): dense,
    (n, n), symmetric, equal to SciPy's sparse product ``X @ X.T`` within rounding (1e-14 of
    the largest entry on TF-IDF rows). Columns held by few rows are summed through the inverted
    index, each pair of rows once, in increasing column order (bit for bit SciPy's sums when
    no column is dense); columns held by more than ``_GRAM_DENSE_SHARE`` of the rows, which
    carry most of the work (96 % of a char 2-5-gram view's), are added as dense blocks by one
    BLAS thread, deterministic for the same input. Builds no sparse result
    (``benchmarks/bench_features``)."""
    X = _as_csr(X, "X", _DOT)
    C = X.tocsc()
    C.sort_indices()
    n = X.shape[0]
    dense = np.diff(C.indptr) > _GRAM_DENSE_SHARE * n
    out = _gram_kernel(X.data, X.indices, X.indptr, C.data, C.indices, C.indptr, n, dense)
    cols = np.flatnonzero(dense)
    with blas_limit(1):  # one thread: the grid's workers run one each
        for lo in range(0, cols.size, _GRAM_BLOCK):
            block = _dense_columns(C.data, C.indices, C.indptr, cols[lo : lo + _GRAM_BLOCK], n)
            out += block.T @ block
    return out


#: rows of X whose similarities to Y ``nearest_minmax`` holds at a time
_NEAREST_BLOCK = 256


def paired_minmax(X, Y, n_jobs=None, rows=None):
    """Ruzicka similarity of row i of X and row i of Y, shape (n,); 0 for two zero rows.
    With ``rows=(x_rows, y_rows)``: of rows ``x_rows[i]`` and ``y_rows[i]``, shape (len(x_rows),),
    equal bit for bit to ``paired_minmax(X[x_rows], Y[y_rows])`` without copying the rows."""
    return _paired(_MINMAX, X, Y, rows, n_jobs)


def paired_cosine(X, Y, n_jobs=None, rows=None):
    """Cosine similarity of row i of X and row i of Y, shape (n,); 0 if a row is zero.
    ``rows``: as in :func:`paired_minmax`."""
    return _paired(_COSINE, X, Y, rows, n_jobs)


def paired_manhattan(X, Y, n_jobs=None, rows=None):
    """L1 distance between row i of X and row i of Y, shape (n,). ``rows``: as in
    :func:`paired_minmax`."""
    return _paired(_MANHATTAN, X, Y, rows, n_jobs)


def pairwise_minmax(X, Y, n_jobs=None):
    """Ruzicka similarity of every row of X with every row of Y, shape (n_x, n_y)."""
    return _run(_MINMAX, *_check(_MINMAX, X, Y), None, n_jobs)


def nearest_minmax(X, Y, k, n_jobs=None):
    """Row numbers of the ``k`` rows of Y most similar (Ruzicka) to each row of X, most similar
    first, ties broken by the lower row: shape (n_x, min(k, n_y)), int64.

    Equal to the first k columns of ``np.argsort(-pairwise_minmax(X, Y), axis=1,
    kind="stable")``, with X's rows taken in blocks, so that memory is one block's
    similarities (not n_x x n_y) and each row's choice is a partition, linear in n_y.
    """
    X, Y = _check(_MINMAX, X, Y)
    k = min(int(k), Y.shape[0])
    if k < 1 or X.shape[0] == 0:
        return np.zeros((X.shape[0], max(k, 0)), dtype=np.int64)
    return _run(
        _MINMAX,
        X,
        Y,
        None,
        n_jobs,
        select=lambda sim: _top_columns(sim, k),
        block_rows=_NEAREST_BLOCK,
    )


def pairwise_cosine(X, Y, n_jobs=None):
    """Cosine similarity of every row of X with every row of Y, shape (n_x, n_y).

    Rows are scaled to unit length, then their dot products are summed in two parts: the
    columns shared by many rows of both sides (a few thousand frequent n-grams carry most of
    a sparse product's work) go through one dense BLAS product, limited to ``n_jobs``
    threads; the other columns through the sparse kernel.
    """
    X, Y = _check(_COSINE, X, Y)
    X, Y = _unit_rows(X), _unit_rows(Y)
    busy = _busy_columns(X, Y)
    skip = np.zeros(X.shape[1], dtype=np.bool_)
    skip[busy] = True
    out = _run(_DOT, X, Y, None, n_jobs, skip)
    if busy.shape[0]:
        with blas_limit(effective_n_jobs(n_jobs)):
            for a in range(0, busy.shape[0], _DENSE_BLOCK):
                cols = busy[a : a + _DENSE_BLOCK]
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
    work = np.bincount(X.indices, minlength=X.shape[1]).astype(np.float64) * np.bincount(
        Y.indices, minlength=Y.shape[1]
    )
    return np.flatnonzero(work * _BLAS_GAIN >= X.shape[0] * Y.shape[0] * 1.0)


def pairwise_manhattan(X, Y, n_jobs=None):
    """L1 distance between every row of X and every row of Y, shape (n_x, n_y)."""
    return _run(_MANHATTAN, *_check(_MANHATTAN, X, Y), None, n_jobs)
