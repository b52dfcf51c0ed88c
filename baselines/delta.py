"""Delta: distances between z-scored most-frequent-word profiles.

Sources: J. Burrows, "'Delta': a measure of stylistic difference and a guide to likely
authorship", Literary and Linguistic Computing 17(3), 2002; S. Argamon, "Interpreting Burrows's
Delta: geometric and probabilistic foundations", LLC 23(2), 2008; P. W. H. Smith & W. Aldridge,
"Improving authorship attribution: optimizing Burrows' Delta method", J. Quantitative
Linguistics 18(1), 2011 (cosine delta); M. Eder, "Does size matter? Authorship attribution,
small samples, big problem", DSH 30(2), 2015 (Eder's delta); S. Evert et al., "Understanding
and explaining Delta measures for authorship attribution", DSH 32(suppl. 2), 2017.

Features: relative frequencies of the ``n_features`` most frequent words of the fitting corpus
(default 300), z-scored with that corpus's per-word mean and standard deviation (ddof 1), by
``stylo.features.DeltaScaler``; :class:`DeltaVerifier` with ``transductive=True`` z-scores the
texts it scores against those texts instead, as Burrows z-scored against the corpus under
study. The four distances (``burrows``, ``argamon``, ``eder``,
``cosine``) are the Delta classes of ``stylo.features.delta``, chosen here by name (``kind``,
a key of ``stylo.features.DELTAS``).

:class:`DeltaClassifier` is Burrows' nearest-centroid attribution (centroid = an author's mean
z-score profile); :class:`DeltaVerifier` turns the delta of a pair into P(same author) with a
logistic regression fitted on training pairs (lower delta = more likely the same author).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted

from baselines._blas import fit_one_thread
from baselines._features import make_counter, pair_rows
from baselines.normalization import background_pool, top_up
from stylo import features
from stylo.corpus import Corpus
from stylo.text_input import check_texts
from stylo.verifier import Verifier, training_pairs

__all__ = ["DeltaClassifier", "DeltaVerifier", "ZScores"]


class ZScores(BaseEstimator):
    """Texts -> z-scored relative frequencies of the most frequent features.

    ``WordNgrams``/``CharNgrams`` counts followed by ``stylo.features.DeltaScaler``:
    ``features_`` names the kept features; ``transform`` returns a dense (n_texts,
    n_features) array, columns ordered by decreasing mean relative frequency in the fitting
    texts; a feature constant there gets z = 0.
    """

    def __init__(self, n_features: int = 300, unit: str = "word", n: int = 1):
        self.n_features = n_features
        self.unit = unit
        self.n = n

    def fit(self, texts, y=None):
        texts = check_texts(texts)
        if len(texts) < 2:
            raise ValueError("ZScores.fit needs at least two texts")
        self.counter_ = make_counter(self.unit, self.n, None)
        counts = self.counter_.fit_transform(texts)
        self.scaler_ = features.DeltaScaler(max_features=int(self.n_features)).fit(counts)
        return self

    @property
    def features_(self) -> np.ndarray:
        """The kept features' names, most frequent first (decoded on access: naming the
        whole vocabulary at every fit took a stacked verifier's fits 0.7 s on Guardian)."""
        check_is_fitted(self, "scaler_")
        return self.counter_.get_feature_names_out()[self.scaler_.columns_]

    def frequencies(self, texts) -> np.ndarray:
        """Relative frequencies of the kept features, dense (n_texts, n_features)."""
        check_is_fitted(self, "scaler_")
        return self.scaler_.frequencies(self.counter_.transform(check_texts(texts)))

    def transform(self, texts) -> np.ndarray:
        check_is_fitted(self, "scaler_")
        return self.scaler_.transform(self.counter_.transform(check_texts(texts)))


class DeltaClassifier(ClassifierMixin, BaseEstimator):
    """Burrows-style nearest-centroid attribution with any delta.

    ``fit(texts, authors)`` learns the z-scoring and each author's mean profile;
    ``decision_function`` is minus the delta to each centroid, (n_texts, n_authors) in the
    order of ``classes_``; ``predict`` picks the nearest centroid.
    """

    def __init__(
        self, kind: str = "burrows", n_features: int = 300, unit: str = "word", n: int = 1
    ):
        self.kind = kind
        self.n_features = n_features
        self.unit = unit
        self.n = n

    def fit(self, texts, authors):
        self.delta_ = features.get_delta(self.kind)
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
        return -self.delta_.pairwise(self.zscores_.transform(texts), self.centroids_)

    def predict(self, texts) -> np.ndarray:
        scores = self.decision_function(texts)
        return self.classes_[np.argmax(scores, axis=1)]

    def distance_matrix(self, texts) -> np.ndarray:
        """Delta between every two of ``texts`` (n, n), with this fit's z-scoring."""
        check_is_fitted(self, "centroids_")
        z = self.zscores_.transform(texts)
        return self.delta_.pairwise(z, z)


