"""A learned pair verifier: logistic regression on how two texts' char n-gram profiles differ
and overlap.

Each text becomes an L2-normalised TF-IDF vector of character n-grams (vocabulary from the
training texts, counted across word boundaries as the PAN baselines do), a pair becomes
[|x_a - x_b|, x_a * x_b], and a logistic regression on training pairs (disjoint from the test
pairs) gives P(same author).

The pair rows are built by :func:`pair_features`, one merge of the two texts' sorted n-gram
columns per pair (Numba), equal to the bit to scipy's ``hstack([abs(xa - xb),
xa.multiply(xb)])`` of the gathered rows (:func:`pair_features_reference`), which gathers both
sides' rows, subtracts, takes the absolute value and stacks, each a pass over every non-zero:
on 1,000 Guardian training pairs it took 4 of a fit's 6 seconds.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from baselines._blas import fit_one_thread
from baselines._features import char_tfidf, distinct_rows
from stylo.corpus import Corpus
from stylo.verifier import Verifier, training_pairs

__all__ = ["LogisticPairVerifier", "pair_features", "pair_features_reference"]


class LogisticPairVerifier(Verifier):
    """Learned pair verifier: logistic regression on [|x_a - x_b|, x_a * x_b] of TF-IDF rows.

    Fit on a labelled PairSet or a Corpus (``n_pairs`` pairs drawn from it with
    ``random_state``); the test pairs must come from a disjoint split.
    """

    def __init__(
        self,
        ngram_range: tuple[int, int] = (1, 4),
        max_features: int = 20_000,
        C: float = 1.0,
        n_pairs: int = 1000,
        random_state: int = 0,
    ):
        self.ngram_range = ngram_range
        self.max_features = max_features
        self.C = C
        self.n_pairs = n_pairs
        self.random_state = random_state

    def _fit_impl(self, X, y) -> None:
        pairs = training_pairs(X, n_pairs=self.n_pairs, seed=self.random_state)
        labels = pairs.labels
        if labels.all() or not labels.any():
            raise ValueError(
                f"{type(self).__name__} needs same- and different-author training pairs"
            )
        texts = X.texts if isinstance(X, Corpus) else pairs.texts_a() + pairs.texts_b()
        self.vectorizer_ = char_tfidf(self.ngram_range, 1, self.max_features).fit(texts)
        self.logistic_ = LogisticRegression(C=self.C, max_iter=2000)
        x, rows_a, rows_b = distinct_rows(
            self.vectorizer_.transform, pairs.texts_a(), pairs.texts_b()
        )
        fit_one_thread(self.logistic_, pair_features(x, rows_a, rows_b), labels)

    def _score_impl(self, texts_a, texts_b):
        x, rows_a, rows_b = distinct_rows(self.vectorizer_.transform, texts_a, texts_b)
        # a few thousand pairs at a time: a pair's features are as dense as its two texts,
        # and attribution puts each long joined known text in thousands of pairs (PAN19:
        # 36,459 pairs took 3.5 GB at once)
        out = np.empty(len(texts_a), dtype=np.float64)
        for at in range(0, len(texts_a), _SCORE_BATCH):
            part = slice(at, at + _SCORE_BATCH)
            features = pair_features(x, rows_a[part], rows_b[part])
            out[part] = self.logistic_.predict_proba(features)[:, 1]
        return out


_SCORE_BATCH = 2048


def pair_features(x, rows_a: np.ndarray, rows_b: np.ndarray) -> sp.csr_matrix:
    """[|x_a - x_b|, x_a * x_b] of the pairs (x[rows_a[i]], x[rows_b[i]]), shape
    (len(rows_a), 2 * n_features) CSR float64 with sorted columns and no stored zeros: the
    matrix :func:`pair_features_reference` gives for the gathered rows."""
    x = sp.csr_matrix(x, dtype=np.float64)
    if not x.has_canonical_format:  # the merge needs sorted columns, each once
        x = x.copy()
        x.sum_duplicates()
    rows_a = np.asarray(rows_a, dtype=np.int64)
    rows_b = np.asarray(rows_b, dtype=np.int64)
    if rows_a.shape != rows_b.shape or rows_a.ndim != 1:
        raise ValueError(
            f"rows_a and rows_b must be equal-length 1-D, got {rows_a.shape}, {rows_b.shape}"
        )
    # x's own index arrays (int32 or int64): scoring calls this per batch of one large x
    csr = (x.indptr, x.indices, x.data)
    n_features = x.shape[1]
    out_ptr = np.zeros(len(rows_a) + 1, dtype=np.int64)
    n_diff = np.empty(len(rows_a), dtype=np.int64)
    _pair_sizes(*csr, rows_a, rows_b, out_ptr, n_diff)
    # int32 indices where they fit, as scipy would make them: its constructor otherwise scans
    # and converts int64 ones, and they are a third of the matrix's memory
    small = max(2 * n_features, int(out_ptr[-1])) < 2**31
    index_dtype = np.int32 if small else np.int64
    out_idx = np.empty(out_ptr[-1], dtype=index_dtype)
    out_val = np.empty(out_ptr[-1], dtype=np.float64)
    _pair_fill(*csr, rows_a, rows_b, n_features, out_ptr, n_diff, out_idx, out_val)
    return sp.csr_matrix(
        (out_val, out_idx, out_ptr.astype(index_dtype)), shape=(len(rows_a), 2 * n_features)
    )


def pair_features_reference(xa, xb) -> sp.csr_matrix:
    """[|x_a - x_b|, x_a * x_b] of aligned rows, by scipy's sparse operations."""
    return sp.hstack([abs(xa - xb), xa.multiply(xb)]).tocsr()


