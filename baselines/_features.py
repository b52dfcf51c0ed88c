"""Frequency features shared by the impostors, Delta, SVM, pair and n-gram distance baselines.

Counts come from ``stylo.features`` (exact, Numba-fast equivalents of scikit-learn's
``CountVectorizer``); these helpers fix the settings the baselines share.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from stylo.features import CharNgrams, WordNgrams

__all__ = ["char_tfidf", "distinct_rows", "make_counter", "pair_rows", "relative_frequencies"]

_UNITS = ("char", "word")


def make_counter(
    unit: str = "char",
    n: int = 4,
    max_features: int | None = None,
    lowercase: bool = True,
    **options,
) -> CharNgrams | WordNgrams:
    """An unfitted counter of ``unit`` n-grams keeping the ``max_features`` most frequent.

    ``unit="char"`` counts overlapping character n-grams (across word boundaries, as in the
    PAN baselines); ``unit="word"`` counts word n-grams (``stylo.features.TOKEN_PATTERN``
    tokens, punctuation dropped). ``options`` go to the extractor (e.g. ``min_df``,
    ``use_idf``, ``sublinear_tf``, ``norm``).
    """
    if unit not in _UNITS:
        raise ValueError(f"unit must be one of {_UNITS}, got {unit!r}")
    if int(n) < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if max_features is not None and int(max_features) < 1:
        raise ValueError(f"max_features must be >= 1 or None, got {max_features}")
    if unit == "char":
        return CharNgrams(
            ngram_range=(n, n),
            lowercase=lowercase,
            max_features=max_features,
            dtype=np.float64,
            **options,
        )
    return WordNgrams(
        ngram_range=(n, n),
        lowercase=lowercase,
        max_features=max_features,
        dtype=np.float64,
        **options,
    )


def char_tfidf(ngram_range: tuple[int, int], min_df: int, max_features: int | None) -> CharNgrams:
    """The PAN baselines' TF-IDF of character n-grams: counted across word boundaries and
    case-sensitive, sublinear tf, L2-normalised rows."""
    return CharNgrams(
        ngram_range=tuple(ngram_range),
        min_df=min_df,
        max_features=max_features,
        lowercase=False,
        use_idf=True,
        sublinear_tf=True,
        norm="l2",
        dtype=np.float64,
    )


def relative_frequencies(counts: sp.spmatrix) -> sp.csr_matrix:
    """Rows of ``counts`` (n_docs, n_features) divided by their sums; all-zero rows stay zero."""
    counts = sp.csr_matrix(counts, dtype=np.float64)
    totals = np.asarray(counts.sum(axis=1)).ravel()
    scale = np.divide(1.0, totals, out=np.zeros_like(totals), where=totals > 0)
    out = sp.diags(scale) @ counts
    out = sp.csr_matrix(out)
    out.sort_indices()
    return out


def distinct_rows(transform, texts_a: list[str], texts_b: list[str]):
    """``(x, rows_a, rows_b)``: ``transform`` of each distinct text of both lists once (protocols
    put one text in many pairs: PAN14 en_novels shares unknowns; AIDBench and attribution pairs
    repeat queries and known texts), and the row of ``x`` of every text of each list."""
    unique = list(dict.fromkeys([*texts_a, *texts_b]))
    rows = {t: i for i, t in enumerate(unique)}
    return (
        transform(unique),
        np.array([rows[t] for t in texts_a], dtype=np.intp),
        np.array([rows[t] for t in texts_b], dtype=np.intp),
    )


def pair_rows(transform, texts_a: list[str], texts_b: list[str]):
    """``transform`` rows of ``texts_a`` and of ``texts_b`` (two matrices, one row per text),
    each distinct text transformed once (:func:`distinct_rows`)."""
    x, rows_a, rows_b = distinct_rows(transform, texts_a, texts_b)
    return x[rows_a], x[rows_b]
