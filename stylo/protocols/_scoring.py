"""Tidy metric tables for the protocols, computed with :mod:`stylo.metrics`.

Every table has the columns ``metric``, ``value``, ``n`` (items behind the value) and ``group``
(``"all"`` or a repeat id). ``stylo.metrics`` is imported when a table is built, so sampling
works (and is tested) on its own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["verification_table", "choice_table", "ranking_table"]


def _rows(values: dict, n: int, group) -> list[dict]:
    return [
        {"metric": k, "value": float(v), "n": int(n), "group": str(group)}
        for k, v in values.items()
    ]


def verification_table(
    y_true, y_score, group="all", version: str = "pan21", auc_times_c1: bool = False, ids=None
) -> pd.DataFrame:
    """PAN metrics (``auc``, ``c@1``, ``F1``, ``f_05_u``, ``brier``, ``overall``) plus
    ``precision``, ``recall`` and ``accuracy`` of the decisions ``score > 0.5``: a 0.5 answer
    (PAN's non-answer) is read as "different author" by all three, so it is right on a
    different-author pair, and a verifier's grey zone raises its accuracy on a test set of
    mostly different-author pairs and lowers it on one of mostly same-author pairs (c@1 instead
    credits each non-answer at the accuracy of the answered items).

    The per-item scores ride along in ``table.attrs["scores"]`` (columns ``id``, ``y_true``,
    ``y_score``, ``group``) for ROC curves and re-analysis."""
    from stylo.metrics import classification, pan

    y_true = np.asarray(y_true, dtype=bool)
    y_score = np.asarray(y_score, dtype=np.float64)
    values = dict(pan.evaluate_all(y_true, y_score, version=version))
    if auc_times_c1:
        values["auc*c@1"] = values["auc"] * values["c@1"]
    y_pred = y_score > 0.5
    values["precision"] = classification.precision(y_true, y_pred)
    values["recall"] = classification.recall(y_true, y_pred)
    values["accuracy"] = classification.accuracy(y_true, y_pred)
    table = pd.DataFrame(_rows(values, len(y_true), group))
    table.attrs["scores"] = pd.DataFrame(
        {
            "id": [str(i) for i in ids] if ids is not None else np.arange(len(y_true)).astype(str),
            "y_true": y_true,
            "y_score": y_score,
            "group": str(group),
        }
    )
    return table


def choice_table(answer, scores, group="all") -> pd.DataFrame:
    """Accuracy of one-to-two choices and the share of ties.

    ``answer[i]``: slot (0/1) of the true candidate; ``scores[i]``: the method's two scores.
    The higher score is the choice; equal scores (an abstention, e.g. an LLM answering the same
    in both text orders) count one half, the expectation of a coin flip, as ties do in the
    ranking metrics. ``tie_rate`` says how many there were; ``first_slot_rate`` is the share
    of choices that name the first slot, whatever the truth: the protocol puts the true
    candidate there half the time, so a method that always answers "the first" (a position
    bias small language models often have) shows 1.0 there while its accuracy looks like 0.5.
    Each triplet's choice rides along in ``table.attrs["scores"]`` (``y_true``: the second
    slot is the true one; ``y_score``: 1.0 chose the second, 0.0 the first, 0.5 a tie).
    """
    answer = np.asarray(answer, dtype=np.int64)
    s = np.asarray(scores, dtype=np.float64).reshape(len(answer), 2)
    true = s[np.arange(len(answer)), answer]
    other = s[np.arange(len(answer)), 1 - answer]
    credit = np.where(true > other, 1.0, np.where(true < other, 0.0, 0.5))
    n = len(answer)
    table = pd.DataFrame(
        _rows(
            {
                "accuracy": float(credit.mean()) if n else 0.0,
                "tie_rate": float(np.mean(true == other)) if n else 0.0,
                "first_slot_rate": float(np.mean(s[:, 0] > s[:, 1])) if n else 0.0,
            },
            n,
            group,
        )
    )
    # per triplet, for paired comparisons: whether the second slot is the true one, and the
    # choice as a score (1 second, 0 first, 0.5 tie), so (y_score > 0.5) == y_true is right
    choice = np.where(s[:, 1] > s[:, 0], 1.0, np.where(s[:, 1] < s[:, 0], 0.0, 0.5))
    table.attrs["scores"] = pd.DataFrame(
        {"id": np.arange(n).astype(str), "y_true": answer == 1, "y_score": choice, "group": group}
    )
    return table


def ranking_table(
    scores: list[np.ndarray], relevant: list[np.ndarray], groups: np.ndarray, ks=(1, 3, 5)
) -> pd.DataFrame:
    """rank@k, precision@k and mrr (ties at their exact expectation) per group and overall,
    and ``first_slot_top``: the share of queries whose single top-scored candidate is the first
    one listed (position bias: the protocol's candidate order is random, so an unbiased method
    gives about 1 / candidates).

    ``scores[i]``, ``relevant[i]``: candidate scores (higher = ranked first) and relevance of
    query ``i``; ``groups[i]``: its group (repeat) id. Values are means over the queries; each
    query's rank@k and mrr ride along in ``table.attrs["scores"]``.
    """
    from stylo.metrics import ranking

    per_query = {
        f"rank@{k}": ranking.per_query(ranking.rank_at_k, scores, relevant, k=k) for k in ks
    }
    per_query.update(
        {
            f"precision@{k}": ranking.per_query(ranking.precision_at_k, scores, relevant, k=k)
            for k in ks
        }
    )
    per_query["mrr"] = ranking.per_query(ranking.mrr, scores, relevant)
    per_query["first_slot_top"] = np.array(
        [float(len(s) > 1 and s[0] > np.max(s[1:])) for s in map(np.asarray, scores)]
    )
    groups = np.asarray(groups)
    rows = []
    for g in [*sorted(set(groups.tolist())), "all"]:
        mask = np.ones(len(groups), dtype=bool) if g == "all" else groups == g
        rows += _rows({m: v[mask].mean() for m, v in per_query.items()}, int(mask.sum()), g)
    table = pd.DataFrame(rows)
    # per query, for paired comparisons: its rank@k and reciprocal rank
    table.attrs["scores"] = pd.DataFrame(
        {
            "id": np.arange(len(groups)).astype(str),
            "group": groups.astype(str),
            **{m: v for m, v in per_query.items() if m.startswith("rank@") or m == "mrr"},
        }
    )
    return table
