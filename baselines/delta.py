"""Delta: distances between z-scored most-frequent-word profiles.

Sources: J. Burrows, "'Delta': a measure of stylistic difference and a guide to likely
authorship", Literary and Linguistic Computing 17(3), 2002; S. Argamon, "Interpreting Burrows's
Delta: geometric and probabilistic foundations", LLC 23(2), 2008; P. W. H. Smith & W. Aldridge,
"Improving authorship attribution: optimizing Burrows' Delta method", J. Quantitative
Linguistics 18(1), 2011 (cosine delta); M. Eder, "Does size matter? Authorship attribution,
small samples, big problem", DSH 30(2), 2015 (Eder's delta); S. Evert et al., "Understanding
and explaining Delta measures for authorship attribution", DSH 32(suppl. 2), 2017.

Features: relative frequencies of the ``n_features`` most frequent words of the fitting corpus
(default 300), z-scored with that corpus's per-word mean and standard deviation. With
z-scores ``z_a`` and ``z_b`` of length n (words ordered by decreasing frequency):

- ``burrows``: mean |z_a - z_b|  (Manhattan / n)
- ``argamon``: sqrt(sum (z_a - z_b)^2)  (Argamon's quadratic delta as a Euclidean distance)
- ``eder``: sum |z_a - z_b| * (n - i) / n for the i-th word (i = 0..n-1), so frequent words
  weigh more
- ``cosine``: 1 - cos(z_a, z_b)  (Würzburg / cosine delta)

:class:`DeltaClassifier` is Burrows' nearest-centroid attribution (centroid = an author's mean
z-score profile); :class:`DeltaVerifier` turns the delta of a pair into P(same author) with a
logistic regression fitted on training pairs (lower delta = more likely the same author).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted

from baselines._features import make_counter, relative_frequencies
from baselines.base import Verifier, check_texts, training_pairs
from stylo.corpus import Corpus

__all__ = ["DELTAS", "DeltaClassifier", "DeltaVerifier", "ZScores", "pairwise_delta",
           "paired_delta"]

DELTAS = ("burrows", "argamon", "eder", "cosine")


def _check_kind(kind: str) -> None:
    if kind not in DELTAS:
        raise ValueError(f"unknown delta {kind!r}; expected one of {DELTAS}")


def _eder_weights(n: int) -> np.ndarray:
    return (n - np.arange(n)) / n


def pairwise_delta(z1: np.ndarray, z2: np.ndarray, kind: str = "burrows") -> np.ndarray:
    """Delta between every row of ``z1`` (n1, n) and every row of ``z2`` (n2, n): (n1, n2).

    Columns must be ordered by decreasing corpus frequency for ``eder``. A zero row has
    cosine delta 1 (no direction), never NaN.
    """
    _check_kind(kind)
    z1, z2 = np.atleast_2d(np.asarray(z1, float)), np.atleast_2d(np.asarray(z2, float))
    if z1.shape[1] != z2.shape[1]:
        raise ValueError(f"z1 has {z1.shape[1]} features but z2 has {z2.shape[1]}")
    n = z1.shape[1]
    if kind == "burrows":
        return cdist(z1, z2, "cityblock") / n
    if kind == "argamon":
        return cdist(z1, z2, "euclidean")
    if kind == "eder":
        return cdist(z1, z2, "cityblock", w=_eder_weights(n))
    norms1 = np.linalg.norm(z1, axis=1)
    norms2 = np.linalg.norm(z2, axis=1)
    denom = np.outer(norms1, norms2)
    cos = np.divide(z1 @ z2.T, denom, out=np.zeros((len(z1), len(z2))), where=denom > 0)
    return 1.0 - cos


def paired_delta(z1: np.ndarray, z2: np.ndarray, kind: str = "burrows") -> np.ndarray:
    """Delta between aligned rows ``z1[i]`` and ``z2[i]`` (both (n_pairs, n)): (n_pairs,)."""
    _check_kind(kind)
    z1, z2 = np.atleast_2d(np.asarray(z1, float)), np.atleast_2d(np.asarray(z2, float))
    if z1.shape != z2.shape:
        raise ValueError(f"paired_delta needs equal shapes, got {z1.shape} and {z2.shape}")
    n = z1.shape[1]
    diff = z1 - z2
    if kind == "burrows":
        return np.abs(diff).sum(axis=1) / n
    if kind == "argamon":
        return np.sqrt((diff ** 2).sum(axis=1))
    if kind == "eder":
        return (np.abs(diff) * _eder_weights(n)).sum(axis=1)
    denom = np.linalg.norm(z1, axis=1) * np.linalg.norm(z2, axis=1)
    cos = np.divide((z1 * z2).sum(axis=1), denom, out=np.zeros(len(z1)), where=denom > 0)
    return 1.0 - cos


class ZScores(BaseEstimator):
    """Most-frequent-feature relative frequencies, z-scored with the fitting texts' statistics.

    ``transform`` returns a dense (n_texts, n_features) array; columns are ordered by
    decreasing total count in the fitting texts. A feature constant over the fitting texts
    (std 0) gets z = 0.
    """

    def __init__(self, n_features: int = 300, unit: str = "word", n: int = 1):
        self.n_features = n_features
        self.unit = unit
        self.n = n

    def fit(self, texts, y=None):
        texts = check_texts(texts)
        if not texts:
            raise ValueError("ZScores.fit needs at least one text")
        counter = make_counter(self.unit, self.n, None)
        counts = counter.fit_transform(texts)
        totals = np.asarray(counts.sum(axis=0)).ravel()
        names = counter.get_feature_names_out()
        # most frequent first, ties broken alphabetically so the order is reproducible
        order = np.lexsort((names, -totals))[: int(self.n_features)]
        self.features_ = names[order]
        self.counter_ = make_counter(self.unit, self.n, None)
        self.counter_.vocabulary_ = {f: i for i, f in enumerate(self.features_)}
        # relative to all tokens of a text, not only to the kept features (Burrows)
        freqs = relative_frequencies(counts).toarray()[:, order]
        self.mean_ = freqs.mean(axis=0)
        self.std_ = freqs.std(axis=0, ddof=1) if len(texts) > 1 else np.zeros(len(order))
        return self

    def frequencies(self, texts) -> np.ndarray:
        """Relative frequencies (n_texts, n_features) of the kept features."""
        check_is_fitted(self, "features_")
        texts = check_texts(texts)
        counts = self.counter_.transform(texts)
        totals = np.array([len(self._all_ngrams(t)) for t in texts], dtype=float)
        return np.divide(counts.toarray(), totals[:, None], out=np.zeros(counts.shape),
                         where=totals[:, None] > 0)

    def _all_ngrams(self, text: str) -> list[str]:
        return self.counter_.build_analyzer()(text)

    def transform(self, texts) -> np.ndarray:
        freqs = self.frequencies(texts)
        return np.divide(freqs - self.mean_, self.std_, out=np.zeros_like(freqs),
                         where=self.std_ > 0)


class DeltaClassifier(ClassifierMixin, BaseEstimator):
    """Burrows-style nearest-centroid attribution with any delta.

    ``fit(texts, authors)`` learns the z-scoring and each author's mean profile;
    ``decision_function`` is minus the delta to each centroid, (n_texts, n_authors) in the
    order of ``classes_``; ``predict`` picks the nearest centroid.
    """

    def __init__(self, kind: str = "burrows", n_features: int = 300, unit: str = "word",
                 n: int = 1):
        self.kind = kind
        self.n_features = n_features
        self.unit = unit
        self.n = n

    def fit(self, texts, authors):
        _check_kind(self.kind)
        texts = check_texts(texts)
        authors = np.asarray(authors)
        if len(texts) != len(authors):
            raise ValueError(f"{len(texts)} texts but {len(authors)} authors")
        self.zscores_ = ZScores(self.n_features, self.unit, self.n).fit(texts)
        z = self.zscores_.transform(texts)
        self.classes_ = np.unique(authors)
        self.centroids_ = np.stack([z[authors == a].mean(axis=0) for a in self.classes_])
        return self

    def decision_function(self, texts) -> np.ndarray:
        check_is_fitted(self, "centroids_")
        return -pairwise_delta(self.zscores_.transform(texts), self.centroids_, self.kind)

    def predict(self, texts) -> np.ndarray:
        scores = self.decision_function(texts)
        return self.classes_[np.argmax(scores, axis=1)]

    def distance_matrix(self, texts) -> np.ndarray:
        """Delta between every two of ``texts`` (n, n), with this fit's z-scoring."""
        check_is_fitted(self, "centroids_")
        z = self.zscores_.transform(texts)
        return pairwise_delta(z, z, self.kind)


