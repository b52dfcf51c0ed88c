"""What a run cost: cell time by method kind, and each neural cell's training time.

Read from the stored cell records (``runtime``: the cell's seconds of one worker, from the
method's clone to its last metric; ``fit_seconds``: the part spent in ``fit``, recorded by
cells run since the fit clock was added, blank for older ones; ``model_seconds``,
``model_calls``, ``model_cached``: a language model's answers, from
:func:`stylo.llm.model_clock`). Sums are worker time, not wall time: a run with ``--n-jobs 2``
takes about half of them on an otherwise idle machine. A cell whose answers came from the
response cache runs in seconds; its model seconds still say what the answers took when first
computed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from baselines.registry import kind, methods
from experiments.cells import CellStore
from experiments.methods import row_identity

__all__ = ["cell_costs", "cost_by_kind", "neural_costs"]

_MODEL = ["model_seconds", "model_calls", "model_cached"]
_COLUMNS = [
    "key",
    "kind",
    "method",
    "dataset",
    "protocol",
    "setting",
    "runtime",
    "fit_seconds",
    *_MODEL,
]


def cell_costs(out_dir: str | Path, keys: set[str] | None = None) -> pd.DataFrame:
    """One row per finished cell: key, kind, method, dataset, protocol, setting (JSON, with
    the masking), runtime, fit seconds and the model's seconds, calls and cached calls
    (blank for cells stored before the model clock)."""
    known = set(methods())
    rows = []
    for rec in CellStore(out_dir).records(keys):
        if rec.get("status") != "ok":
            continue
        spec = rec["spec"]
        name = spec["method"]  # the registry's name, whose kind it is (not the row's label)
        rows.append(
            {
                "key": rec["key"],
                "kind": kind(name) if name in known else "unknown",
                "method": name,
                "dataset": spec["dataset"],
                "protocol": spec["protocol"],
                "setting": row_identity(spec)["setting"],
                "runtime": rec.get("runtime"),
                "fit_seconds": rec.get("fit_seconds"),
                **{c: rec.get(c) for c in _MODEL},
            }
        )
    return pd.DataFrame(rows, columns=_COLUMNS)


def _minutes_if_all(s: pd.Series) -> float:
    """Summed minutes, blank unless every cell recorded the clock (cells stored before it)."""
    return s.sum() / 60 if s.notna().all() else np.nan


def cost_by_kind(costs: pd.DataFrame) -> pd.DataFrame:
    """Per method kind: cells, summed cell and fit minutes (fit: blank when some of the kind's
    cells predate the fit clock), median and longest cell seconds, and for kinds that call a
    language model its summed minutes and the share of calls answered from the cache, in
    percent (blank where no cell of the kind called one, or some predate the model clock)."""
    names = {
        "cell_minutes": "cell minutes",
        "fit_minutes": "fit minutes",
        "median_s": "median s",
        "longest_s": "longest s",
        "model_minutes": "model minutes",
        "from_cache": "from cache %",
    }
    if costs.empty:
        return pd.DataFrame(columns=["kind", "cells", *names.values()])
    frame = costs.assign(**{c: costs[c].astype(float) for c in ("runtime", "fit_seconds", *_MODEL)})
    groups = frame.groupby("kind", sort=True)
    out = groups.agg(
        cells=("key", "size"),
        cell_minutes=("runtime", lambda s: s.sum() / 60),
        fit_minutes=("fit_seconds", _minutes_if_all),
        median_s=("runtime", "median"),
        longest_s=("runtime", "max"),
        model_minutes=("model_seconds", _minutes_if_all),
    )
    calls = groups[["model_calls", "model_cached"]].sum(min_count=1)
    called = calls["model_calls"] > 0
    out["model_minutes"] = out["model_minutes"].where(called)
    out["from_cache"] = (100 * calls["model_cached"] / calls["model_calls"]).where(
        called & out["model_minutes"].notna()
    )
    out = out.reset_index().rename(columns=names)
    return out.round({c: 1 for c in names.values()})


def neural_costs(costs: pd.DataFrame) -> pd.DataFrame:
    """Each neural cell: dataset, protocol, setting, method, training and cell seconds."""
    part = costs[costs["kind"] == "neural"]
    out = part[["dataset", "protocol", "setting", "method", "fit_seconds", "runtime"]].rename(
        columns={"fit_seconds": "fit s", "runtime": "cell s"}
    )
    out = out.assign(
        **{c: out[c].astype(float).round(1).replace({np.nan: None}) for c in ("fit s", "cell s")}
    )
    return out.sort_values(["dataset", "protocol", "setting", "method"]).reset_index(drop=True)
