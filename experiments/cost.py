"""What a run cost: cell time by method kind, and each neural cell's training time.

Read from the stored cell records (``runtime``: the cell's seconds of one worker, from the
method's clone to its last metric; ``fit_seconds``: the part spent in ``fit``, recorded by
cells run since the fit clock was added, blank for older ones). Sums are worker time, not wall
time: a run with ``--n-jobs 2`` takes about half of them on an otherwise idle machine.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from baselines.registry import kind, methods
from experiments.cells import CellStore
from experiments.methods import row_identity

__all__ = ["cell_costs", "cost_by_kind", "neural_costs"]

_COLUMNS = ["key", "kind", "method", "dataset", "protocol", "setting", "runtime", "fit_seconds"]


def cell_costs(out_dir: str | Path, keys: set[str] | None = None) -> pd.DataFrame:
    """One row per finished cell: key, kind, method, dataset, protocol, setting (JSON, with
    the masking), runtime and fit seconds."""
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
            }
        )
    return pd.DataFrame(rows, columns=_COLUMNS)


def cost_by_kind(costs: pd.DataFrame) -> pd.DataFrame:
    """Per method kind: cells, summed cell and fit minutes (fit: blank when some of the kind's
    cells predate the fit clock), median and longest cell seconds."""
    if costs.empty:
        return pd.DataFrame(
            columns=["kind", "cells", "cell minutes", "fit minutes", "median s", "longest s"]
        )
    runtime = costs["runtime"].astype(float)
    fit = costs["fit_seconds"].astype(float)
    frame = costs.assign(runtime=runtime, fit_seconds=fit)
    out = frame.groupby("kind", sort=True).agg(
        cells=("key", "size"),
        cell_minutes=("runtime", lambda s: s.sum() / 60),
        # blank unless every cell of the kind recorded it (cells stored before the clock)
        fit_minutes=("fit_seconds", lambda s: s.sum() / 60 if s.notna().all() else np.nan),
        median_s=("runtime", "median"),
        longest_s=("runtime", "max"),
    )
    out = out.reset_index().rename(
        columns={
            "cell_minutes": "cell minutes",
            "fit_minutes": "fit minutes",
            "median_s": "median s",
            "longest_s": "longest s",
        }
    )
    return out.round({"cell minutes": 1, "fit minutes": 1, "median s": 1, "longest s": 1})


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
