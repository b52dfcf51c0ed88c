"""Frequency features shared by the impostors, Delta, SVM, pair and n-gram distance baselines.

Counts come from ``stylo.features`` (exact, Numba-fast equivalents of scikit-learn's
``CountVectorizer``); these helpers fix the settings the baselines share.
"""

from __future__ import annotations

import re
from collections import deque

import numpy as np
import scipy.sparse as sp

from stylo.features import TOKEN_PATTERN, CharNgrams, WordNgrams

__all__ = [
    "RecentRows",
    "char_tfidf",
    "distinct_rows",
    "make_counter",
    "pair_rows",
    "relative_frequencies",
    "word_span",
]

_UNITS = ("char", "word")
#: a word, or a masked one: ``TextDistortion`` writes a masked word's letters as ``*`` and its
#: digits as ``#``, and a text masked so keeps only its frequent (short) words as tokens
_WORD_OR_MASK = re.compile(f"{TOKEN_PATTERN}|\\*+|#+")


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


def word_span(texts: list[str], most: int = 4, n_texts: int = 500, n_chars: int = 5_000) -> int:
    """The character n-gram order that spans about one word of ``texts``: the mean length of
    their words (``TOKEN_PATTERN`` tokens and runs of ``*`` or ``#``, a word masked by
    ``TextDistortion``; each occurrence counted), rounded, within [1, ``most``]; ``most`` where
    they have no word. Read on the first ``n_texts`` texts' first ``n_chars`` characters (a
    mean that a few hundred texts settle).

    Character 4-grams, the usual order for alphabetic scripts, span about a word there (mean
    word length 3.9-5.5 on the English, Dutch, Greek, Spanish, French, Italian and Polish
    corpora at hand); in Chinese, where each character is a word, a 4-gram spans four words
    and rarely recurs in a text of a few hundred characters.
    """
    lengths = [len(w) for t in texts[:n_texts] for w in _WORD_OR_MASK.findall(t[:n_chars])]
    if not lengths:
        return most
    return int(min(most, max(1, round(float(np.mean(lengths))))))


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


class RecentRows:
    """``transform`` with the rows of the latest ``keep`` calls' texts reused.

    ``rows(texts)`` equals ``transform(texts)`` for a transform whose row of a text does not
    depend on the other texts of the call (a fitted TF-IDF: counts, idf and the row's own
    norm); only texts none of the latest calls transformed are transformed. A background-
    normalised verifier (:mod:`baselines.normalization`) scores its pairs and then each side
    against its pool, so every text reached the transform twice and the pool twice a call;
    two kept calls (the pairs' texts, the pool) serve that pattern. Memory: the matrices of
    ``keep`` calls, as the callers held them; not pickled.
    """

    def __init__(self, transform, keep: int = 2):
        self.transform = transform
        self.keep = keep
        self._calls: deque = deque(maxlen=keep)  # (text -> row, matrix) of each call

    def __getstate__(self):
        return {"transform": self.transform, "keep": self.keep, "_calls": deque(maxlen=self.keep)}

    def __call__(self, texts: list[str]) -> sp.csr_matrix:
        if not len(texts):
            return sp.csr_matrix(self.transform(texts))
        where = self._where()
        new = [t for t in dict.fromkeys(texts) if t not in where]
        if new:
            if len(self._calls) == self.keep:  # the oldest call's rows go first
                self._calls.popleft()
                where = self._where()
                new = [t for t in dict.fromkeys(texts) if t not in where]
            self._calls.append(
                ({t: i for i, t in enumerate(new)}, sp.csr_matrix(self.transform(new)))
            )
            where.update((t, (len(self._calls) - 1, i)) for i, t in enumerate(new))
        call, row = np.array([where[t] for t in texts], dtype=np.intp).T
        if (call == call[0]).all():
            return self._calls[call[0]][1][row]
        order = np.argsort(call, kind="stable")
        parts = [self._calls[c][1][row[order][call[order] == c]] for c in np.unique(call)]
        return sp.vstack(parts, format="csr")[np.argsort(order, kind="stable")]

    def _where(self) -> dict[str, tuple[int, int]]:
        """(call, row) of every text the kept calls transformed."""
        where: dict[str, tuple[int, int]] = {}
        for c, (index, _) in enumerate(self._calls):
            where.update((t, (c, i)) for t, i in index.items())
        return where
