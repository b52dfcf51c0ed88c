"""PNG plots of a run (matplotlib, Agg backend); each plot is skipped when its data is absent.

- ROC curves per verifier: from per-item scores (``y_true``, ``y_score``) stored with cells, one
  figure per (dataset, protocol, setting), seeds pooled.
- Rank@k curves: mean ``rank@k`` against k, one line per method, ± std over groups and seeds
  (lines are shifted a little along x, so that methods with equal values stay visible).
- Accuracy (Rank@1) against the number of authors, for settings with an ``n_authors`` key.
- With vs without masking: bars (± std) of the headline metric where some cells ran with a
  masking.
- Heatmap per protocol: its headline metric (the first of
  :data:`experiments.tables.HEADLINE_METRICS`), methods x (dataset, setting).

A method keeps one colour, line style and marker in every plot of a run
(:func:`method_styles`), legends sit beside the axes, not over the data, titles give the items
per run and the seeds (flagged below :data:`experiments.tables.SMALL_SAMPLE`), and a figure in
which every plotted value is the same (e.g. Rank@k 100% for every method) is not drawn:
``notes`` says so. Without matplotlib nothing is drawn and one line says what to install.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from experiments import plot_style as style
from experiments.cells import CellStore
from experiments.methods import row_identity
from experiments.plot_style import method_styles
from experiments.tables import HEADLINE_METRICS, PERCENT_PROTOCOLS, setting_order

__all__ = [
    "heatmaps",
    "make_plots",
    "masking_bars",
    "method_styles",
    "rank_at_k_curves",
    "rank_vs_authors",
    "roc_curves",
]

log = logging.getLogger(__name__)


def roc_curves(
    out_dir: str | Path,
    plot_dir: Path,
    keys: set[str] | None = None,
    styles: dict[str, dict] | None = None,
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
        # named as the results table names them: a language-model method by its model too,
        # a masked cell's setting with its masking (not pooled with the unmasked curve)
        frames.append(
            pd.DataFrame(
                {
                    **row_identity(rec["spec"]),
                    "y_true": sc["y_true"].astype(bool).to_numpy(),
                    "y_score": sc["y_score"].astype(float).to_numpy(),
                }
            )
        )
    if not frames:
        log.info("ROC curves skipped: no cell stored per-item scores")
        return []
    scores = pd.concat(frames)
    styles = styles or method_styles(scores["method"])
    plt = style.pyplot()
    paths = []
    for (ds, proto, setting), part in scores.groupby(["dataset", "protocol", "setting"], sort=True):
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        drawn = 0
        for method, m in part.groupby("method", sort=True):
            if m["y_true"].nunique() < 2:
                continue
            fpr, tpr, _ = roc_curve(m["y_true"], m["y_score"])
            auc = pan_auc(m["y_true"], m["y_score"])
            ax.plot(
                fpr,
                tpr,
                lw=1.5,
                ms=4,
                markevery=0.1,
                label=f"{method} (AUC {auc:.3f})",
                **styles[method],
            )
            drawn += 1
        if not drawn:
            plt.close(fig)
            continue
        sizes = part.groupby(["method", "seed"]).size().groupby("method").agg(n="min", seeds="size")
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
        ax.set(
            xlabel="false positive rate",
            ylabel="true positive rate",
            xlim=(0, 1),
            ylim=(0, 1),
            title=f"{style.title(ds, proto)}\n{style.setting_text(setting)}\n"
            f"{style.sample_text(sizes)}{', pooled' if sizes['seeds'].max() > 1 else ''}",
        )
        style.legend(ax)
        paths.append(style.save(fig, plot_dir / f"roc__{style.slug(ds, proto, setting)}.png"))
    return paths


def rank_at_k_curves(
    summary: pd.DataFrame,
    plot_dir: Path,
    styles: dict[str, dict] | None = None,
    notes: list[str] | None = None,
) -> list[Path]:
    """Mean Rank@k against k per method, one figure per (dataset, protocol, setting)."""
    ranks = summary[summary["metric"].str.fullmatch(r"rank@\d+")]
    if ranks.empty:
        log.info("Rank@k curves skipped: no rank@k metric in the results")
        return []
    ranks = ranks.assign(k=ranks["metric"].str.slice(5).astype(int))
    styles = styles or method_styles(ranks["method"])
    plt = style.pyplot()
    paths = []
    for (ds, proto, setting), part in ranks.groupby(["dataset", "protocol", "setting"]):
        what = f"Rank@k {style.title(ds, proto, style.setting_text(setting))}"
        if style.flat(part["mean"]):
            style.not_drawn(notes, what, f"Rank@k {100 * part['mean'].iloc[0]:g}% at every k")
            continue
        fig, ax = plt.subplots(figsize=(4.5, 3.5))
        style.lines(ax, part, "k", styles)
        ax.set(
            xlabel="k",
            ylabel="Rank@k (%)",
            ylim=(0, 105),
            title="\n".join(
                (style.title(ds, proto), style.setting_text(setting), style.sample_text(part))
            ),
        )
        style.legend(ax)
        paths.append(style.save(fig, plot_dir / f"rank_at_k__{style.slug(ds, proto, setting)}.png"))
    return paths


def rank_vs_authors(
    summary: pd.DataFrame,
    plot_dir: Path,
    metric: str = "rank@1",
    styles: dict[str, dict] | None = None,
    notes: list[str] | None = None,
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
    rest = settings.map(
        lambda s: json.dumps({k: v for k, v in s.items() if k != "n_authors"}, sort_keys=True)
    )
    part = part.assign(n_authors=settings.map(lambda s: s["n_authors"]).astype(int), rest=rest)
    styles = styles or method_styles(part["method"])
    plt = style.pyplot()
    paths = []
    for (ds, proto, rest_s), p in part.groupby(["dataset", "protocol", "rest"]):
        if p["n_authors"].nunique() < 2:
            continue
        extra = style.setting_text(rest_s)
        if style.flat(p["mean"]):
            style.not_drawn(
                notes,
                f"{metric} vs number of authors {style.title(ds, proto, extra)}",
                f"{metric} {100 * p['mean'].iloc[0]:g}% at every number of authors",
            )
            continue
        fig, ax = plt.subplots(figsize=(4.5, 3.5))
        style.lines(ax, p, "n_authors", styles)
        ax.set(
            xlabel="number of authors",
            ylabel=f"{metric} (%)",
            ylim=(0, 105),
            title="\n".join(t for t in (style.title(ds, proto), extra, style.sample_text(p)) if t),
        )
        style.legend(ax)
        paths.append(style.save(fig, plot_dir / f"vs_authors__{style.slug(ds, proto, rest_s)}.png"))
    if not paths:
        log.info("accuracy vs number of authors skipped: fewer than two author counts")
    return paths


def masking_bars(
    summary: pd.DataFrame,
    plot_dir: Path,
    metrics: tuple[str, ...] = ("overall", "auc", "accuracy"),
    notes: list[str] | None = None,
) -> list[Path]:
    """Bars (± std over groups and seeds) with vs without masking (setting key ``masking``;
    a setting without it is the unmasked run, ``none``) per split and method, for each dataset
    and protocol that has masked results, and only for the methods that ran masked."""
    if summary.empty:
        log.info("masking bars skipped: no results")
        return []
    settings = summary["setting"].map(json.loads)
    masked = summary.assign(
        masking=settings.map(lambda s: str(s.get("masking", "none"))),
        split=settings.map(
            lambda s: style.setting_text(
                json.dumps({k: v for k, v in s.items() if k != "masking"}, sort_keys=True)
            )
        ),
    )
    with_mask = masked.groupby(["dataset", "protocol"])["masking"].transform(
        lambda m: (m != "none").any()
    )
    part = masked[with_mask]
    metric = next((m for m in metrics if (part["metric"] == m).any()), None)
    if part.empty or metric is None:
        log.info("masking bars skipped: no masked results")
        return []
    part = part[part["metric"] == metric]
    # a method that ran only unmasked has nothing to compare: its lone bars made the reference
    # grid's PAN19 figure 75 groups (8,800 pixels) wide
    compared = part.groupby(["dataset", "protocol", "method"])["masking"].transform(
        lambda m: (m != "none").any()
    )
    part = part[compared]
    plt = style.pyplot()
    paths = []
    for (ds, proto), p in part.groupby(["dataset", "protocol"]):
        groups = sorted({(s, m) for s, m in zip(p["split"], p["method"], strict=True)})
        # the unmasked run first: the bars beside it are the change a masking makes
        maskings = sorted(p["masking"].unique(), key=lambda mk: (mk != "none", mk))
        if len(maskings) < 2:
            continue
        if style.flat(p["mean"]):
            style.not_drawn(
                notes,
                f"masking bars {style.title(ds, proto)}",
                f"{metric} {p['mean'].iloc[0]:g} with and without masking",
            )
            continue
        labels = [f"{s}\n{m}" for s, m in groups]
        fig, ax = plt.subplots(figsize=(max(4.5, style.label_width(labels) * len(groups) + 2), 3.8))
        width = 0.8 / len(maskings)
        x = np.arange(len(groups))
        for i, mk in enumerate(maskings):
            rows = [
                p[(p["split"] == s) & (p["method"] == m) & (p["masking"] == mk)] for s, m in groups
            ]
            mean = [r["mean"].iloc[0] if len(r) else np.nan for r in rows]
            std = [r["std"].iloc[0] if len(r) else np.nan for r in rows]
            # no bar for a single replicate: a zero-length bar would claim no spread
            ax.bar(
                x + i * width,
                mean,
                width,
                capsize=3,
                color=style.COLOURS[i % len(style.COLOURS)],
                yerr=std if np.isfinite(std).any() else None,
                label=f"masking={mk}",
            )
        ax.set_xticks(x + width * (len(maskings) - 1) / 2, labels, fontsize=7)
        ax.set(
            ylabel=metric,
            title=f"{style.title(ds, proto)}: with vs without masking\n{style.sample_text(p)}",
        )
        style.legend(ax)
        paths.append(style.save(fig, plot_dir / f"masking__{style.slug(ds, proto)}.png"))
    return paths


def heatmaps(summary: pd.DataFrame, plot_dir: Path, notes: list[str] | None = None) -> list[Path]:
    """Per protocol, the mean of its headline metric (the first of ``HEADLINE_METRICS`` the
    results have, else the first metric by name) for every method (rows) on every dataset and
    setting (columns, with their items per run and seeds), written in each cell; grey where a
    method did not run."""
    paths = []
    for proto, part in summary.groupby("protocol", sort=True):
        present = set(part["metric"])
        metric = next((m for m in HEADLINE_METRICS.get(proto, []) if m in present), min(present))
        p = part[part["metric"] == metric]
        if style.flat(p["mean"]):
            style.not_drawn(notes, f"heatmap {proto}", f"{metric} {p['mean'].iloc[0]:g}")
            continue
        columns = sorted(
            {(d, s) for d, s in zip(p["dataset"], p["setting"], strict=True)},
            key=lambda c: (c[0], setting_order(c[1])),
        )
        methods = sorted(p["method"].unique())
        scale = 100.0 if proto in PERCENT_PROTOCOLS else 1.0
        grid = np.full((len(methods), len(columns)), np.nan)
        for r in p.itertuples():
            grid[methods.index(r.method), columns.index((r.dataset, r.setting))] = scale * r.mean
        # one line per setting key, so that the labels stay horizontal and short
        labels = [
            "\n".join(
                [
                    d,
                    *[f"{k}={v}" for k, v in json.loads(s).items()],
                    style.sample_text(p[(p["dataset"] == d) & (p["setting"] == s)]),
                ]
            )
            for d, s in columns
        ]
        plt = style.pyplot()
        fig, ax = plt.subplots(
            figsize=(1.8 + style.label_width(labels) * len(columns), 1.0 + 0.32 * len(methods))
        )
        ax.set_facecolor("#d9d9d9")
        im = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", aspect="auto")
        lo, hi = np.nanmin(grid), np.nanmax(grid)
        for (i, j), v in np.ndenumerate(grid):
            if np.isfinite(v):
                # dark text on the light (high) end of viridis, light text on the dark end
                ax.text(
                    j,
                    i,
                    f"{v:.1f}" if scale != 1.0 else f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="black" if v > lo + 0.6 * (hi - lo) else "white",
                )
        ax.set_yticks(range(len(methods)), methods, fontsize=8)
        ax.set_xticks(range(len(columns)), labels, fontsize=7)
        unit = " (%)" if scale != 1.0 else ""
        missing = ", grey: not run" if np.isnan(grid).any() else ""
        ax.set_title(f"{proto}: {metric}{unit}{missing}", fontsize=10)
        fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02).set_label(metric + unit)
        paths.append(style.save(fig, plot_dir / f"heatmap__{style.slug(proto, metric)}.png"))
    return paths


def _draw(
    families: tuple[str, ...],
    out_dir: str | Path,
    summary: pd.DataFrame,
    keys: set[str] | None,
    styles: dict[str, dict],
) -> list[tuple[list[Path], list[str]]]:
    """The plots of ``families`` (names of :data:`_FAMILIES`), each as (paths, notes)."""
    style.pyplot()  # in a worker process: the Agg backend before anything draws
    plot_dir = Path(out_dir) / "plots"
    out = []
    for family in families:
        notes: list[str] = []
        if family == "roc":
            paths = roc_curves(out_dir, plot_dir, keys, styles=styles)
        elif family == "heatmaps":
            paths = heatmaps(summary, plot_dir, notes)
        elif family == "masking":
            paths = masking_bars(summary, plot_dir, notes=notes)
        else:
            draw = rank_at_k_curves if family == "rank_at_k" else rank_vs_authors
            paths = draw(summary, plot_dir, styles=styles, notes=notes)
        out.append((paths, notes))
    return out


#: the plot families in the order their paths and notes are listed
_FAMILIES = ("roc", "rank_at_k", "rank_vs_authors", "masking", "heatmaps")
#: two jobs of about equal drawing time for ``n_jobs`` > 1 (a quick run: ROC curves ~1.3 s,
#: heatmaps ~1.8 s, the rest ~0.5 s)
_JOBS = (("heatmaps",), ("roc", "rank_at_k", "rank_vs_authors", "masking"))


def make_plots(
    out_dir: str | Path,
    table: pd.DataFrame,
    summary: pd.DataFrame,
    keys: set[str] | None = None,
    notes: list[str] | None = None,
    n_jobs: int = 1,
) -> list[Path]:
    """Every plot the run's data allows (cells of ``keys`` only, if given), under
    ``<out>/plots/``; ``summary`` is :func:`experiments.report.summarise` of ``table``.
    ``notes``, when given, receives one line per plot not drawn and why. With ``n_jobs`` > 1
    the families are drawn in two loky jobs (a run's workers, reused); paths and notes come in
    the same order either way.

    Without matplotlib: no plot, and one line on stderr (and in ``notes``) saying what to
    install."""
    try:
        style.pyplot()
    except ImportError:
        print(style.NO_MATPLOTLIB, file=sys.stderr)
        if notes is not None:
            notes.append(style.NO_MATPLOTLIB)
        return []
    if table.empty:
        log.info("plots skipped: no results (every cell failed or none ran)")
        return []
    args = (out_dir, summary, keys, method_styles(table["method"]))
    if n_jobs == 1:
        drawn = _draw(_FAMILIES, *args)
    else:
        from joblib import Parallel, delayed

        jobs = Parallel(n_jobs=min(n_jobs, len(_JOBS)), backend="loky")(
            delayed(_draw)(job, *args) for job in _JOBS
        )
        by_family = dict(zip((f for job in _JOBS for f in job), (d for j in jobs for d in j)))
        drawn = [by_family[f] for f in _FAMILIES]
    if notes is not None:
        notes.extend(note for _, family_notes in drawn for note in family_notes)
    return [path for paths, _ in drawn for path in paths]
