"""Linear SVM baselines: closed- and open-set attribution.

Sources: the PAN 2018/2019 cross-domain attribution baselines (character n-gram frequencies,
one-vs-rest linear SVM; PAN19 rejects to ``<UNK>`` when the top two candidates are too close),
M. Kestemont et al., "Overview of the author identification task at PAN-2018" and
"... cross-domain authorship attribution task at PAN 2019", CLEF Working Notes; E. Stamatatos,
"Authorship attribution using text distortion", EACL 2017 (char n-gram TF-IDF + SVM).

- :class:`SVMAttributor`: TF-IDF (sublinear tf, L2 rows) of character 1-4-grams occurring
  in at least ``min_df`` training texts, one-vs-rest ``LinearSVC(C=1)``. ``decision_function``
  ranks the candidates; with ``reject_margin`` set, a text whose best and second-best
  decision values differ by less than it is answered ``unknown_label`` (PAN19's open set).
- :func:`fit_reject_margin`: the margin maximising macro-F1 (with the ``<UNK>`` rule) over
  given problems; the benchmark chooses it for each PAN19 problem on the other 19 problems
  (leave-one-problem-out), so no problem's own truth sets its threshold.
- :class:`SVMOpenSetAttributor`: the same kind of classifier as a ``Verifier`` for the
  cross-domain attribution protocol (``attribute``): fitted per problem on its candidates'
  known texts, decision values Platt-calibrated by cross-validation, and "unknown author"
  when the two most probable candidates are closer than ``reject_threshold`` (PAN19's
  baseline rule, its default 0.1). It has no score for a lone pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import LinearSVC
from sklearn.utils.validation import check_is_fitted

from baselines._blas import fit_one_thread
from baselines._features import char_tfidf
from stylo.metrics.classification import attribution_scores
from stylo.text_input import check_texts
from stylo.verifier import Attributor

__all__ = [
    "SVMAttributor",
    "SVMOpenSetAttributor",
    "fit_reject_margin",
    "lead_scores",
    "top2_margin",
]


def lead_scores(scores: np.ndarray, margin: float) -> np.ndarray:
    """``0.5 + (s_j - max_{k != j} s_k - margin) / 2`` for (n_texts, n_candidates) scores:
    each candidate against the best of the others, so the best candidate reaches 0.5
    exactly when its lead over the second reaches ``margin`` (PAN19's "unknown author" rule
    as the protocol's "every candidate below 0.5"), in the order of the scores."""
    top2 = np.sort(scores, axis=1)[:, -2:]
    best_other = np.where(scores == top2[:, [1]], top2[:, [0]], top2[:, [1]])
    return 0.5 + (scores - best_other - margin) / 2


def top2_margin(scores: np.ndarray) -> np.ndarray:
    """Best minus second-best decision value per row of (n_texts, n_classes); inf if 1 class."""
    scores = np.atleast_2d(scores)
    if scores.shape[1] < 2:
        return np.full(scores.shape[0], np.inf)
    top = np.sort(scores, axis=1)[:, -2:]
    return top[:, 1] - top[:, 0]


class SVMAttributor(ClassifierMixin, BaseEstimator):
    """Char n-gram TF-IDF + one-vs-rest LinearSVC; optional ``<UNK>`` rejection by margin.

    ``fit(texts, authors)``; ``decision_function(texts)`` -> (n_texts, n_classes) in the
    order of ``classes_`` (higher = more likely); ``predict(texts)`` -> authors, or
    ``unknown_label`` where the top-2 margin is below ``reject_margin``.
    """

    def __init__(
        self,
        ngram_range: tuple[int, int] = (1, 4),
        min_df: int = 2,
        max_features: int | None = None,
        C: float = 1.0,
        reject_margin: float | None = None,
        unknown_label: str = "<UNK>",
        random_state: int = 0,
    ):
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.max_features = max_features
        self.C = C
        self.reject_margin = reject_margin
        self.unknown_label = unknown_label
        self.random_state = random_state

    def fit(self, texts, authors):
        texts = check_texts(texts)
        authors = np.asarray(authors)
        if len(texts) != len(authors):
            raise ValueError(f"{len(texts)} texts but {len(authors)} authors")
        if len(np.unique(authors)) < 2:
            raise ValueError("SVMAttributor needs at least two authors")
        min_df = min(int(self.min_df), len(texts))
        self.vectorizer_ = char_tfidf(self.ngram_range, min_df, self.max_features)
        x = self.vectorizer_.fit_transform(texts)
        self.svm_ = LinearSVC(C=self.C, random_state=self.random_state).fit(x, authors)
        self.classes_ = self.svm_.classes_
        return self

    def decision_function(self, texts) -> np.ndarray:
        check_is_fitted(self, "svm_")
        scores = self.svm_.decision_function(self.vectorizer_.transform(check_texts(texts)))
        # scikit-learn returns one column for two classes: expand to one per class
        return np.column_stack([-scores, scores]) if scores.ndim == 1 else scores

    def predict(self, texts) -> np.ndarray:
        scores = self.decision_function(texts)
        pred = self.classes_[np.argmax(scores, axis=1)].astype(object)
        if self.reject_margin is not None:
            pred[top2_margin(scores) < self.reject_margin] = self.unknown_label
        return pred


def fit_reject_margin(
    problems: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    unknown_label: str = "<UNK>",
    grid: np.ndarray | None = None,
) -> float:
    """Margin maximising mean open-set macro-F1 over problems.

    ``problems``: (scores (n, n_classes), classes (n_classes,), y_true (n,)) per problem.
    Ties go to the smallest margin. Default grid: 0 to 1 in steps of 0.01.
    """
    if not problems:
        raise ValueError("fit_reject_margin needs at least one problem")
    grid = np.round(np.arange(0.0, 1.0001, 0.01), 10) if grid is None else np.asarray(grid)
    best, best_value = float(grid[0]), -1.0
    for margin in grid:
        f1s = []
        for scores, classes, y_true in problems:
            pred = np.asarray(classes)[np.argmax(scores, axis=1)].astype(object)
            pred[top2_margin(scores) < margin] = unknown_label
            f1s.append(
                attribution_scores(list(y_true), list(pred), unknown_label=unknown_label)[
                    "macro_f1"
                ]
            )
        if np.mean(f1s) > best_value + 1e-12:
            best, best_value = float(margin), float(np.mean(f1s))
    return best


class SVMOpenSetAttributor(Attributor):
    """Per-problem one-vs-rest linear SVM over the candidates, calibrated, with PAN19's
    reject rule; for ``attribute`` only (the cross-domain attribution protocol).

    For each problem: TF-IDF of char n-grams (as :class:`SVMAttributor`) fitted on the
    candidates' known texts, ``LinearSVC(C)`` one-vs-rest, probabilities by sigmoid
    calibration over ``cv`` stratified folds (fewer if a candidate has fewer known texts; at
    least two each). With p the probabilities of a text, candidate j scores
    ``0.5 + (p_j - max_{k != j} p_k - reject_threshold) / 2`` (clipped to [0, 1]): the most
    probable candidate scores at least 0.5 exactly when its lead over the second reaches
    ``reject_threshold``, so the protocol's "all below 0.5 -> unknown author" is PAN19's
    baseline rule, and the order of the scores is that of the probabilities. ``fit`` learns
    nothing (each problem is its own training set).
    """

    requires_fit = False

    def __init__(
        self,
        ngram_range: tuple[int, int] = (1, 4),
        min_df: int = 2,
        max_features: int | None = None,
        C: float = 1.0,
        cv: int = 5,
        reject_threshold: float = 0.1,
        random_state: int = 0,
    ):
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.max_features = max_features
        self.C = C
        self.cv = cv
        self.reject_threshold = reject_threshold
        self.random_state = random_state

    def _fit_impl(self, X, y) -> None:
        if isinstance(self.cv, bool) or not isinstance(self.cv, Integral) or self.cv < 2:
            raise ValueError(f"cv must be an int >= 2 (calibration folds), got {self.cv!r}")
        if not 0.0 <= float(self.reject_threshold) < 1.0:
            raise ValueError(f"reject_threshold must be in [0, 1), got {self.reject_threshold!r}")

    def _attribute_impl(self, candidates, texts):
        if len(candidates) < 2:
            raise ValueError(f"{type(self).__name__} needs at least two candidates")
        fewest = min(len(c) for c in candidates)
        if fewest < 2:
            raise ValueError(
                f"{type(self).__name__} calibrates by cross-validation: it needs "
                f"two known texts per candidate (fewest: {fewest})"
            )
        known = [t for c in candidates for t in c]
        labels = np.repeat(np.arange(len(candidates)), [len(c) for c in candidates])
        vectorizer = char_tfidf(
            self.ngram_range, min(int(self.min_df), len(known)), self.max_features
        )
        folds = StratifiedKFold(n_splits=min(self.cv, fewest))
        model = CalibratedClassifierCV(
            LinearSVC(C=self.C, random_state=self.random_state), method="sigmoid", cv=folds
        )
        fit_one_thread(model, vectorizer.fit_transform(known), labels)
        return lead_scores(
            model.predict_proba(vectorizer.transform(texts)), float(self.reject_threshold)
        )
