"""Collect stored cells into a tidy table, a manifest and ``REPORT.md``.

The table is long: one row per (cell, group, metric) with columns ``dataset, protocol, setting,
method, seed, group, metric, value, n, runtime, key`` (``setting`` is the setting's canonical
JSON). ``REPORT.md`` has one table per protocol shaped like the papers' (mean ± std over
groups and seeds; AIDBench protocols in percent), the leaderboard beside the published numbers
(:mod:`experiments.leaderboard`), paired differences of the fixed methods against their rivals
(:mod:`experiments.paired`), and the list of failed cells with their errors. Every row of
the tables and the leaderboard says how many items one run scored (``n``) and how many seeds
ran; rows with fewer than :data:`~experiments.tables.SMALL_SAMPLE` items are flagged "small
sample".
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.capped_training import capped_training_section
from experiments.cells import CellStore
from experiments.cost import cell_costs, cost_by_kind, neural_costs
from experiments.leaderboard import leaderboard, leaderboard_markdown, load_published
from experiments.methods import row_identity
from experiments.operating_points import operating_points
from experiments.paired import N_BOOT, paired_differences
from experiments.tables import (
    HEADLINE_METRICS,
    PERCENT_PROTOCOLS,
    SMALL_SAMPLE,
    is_small,
    markdown_table,
    setting_label,
    setting_order,
)
from stylo.metrics.aggregate import mean_std

__all__ = [
    "ENTITY_MASS_FILE",
    "collect",
    "manifest",
    "position_bias",
    "protocol_tables",
    "replicates",
    "split_failures",
    "summarise",
    "write_report",
    "write_tables",
]

REPO_ROOT = Path(__file__).resolve().parents[1]

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
    """The tidy results table and a table of the cells without results (key, spec columns,
    ``status``: ``failed`` or ``inapplicable``, error), from every stored cell or only those of
    ``keys``."""
    rows, failures = [], []
    for rec in CellStore(out_dir).records(keys):
        base = {**row_identity(rec["spec"]), "key": rec["key"]}
        if rec.get("status") != "ok":
            failures.append(
                {
                    **base,
                    "status": rec.get("status", "failed"),
                    "error": rec.get("error", ""),
                    "traceback": rec.get("traceback", ""),
                }
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
    columns = [*TABLE_COLUMNS[:5], "key", "status", "error", "traceback"]
    return table, pd.DataFrame(failures, columns=columns)


def split_failures(failures: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`collect`'s cells without results as (failed, inapplicable); a table without a
    ``status`` column is all failures."""
    if "status" not in failures.columns:
        return failures, failures.iloc[:0]
    inapplicable = failures["status"] == "inapplicable"
    return failures[~inapplicable], failures[inapplicable]


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
                    setting_order(wide["setting"].iloc[i]),
                    wide["method"].iloc[i],
                ),
            )
        ]
        wide["setting"] = wide["setting"].map(setting_label)
        columns = [*index, "n", "seeds", *metrics]
        small = wide["n"].map(is_small)
        if small.any():
            wide["sample"] = np.where(small, "small sample", "")
            columns.append("sample")
        out[proto] = markdown_table(wide[columns])
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
                "setting": setting_label(r.setting),
                "method": r.method,
                "first candidate %": round(100 * r.mean, 1),
                "ties %": "" if pd.isna(tie) else round(100 * tie, 1),
                "n": r.n,
                "seeds": r.seeds,
            }
        )
    return pd.DataFrame(out).astype({"n": "Int64", "seeds": "Int64"})


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
        "2` takes about half the summed time on an idle machine; `model`: a language "
        "model's time for the answers the cells used, an answer replayed from the response "
        "cache counted at what it took when first computed, so a cell answered from the "
        "cache runs in seconds and still shows its cost; `from cache`: the share of those "
        "answers replayed).",
        "",
        markdown_table(cost_by_kind(costs)),
        "",
    ]
    neural = neural_costs(costs)
    if not neural.empty:
        neural = neural.assign(setting=neural["setting"].map(setting_label))
        lines += ["Training time of each neural cell:", "", markdown_table(neural), ""]
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
    ``failures`` is :func:`collect`'s second table (failed and inapplicable cells);
    ``plot_notes`` (from :func:`experiments.plots.make_plots`) say which plots were not drawn
    and why."""
    failed, inapplicable = split_failures(failures)
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
        f"{s.get('computed', '?')} computed, {len(failed)} failed"
        f"{f', {len(inapplicable)} not applicable' if len(inapplicable) else ''}{_not_run(s)}.",
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
    if "key" in table.columns and len(table):
        lines += capped_training_section(out, set(table["key"]))
    lines += [
        "## Leaderboard beside published numbers",
        "",
        "Published rows come from `stylo/resources/published/*.csv` (source and table "
        "per row; "
        "`verified`: closed form = recomputed exactly, measured = run on this platform, "
        "quoted = copied from the cited paper as given in the project's issues).",
        "",
        leaderboard_markdown(leaderboard(summary, published)),
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
            markdown_table(points),
            "",
        ]
    paired = paired_differences(out, table)
    if not paired.empty:
        paired["setting"] = paired["setting"].map(setting_label)
        for col in ("difference", "low", "high"):
            paired[col] = paired[col].map("{:+.3f}".format)
        lines += [
            "## Paired differences",
            "",
            "A method minus its rival on the items both scored (attribution: each problem "
            "of each seed; PAN verification and AIDBench one-to-one, one-to-two and "
            "one-to-many: the stored per-item scores, resampled jointly within each seed), "
            "with a 95 % percentile "
            f"bootstrap interval ({N_BOOT} resamples, fixed seed) and the problems won / tied "
            "/ lost. An interval holding 0: these items cannot tell the two apart.",
            "",
            markdown_table(paired),
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
            markdown_table(bias),
            "",
        ]
    lines += _cost_section(out, table)
    explained = out / ENTITY_MASS_FILE
    if explained.exists():
        # written by `python -m experiments.explanations --out` the same folder
        title, *body = explained.read_text(encoding="utf-8").splitlines() or [""]
        corpus = title.split(": ", 1)[1] if ": " in title else "?"
        lines += [f"## Named entities in the neural verifiers' attributions ({corpus})", *body, ""]
    if len(failed):
        lines += ["## Failed cells", ""]
        for f in failed.itertuples():
            lines += [
                f"- `{f.key}` {f.dataset} / {f.protocol} / {setting_label(f.setting)} / "
                f"{f.method} / seed {f.seed}: {f.error}"
            ]
        lines.append("")
    if len(inapplicable):
        lines += [
            "## Cells that do not apply",
            "",
            "A method that must be fitted, on a task that leaves no training data (every text "
            "is in its test items); per task, the methods:",
            "",
        ]
        by_task = inapplicable.groupby(["dataset", "protocol", "setting", "seed"], sort=True)
        for (dataset, protocol, setting, seed), group in by_task:
            lines += [
                f"- {dataset} / {protocol} / {setting_label(setting)} / seed {seed}: "
                f"{', '.join(sorted(group['method']))}"
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
