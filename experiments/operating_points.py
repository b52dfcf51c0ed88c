"""One-to-one at the published model's operating point (AIDBench Tables 2, 11-13).

AIDBench reports a model's precision and recall at the one threshold its answers imply;
GPT-4-Turbo answers conservatively (Enron: precision 99 % at recall 37 %), while our verifiers
answer at the threshold they fitted on training pairs (score > 0.5). Two such pairs of numbers
cannot be compared. This module puts both on our precision-recall curve: for each one-to-one
cell it reads the per-pair scores the runner stored and takes our precision at the published
model's recall, beside our precision and recall at our own threshold. Only the test pairs'
scores are read, and no threshold is chosen on them: the point is a reading of the curve at a
recall fixed by the paper.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.cells import CellStore

__all__ = ["PROTOCOL", "operating_points", "precision_at_recall"]

PROTOCOL = "aidbench_one_to_one"


def precision_at_recall(y_true, y_score, recall: float) -> float:
    """Precision of "same author" for every score >= t, at the highest threshold t whose recall
    reaches ``recall`` (a fraction); tied scores are decided together. NaN without positives."""
    t = np.asarray(y_true, dtype=bool)
    s = np.asarray(y_score, dtype=np.float64)
    if not t.any():
        return float("nan")
    order = np.argsort(-s, kind="stable")
    s, t = s[order], t[order]
    last = np.r_[np.flatnonzero(np.diff(s) != 0), len(s) - 1]  # end of each run of ties
    tp = np.cumsum(t)[last]
    reached = np.flatnonzero(tp / t.sum() >= recall - 1e-12)[0]
    return float(tp[reached] / (last[reached] + 1))


def _published_points(published: pd.DataFrame, systems) -> pd.DataFrame:
    """(dataset, setting, system, recall, precision) of each published one-to-one point, in
    percent, for the systems named."""
    pub = published[
        (published["protocol"] == PROTOCOL)
        & published["metric"].isin(["precision", "recall"])
        & published["method"].str.lower().isin([s.lower() for s in systems])
    ]
    wide = pub.pivot_table(
        index=["dataset", "setting", "method"], columns="metric", values="value", aggfunc="first"
    ).reset_index()
    return wide.dropna(subset=["precision", "recall"]) if len(wide) else wide


def operating_points(
    out_dir: str | Path, table: pd.DataFrame, published: pd.DataFrame, systems=("GPT-4-turbo",)
) -> pd.DataFrame:
    """One row per (dataset, mix, published system, our method): the published recall and
    precision, our precision at that recall and our precision and recall at our own threshold
    (means over seeds, percent)."""
    if published.empty or not {"protocol", "group", "key"} <= set(table.columns):
        return pd.DataFrame()  # no published figure, or a table without stored cells
    ours = table[(table["protocol"] == PROTOCOL) & (table["group"] == "all")]
    if ours.empty:
        return pd.DataFrame()
    points = _published_points(published, systems)
    if points.empty:
        return pd.DataFrame()
    store = CellStore(out_dir)
    rows = []
    for (ds, setting, method), cells in ours.groupby(["dataset", "setting", "method"], sort=True):
        mix = json.loads(setting).get("mix")
        same_mix = np.array([json.loads(p).get("mix") == mix for p in points["setting"]])
        here = points[(points["dataset"] == ds).to_numpy() & same_mix]
        if here.empty:
            continue
        own = cells.pivot_table(index="seed", columns="metric", values="value")
        scores = [store.scores(store.read(k)) for k in cells["key"].unique()]
        scores = [s for s in scores if s is not None]
        if not scores:
            continue
        for p in here.itertuples():
            at = [precision_at_recall(s["y_true"], s["y_score"], p.recall / 100) for s in scores]
            rows.append(
                {
                    "dataset": ds,
                    "mix": mix,
                    "system": p.method,
                    "published recall": p.recall,
                    "published precision": p.precision,
                    "method": method,
                    "precision at that recall": 100 * np.mean(at),
                    "own precision": 100 * own["precision"].mean(),
                    "own recall": 100 * own["recall"].mean(),
                    "seeds": len(scores),
                }
            )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    return (
        out.sort_values(
            ["dataset", "mix", "system", "precision at that recall"],
            ascending=[True, True, True, False],
            kind="mergesort",
        )
        .round(1)
        .reset_index(drop=True)
    )
