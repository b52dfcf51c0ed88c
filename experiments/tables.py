"""How the run's results are shown: each protocol's headline metrics and unit, the small-sample
flag, setting labels and their order, and markdown tables; shared by ``REPORT.md``
(:mod:`experiments.report`), its leaderboard (:mod:`experiments.leaderboard`) and the plots
(:mod:`experiments.plots`).
"""

from __future__ import annotations

import json

import pandas as pd

__all__ = [
    "HEADLINE_METRICS",
    "PERCENT_PROTOCOLS",
    "SMALL_SAMPLE",
    "is_small",
    "markdown_table",
    "setting_label",
    "setting_order",
]

#: the columns each protocol's table shows, in the papers' order; others show every metric
HEADLINE_METRICS = {
    "aidbench_one_to_one": ["accuracy", "precision", "recall", "auc", "overall"],
    "aidbench_one_to_two": ["accuracy"],
    "aidbench_one_to_many": [
        "rank@1",
        "rank@3",
        "rank@5",
        "precision@1",
        "precision@3",
        "precision@5",
        "mrr",
    ],
    "pan_verification": ["auc", "c@1", "F1", "f_05_u", "brier", "overall", "auc*c@1"],
    "rethinking_av": ["auc", "c@1", "F1", "overall"],
    "cdaa_attribution": [
        "macro_f1",
        "accuracy",
        "macro_f1_no_reject",
        "accuracy_no_reject",
        "unknown_share",
    ],
    "closed_attribution": ["accuracy", "macro_f1"],
}
#: protocols whose papers report percentages
PERCENT_PROTOCOLS = {"aidbench_one_to_one", "aidbench_one_to_two", "aidbench_one_to_many"}
#: a run that scored fewer items is flagged "small sample": below 100, the 95% interval of a
#: proportion near 50% (1.96 * sqrt(0.25 / n)) is wider than ±10 points, more than most gaps
#: between the methods and the published figures
SMALL_SAMPLE = 100


def is_small(n) -> bool:
    """Whether ``n`` items per run is a small sample (missing counts are not)."""
    return not pd.isna(n) and n < SMALL_SAMPLE


def setting_label(setting: str) -> str:
    """A setting's canonical JSON as ``key=value, ...`` ("-" for none)."""
    s = json.loads(setting)
    return ", ".join(f"{k}={v}" for k, v in s.items()) or "-"


def setting_order(setting: str) -> tuple:
    """Sort key of a setting: numbers by value (2 < 5 < 10), other values as text."""
    return tuple(
        (k, (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v)))
        for k, v in sorted(json.loads(setting).items())
    )


def markdown_table(frame: pd.DataFrame) -> str:
    """A markdown table; missing values print empty, counts (``Int64`` columns) as integers."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |")
    return "\n".join(lines)
