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
    return [{"metric": k, "value": float(v), "n": int(n), "group": str(group)}
            for k, v in values.items()]


def verification_table(y_true, y_score, group="all", version: str = "pan21",
                       auc_times_c1: bool = False) -> pd.DataFrame:
    """PAN metrics (``auc``, ``c@1``, ``F1``, ``f_05_u``, ``brier``, ``overall``) plus
    ``precision``, ``recall`` and ``accuracy`` of the decisions ``score > 0.5`` (a 0.5 answer
    is a non-answer: counted as wrong by accuracy, as negative by precision/recall)."""
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
    return pd.DataFrame(_rows(values, len(y_true), group))


def choice_table(answer, chosen, group="all") -> pd.DataFrame:
    """Accuracy of one-to-two choices (``answer`` and ``chosen`` are slots 0/1)."""
    from stylo.metrics import classification

    answer = np.asarray(answer, dtype=np.int64)
    chosen = np.asarray(chosen, dtype=np.int64)
    return pd.DataFrame(_rows({"accuracy": classification.accuracy(answer, chosen)},
                              len(answer), group))


def ranking_table(relevance: list[np.ndarray], groups: np.ndarray, ks=(1, 3, 5)
                  ) -> pd.DataFrame:
    """rank@k, precision@k and mrr per group (repeat) and over all queries.

    ``relevance[i]``: booleans of query ``i``'s candidates in the method's ranked order.
    """
    from stylo.metrics import ranking

    rows = []
    groups = np.asarray(groups)
    for g in [*sorted(set(groups.tolist())), "all"]:
        idx = np.arange(len(relevance)) if g == "all" else np.flatnonzero(groups == g)
        rel = [relevance[i] for i in idx]
        values = {}
        for k in ks:
            values[f"rank@{k}"] = ranking.rank_at_k(rel, k)
        for k in ks:
            values[f"precision@{k}"] = ranking.precision_at_k(rel, k)
        values["mrr"] = ranking.mrr(rel)
        rows += _rows(values, len(idx), g)
    return pd.DataFrame(rows)