class DeltaVerifier(Verifier):
    """P(same author) from the delta of a pair, by logistic regression on training pairs.

    ``fit`` on a Corpus (z-scoring from its texts, pairs drawn from it) or a labelled PairSet
    (z-scoring from its texts).
    """

    def __init__(self, kind: str = "cosine", n_features: int = 300, unit: str = "word",
                 n: int = 1, n_pairs: int = 400, random_state: int = 0):
        self.kind = kind
        self.n_features = n_features
        self.unit = unit
        self.n = n
        self.n_pairs = n_pairs
        self.random_state = random_state

    def _fit_impl(self, X, y) -> None:
        _check_kind(self.kind)
        pairs = training_pairs(X, n_pairs=self.n_pairs, seed=self.random_state)
        texts = X.texts if isinstance(X, Corpus) else pairs.texts_a() + pairs.texts_b()
        self.zscores_ = ZScores(self.n_features, self.unit, self.n).fit(texts)
        d = self._delta(pairs.texts_a(), pairs.texts_b())
        labels = pairs.labels
        if labels.all() or not labels.any():
            raise ValueError("DeltaVerifier needs same- and different-author training pairs")
        self.logistic_ = LogisticRegression().fit(d[:, None], labels)

    def _delta(self, texts_a, texts_b) -> np.ndarray:
        return paired_delta(self.zscores_.transform(texts_a), self.zscores_.transform(texts_b),
                            self.kind)

    def _score_impl(self, texts_a, texts_b):
        d = self._delta(texts_a, texts_b)
        return self.logistic_.predict_proba(d[:, None])[:, 1]
