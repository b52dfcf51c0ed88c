"""The look shared by every plot of a run: each method's colour, line style and marker, titles
that give the sample size, legends beside the axes, and the PNG writer (matplotlib, Agg
backend, imported only when a plot is drawn)."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.tables import SMALL_SAMPLE

# the notes on figures not drawn are the plots' own log lines
log = logging.getLogger("experiments.plots")

# tab10 with black in place of its grey, which the chance diagonal uses
COLOURS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#000000",
    "#bcbd22",
    "#17becf",
]
_LINESTYLES = ["-", "--", "-.", ":"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X"]

NO_MATPLOTLIB = "plots skipped: matplotlib is not installed (pip install 'stylo[viz]')"


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def method_styles(methods) -> dict[str, dict]:
    """Colour, line style and marker of each method (sorted names). The three cycles have
    coprime-ish lengths (10, 4, 7), so no two of the first 140 methods share all three and
    neighbours differ in every one."""
    return {
        m: {
            "color": COLOURS[i % len(COLOURS)],
            "linestyle": _LINESTYLES[i % len(_LINESTYLES)],
            "marker": _MARKERS[i % len(_MARKERS)],
        }
        for i, m in enumerate(sorted(set(methods)))
    }


def slug(*parts) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", "__".join(map(str, parts))).strip("_")


def setting_text(setting: str) -> str:
    return ", ".join(f"{k}={v}" for k, v in json.loads(setting).items())


def title(*parts: str) -> str:
    return " · ".join(p for p in parts if p)


def span(values) -> str:
    lo, hi = int(min(values)), int(max(values))
    return str(lo) if lo == hi else f"{lo}–{hi}"


def sample_text(part: pd.DataFrame) -> str:
    """Items per run and seeds of a figure's rows (``n``, ``seeds`` columns), e.g.
    "n=40, 1 seed (small sample)"; a range where rows differ, "" without sizes."""
    if "n" not in part:
        return ""
    n, seeds = part["n"].dropna(), part["seeds"].dropna()
    if n.empty:
        return ""
    small = " (small sample)" if n.min() < SMALL_SAMPLE else ""
    return f"n={span(n)}, {span(seeds)} seed{'s' if seeds.max() > 1 else ''}{small}"


def label_width(labels) -> float:
    """Inches a column (or group of bars) needs so that its fontsize-7 tick label, one line per
    ``\\n``, does not run into the next one."""
    return max(0.9, 0.065 * max(len(t) for lab in labels for t in lab.split("\n")))


def flat(values) -> bool:
    """Every finite value the same: the figure would show nothing to compare."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return len(v) > 0 and bool(np.ptp(v) == 0)


def not_drawn(notes: list[str] | None, what: str, value: str) -> None:
    line = f"{what}: not drawn, every method has {value}"
    log.info(line)
    if notes is not None:
        notes.append(line)


def legend(ax) -> None:
    ax.legend(
        loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, frameon=False
    )


def save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    # "tight" grows the image to hold the legend beside the axes, whatever its labels' length
    fig.savefig(path, dpi=100, bbox_inches="tight", pad_inches=0.1)
    pyplot().close(fig)
    return path


def lines(ax, part: pd.DataFrame, x: str, styles: dict[str, dict]) -> None:
    """One line per method of ``part`` (columns ``x``, ``mean``, ``std`` as fractions) in
    percent, with ± std bars where there are several replicates; each method is shifted by a
    small step along x so that equal values do not hide each other."""
    methods = sorted(part["method"].unique())
    ticks = np.unique(part[x])
    step = 0.4 * (np.diff(ticks).min() if len(ticks) > 1 else 1.0) / max(len(methods) - 1, 1)
    for i, method in enumerate(methods):
        m = part[part["method"] == method].sort_values(x)
        std = 100 * m["std"]
        ax.errorbar(
            m[x] + (i - (len(methods) - 1) / 2) * step,
            100 * m["mean"],
            yerr=None if std.isna().all() else std.fillna(0.0),
            capsize=3,
            lw=1.5,
            ms=5,
            label=method,
            **styles[method],
        )
    ax.set_xticks(ticks)
