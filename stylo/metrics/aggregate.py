"""Mean ± standard deviation over seeds or groups, as AIDBench reports its results.

Input is a tidy results table: one row per measurement, a numeric ``value`` column, the
columns that identify a cell of the final table (dataset, protocol, setting, method, metric,
...) and the replicate columns to average over (``seed``, ``group``, ``repeat``, ...).

Standard deviation: ``ddof=1`` by default, the sample standard deviation (pandas' default,
dividing by n - 1); pass ``ddof=0`` for the population value (``numpy.std``'s default). With
ddof=1 a cell with a single replicate has an undefined spread: ``std`` is NaN and the
formatted string shows the mean alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["mean_std", "as_table"]


def _columns(arg, name: str) -> list[str]:
    if arg is None:
        return []
    cols = [arg] if isinstance(arg, str) else list(arg)
    if not all(isinstance(c, str) for c in cols):
        raise TypeError(f"{name} must be a column name or a list of column names")
    return cols


def _format(mean: float, std: float, scale: float, digits: int) -> str:
    if np.isnan(std):
        return f"{mean * scale:.{digits}f}"
    return f"{mean * scale:.{digits}f} ± {std * scale:.{digits}f}"


def mean_std(
    frame: pd.DataFrame,
    *,
    over: str | Sequence[str] = "seed",
    by: Sequence[str] | None = None,
    value: str = "value",
    average_first: str | Sequence[str] | None = None,
    ddof: int = 1,
    percent: bool = False,
    digits: int = 1,
) -> pd.DataFrame:
    """Mean, standard deviation and count of ``value`` over the replicate columns ``over``.

    Parameters
    ----------
    frame : tidy table, one row per measurement.
    over : replicate column(s) the spread is taken over (e.g. ``"seed"``).
    by : columns identifying a result cell; default every column except ``value``,
        ``over`` and ``average_first``.
    average_first : replicate column(s) averaged away *before* the spread is taken, e.g.
        ``average_first="group", over="seed"``: the mean over the groups of each seed, then
        mean ± std of those per-seed means. Without it every (group, seed) row is one
        replicate.
    ddof : delta degrees of freedom of the standard deviation (see module doc).
    percent : multiply by 100 in the formatted string only (the numeric columns keep the
        unit of ``value``).
    digits : decimals in the formatted string.

    Returns
    -------
    DataFrame with the ``by`` columns, then ``mean``, ``std``, ``n`` (replicates per cell)
    and ``formatted`` ("47.4 ± 1.2"), one row per cell, sorted by ``by``.

    Raises ``ValueError`` for a missing column, a non-numeric or NaN value (nothing is
    dropped silently) or two rows for the same cell and replicate.
    """
    over_cols = _columns(over, "over")
    first_cols = _columns(average_first, "average_first")
    if not over_cols:
        raise ValueError("over must name at least one replicate column")
    if by is None:
        by_cols = [c for c in frame.columns if c not in {value, *over_cols, *first_cols}]
    else:
        by_cols = _columns(by, "by")
    needed = [*by_cols, *over_cols, *first_cols, value]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"columns {missing} not in the table (it has {list(frame.columns)})")
    if len(frame) == 0:
        raise ValueError("the results table is empty")
    if not pd.api.types.is_numeric_dtype(frame[value]) or pd.api.types.is_bool_dtype(frame[value]):
        raise ValueError(f"column {value!r} must be numeric, got {frame[value].dtype}")
    if frame[value].isna().any():
        n_nan = int(frame[value].isna().sum())
        raise ValueError(
            f"{n_nan} row(s) have a missing {value!r}; drop or fill them "
            f"explicitly before aggregating"
        )
    keys = [*by_cols, *over_cols, *first_cols]
    dup = frame.duplicated(subset=keys, keep=False)
    if dup.any():
        example = frame.loc[dup, keys].iloc[0].to_dict()
        raise ValueError(
            f"{int(dup.sum())} rows share a cell and replicate, e.g. {example}; "
            f"add the distinguishing column to `by` or `over`"
        )
    data = frame[needed]
    if first_cols:
        data = data.groupby([*by_cols, *over_cols], sort=True, dropna=False)[value].mean()
        data = data.reset_index()
    if by_cols:
        grouped = data.groupby(by_cols, sort=True, dropna=False)[value]
        out = pd.DataFrame(
            {"mean": grouped.mean(), "std": grouped.std(ddof=ddof), "n": grouped.size()}
        ).reset_index()
    else:
        vals = data[value]
        out = pd.DataFrame({"mean": [vals.mean()], "std": [vals.std(ddof=ddof)], "n": [len(vals)]})
    scale = 100.0 if percent else 1.0
    out["formatted"] = [
        _format(m, s, scale, digits) for m, s in zip(out["mean"], out["std"], strict=True)
    ]
    return out


def as_table(
    summary: pd.DataFrame,
    index: str | Sequence[str],
    columns: str | Sequence[str],
    cell: str = "formatted",
) -> pd.DataFrame:
    """Pivot a :func:`mean_std` result into a paper-style table (e.g. methods x metrics).

    Every (index, columns) pair must occur once; otherwise ``ValueError``.
    """
    idx, cols = _columns(index, "index"), _columns(columns, "columns")
    dup = summary.duplicated(subset=[*idx, *cols], keep=False)
    if dup.any():
        raise ValueError(
            f"{int(dup.sum())} rows share an index/columns pair; add the "
            f"distinguishing column to index or columns"
        )
    return summary.pivot(index=idx, columns=cols, values=cell)
