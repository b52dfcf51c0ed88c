"""Collect stored cells into a tidy table, a manifest and ``REPORT.md``.

The table is long: one row per (cell, group, metric) with columns ``dataset, protocol, setting,
method, seed, group, metric, value, n, runtime, key`` (``setting`` is the setting's canonical
JSON). ``REPORT.md`` has one table per protocol shaped like the papers' (mean ± std over
groups and seeds; AIDBench protocols in percent), a leaderboard beside the published numbers kept
in ``stylo/resources/published/*.csv``, and the list of failed cells with their errors. Every
row of the tables and the leaderboard says how many items one run scored (``n``) and how many
seeds ran; rows with fewer than :data:`SMALL_SAMPLE` items are flagged "small sample".
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

import stylo
from experiments.cells import CellStore
from experiments.cost import cell_costs, cost_by_kind, neural_costs
from experiments.methods import method_label
from experiments.operating_points import operating_points
from stylo.metrics.aggregate import mean_std

__all__ = [
    "HEADLINE_METRICS",
    "PUBLISHED_DIR",
    "SMALL_SAMPLE",
    "collect",
    "leaderboard",
    "load_published",
    "manifest",
    "position_bias",
    "published_items",
    "replicates",
    "summarise",
    "write_report",
    "write_tables",
]

REPO_ROOT = Path(__file__).resolve().parents[1]
# package data of stylo, so a non-editable install finds it too
PUBLISHED_DIR = Path(stylo.__file__).resolve().parent / "resources" / "published"

_SUMMARY_KEYS = ["dataset", "protocol", "setting", "method", "metric"]
TABLE_COLUMNS = [
    "dataset",
    "protocol",
    "setting",
    "method",
    "seed",
    "group",
    "metric",
    "value",
    "n",
    "runtime",
    "key",
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
#: the entity-attribution report of ``experiments.explanations``, included when present
ENTITY_MASS_FILE = "ENTITY_MASS.md"

_PACKAGES = [
    "stylo",
    "numpy",
    "scipy",
    "scikit-learn",
    "numba",
    "pandas",
    "joblib",
    "pyarrow",
    "matplotlib",
    "tqdm",
    "dask",
    "distributed",
    "zstandard",
    "nltk",
]


def collect(out_dir: str | Path, keys: set[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tidy results table and a table of failed cells (key, spec columns, error), from
    every stored cell or only those of ``keys``."""
    rows, failures = [], []
    for rec in CellStore(out_dir).records(keys):
        spec = rec["spec"]
        # a masking shows as a setting key, so tables and plots compare with and without it
        setting = {**spec["setting"], **({"masking": spec["masking"]} if "masking" in spec else {})}
        base = {
            "dataset": spec["dataset"],
            "protocol": spec["protocol"],
            "setting": json.dumps(setting, sort_keys=True),
            "method": method_label(
                spec["method"], spec.get("method_options", {}), spec.get("method_params")
            ),
            "seed": spec["seed"],
            "key": rec["key"],
        }
        if rec.get("status") != "ok":
            failures.append(
                {**base, "error": rec.get("error", ""), "traceback": rec.get("traceback", "")}
            )
            continue
        for r in rec["rows"]:
            rows.append(
                {
                    **base,
                    "group": str(r.get("group", "all")),
                    "metric": r["metric"],
                    "value": r["value"],
                    "n": r.get("n"),
                    "runtime": rec.get("runtime"),
                }
            )
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    table = table.sort_values(
        ["dataset", "protocol", "setting", "method", "seed", "group", "metric"], kind="mergesort"
    ).reset_index(drop=True)
    return table, pd.DataFrame(failures, columns=[*TABLE_COLUMNS[:5], "key", "error", "traceback"])


