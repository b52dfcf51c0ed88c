"""Term statistics and TF-IDF weights of counted entries: the per-term document frequency and
total count that pruning and idf read, and the counts of a CSR matrix turned into weights in
place (sublinear tf, idf, row norm).

Both replace NumPy passes that each allocated and faulted in an array as long as the entries
(``bincount`` of a gathered index, ``astype`` of the counts, ``repeat`` of row numbers, a
gathered norm per entry): in two Guardian cells of the stacked verifier they took 2.7 s of the
6.9 s its extractors' ``fit_transform`` calls took. The weights equal :func:`weigh_reference`'s
to the bit: each row's norm is summed in entry order, as ``bincount`` sums it, and the
logarithm is NumPy's.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from stylo.features._prefetch import PREFETCH_AHEAD, prefetch

_NORMS = {None: 0, "l1": 1, "l2": 2}


@numba.njit(cache=True, nogil=True)
def add_frequencies(ids, counts, term_of, df, tf):
    """For each entry ``(ids[e], counts[e])`` of one chunk: one more document and ``counts[e]``
    more occurrences of its term ``term_of[ids[e]]`` in ``df`` and ``tf`` (int64, in place)."""
    n = ids.shape[0]
    for e in range(n):
        if e + PREFETCH_AHEAD < n:
            prefetch(term_of, ids[e + PREFETCH_AHEAD])
        t = term_of[ids[e]]
        df[t] += 1
        tf[t] += counts[e]


def term_frequencies(entries, term_of, n_terms: int, run):
    """Document frequency and total count (int64, (n_terms,) each) of every term, from each
    chunk's entries ``(ids, counts)`` and the term ``term_of[k][id]`` of each id of chunk k;
    ``run(f, items)`` maps ``f`` over the chunks (in threads: each counts into its own
    arrays)."""

    def count(args):
        (ids, counts), terms = args
        df = np.zeros(n_terms, dtype=np.int64)
        tf = np.zeros(n_terms, dtype=np.int64)
        add_frequencies(ids, counts, terms, df, tf)
        return df, tf

    parts = run(count, list(zip(entries, term_of, strict=True)))
    df, tf = parts[0]
    for more_df, more_tf in parts[1:]:
        df += more_df
        tf += more_tf
    return df, tf


@numba.njit(cache=True, nogil=True)
def _counts_to_float(counts, out):
    """``out[k] = float(counts[k])``; ``out`` may be ``counts``' own memory viewed as float64
    (each entry is read before its bytes are written)."""
    for k in range(counts.shape[0]):
        out[k] = np.float64(counts[k])


@numba.njit(cache=True, nogil=True)
def _weigh_rows(indptr, indices, data, sublinear, idf, norm):
    """In place, per row of the CSR ``(indptr, indices, data)``: ``data + 1`` where
    ``sublinear`` (``data`` holds log counts then), times ``idf[column]`` where ``idf`` is not
    empty, divided by the row's L1 (``norm == 1``) or L2 (2) norm unless that is 0."""
    use_idf = idf.shape[0] > 0
    for r in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[r], indptr[r + 1]):
            v = data[k]
            if sublinear:
                v = v + 1.0
            if use_idf:
                v = v * idf[indices[k]]
            data[k] = v
            if norm == 1:
                s += abs(v)
            elif norm == 2:
                s += v * v
        if norm == 0:
            continue
        if norm == 2:
            s = np.sqrt(s)
        if s == 0.0:
            s = 1.0
        for k in range(indptr[r], indptr[r + 1]):
            data[k] = data[k] / s


def weigh_counts(
    x: sp.csr_matrix, sublinear_tf: bool, idf: np.ndarray | None, norm: str | None
) -> sp.csr_matrix:
    """The float64 weights of the int64 counts of ``x`` (n_docs, n_features), written over the
    counts (``x`` is consumed): ``1 + log(tf)`` if ``sublinear_tf``, times ``idf`` (n_features,)
    if given, rows divided by their ``norm`` (None, "l1" or "l2"). Shares ``x``'s index
    arrays."""
    if x.data.dtype != np.int64 or not x.data.flags.writeable or not x.data.flags.c_contiguous:
        raise ValueError("weigh_counts needs writeable, contiguous int64 counts")
    data = x.data.view(np.float64)
    _counts_to_float(x.data, data)
    if sublinear_tf:
        np.log(data, out=data)
    no_idf = np.zeros(0, dtype=np.float64)
    idf = no_idf if idf is None else np.ascontiguousarray(idf, dtype=np.float64)
    _weigh_rows(x.indptr, x.indices, data, bool(sublinear_tf), idf, _NORMS[norm])
    return sp.csr_matrix((data, x.indices, x.indptr), shape=x.shape)


def weigh_reference(
    x: sp.csr_matrix, sublinear_tf: bool, idf: np.ndarray | None, norm: str | None, dtype
) -> sp.csr_matrix:
    """The same weights by NumPy passes over a copy, in any float ``dtype`` (float32 included,
    whose arithmetic the kernel does not do)."""
    data = x.data.astype(dtype)
    if sublinear_tf:
        np.log(data, out=data)
        data += 1
    if idf is not None:
        data *= idf.astype(dtype)[x.indices]
    out = sp.csr_matrix((data, x.indices, x.indptr), shape=x.shape)
    if norm is not None:
        rows = np.repeat(np.arange(x.shape[0]), np.diff(x.indptr))
        if norm == "l1":
            s = np.bincount(rows, weights=np.abs(data), minlength=x.shape[0])
        else:
            s = np.sqrt(np.bincount(rows, weights=data * data, minlength=x.shape[0]))
        s[s == 0] = 1.0
        out.data /= s[rows].astype(dtype)
    return out
