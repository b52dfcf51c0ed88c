"""The PAN "naive, distance-based" verification baseline (cngdist).

Source: the official baseline of PAN 2020-2022 authorship verification, pan-code
``clef20/authorship-verification/pan20-verif-baseline.py`` (M. Kestemont et al., Overview of
the Cross-Domain Authorship Verification Task at PAN 2020, CLEF 2020 Working Notes, CEUR-WS
2696). Algorithm and defaults, all as there:

1. TF-IDF of lowercased character 4-grams (:class:`stylo.features.CharNgrams`), vocabulary =
   the 3,000 n-grams most frequent in the training texts (both texts of every training pair),
   scikit-learn's TF-IDF weighting (raw counts x smoothed idf, ``log((1 + n) / (1 + df)) + 1``,
   rows L2-normalised);
2. cosine similarity of the two texts of a pair;
3. no Platt scaling; a grey zone (p1, p2) fitted by grid search on the training pairs to
   maximise the mean of AUC, c@1, F1 and F0.5u (``objective="pan20-baseline"``, the evaluator
   pan-code ships), scores shifted as in :mod:`baselines.calibration`.

A PAN problem with several known texts is scored with them joined by a blank line. Texts
without any vocabulary n-gram have no cosine and get 0.5 (no answer) with a warning.
"""

from __future__ import annotations

import warnings

import numpy as np

from baselines._features import RecentRows, distinct_rows
from baselines.calibration import CalibratedVerifier, ScoreCalibrator
from stylo.corpus import PairSet
from stylo.features import CharNgrams, paired_cosine, pairwise_cosine
from stylo.verifier import Verifier, training_pairs

__all__ = ["CharNgramCosine", "NaiveDistance"]


def _char_tfidf(
    ngram_range: tuple[int, int],
    max_features: int | None,
    n_jobs: int | None,
    lowercase: bool = True,
    sublinear_tf: bool = False,
) -> CharNgrams:
    """The TF-IDF extractor of pan-code's cngdist (scikit-learn's TfidfVectorizer defaults)
    with its n-gram range, case folding and tf damping as options."""
    return CharNgrams(
        tuple(ngram_range),
        analyzer="char",
        lowercase=lowercase,
        max_features=max_features,
        use_idf=True,
        smooth_idf=True,
        norm="l2",
        sublinear_tf=sublinear_tf,
        n_jobs=n_jobs,
    )


class CharNgramCosine(Verifier):
    """Raw cosine similarity of character n-gram TF-IDF vectors (uncalibrated, in [0, 1]).

    ``fit`` learns the vocabulary and idf from the texts of a PairSet (both sides of every
    problem, known texts joined) or of a Corpus. The defaults are cngdist's features; ``min_n``
    (default: ``ngram_size``) widens them to all n-grams of ``min_n..ngram_size`` characters,
    ``lowercase`` and ``sublinear_tf`` (1 + log tf) are TfidfVectorizer's options.
    """

    def __init__(
        self,
        ngram_size: int = 4,
        max_features: int | None = 3000,
        n_jobs: int | None = None,
        min_n: int | None = None,
        lowercase: bool = True,
        sublinear_tf: bool = False,
    ):
        self.ngram_size = ngram_size
        self.max_features = max_features
        self.n_jobs = n_jobs
        self.min_n = min_n
        self.lowercase = lowercase
        self.sublinear_tf = sublinear_tf

    def _fit_impl(self, X, y) -> None:
        if not (isinstance(self.ngram_size, (int, np.integer)) and self.ngram_size >= 1):
            raise ValueError(f"ngram_size must be a positive int, got {self.ngram_size!r}")
        min_n = self.ngram_size if self.min_n is None else self.min_n
        if not (isinstance(min_n, (int, np.integer)) and 1 <= min_n <= self.ngram_size):
            raise ValueError(f"min_n must be an int in [1, ngram_size], got {self.min_n!r}")
        if isinstance(X, PairSet):
            pairs = training_pairs(X)
            texts = [t for pair in zip(pairs.texts_a(), pairs.texts_b()) for t in pair]
        else:
            texts = X.texts
        self.vectorizer_ = _char_tfidf(
            (min_n, self.ngram_size),
            self.max_features,
            self.n_jobs,
            self.lowercase,
            self.sublinear_tf,
        ).fit(texts)
        # s-normalisation (baselines.normalization) sends each text here again with its pool
        self._rows = RecentRows(self.vectorizer_.transform)

    def _score_impl(self, texts_a, texts_b):
        x, rows_a, rows_b = distinct_rows(self._rows, texts_a, texts_b)
        sims = paired_cosine(x, x, n_jobs=self.n_jobs, rows=(rows_a, rows_b))
        # a text without any vocabulary n-gram has no direction: no answer, not "dissimilar"
        empty = x.getnnz(axis=1) == 0
        bad = empty[rows_a] | empty[rows_b]
        sims[bad] = np.nan
        if bad.any():
            warnings.warn(
                f"{type(self).__name__}: {int(bad.sum())} pair(s) with a text that "
                f"has no vocabulary n-gram scored 0.5 (no answer)",
                stacklevel=3,
            )
        return sims

    def _cross_impl(self, texts_a, texts_b):
        # one product of the two TF-IDF matrices instead of a row pair per (a, b)
        xa, xb = self._rows(texts_a), self._rows(texts_b)
        sims = pairwise_cosine(xa, xb, n_jobs=self.n_jobs)
        sims[xa.getnnz(axis=1) == 0, :] = np.nan
        sims[:, xb.getnnz(axis=1) == 0] = np.nan
        return sims


class NaiveDistance(CalibratedVerifier):
    """PAN's cngdist baseline: :class:`CharNgramCosine` + a grid-fitted grey zone.

    Parameters
    ----------
    ngram_size, max_features : the character n-gram size and vocabulary size (4, 3000).
    objective : what the grey zone maximises on the training pairs (see
        :mod:`baselines.calibration`); pan-code's is ``"pan20-baseline"``.
    n_jobs : threads for n-gram counting and the cosine kernel.
    n_pairs, random_state : training pairs drawn when fitted on a Corpus.
    """

    def __init__(
        self,
        ngram_size: int = 4,
        max_features: int | None = 3000,
        objective: str = "pan20-baseline",
        n_jobs: int | None = None,
        n_pairs: int = 200,
        random_state: int = 0,
    ):
        self.ngram_size = ngram_size
        self.max_features = max_features
        self.objective = objective
        self.n_jobs = n_jobs
        self.n_pairs = n_pairs
        self.random_state = random_state

    def _make_inner(self) -> Verifier:
        return CharNgramCosine(self.ngram_size, self.max_features, self.n_jobs)

    def _make_calibrator(self) -> ScoreCalibrator:
        return ScoreCalibrator(platt=False, grey_zone=True, objective=self.objective)