def write_tables(table: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """``results.csv`` and, when pyarrow is installed, ``results.parquet``."""
    out = Path(out_dir)
    paths = [out / "results.csv"]
    table.to_csv(paths[0], index=False)
    try:
        table.to_parquet(out / "results.parquet", index=False)
        paths.append(out / "results.parquet")
    except ImportError:
        pass
    return paths


def _git_commit() -> dict:
    def git(*args):
        return subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()

    try:
        return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def manifest(
    argv: list[str], started: str, finished: str, machine: dict, summary: dict, skipped: list[str]
) -> dict:
    """What produced the results: code version, packages, command, machine, times, counts."""
    versions = {}
    for pkg in _PACKAGES:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    return {
        "git": _git_commit(),
        "packages": versions,
        "command": [Path(sys.executable).name, "-m", "experiments.run_all", *argv],
        "machine": machine,
        "started": started,
        "finished": finished,
        "summary": summary,
        "skipped": skipped,
    }


def replicates(table: pd.DataFrame) -> pd.DataFrame:
    """The rows that are replicates: per cell and metric, the per-group rows when a protocol
    reports groups (its ``"all"`` row is their aggregate, not one more replicate), else the
    ``"all"`` row."""
    has_groups = (table["group"] != "all").groupby([table["key"], table["metric"]]).transform("any")
    return table[~(has_groups & (table["group"] == "all"))]


def _mean_std(table: pd.DataFrame, percent: bool = False) -> pd.DataFrame:
    return mean_std(
        replicates(table),
        over=["seed", "group"],
        by=_SUMMARY_KEYS,
        ddof=1,
        percent=percent,
        digits=1 if percent else 3,
    )


def _sample_sizes(table: pd.DataFrame) -> pd.DataFrame:
    """``n``, the items one run scored (texts, triplets, queries, pairs or problems: the sum of
    the replicates' ``n``, the fewest over seeds; missing when a protocol gives none), and
    ``seeds``, the runs, per dataset x protocol x setting x method x metric."""
    per_run = (
        replicates(table)
        .assign(n=lambda t: pd.to_numeric(t["n"]))
        .groupby([*_SUMMARY_KEYS, "seed"])["n"]
        .sum(min_count=1)
    )
    out = per_run.groupby(_SUMMARY_KEYS).agg(["min", "size"]).reset_index()
    return out.rename(columns={"min": "n", "size": "seeds"}).astype(
        {"n": "Int64", "seeds": "Int64"}
    )


def summarise(table: pd.DataFrame) -> pd.DataFrame:
    """Mean, std (sample, ddof=1; NaN for one replicate) and count of each metric over the
    replicates (groups and seeds) of every dataset x protocol x setting x method, computed by
    :func:`stylo.metrics.aggregate.mean_std`, with the items per run (``n``, the fewest over
    seeds) and the number of ``seeds``."""
    columns = [*_SUMMARY_KEYS, "mean", "std", "count", "n", "seeds"]
    if table.empty:
        return pd.DataFrame(columns=columns)
    out = _mean_std(table).rename(columns={"n": "count"})
    return out.merge(_sample_sizes(table), on=_SUMMARY_KEYS, how="left")[columns]


def _not_run(summary: dict) -> str:
    n = summary.get("not_run")
    return f", {n} not run (the run was stopped early; rerun it to resume)" if n else ""


def _small(n) -> bool:
    return not pd.isna(n) and n < SMALL_SAMPLE


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
    notes = [f"small sample (n < {SMALL_SAMPLE})"] if _small(n) else []
    if published is not None and not pd.isna(n) and not pd.isna(seeds):
        if n * seeds < published:
            notes.append(f"fewer items than the published rows ({n * seeds} vs {published})")
    return "; ".join(notes)


def _setting_label(setting: str) -> str:
    s = json.loads(setting)
    return ", ".join(f"{k}={v}" for k, v in s.items()) or "-"


def _natural(setting: str) -> tuple:
    """Sort key of a setting: numbers by value (2 < 5 < 10), other values as text."""
    return tuple(
        (k, (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v)))
        for k, v in sorted(json.loads(setting).items())
    )