class DeltaVerifier(Verifier):
    """P(same author) from the delta of a pair, by logistic regression on training pairs.

    ``fit`` on a Corpus (z-scoring from its texts, pairs drawn from it) or a labelled PairSet
    (z-scoring from its texts).

    Parameters
    ----------
    kind, n_features, unit, n : the delta (a key of ``stylo.features.DELTAS``) and its
        features, the ``n_features`` most frequent ``unit`` n-grams of the training texts.
    n_pairs : training pairs drawn from a Corpus for the logistic regression.
    transductive : after ``fit``, z-score the texts of each scoring call with the mean and
        standard deviation of that call's own distinct texts (topped up with training texts
        to ``n_background`` when it has fewer) instead of the training texts', the standard
        deviation never below the training texts' (without that floor, PAN18 attribution on
        training problems fell from .356 to .251 macro-F1, with it to .345). The features
        and the logistic regression stay the ones fitted; no label is read. Burrows' Delta
        z-scores against the corpus under study; a training corpus of another genre or text
        length sets every test text's z-scores off in the same direction.
    n_background : the fewest texts a call's z-scoring reference holds (>= 2).
    random_state : seed of the pair draw and of the training texts that top a call up.

    Attributes: ``delta_``, ``zscores_``, ``logistic_``; with ``transductive``, ``background_``
    (up to ``n_background`` training texts) and ``background_freqs_`` (their frequencies), else
    None.
    """

    def __init__(
        self,
        kind: str = "cosine",
        n_features: int = 300,
        unit: str = "word",
        n: int = 1,
        n_pairs: int = 400,
        transductive: bool = False,
        n_background: int = 100,
        random_state: int = 0,
    ):
        self.kind = kind
        self.n_features = n_features
        self.unit = unit
        self.n = n
        self.n_pairs = n_pairs
        self.transductive = transductive
        self.n_background = n_background
        self.random_state = random_state

    def _fit_impl(self, X, y) -> None:
        if int(self.n_background) < 2:
            raise ValueError(f"n_background must be >= 2, got {self.n_background!r}")
        self.delta_ = features.get_delta(self.kind)
        pairs = training_pairs(X, n_pairs=self.n_pairs, seed=self.random_state)
        texts = X.texts if isinstance(X, Corpus) else pairs.texts_a() + pairs.texts_b()
        self.zscores_ = ZScores(self.n_features, self.unit, self.n).fit(texts)
        z_a, z_b = pair_rows(self.zscores_.transform, pairs.texts_a(), pairs.texts_b())
        d = self.delta_.paired(z_a, z_b)
        labels = pairs.labels
        if labels.all() or not labels.any():
            raise ValueError("DeltaVerifier needs same- and different-author training pairs")
        self.logistic_ = fit_one_thread(LogisticRegression(), d[:, None], labels)
        # the training texts that top a small call up, needed only when scoring transductively
        self.background_ = self.background_freqs_ = None
        if self.transductive:
            self.background_ = background_pool(X, int(self.n_background), self.random_state)
            self.background_freqs_ = self.zscores_.frequencies(self.background_)

    def call_zscores(self, texts: list[str]) -> np.ndarray:
        """z-scores (n_texts, n_features) of one scoring call's distinct ``texts``: against the
        training texts, or with ``transductive`` against ``texts`` themselves (topped up from
        ``background_``, texts of the call left out, to ``n_background``)."""
        if not self.transductive:
            return self.zscores_.transform(texts)
        if self.background_ is None:
            raise ValueError("transductive was set after fit: fit again to score transductively")
        freqs = self.zscores_.frequencies(texts)
        extra = top_up(self.background_, set(texts), int(self.n_background) - len(texts))
        reference = np.vstack([freqs, self.background_freqs_[extra]])
        scaler = self.zscores_.scaler_
        # a word rare in the call (one of another language, say) has a spread near zero there,
        # which would blow its z-scores up: never below the training texts' spread
        spread = np.maximum(reference.std(axis=0, ddof=scaler.ddof), scaler.std_)
        return features.standardise(freqs, reference.mean(axis=0), spread)

    def _score_impl(self, texts_a, texts_b):
        d = self.delta_.paired(*pair_rows(self.call_zscores, texts_a, texts_b))
        return self.logistic_.predict_proba(d[:, None])[:, 1]
