"""PNG plots of a run (matplotlib, Agg backend); each plot is skipped when its data is absent.

- ROC curves per verifier: from per-item scores (``y_true``, ``y_score``) stored with cells, one
  figure per (dataset, protocol, setting), seeds pooled.
- Rank@k curves: mean ``rank@k`` against k, one line per method.
- Accuracy (Rank@1) against the number of authors, for settings with an ``n_authors`` key.
- With vs without masking: bars of the headline metric where some cells ran with a masking.

Without matplotlib nothing is drawn and one line says what to install.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.report import summarise
from experiments.runner import CellStore

__all__ = ["make_plots", "masking_bars", "rank_at_k_curves", "rank_vs_authors", "roc_curves"]

log = logging.getLogger(__name__)

NO_MATPLOTLIB = "plots skipped: matplotlib is not installed (pip install 'stylo[viz]')"


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _slug(*parts) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", "__".join(map(str, parts))).strip("_")


def _setting_text(setting: str) -> str:
    return ", ".join(f"{k}={v}" for k, v in json.loads(setting).items())


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    # fixed margins: tight_layout costs more than the drawing on a busy machine
    fig.subplots_adjust(left=0.16, right=0.97, bottom=0.16, top=0.84)
    fig.savefig(path, dpi=100)
    _pyplot().close(fig)
    return path


def roc_curves(out_dir: str | Path, plot_dir: Path, keys: set[str] | None = None
               ) -> list[Path]:
    """One ROC figure per (dataset, protocol, setting) that has per-item scores."""
    from sklearn.metrics import roc_curve

    from stylo.metrics.pan import auc as pan_auc
    store = CellStore(out_dir)
    frames = []
    for rec in store.records(keys):
        if rec.get("status") != "ok" or not rec.get("scores_file"):
            continue
        sc = store.scores(rec)
        if sc is None or not {"y_true", "y_score"} <= set(sc.columns):
            continue
        spec = rec["spec"]
        frames.append(pd.DataFrame({"dataset": spec["dataset"], "protocol": spec["protocol"],
                                    "setting": json.dumps(spec["setting"], sort_keys=True),
                                    "method": spec["method"],
                                    "y_true": sc["y_true"].astype(bool).to_numpy(),
                                    "y_score": sc["y_score"].astype(float).to_numpy()}))
    if not frames:
        log.info("ROC curves skipped: no cell stored per-item scores")
        return []
    plt = _pyplot()
    paths = []
    for (ds, proto, setting), part in pd.concat(frames).groupby(
            ["dataset", "protocol", "setting"], sort=True):
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        drawn = 0
        for method, m in part.groupby("method", sort=True):
            if m["y_true"].nunique() < 2:
                continue
            fpr, tpr, _ = roc_curve(m["y_true"], m["y_score"])
            auc = pan_auc(m["y_true"], m["y_score"])
            ax.plot(fpr, tpr, label=f"{method} (AUC {auc:.3f})")
            drawn += 1
        if not drawn:
            plt.close(fig)
            continue
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
        ax.set(xlabel="false positive rate", ylabel="true positive rate",
               title=f"{ds} · {proto}\n{_setting_text(setting)}")
        ax.legend(loc="lower right", fontsize=8)
        paths.append(_save(fig, plot_dir / f"roc__{_slug(ds, proto, setting)}.png"))
    return paths


def rank_at_k_curves(summary: pd.DataFrame, plot_dir: Path) -> list[Path]:
    """Mean Rank@k against k per method, one figure per (dataset, protocol, setting)."""
    ranks = summary[summary["metric"].str.fullmatch(r"rank@\d+")]
    if ranks.empty:
        log.info("Rank@k curves skipped: no rank@k metric in the results")
        return []
    ranks = ranks.assign(k=ranks["metric"].str.slice(5).astype(int))
    plt = _pyplot()
    paths = []
    for (ds, proto, setting), part in ranks.groupby(["dataset", "protocol", "setting"]):
        fig, ax = plt.subplots(figsize=(4.5, 3.5))
        for method, m in part.groupby("method", sort=True):
            m = m.sort_values("k")
            ax.errorbar(m["k"], 100 * m["mean"], yerr=100 * m["std"], marker="o", capsize=3,
                        label=method)
        ax.set(xlabel="k", ylabel="Rank@k (%)", ylim=(0, 100),
               title=f"{ds} · {proto}\n{_setting_text(setting)}")
        ax.legend(fontsize=8)
        paths.append(_save(fig, plot_dir / f"rank_at_k__{_slug(ds, proto, setting)}.png"))
    return paths


def rank_vs_authors(summary: pd.DataFrame, plot_dir: Path, metric: str = "rank@1"
                    ) -> list[Path]:
    """``metric`` against the setting's ``n_authors``, one line per method, one figure per
    (dataset, protocol, other setting keys)."""
    part = summary[summary["metric"] == metric]
    settings = part["setting"].map(json.loads)
    has_n = settings.map(lambda s: "n_authors" in s).astype(bool)
    part, settings = part[has_n], settings[has_n]
    if part.empty:
        log.info("accuracy vs number of authors skipped: no %s with an n_authors setting", metric)
        return []
    rest = settings.map(lambda s: json.dumps({k: v for k, v in s.items() if k != "n_authors"},
                                             sort_keys=True))
    part = part.assign(n_authors=settings.map(lambda s: s["n_authors"]).astype(int), rest=rest)
    plt = _pyplot()
    paths = []
    for (ds, proto, rest_s), p in part.groupby(["dataset", "protocol", "rest"]):
        if p["n_authors"].nunique() < 2:
            continue
        fig, ax = plt.subplots(figsize=(4.5, 3.5))
        for method, m in p.groupby("method", sort=True):
            m = m.sort_values("n_authors")
            ax.errorbar(m["n_authors"], 100 * m["mean"], yerr=100 * m["std"], marker="o",
                        capsize=3, label=method)
        extra = _setting_text(rest_s)
        ax.set(xlabel="number of authors", ylabel=f"{metric} (%)", ylim=(0, 100),
               title=f"{ds} · {proto}" + (f"\n{extra}" if extra else ""))
        ax.legend(fontsize=8)
        paths.append(_save(fig, plot_dir / f"vs_authors__{_slug(ds, proto, rest_s)}.png"))
    if not paths:
        log.info("accuracy vs number of authors skipped: fewer than two author counts")
    return paths


def masking_bars(summary: pd.DataFrame, plot_dir: Path,
                 metrics: tuple[str, ...] = ("overall", "auc", "accuracy")) -> list[Path]:
    """Bars with vs without masking (setting key ``masking``; a setting without it is the
    unmasked run, ``none``) per split and method, for each dataset and protocol that has
    masked results."""
    if summary.empty:
        log.info("masking bars skipped: no results")
        return []
    settings = summary["setting"].map(json.loads)
    masked = summary.assign(masking=settings.map(lambda s: str(s.get("masking", "none"))),
                            split=settings.map(lambda s: _setting_text(json.dumps(
                                {k: v for k, v in s.items() if k != "masking"},
                                sort_keys=True))))
    with_mask = masked.groupby(["dataset", "protocol"])["masking"].transform(
        lambda m: (m != "none").any())
    part = masked[with_mask]
    metric = next((m for m in metrics if (part["metric"] == m).any()), None)
    if part.empty or metric is None:
        log.info("masking bars skipped: no masked results")
        return []
    part = part[part["metric"] == metric]
    plt = _pyplot()
    paths = []
    for (ds, proto), p in part.groupby(["dataset", "protocol"]):
        groups = sorted({(s, m) for s, m in zip(p["split"], p["method"], strict=True)})
        maskings = sorted(p["masking"].unique())
        if len(maskings) < 2:
            continue
        fig, ax = plt.subplots(figsize=(max(4.5, 0.9 * len(groups) + 2), 3.8))
        width = 0.8 / len(maskings)
        x = np.arange(len(groups))
        for i, mk in enumerate(maskings):
            vals = [p[(p["split"] == s) & (p["method"] == m) & (p["masking"] == mk)]["mean"]
                    for s, m in groups]
            ax.bar(x + i * width, [v.iloc[0] if len(v) else np.nan for v in vals], width,
                   label=f"masking={mk}")
        ax.set_xticks(x + width * (len(maskings) - 1) / 2,
                      [f"{s}\n{m}" for s, m in groups], fontsize=7)
        ax.set(ylabel=metric, title=f"{ds} · {proto}: with vs without masking")
        ax.legend(fontsize=8)
        paths.append(_save(fig, plot_dir / f"masking__{_slug(ds, proto)}.png"))
    return paths


def make_plots(out_dir: str | Path, table: pd.DataFrame, keys: set[str] | None = None
               ) -> list[Path]:
    """Every plot the run's data allows (cells of ``keys`` only, if given), under
    ``<out>/plots/``.

    Without matplotlib: no plot, and one line on stderr saying what to install."""
    try:
        _pyplot()
    except ImportError:
        print(NO_MATPLOTLIB, file=sys.stderr)
        return []
    if table.empty:
        log.info("plots skipped: no results (every cell failed or none ran)")
        return []
    plot_dir = Path(out_dir) / "plots"
    summary = summarise(table)
    return [*roc_curves(out_dir, plot_dir, keys), *rank_at_k_curves(summary, plot_dir),
            *rank_vs_authors(summary, plot_dir), *masking_bars(summary, plot_dir)]
