"""Frequency features shared by the impostors, Delta and SVM baselines.

A thin seam over scikit-learn's ``CountVectorizer`` until ``stylo.features`` provides its
n-gram extractors; every baseline here gets its vectors through :func:`make_counter` and
:func:`relative_frequencies`, so swapping the extractor is a change in one place.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

__all__ = ["make_counter", "relative_frequencies"]

_UNITS = ("char", "word")


def make_counter(unit: str = "char", n: int = 4, max_features: int | None = None,
                 lowercase: bool = True) -> CountVectorizer:
    """An unfitted counter of ``unit`` n-grams keeping the ``max_features`` most frequent.

    ``unit="char"`` counts overlapping character n-grams (across word boundaries, as in the
    PAN baselines); ``unit="word"`` counts word n-grams (tokens of letters, digits and
    apostrophes, punctuation dropped).
    """
    if unit not in _UNITS:
        raise ValueError(f"unit must be one of {_UNITS}, got {unit!r}")
    if int(n) < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if max_features is not None and int(max_features) < 1:
        raise ValueError(f"max_features must be >= 1 or None, got {max_features}")
    if unit == "char":
        return CountVectorizer(analyzer="char", ngram_range=(n, n), lowercase=lowercase,
                               max_features=max_features, dtype=np.float64)
    return CountVectorizer(analyzer="word", ngram_range=(n, n), lowercase=lowercase,
                           token_pattern=r"(?u)\b\w[\w']*\b", max_features=max_features,
                           dtype=np.float64)


def relative_frequencies(counts: sp.spmatrix) -> sp.csr_matrix:
    """Rows of ``counts`` (n_docs, n_features) divided by their sums; all-zero rows stay zero."""
    counts = sp.csr_matrix(counts, dtype=np.float64)
    totals = np.asarray(counts.sum(axis=1)).ravel()
    scale = np.divide(1.0, totals, out=np.zeros_like(totals), where=totals > 0)
    out = sp.diags(scale) @ counts
    out = sp.csr_matrix(out)
    out.sort_indices()
    return out