def _markdown(frame: pd.DataFrame) -> str:
    """A markdown table; missing values print empty, counts (``Int64`` columns) as integers."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |")
    return "\n".join(lines)


def protocol_tables(table: pd.DataFrame) -> dict[str, str]:
    """Markdown table per protocol: rows dataset x setting x method with the items per run
    (``n``, the fewest over the shown metrics) and seeds, columns its headline metrics as
    mean ± std (percent for AIDBench protocols); a ``sample`` column flags small samples
    when a row has one."""
    out = {}
    index = ["dataset", "setting", "method"]
    for proto, rows in table.groupby("protocol", sort=True):
        part = _mean_std(rows, percent=proto in PERCENT_PROTOCOLS)
        wanted = HEADLINE_METRICS.get(proto)
        metrics = [
            m for m in (wanted or sorted(part["metric"].unique())) if m in set(part["metric"])
        ]
        wide = part.pivot_table(
            index=index, columns="metric", values="formatted", aggfunc="first"
        ).reset_index()
        sizes = _sample_sizes(rows)
        sizes = (
            sizes[sizes["metric"].isin(metrics)]
            .groupby(index)
            .agg(n=("n", "min"), seeds=("seeds", "max"))
            .reset_index()
        )
        wide = wide.merge(sizes, on=index, how="left")
        wide = wide.iloc[
            sorted(
                range(len(wide)),
                key=lambda i: (
                    wide["dataset"].iloc[i],
                    _natural(wide["setting"].iloc[i]),
                    wide["method"].iloc[i],
                ),
            )
        ]
        wide["setting"] = wide["setting"].map(_setting_label)
        columns = [*index, "n", "seeds", *metrics]
        small = wide["n"].map(_small)
        if small.any():
            wide["sample"] = np.where(small, "small sample", "")
            columns.append("sample")
        out[proto] = _markdown(wide[columns])
    return out


def position_bias(summary: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, protocol, setting and method with a position-bias figure: the share of
    choices naming the first candidate (one-to-two ``first_slot_rate``, one-to-many
    ``first_slot_top``) and of ties, in percent, with items per run and seeds."""
    rows = summary[summary["metric"].isin(["first_slot_rate", "first_slot_top"])]
    if rows.empty:
        return pd.DataFrame()
    ties = summary[summary["metric"] == "tie_rate"].set_index(
        ["dataset", "protocol", "setting", "method"]
    )["mean"]
    out = []
    for r in rows.itertuples():
        tie = ties.get((r.dataset, r.protocol, r.setting, r.method), np.nan)
        out.append(
            {
                "dataset": r.dataset,
                "protocol": r.protocol,
                "setting": _setting_label(r.setting),
                "method": r.method,
                "first candidate %": round(100 * r.mean, 1),
                "ties %": "" if pd.isna(tie) else round(100 * tie, 1),
                "n": r.n,
                "seeds": r.seeds,
            }
        )
    return pd.DataFrame(out).astype({"n": "Int64", "seeds": "Int64"})


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
                else f" [{_setting_label(r.setting)}]"
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
                    "setting": _setting_label(setting or "{}"),
                    "metric": metric,
                    "unit": "percent" if percent else "fraction",
                    **b,
                }
            )
    return pd.DataFrame(rows).astype({"n": "Int64", "seeds": "Int64"}) if rows else pd.DataFrame()


