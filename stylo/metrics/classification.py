"""Precision, recall, F1 and accuracy for verification decisions and authorship attribution.

Binary (``average="binary"``): labels are bool or 0/1 and the positive class is True/1
("same author").

Attribution (``average="macro"``): labels are any hashable author ids; per-author precision,
recall and F1 are averaged with equal weight per author. ``None`` as a prediction means "no
attribution": it is never a class and never correct.

- Closed set (``unknown_label=None``): the authors averaged over are ``labels`` if given,
  else every author seen in ``y_true`` or ``y_pred`` (scikit-learn's macro default).
- Open set (``unknown_label="<UNK>"``), PAN 2018/2019 cross-domain attribution rule: the
  authors averaged over are ``labels`` if given, else every author of ``y_true`` except
  ``unknown_label``. Predictions of ``unknown_label``, ``None`` or any author outside that
  set (and ``unknown_label``) become ``unknown_label``: a miss for a known author's text,
  a correct answer for an unknown author's text (accuracy), and never a false positive of a
  known author. Predicting a known author for an unknown author's text is a false positive.

Zero denominators give 0.0 (scikit-learn's ``zero_division=0``): an author never predicted has
precision 0, an empty class list or empty input gives 0.0. Nothing is rounded (PAN's script
rounded each problem's scores to 3 digits before averaging problems).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["accuracy", "attribution_scores", "f1_score", "precision", "recall"]

AVERAGES = ("binary", "macro")


def _as_list(y, name: str) -> list:
    if isinstance(y, str):
        raise TypeError(f"{name} must be a sequence of labels, not a single string")
    if isinstance(y, np.ndarray):
        if y.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {y.shape}")
        return y.tolist()
    return list(y)


def _pair(y_true, y_pred) -> tuple[list, list]:
    t, p = _as_list(y_true, "y_true"), _as_list(y_pred, "y_pred")
    if len(t) != len(p):
        raise ValueError(f"y_true has {len(t)} labels but y_pred has {len(p)}")
    if any(v is None for v in t):
        raise ValueError("y_true contains None; every text needs a true label")
    return t, p


def _binary(y, name: str) -> np.ndarray:
    a = np.asarray(y)
    if a.dtype == bool:
        return a
    if a.size and (a.dtype == object or not np.isin(a, (0, 1)).all()):
        raise ValueError(
            f"{name} must be bool or 0/1 for average='binary'; use "
            f"average='macro' for author labels"
        )
    return a.astype(bool)


def _open_set(t: list, p: list, labels, unknown_label) -> tuple[list, list]:
    """Scored classes and predictions with everything outside them mapped to unknown."""
    if labels is None:
        labels = [c for c in dict.fromkeys(t) if c != unknown_label]
    keep = set(labels) | {unknown_label}
    return list(labels), [v if v in keep else unknown_label for v in p]


def _class_counts(t: list, p: list, labels: Sequence[Hashable]):
    """(tp, fp, fn) per class of ``labels``, each an (n_labels,) int array."""
    index = {c: i for i, c in enumerate(labels)}
    tp, fp, fn = (np.zeros(len(labels), dtype=np.int64) for _ in range(3))
    for truth, pred in zip(t, p, strict=True):
        if pred is not None and truth == pred:
            if truth in index:
                tp[index[truth]] += 1
            continue
        if pred in index:
            fp[index[pred]] += 1
        if truth in index:
            fn[index[truth]] += 1
    return tp, fp, fn


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.zeros(len(num)), where=den > 0)


def _macro(y_true, y_pred, labels, unknown_label) -> dict[str, float]:
    t, p = _pair(y_true, y_pred)
    if unknown_label is not None:
        labels, p = _open_set(t, p, labels, unknown_label)
    elif labels is None:
        labels = list(dict.fromkeys(v for v in t + p if v is not None))
    tp, fp, fn = _class_counts(t, p, labels)
    if len(labels) == 0:
        prf = (0.0, 0.0, 0.0)
    else:
        prf = tuple(
            float(np.mean(_ratio(num, den)))
            for num, den in ((tp, tp + fp), (tp, tp + fn), (2 * tp, 2 * tp + fp + fn))
        )
    correct = sum(1 for a, b in zip(t, p, strict=True) if b is not None and a == b)
    return {
        "macro_precision": prf[0],
        "macro_recall": prf[1],
        "macro_f1": prf[2],
        "accuracy": correct / len(t) if t else 0.0,
    }


def _binary_counts(y_true, y_pred) -> tuple[int, int, int]:
    t, p = _binary(y_true, "y_true"), _binary(y_pred, "y_pred")
    if t.shape != p.shape or t.ndim != 1:
        raise ValueError(
            f"y_true and y_pred must be 1-D of equal length, got shapes {t.shape} and {p.shape}"
        )
    return int((t & p).sum()), int((~t & p).sum()), int((t & ~p).sum())


def _score(which: str, y_true, y_pred, average, labels, unknown_label) -> float:
    if average not in AVERAGES:
        raise ValueError(f"average must be one of {AVERAGES}, got {average!r}")
    if average == "macro":
        return _macro(y_true, y_pred, labels, unknown_label)[f"macro_{which}"]
    if labels is not None or unknown_label is not None:
        raise ValueError("labels and unknown_label apply to average='macro' only")
    tp, fp, fn = _binary_counts(y_true, y_pred)
    num, den = {
        "precision": (tp, tp + fp),
        "recall": (tp, tp + fn),
        "f1": (2 * tp, 2 * tp + fp + fn),
    }[which]
    return num / den if den else 0.0


def precision(y_true, y_pred, *, average: str = "binary", labels=None, unknown_label=None) -> float:
    """Precision: binary (of the True class) or macro-averaged over authors (module doc)."""
    return _score("precision", y_true, y_pred, average, labels, unknown_label)


def recall(y_true, y_pred, *, average: str = "binary", labels=None, unknown_label=None) -> float:
    """Recall: binary (of the True class) or macro-averaged over authors (module doc)."""
    return _score("recall", y_true, y_pred, average, labels, unknown_label)


def f1_score(y_true, y_pred, *, average: str = "binary", labels=None, unknown_label=None) -> float:
    """F1: binary (of the True class) or macro-averaged over authors, i.e. the mean of the
    per-author F1 values, not F1 of the macro precision and recall (module doc)."""
    return _score("f1", y_true, y_pred, average, labels, unknown_label)


def accuracy(y_true, y_pred, *, unknown_label=None) -> float:
    """Fraction of texts whose prediction equals the truth (``None`` is never correct).

    With ``unknown_label`` (open set), predictions of authors absent from ``y_true`` count
    as ``unknown_label`` first, as PAN 2019 did. Empty input: 0.0.
    """
    return _macro(y_true, y_pred, None, unknown_label)["accuracy"]


def attribution_scores(y_true, y_pred, *, labels=None, unknown_label=None) -> dict[str, float]:
    """Macro precision, recall, F1 and accuracy of an attribution in one pass.

    y_true : (n,) author ids; y_pred : (n,) author ids or None. Returns
    ``{"macro_precision", "macro_recall", "macro_f1", "accuracy"}``. With
    ``unknown_label="<UNK>"`` this is PAN 2019's cross-domain attribution evaluator
    (macro-F1 over the known authors of the ground truth), unrounded.
    """
    return _macro(y_true, y_pred, labels, unknown_label)