@numba.njit(cache=True, nogil=True)
def _pair_sizes(indptr, indices, data, rows_a, rows_b, out_ptr, n_diff):
    """Stored values of each pair's row (``out_ptr``, cumulative): the columns of either text
    whose difference is not zero (``n_diff``), then the columns of both whose product is not
    zero."""
    for p in range(len(rows_a)):
        i, i_end = indptr[rows_a[p]], indptr[rows_a[p] + 1]
        j, j_end = indptr[rows_b[p]], indptr[rows_b[p] + 1]
        d = m = 0
        while i < i_end or j < j_end:
            if j == j_end or (i < i_end and indices[i] < indices[j]):
                d += data[i] != 0.0
                i += 1
            elif i == i_end or indices[j] < indices[i]:
                d += data[j] != 0.0
                j += 1
            else:
                d += data[i] - data[j] != 0.0
                m += data[i] * data[j] != 0.0
                i += 1
                j += 1
        n_diff[p] = d
        out_ptr[p + 1] = out_ptr[p] + d + m


@numba.njit(cache=True, nogil=True)
def _pair_fill(
    indptr, indices, data, rows_a, rows_b, n_features, out_ptr, n_diff, out_idx, out_val
):
    """Fill each pair's row: differences from its start, products after its ``n_diff``
    differences (their columns offset by ``n_features``), both in column order."""
    for p in range(len(rows_a)):
        i, i_end = indptr[rows_a[p]], indptr[rows_a[p] + 1]
        j, j_end = indptr[rows_b[p]], indptr[rows_b[p] + 1]
        d, m = out_ptr[p], out_ptr[p] + n_diff[p]
        while i < i_end or j < j_end:
            if j == j_end or (i < i_end and indices[i] < indices[j]):
                if data[i] != 0.0:
                    out_idx[d] = indices[i]
                    out_val[d] = abs(data[i])
                    d += 1
                i += 1
            elif i == i_end or indices[j] < indices[i]:
                if data[j] != 0.0:
                    out_idx[d] = indices[j]
                    out_val[d] = abs(-data[j])
                    d += 1
                j += 1
            else:
                diff, prod = data[i] - data[j], data[i] * data[j]
                if diff != 0.0:
                    out_idx[d] = indices[i]
                    out_val[d] = abs(diff)
                    d += 1
                if prod != 0.0:
                    out_idx[m] = n_features + indices[i]
                    out_val[m] = prod
                    m += 1
                i += 1
                j += 1