def _leaderboard_markdown(board: pd.DataFrame) -> str:
    if board.empty:
        return "_No result of this run has a published counterpart._"
    digits = np.where(board["unit"] == "percent", 1, 3)
    shown = board.assign(
        value=[f"{v:.{d}f}" for v, d in zip(board["value"], digits, strict=True)],
        std=["" if pd.isna(s) else f"{s:.{d}f}" for s, d in zip(board["std"], digits, strict=True)],
    )
    return _markdown(
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


def _cost_section(out: Path, table: pd.DataFrame) -> list[str]:
    """The "Cost" lines: worker time by method kind and each neural cell's training time."""
    keys = set(table["key"]) if "key" in table.columns else set()
    if not keys:  # nothing of this report ran (or a bare table)
        return []
    costs = cell_costs(out, keys)
    if costs.empty:
        return []
    lines = [
        "## Cost",
        "",
        "Worker time of this report's cells by method kind (`cell`: one worker's seconds "
        "from fit to the last metric; `fit`: the part spent training; a run with `--n-jobs "
        "2` takes about half the summed time on an idle machine).",
        "",
        _markdown(cost_by_kind(costs)),
        "",
    ]
    neural = neural_costs(costs)
    if not neural.empty:
        neural = neural.assign(setting=neural["setting"].map(_setting_label))
        lines += ["Training time of each neural cell:", "", _markdown(neural), ""]
    return lines


def write_report(
    out_dir: str | Path,
    table: pd.DataFrame,
    summary: pd.DataFrame,
    failures: pd.DataFrame,
    info: dict,
    published: pd.DataFrame | None = None,
    plots: list[Path] | None = None,
    plot_notes: list[str] | None = None,
) -> Path:
    """Write ``REPORT.md`` and return its path; ``summary`` is :func:`summarise` of ``table``;
    ``plot_notes`` (from :func:`experiments.plots.make_plots`) say which plots were not drawn
    and why."""
    out = Path(out_dir)
    published = load_published() if published is None else published
    s = info.get("summary", {})
    lines = [
        "# stylo reference results",
        "",
        f"Command: `{' '.join(info.get('command', []))}`  ",
        f"Commit: `{info.get('git', {}).get('commit')}`"
        f"{' (uncommitted changes)' if info.get('git', {}).get('dirty') else ''}  ",
        f"Machine: {info.get('machine', {}).get('platform')}, "
        f"{info.get('machine', {}).get('cpus')} CPUs  ",
        f"Started {info.get('started')}, finished {info.get('finished')}  ",
        f"Cells: {s.get('total', '?')} in the grid, {s.get('already_done', '?')} reused, "
        f"{s.get('computed', '?')} computed, {len(failures)} failed{_not_run(s)}.",
        "",
        "Values are mean ± std (sample std, n-1) over groups and seeds; AIDBench protocols in "
        "percent, PAN protocols as fractions. `n`: items one run scored (texts, triplets, "
        "queries, pairs or problems; the fewest over seeds), `seeds`: runs. "
        f'"small sample": n < {SMALL_SAMPLE}, where the 95% interval of a proportion '
        "near 50% is wider than ±10 points.",
        "",
    ]
    if info.get("skipped"):
        lines += ["## Skipped", "", *[f"- {m}" for m in info["skipped"]], ""]
    lines += [
        "## Leaderboard beside published numbers",
        "",
        "Published rows come from `stylo/resources/published/*.csv` (source and table "
        "per row; "
        "`verified`: closed form = recomputed exactly, measured = run on this platform, "
        "quoted = copied from the cited paper as given in the project's issues).",
        "",
        _leaderboard_markdown(leaderboard(summary, published)),
        "",
    ]
    for proto, md in protocol_tables(table).items():
        lines += [f"## {proto}", "", md, ""]
    points = operating_points(out, table, published)
    if not points.empty:
        lines += [
            "## One-to-one at the published operating point",
            "",
            "Our precision at GPT-4-Turbo's recall (a point on our precision-recall "
            "curve, from the stored per-pair scores) beside our precision and recall at "
            "our own threshold (score > 0.5, fitted on training pairs); percent, means "
            "over seeds.",
            "",
            _markdown(points),
            "",
        ]
    bias = position_bias(summary)
    if not bias.empty:
        lines += [
            "## Position bias",
            "",
            "How often a method's choice is the first candidate shown, whatever the "
            "truth: one-to-two puts the true candidate first in about half the triplets, "
            "one-to-many in random order (an unbiased method: about 50 % and about "
            "1 / candidates). A method that always names the first slot shows 100 % here "
            "while its accuracy looks like a coin's. `ties`: choices with equal scores "
            "(abstentions; for a both-orders method, the two orders disagreeing), so its "
            "agreement rate is 100 % minus ties.",
            "",
            _markdown(bias),
            "",
        ]
    lines += _cost_section(out, table)
    explained = out / ENTITY_MASS_FILE
    if explained.exists():
        # written by `python -m experiments.explanations --out` the same folder
        title, *body = explained.read_text(encoding="utf-8").splitlines() or [""]
        corpus = title.split(": ", 1)[1] if ": " in title else "?"
        lines += [f"## Named entities in the neural verifiers' attributions ({corpus})", *body, ""]
    if len(failures):
        lines += ["## Failed cells", ""]
        for f in failures.itertuples():
            lines += [
                f"- `{f.key}` {f.dataset} / {f.protocol} / {_setting_label(f.setting)} / "
                f"{f.method} / seed {f.seed}: {f.error}"
            ]
        lines.append("")
    if plots or plot_notes:
        lines += ["## Plots", ""]
        if plot_notes:
            lines += [*[f"- {n}" for n in plot_notes], ""]
        lines += [*[f"![{p.stem}](plots/{p.name})" for p in plots or []], ""]
    path = out / "REPORT.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
