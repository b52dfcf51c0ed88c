"""Paired differences between a method and a rival on the same items, with a bootstrap interval.

A mean ± std over seeds says how far a method moves between samples, not whether it beats
another method on the same problems: two attributors scored on the same nine problems can
differ by less than either's spread and still win on most of them, or not. For each named pair
(method, rival) and each cell both ran, this takes the differences on the items they shared:

- attribution (``cdaa_attribution`` macro-F1, ``closed_attribution`` accuracy): the metric of
  every (seed, problem), from the per-problem rows; the interval resamples problems;
- PAN verification (AUC x c@1), AIDBench one-to-two (accuracy, ties one half, in points as
  the report's AIDBench tables), one-to-one (AUC, threshold-free, since its target is a point
  on the precision-recall curve) and one-to-many (rank@1 in points, ties at their
  expectation): the stored per-item scores of both methods, aligned by item id; the interval
  resamples items jointly for both methods, within each seed, the seeds' differences
  averaged.

Reported: the observed difference (method minus rival), a 95 % percentile bootstrap interval
of :data:`N_BOOT` resamples drawn with a fixed seed, and, for attribution, the problems won,
tied and lost. An interval that holds 0 says the items cannot tell the two apart. Only stored
results are read; nothing is chosen from them. Besides the named pairs, the fixed verifier
meets every language model of the run on the items both answered (the local model's cells
run one seed: one seed's items).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from baselines.registry import kind, methods
from experiments.cells import CellStore

__all__ = [
    "N_BOOT",
    "PAIRS",
    "auc_c1_rows",
    "auc_rows",
    "bootstrap_mean",
    "choice_accuracy_rows",
    "mean_points_rows",
    "model_rivals",
    "paired_differences",
]

#: (method, rival) pairs compared wherever both ran: the fixed attributor against PAN19's
#: baseline rule, and the fixed verifier against the two strongest single verifiers and
#: against its own strongest base (what the stacking adds)
PAIRS = (
    ("ensemble-attribution", "svm-attribution"),
    ("ensemble", "impostors"),
    ("ensemble", "lambdag"),
    ("ensemble", "cosine-norm"),
)
#: the fixed verifier is also compared with every row of the run whose method is of these
#: kinds, each model's row on its own (AIDBench's question: does the classical baseline beat
#: the language model on the same items?)
MODEL_KINDS = ("llm",)
ATTRIBUTION_METRICS = {"cdaa_attribution": "macro_f1", "closed_attribution": "accuracy"}
N_BOOT = 2000
_SEED = 0
_KEYS = ["dataset", "protocol", "setting"]


def bootstrap_mean(diffs, n_boot: int = N_BOOT, seed: int = _SEED) -> tuple[float, float]:
    """95 % percentile bootstrap interval of the mean of ``diffs`` (items resampled with
    replacement, ``n_boot`` times, from ``seed``)."""
    d = np.asarray(diffs, dtype=np.float64)
    idx = np.random.default_rng(seed).integers(0, len(d), size=(n_boot, len(d)))
    lo, hi = np.percentile(d[idx].mean(axis=1), [2.5, 97.5])
    return float(lo), float(hi)


def auc_rows(y_true: np.ndarray, y_score: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """ROC AUC of the items (n,) counted with each row of ``weights`` (n_rows, n) (a bootstrap
    resample's multiplicities; ties one half; 0.0 for a row of one class), as
    :func:`stylo.metrics.pan.auc` computes it for the items repeated that often. The scores are
    sorted once for all rows."""
    t = np.asarray(y_true, dtype=bool)
    s = np.asarray(y_score, dtype=np.float64)
    order = np.argsort(s, kind="stable")
    sorted_s = s[order]
    starts = np.flatnonzero(np.r_[True, sorted_s[1:] != sorted_s[:-1]])  # tied runs
    w = np.asarray(weights, dtype=np.float64)[:, order]
    pos = np.add.reduceat(w * t[order], starts, axis=1)
    neg = np.add.reduceat(w * ~t[order], starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg
    u = (pos * (below + 0.5 * neg)).sum(axis=1)
    n_pos, n_neg = pos.sum(axis=1), neg.sum(axis=1)
    both = (n_pos > 0) & (n_neg > 0)
    return np.where(both, u / np.where(both, n_pos * n_neg, 1), 0.0)


def auc_c1_rows(y_true: np.ndarray, y_score: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """PAN's AUC x c@1 of the items (n,) counted with each row of ``weights`` (n_rows, n)
    (0.5 = no answer, AUC 0.0 for a row of one class), as :mod:`stylo.metrics.pan` computes
    them for the items repeated that often."""
    t = np.asarray(y_true, dtype=bool)
    s = np.asarray(y_score, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    n = w.sum(axis=1)
    answered = s != 0.5
    n_c = w @ (((s > 0.5) == t) & answered)
    c1 = (n_c + (w @ ~answered) * n_c / n) / n
    return auc_rows(t, s, w) * c1


def choice_accuracy_rows(
    y_true: np.ndarray, y_score: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """One-to-two accuracy in points of stored choices (n,) counted with each row of
    ``weights`` (n_rows, n) (``y_true``: the second slot is right; ``y_score``: 1 chose it, 0
    the first, 0.5 a tie, one half)."""
    t = np.asarray(y_true, dtype=bool)
    s = np.asarray(y_score, dtype=np.float64)
    credit = np.where(s == 0.5, 0.5, ((s > 0.5) == t).astype(np.float64))
    return mean_points_rows(None, credit, weights)


def mean_points_rows(
    y_true: np.ndarray | None, y_value: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """The mean in points of per-item values in [0, 1] (n,) counted with each row of
    ``weights`` (n_rows, n) (one-to-many's stored rank@1 of each query; no labels)."""
    w = np.asarray(weights, dtype=np.float64)
    return 100.0 * (w @ np.asarray(y_value, dtype=np.float64)) / w.sum(axis=1)


#: protocols compared on stored per-item scores: (metric, its value for the items' labels and
#: scores counted with each row of a weights array, what an item is, the stored label column
#: or None, the stored score column)
ITEM_METRICS = {
    "pan_verification": ("auc*c@1", auc_c1_rows, "problems", "y_true", "y_score"),
    "aidbench_one_to_two": (
        "accuracy (points)",
        choice_accuracy_rows,
        "triplets",
        "y_true",
        "y_score",
    ),
    # threshold-free: one-to-one's target is a point on the precision-recall curve
    "aidbench_one_to_one": ("auc", auc_rows, "pairs", "y_true", "y_score"),
    "aidbench_one_to_many": ("rank@1 (points)", mean_points_rows, "queries", None, "rank@1"),
}


def _attribution_rows(table: pd.DataFrame, method: str, rival: str) -> list[dict]:
    rows = []
    for proto, metric in ATTRIBUTION_METRICS.items():
        part = table[
            (table["protocol"] == proto)
            & (table["metric"] == metric)
            & (table["group"] != "all")
            & table["method"].isin([method, rival])
        ]
        for (ds, setting), cell in part.groupby(["dataset", "setting"], sort=True):
            wide = cell.pivot_table(index=["seed", "group"], columns="method", values="value")
            if not {method, rival} <= set(wide.columns):
                continue
            d = (wide[method] - wide[rival]).dropna().to_numpy()
            lo, hi = bootstrap_mean(d)
            rows.append(
                {
                    "dataset": ds,
                    "protocol": proto,
                    "setting": setting,
                    "metric": metric,
                    "items": f"{len(d)} problems",
                    "difference": float(d.mean()),
                    "low": lo,
                    "high": hi,
                    "won / tied / lost": f"{(d > 0).sum()} / {(d == 0).sum()} / {(d < 0).sum()}",
                }
            )
    return rows


def _stored(store: CellStore, key: str) -> pd.DataFrame | None:
    """A cell's per-item scores; None when the cell or its scores are not in ``store``."""
    record = store.read(key)
    return None if record is None else store.scores(record)


def _item_rows(store: CellStore, table: pd.DataFrame, method: str, rival: str) -> list[dict]:
    part = table[
        table["protocol"].isin(list(ITEM_METRICS))
        & (table["group"] == "all")
        & table["method"].isin([method, rival])
    ]
    rows = []
    for (ds, proto, setting), cell in part.groupby(_KEYS, sort=True):
        metric, value, unit, label, score = ITEM_METRICS[proto]
        per_seed = []  # (labels, method's scores, rival's scores) of each seed both ran
        for _, seed_cells in cell.groupby("seed", sort=True):
            keys = seed_cells.drop_duplicates("method").set_index("method")["key"]
            if not {method, rival} <= set(keys.index):
                continue
            a, b = (_stored(store, keys[m]) for m in (method, rival))
            if a is None or b is None or score not in a or score not in b:
                continue
            columns = ["id", score] + ([label] if label is not None else [])
            both = a[columns].merge(b[["id", score]], on="id", suffixes=("", "_rival"))
            t = both[label].to_numpy() if label is not None else np.zeros(len(both), bool)
            per_seed.append((t, both[score].to_numpy(), both[f"{score}_rival"].to_numpy()))
        if not per_seed:
            continue
        rng = np.random.default_rng(_SEED)
        observed, boot = [], []
        for t, sa, sb in per_seed:
            once = np.ones((1, len(t)))
            observed.append(float(value(t, sa, once)[0] - value(t, sb, once)[0]))
            # each resample as the items' multiplicities, so the metrics sort the scores once
            idx = rng.integers(0, len(t), size=(N_BOOT, len(t)))
            flat = (np.arange(N_BOOT)[:, None] * len(t) + idx).ravel()
            counts = np.bincount(flat, minlength=N_BOOT * len(t)).reshape(N_BOOT, len(t))
            boot.append(value(t, sa, counts) - value(t, sb, counts))
        lo, hi = np.percentile(np.mean(boot, axis=0), [2.5, 97.5])
        rows.append(
            {
                "dataset": ds,
                "protocol": proto,
                "setting": setting,
                "metric": metric,
                "items": f"{min(len(p[0]) for p in per_seed)} {unit} x {len(per_seed)} seed(s)",
                "difference": float(np.mean(observed)),
                "low": float(lo),
                "high": float(hi),
                "won / tied / lost": "",
            }
        )
    return rows


def model_rivals(store: CellStore, table: pd.DataFrame, method: str = "ensemble") -> list:
    """(``method``, label) for each method label of ``table`` whose cells ran a registered
    method of a kind in :data:`MODEL_KINDS` (a label names the model too: ``llm-likelihood
    [gemma-3-270m (local)]``), in the table's order; none when ``method`` did not run."""
    if method not in set(table["method"]):
        return []
    known, out = set(methods()), []
    for label, key in table.drop_duplicates("method")[["method", "key"]].itertuples(index=False):
        record = store.read(key)
        name = None if record is None else record["spec"]["method"]
        if name in known and kind(name) in MODEL_KINDS:
            out.append((method, label))
    return out


def paired_differences(out_dir, table: pd.DataFrame, pairs=None) -> pd.DataFrame:
    """One row per (pair, cell both ran): the method, its rival, the metric, the items, the
    observed difference and its 95 % bootstrap interval (rounded to 3 places). ``pairs``
    (method, rival): by default :data:`PAIRS` and the :func:`model_rivals` of ``ensemble``."""
    if table.empty or not {"group", "key"} <= set(table.columns):
        return pd.DataFrame()
    store = CellStore(out_dir)
    if pairs is None:
        pairs = (*PAIRS, *model_rivals(store, table))
    rows = []
    for method, rival in pairs:
        found = _attribution_rows(table, method, rival)
        found += _item_rows(store, table, method, rival)
        rows += [{"method": method, "rival": rival, **r} for r in found]
    if not rows:
        return pd.DataFrame()
    out = pd.DataFrame(rows).sort_values(["method", "rival", *_KEYS], kind="mergesort")
    return out.round({"difference": 3, "low": 3, "high": 3}).reset_index(drop=True)
