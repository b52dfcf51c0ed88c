"""PAN authorship-verification metrics, exactly as PAN's official evaluators compute them.

A verification answer is a score in [0, 1] per problem: above 0.5 means "same author", below
0.5 "different authors", and *exactly* 0.5 is a non-answer. Two evaluator versions exist:

- ``"pan21"``: the evaluator of PAN 2021 and later (PAN 2022's is identical): AUC, c@1, F1,
  F0.5u (non-answers counted with the false negatives) and the complement of the Brier score;
  ``overall`` is the mean of these five.
- ``"pan20"``: the PAN 2020 evaluator. No Brier score, and its F0.5u binarised scores with
  ``>= 0.5`` *before* looking for non-answers, so 0.5 answers counted as "same author";
  ``overall`` is the mean of four. The official PAN 2020 ranking was computed this way.

Shared semantics (both versions):

- AUC and Brier use every problem, non-answers included (as 0.5).
- c@1 = (n_c + n_u * n_c / n) / n with n_c correct answers, n_u non-answers, n problems.
- F1 is computed on the answered problems only (non-answers removed).
- A missing answer counts as 0.5. In the array functions it is written NaN (or None);
  :func:`align_answers` fills ids that have no answer.

Conventions where the official code would fail or emit NaN (documented deviations, never hit
by the PAN 2020 submissions): every metric of an empty input is 0.0; AUC with a single class
in ``y_true`` is 0.0 (the official code catches scikit-learn's error and returns 0.0); F1 and
F0.5u with a zero denominator are 0.0 (scikit-learn's ``zero_division`` default). Scores
outside [0, 1] or infinite raise ``ValueError`` instead of being scored. Results are never
rounded here (the official script rounds to 3 digits; the CLI offers ``--round``).

Command line (drop-in for the official evaluator)::

    python -m stylo.metrics.pan -i TRUTH_DIR -a ANSWERS_DIR -o OUT_DIR [--version pan20|pan21]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from scipy.stats import rankdata

from stylo.datasets._jsonl import DataError, check_new_id, iter_jsonl

__all__ = [
    "NON_ANSWER",
    "VERSIONS",
    "align_answers",
    "auc",
    "brier",
    "c_at_1",
    "evaluate_all",
    "f1",
    "f_05_u",
    "read_answers",
    "read_truth",
]

NON_ANSWER = 0.5
VERSIONS = ("pan20", "pan21")


def _check(y_true, y_score) -> tuple[np.ndarray, np.ndarray]:
    """Labels as a bool array and scores as float64 with NaN (missing) replaced by 0.5."""
    t = np.asarray(y_true)
    s = np.asarray(y_score, dtype=np.float64)
    if t.ndim != 1 or s.ndim != 1:
        raise ValueError(f"y_true and y_score must be 1-D, got shapes {t.shape} and {s.shape}")
    if len(t) != len(s):
        raise ValueError(f"y_true has {len(t)} labels but y_score has {len(s)} scores")
    if t.dtype != bool:
        if t.size and not np.isin(t, (0, 1)).all():
            bad = t[~np.isin(t, (0, 1))][0]
            raise ValueError(f"y_true must be binary (bool or 0/1), found {bad!r}")
        t = t.astype(bool)
    s = np.where(np.isnan(s), NON_ANSWER, s)
    if s.size and not ((s >= 0.0) & (s <= 1.0)).all():
        i = int(np.flatnonzero(~((s >= 0.0) & (s <= 1.0)))[0])
        raise ValueError(f"y_score[{i}] = {s[i]!r} is outside [0, 1]")
    return t, s


def _check_version(version: str) -> None:
    if version not in VERSIONS:
        raise ValueError(f"unknown evaluator version {version!r}; expected one of {VERSIONS}")


def _auc(t: np.ndarray, s: np.ndarray) -> float:
    n_pos = int(t.sum())
    n_neg = len(t) - n_pos
    if n_pos == 0 or n_neg == 0:
        return 0.0
    # Mann-Whitney U with average ranks: ties count one half, the same area as the
    # trapezoidal ROC curve. Ranks are multiples of 0.5, so the sum is exact in float64.
    ranks = rankdata(s)
    u = ranks[t].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def auc(y_true, y_score) -> float:
    """Area under the ROC curve over all problems (non-answers included as 0.5).

    y_true : (n,) bool or 0/1, True = same author. y_score : (n,) floats in [0, 1], NaN or
    None = missing answer. Returns 0.0 when ``y_true`` has a single class or is empty.
    """
    return _auc(*_check(y_true, y_score))


def _c_at_1(t: np.ndarray, s: np.ndarray) -> float:
    n = len(t)
    if n == 0:
        return 0.0
    answered = s != NON_ANSWER
    n_u = n - int(answered.sum())
    n_c = int(((s > NON_ANSWER) == t)[answered].sum())
    return (n_c + n_u * n_c / n) / n


def c_at_1(y_true, y_score) -> float:
    """c@1 (Peñas and Rodrigo 2011): accuracy that credits non-answers (score exactly 0.5)
    with the accuracy reached on the answered problems.

    c@1 = (n_c + n_u * n_c / n) / n; equals accuracy when every problem is answered.
    Empty input: 0.0.
    """
    return _c_at_1(*_check(y_true, y_score))


def _f1(t: np.ndarray, s: np.ndarray) -> float:
    answered = s != NON_ANSWER
    pred = s[answered] > NON_ANSWER
    truth = t[answered]
    tp = int((pred & truth).sum())
    fp = int((pred & ~truth).sum())
    fn = int((~pred & truth).sum())
    denom = 2 * tp + fp + fn
    return 2 * tp / denom if denom else 0.0


def f1(y_true, y_score) -> float:
    """F1 of the "same author" class on the answered problems only (non-answers removed).

    0.0 when there is no true positive, false positive or false negative among the answered
    problems (including when nothing was answered).
    """
    return _f1(*_check(y_true, y_score))


def _f_05_u(t: np.ndarray, s: np.ndarray, version: str) -> float:
    if version == "pan20":
        # the 2020 evaluator binarised with >= 0.5 first: non-answers became "same author"
        pred_pos, n_u = s >= NON_ANSWER, 0
    else:
        pred_pos = s > NON_ANSWER
        n_u = int((s == NON_ANSWER).sum())
    pred_neg = s < NON_ANSWER
    tp = int((pred_pos & t).sum())
    fp = int((pred_pos & ~t).sum())
    fn = int((pred_neg & t).sum())
    denom = 1.25 * tp + 0.25 * (fn + n_u) + fp
    return 1.25 * tp / denom if denom else 0.0


def f_05_u(y_true, y_score, version: str = "pan21") -> float:
    """F0.5u (Bevendorff et al. 2019): F0.5 of the "same author" class with every non-answer
    counted as a false negative, whatever its truth.

    F0.5u = 1.25 tp / (1.25 tp + 0.25 (fn + n_u) + fp). ``version="pan20"`` reproduces the
    2020 evaluator, which counted 0.5 answers as positive predictions (n_u = 0). 0.0 when
    the denominator is zero (no positive truth, no positive answer, no non-answer).
    """
    _check_version(version)
    return _f_05_u(*_check(y_true, y_score), version)


def _brier(t: np.ndarray, s: np.ndarray) -> float:
    if len(t) == 0:
        return 0.0
    return float(1.0 - np.mean((s - t) ** 2))


def brier(y_true, y_score) -> float:
    """Complement of the Brier score, 1 - mean((score - truth)^2), over all problems
    (non-answers included as 0.5). Empty input: 0.0."""
    return _brier(*_check(y_true, y_score))


def evaluate_all(y_true, y_score, version: str = "pan21") -> dict[str, float]:
    """All metrics of the official evaluator, unrounded.

    Returns the official keys ``auc``, ``c@1``, ``F1``, ``f_05_u``, ``brier`` (pan21 only) and
    ``overall`` (their mean). y_true : (n,) bool or 0/1; y_score : (n,) in [0, 1], NaN =
    missing answer (scored as 0.5).
    """
    _check_version(version)
    t, s = _check(y_true, y_score)
    out = {
        "auc": _auc(t, s),
        "c@1": _c_at_1(t, s),
        "F1": _f1(t, s),
        "f_05_u": _f_05_u(t, s, version),
    }
    if version == "pan21":
        out["brier"] = _brier(t, s)
    out["overall"] = float(np.mean(list(out.values())))
    return out


# ---------------------------------------------------------------- files and command line


def _jsonl_path(path: str | Path, default_name: str) -> Path:
    path = Path(path)
    return path / default_name if path.is_dir() else path


def _read_id(rec: dict, path: Path, lineno: int) -> str:
    pid = rec["id"]
    if isinstance(pid, bool) or not isinstance(pid, (str, int)):
        raise DataError(f"{path}:{lineno}: 'id' must be a string, got {pid!r}")
    return str(pid)


def read_truth(path: str | Path) -> dict[str, bool]:
    """Truth labels by problem id from ``truth.jsonl`` (a folder holding it, or the file).

    Lines are ``{"id": ..., "same": true|false, ...}``; ``same`` may also be 0 or 1. A
    malformed line, a bad label or a repeated id raises ``DataError`` naming file and line.
    """
    path = _jsonl_path(path, "truth.jsonl")
    truth: dict[str, bool] = {}
    first_line: dict[str, int] = {}
    for lineno, rec in iter_jsonl(path, required=("id", "same")):
        pid = _read_id(rec, path, lineno)
        same = rec["same"]
        if isinstance(same, bool) or (isinstance(same, int) and same in (0, 1)):
            same = bool(same)
        else:
            raise DataError(f"{path}:{lineno}: 'same' must be true/false, got {same!r}")
        check_new_id(first_line, pid, path, lineno)
        truth[pid] = same
    if not truth:
        raise DataError(f"{path}: no problems in the ground truth")
    return truth


def read_answers(path: str | Path, known_ids=None) -> dict[str, float]:
    """Answer scores by problem id from ``answers.jsonl`` (a folder holding it, or the file).

    Lines are ``{"id": ..., "value": score}`` with a finite number in [0, 1]. A malformed
    line, a bad value, an id not in ``known_ids`` (when given) or a second answer for the
    same id raises ``DataError`` naming file and line.
    """
    path = _jsonl_path(path, "answers.jsonl")
    known = None if known_ids is None else set(known_ids)
    answers: dict[str, float] = {}
    first_line: dict[str, int] = {}
    for lineno, rec in iter_jsonl(path, required=("id", "value")):
        pid = _read_id(rec, path, lineno)
        value = rec["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DataError(f"{path}:{lineno}: 'value' must be a number in [0, 1], got {value!r}")
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise DataError(f"{path}:{lineno}: 'value' {value!r} is outside [0, 1]")
        if known is not None and pid not in known:
            raise DataError(f"{path}:{lineno}: id {pid!r} is not in the ground truth")
        check_new_id(first_line, pid, path, lineno, what="second answer for id")
        answers[pid] = float(value)
    return answers


def align_answers(
    truth: Mapping[str, bool], answers: Mapping[str, float]
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(y_true, y_score, missing_ids)`` in the order of ``truth``; ids without an answer
    get 0.5 and are listed in ``missing_ids``. Answers for unknown ids raise ``ValueError``."""
    unknown = [pid for pid in answers if pid not in truth]
    if unknown:
        raise ValueError(
            f"{len(unknown)} answer(s) for ids not in the ground truth, e.g. {unknown[0]!r}"
        )
    ids = list(truth)
    missing = [pid for pid in ids if pid not in answers]
    y_true = np.fromiter((truth[pid] for pid in ids), dtype=bool, count=len(ids))
    y_score = np.fromiter(
        (answers.get(pid, NON_ANSWER) for pid in ids), dtype=np.float64, count=len(ids)
    )
    return y_true, y_score, missing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stylo.metrics.pan",
        description="PAN authorship-verification evaluator (drop-in for PAN's "
        "pan20/pan21/pan22 verif evaluators). Writes OUT_DIR/out.json.",
    )
    parser.add_argument(
        "-i",
        required=True,
        metavar="TRUTH_DIR",
        help="folder with truth.jsonl (or the file itself)",
    )
    parser.add_argument(
        "-a",
        required=True,
        metavar="ANSWERS_DIR",
        help="folder with answers.jsonl (or the file itself)",
    )
    parser.add_argument("-o", required=True, metavar="OUT_DIR", help="folder for out.json")
    parser.add_argument(
        "--version",
        choices=VERSIONS,
        default="pan21",
        help="evaluator semantics (default pan21; pan20 = the 2020 ranking)",
    )
    parser.add_argument(
        "--round",
        type=int,
        default=None,
        metavar="DIGITS",
        help="round the results as the official script does (it uses 3); default: full precision",
    )
    args = parser.parse_args(argv)
    try:
        truth = read_truth(args.i)
        answers = read_answers(args.a, known_ids=truth)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    y_true, y_score, missing = align_answers(truth, answers)
    print(f"-> {len(truth)} problems in ground truth")
    print(f"-> {len(answers)} solutions explicitly proposed")
    if missing:
        print(
            f"note: {len(missing)} of {len(truth)} problems have no answer and count as "
            f"0.5 (non-answers), e.g. {missing[0]!r}",
            file=sys.stderr,
        )
    results = evaluate_all(y_true, y_score, version=args.version)
    if args.round is not None:
        results = {k: round(v, args.round) for k, v in results.items()}
    print(results)
    out_dir = Path(args.o)
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "out.json", "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=4, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
