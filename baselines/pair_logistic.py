"""A learned pair verifier: logistic regression on how two texts' char n-gram profiles differ
and overlap.

Each text becomes an L2-normalised TF-IDF vector of character n-grams (vocabulary from the
training texts, counted across word boundaries as the PAN baselines do), a pair becomes
[|x_a - x_b|, x_a * x_b], and a logistic regression on training pairs (disjoint from the test
pairs) gives P(same author).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from baselines._features import char_tfidf, distinct_rows, pair_rows
from stylo.corpus import Corpus
from stylo.verifier import Verifier, training_pairs

__all__ = ["LogisticPairVerifier"]


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
        xa, xb = pair_rows(self.vectorizer_.transform, pairs.texts_a(), pairs.texts_b())
        self.logistic_.fit(_pair_features(xa, xb), labels)

    def _score_impl(self, texts_a, texts_b):
        x, rows_a, rows_b = distinct_rows(self.vectorizer_.transform, texts_a, texts_b)
        # a few thousand pairs at a time: a pair's features are as dense as its two texts,
        # and attribution puts each long joined known text in thousands of pairs (PAN19:
        # 36,459 pairs took 3.5 GB at once)
        out = np.empty(len(texts_a), dtype=np.float64)
        for at in range(0, len(texts_a), _SCORE_BATCH):
            part = slice(at, at + _SCORE_BATCH)
            out[part] = self.logistic_.predict_proba(
                _pair_features(x[rows_a[part]], x[rows_b[part]])
            )[:, 1]
        return out


_SCORE_BATCH = 2048


def _pair_features(xa, xb) -> sp.csr_matrix:
    """[|x_a - x_b|, x_a * x_b] of aligned rows."""
    return sp.hstack([abs(xa - xb), xa.multiply(xb)]).tocsr()
