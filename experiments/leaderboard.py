"""Published figures beside this run's: the leaderboard of ``REPORT.md``.

The papers' numbers are kept in ``stylo/resources/published/*.csv`` (source, table, dataset,
protocol, setting, method, metric, value, std, unit, verified, note). :func:`load_published`
reads them in stylo's dataset, protocol and setting names, and :func:`leaderboard` puts each
published (dataset, protocol, setting, metric) beside stylo's methods on the same cells, with
how many items each side was measured on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

import stylo
from experiments.tables import SMALL_SAMPLE, is_small, markdown_table, setting_label

__all__ = [
    "PUBLISHED_DIR",
    "leaderboard",
    "leaderboard_markdown",
    "load_published",
    "published_items",
]

# package data of stylo, so a non-editable install finds it too
PUBLISHED_DIR = Path(stylo.__file__).resolve().parent / "resources" / "published"

_ITEMS = re.compile(r"(\d+) (?:text pairs|examples)\b")
_SEEDS = re.compile(r"over (\d+) random seeds")
_GROUPS = re.compile(r"(\d+) random author groups, each evaluated (\d+) times")


def published_items(note: str) -> int | None:
    """Items a published row was measured on, over all its runs, as its note states them
    (AIDBench: "200 text pairs per run", "over 3 random seeds": 600; "10 random author
    groups, each evaluated 3 times": 30 queries); None when the note does not say."""
    note = note if isinstance(note, str) else ""
    groups = _GROUPS.search(note)
    if groups:
        return int(groups[1]) * int(groups[2])
    items = _ITEMS.search(note)
    if not items:
        return None
    seeds = _SEEDS.search(note)
    return int(items[1]) * (int(seeds[1]) if seeds else 1)


def _size_note(n, seeds, published: int | None) -> str:
    """The leaderboard note on a stylo row's sample: small, or smaller than the published."""
    notes = [f"small sample (n < {SMALL_SAMPLE})"] if is_small(n) else []
    if published is not None and not pd.isna(n) and not pd.isna(seeds):
        if n * seeds < published:
            notes.append(f"fewer items than the published rows ({n * seeds} vs {published})")
    return "; ".join(notes)


def load_published(folder: str | Path = PUBLISHED_DIR) -> pd.DataFrame:
    """Every published figure in ``folder/*.csv`` (source, table, dataset, protocol, setting,
    method, metric, value, std, unit, verified, note), in stylo's names (see
    :func:`_stylo_names`); a figure that two files give is kept from the first file, by name
    (``aidbench.csv``, curated, before ``aidbench_tables.csv``, the papers' tables as
    printed)."""
    frames = [
        _stylo_names(pd.read_csv(p, keep_default_na=False, dtype=str))
        for p in sorted(Path(folder).glob("*.csv"))
    ]
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    out = out[out["protocol"] != ""]
    key = out[["table", "dataset", "protocol", "setting", "metric"]].assign(
        method=out["method"].str.lower()
    )
    out = out[~key.duplicated()].reset_index(drop=True)
    out["value"] = pd.to_numeric(out["value"].str.replace(",", ""), errors="coerce")
    out["std"] = pd.to_numeric(out["std"], errors="coerce")
    return out[out["value"].notna()].reset_index(drop=True)


#: the papers' corpus names -> (stylo's dataset, setting items that select the same texts):
#: our mlpapers stands in for AIDBench's arXiv cs.LG papers, all authors or first authors
_PUBLISHED_DATASETS = {
    "research_papers": ("mlpapers", {"first_author": False}),
    "research_papers_first_author": ("mlpapers", {"first_author": True}),
}


def _stylo_names(frame: pd.DataFrame) -> pd.DataFrame:
    """Published rows in stylo's dataset, protocol and setting names, so they meet our cells.

    AIDBench's one-to-one mixes ``{"pos": 150, "neg": 50}`` are our ``{"mix": "150/50"}``,
    its RAG table's ``{"candidates": 50, "filter_to": 10}`` our one-to-many
    ``{"pool_size": 50, "keep": 10}``, one-to-two's ``{"candidates": 2}`` our only setting; the
    prompt family of an LLM row goes into its method name ("GPT-4-turbo (topic-ignored
    prompt)"). Prompt ablations (Tables 18-23) have no protocol here: their ``protocol`` is
    emptied and the rows dropped. Rows without a ``verified`` column are quoted."""
    frame = frame.copy()
    for column, default in (("std", ""), ("verified", "quoted"), ("note", "")):
        if column not in frame.columns:
            frame[column] = default
    rows = []
    for r in frame.to_dict("records"):
        setting = json.loads(r["setting"] or "{}")
        dataset, extra = _PUBLISHED_DATASETS.get(r["dataset"], (r["dataset"], {}))
        setting.update(extra)
        protocol = r["protocol"]
        if "pos" in setting and "neg" in setting:
            setting["mix"] = f"{setting.pop('pos')}/{setting.pop('neg')}"
        if protocol == "aidbench_rag":
            protocol = "aidbench_one_to_many"
            setting["pool_size"], setting["keep"] = (
                setting.pop("candidates"),
                setting.pop("filter_to"),
            )
        if protocol == "aidbench_one_to_two":
            setting.pop("candidates", None)
        if protocol == "aidbench_ablation":
            protocol = ""
        method = r["method"]
        if "prompt" in setting:
            method = f"{method} ({setting.pop('prompt')} prompt)"
        rows.append(
            {
                **r,
                "dataset": dataset,
                "protocol": protocol,
                "method": method,
                "setting": json.dumps(setting, sort_keys=True),
            }
        )
    return pd.DataFrame(rows, columns=[*frame.columns]) if rows else frame


def _matches(published_setting: str, ours: str) -> bool:
    want, have = json.loads(published_setting or "{}"), json.loads(ours)
    return all(have.get(k) == v for k, v in want.items())


def leaderboard(summary: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Published figures beside stylo's methods on the same dataset, protocol, setting, metric.

    One block per published (dataset, protocol, setting, metric) that this run has results
    for; stylo's values are shown in the published unit (percent or fraction), best first, with
    their items per run (``n``) and ``seeds``, and "small sample" in ``note`` below
    :data:`SMALL_SAMPLE` items and "fewer items than the published rows" when ``n`` x
    ``seeds`` is below what a published row's note says it was measured on
    (:func:`published_items`).
    """
    rows = []
    if published.empty:
        return pd.DataFrame()
    keys = ["dataset", "protocol", "setting", "metric"]
    for (ds, proto, setting, metric), pub in published.groupby(keys, sort=False):
        percent = (pub["unit"] == "percent").all()
        scale = 100.0 if percent else 1.0
        block = [
            {
                "system": r.method,
                "value": r.value,
                "std": r.std,
                "n": pd.NA,
                "seeds": pd.NA,
                "source": f"{r.source} {r.table}".strip(),
                "note": f"{r.verified}: {r.note}" if r.note else r.verified,
            }
            for r in pub.itertuples()
        ]
        ours = summary[
            (summary["dataset"] == ds)
            & (summary["protocol"] == proto)
            & (summary["metric"] == metric)
        ]
        ours = ours[[_matches(setting, s) for s in ours["setting"]]]
        if ours.empty:
            continue
        sizes = [k for k in map(published_items, pub["note"]) if k is not None]
        published_n = max(sizes) if sizes else None
        for r in ours.itertuples():
            label = (
                ""
                if json.loads(r.setting) == json.loads(setting or "{}")
                else f" [{setting_label(r.setting)}]"
            )
            block.append(
                {
                    "system": f"stylo: {r.method}{label}",
                    "value": scale * r.mean,
                    "std": scale * r.std,
                    "n": r.n,
                    "seeds": r.seeds,
                    "source": "this run",
                    "note": _size_note(r.n, r.seeds, published_n),
                }
            )
        # best first; PAN's "brier" is the complement 1 - Brier, higher is better too
        block.sort(key=lambda b: -b["value"])
        for b in block:
            rows.append(
                {
                    "dataset": ds,
                    "protocol": proto,
                    "setting": setting_label(setting or "{}"),
                    "metric": metric,
                    "unit": "percent" if percent else "fraction",
                    **b,
                }
            )
    return pd.DataFrame(rows).astype({"n": "Int64", "seeds": "Int64"}) if rows else pd.DataFrame()


def leaderboard_markdown(board: pd.DataFrame) -> str:
    if board.empty:
        return "_No result of this run has a published counterpart._"
    digits = np.where(board["unit"] == "percent", 1, 3)
    shown = board.assign(
        value=[f"{v:.{d}f}" for v, d in zip(board["value"], digits, strict=True)],
        std=["" if pd.isna(s) else f"{s:.{d}f}" for s, d in zip(board["std"], digits, strict=True)],
    )
    return markdown_table(
        shown[
            [
                "dataset",
                "protocol",
                "setting",
                "metric",
                "system",
                "value",
                "std",
                "n",
                "seeds",
                "source",
                "note",
            ]
        ]
    )
