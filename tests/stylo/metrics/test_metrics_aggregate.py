"""mean ± std aggregation of tidy result tables."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stylo.metrics.aggregate import as_table, mean_std


def _results():
    rows = []
    for method, base in (("random", 0.47), ("ngram", 0.80)):
        for metric, shift in (("rank@1", 0.0), ("rank@3", 0.2)):
            for seed, noise in enumerate((-0.01, 0.0, 0.04)):
                rows.append(
                    {
                        "dataset": "mlpapers",
                        "method": method,
                        "metric": metric,
                        "seed": seed,
                        "value": base + shift + noise,
                    }
                )
    return pd.DataFrame(rows)


def test_mean_std_by_cell():
    out = mean_std(_results(), over="seed", percent=True)
    assert list(out.columns) == ["dataset", "method", "metric", "mean", "std", "n", "formatted"]
    assert len(out) == 4 and (out["n"] == 3).all()
    row = out[(out.method == "random") & (out.metric == "rank@1")].iloc[0]
    vals = np.array([0.46, 0.47, 0.51])
    assert row["mean"] == pytest.approx(vals.mean())
    assert row["std"] == pytest.approx(vals.std(ddof=1))
    assert row["formatted"] == f"{100 * vals.mean():.1f} ± {100 * vals.std(ddof=1):.1f}"
    pop = mean_std(_results(), over="seed", ddof=0, digits=3)
    prow = pop[(pop.method == "random") & (pop.metric == "rank@1")].iloc[0]
    assert prow["std"] == pytest.approx(vals.std(ddof=0))
    assert prow["formatted"] == f"{vals.mean():.3f} ± {vals.std(ddof=0):.3f}"


def test_average_first_then_spread_over_seeds():
    rows = [
        {"method": "m", "group": g, "seed": s, "value": float(10 * s + g)}
        for g in range(4)
        for s in range(3)
    ]
    frame = pd.DataFrame(rows)
    two_stage = mean_std(frame, over="seed", average_first="group")
    per_seed = np.array([np.mean([10 * s + g for g in range(4)]) for s in range(3)])
    assert two_stage["n"].tolist() == [3]
    assert two_stage["std"].iloc[0] == pytest.approx(per_seed.std(ddof=1))
    flat = mean_std(frame, over=["seed", "group"])
    assert flat["n"].tolist() == [12]
    assert flat["mean"].iloc[0] == pytest.approx(two_stage["mean"].iloc[0])


def test_single_replicate_shows_mean_only():
    out = mean_std(pd.DataFrame({"method": ["m"], "seed": [0], "value": [0.5]}))
    assert np.isnan(out["std"].iloc[0]) and out["formatted"].iloc[0] == "0.5"


def test_as_table():
    table = as_table(mean_std(_results(), percent=True), index="method", columns="metric")
    assert table.shape == (2, 2)
    assert table.loc["ngram", "rank@1"].startswith("81.0 ± ")
    with pytest.raises(ValueError, match="share an index"):
        as_table(mean_std(_results()), index="dataset", columns="metric")


def test_bad_tables_raise():
    frame = _results()
    with pytest.raises(ValueError, match="share a cell and replicate"):
        mean_std(frame, over="seed", by=["method"])
    nan = frame.copy()
    nan.loc[3, "value"] = np.nan
    with pytest.raises(ValueError, match="1 row"):
        mean_std(nan)
    with pytest.raises(ValueError, match="not in the table"):
        mean_std(frame, over="repeat")
    with pytest.raises(ValueError, match="empty"):
        mean_std(frame.iloc[:0])
    with pytest.raises(ValueError, match="numeric"):
        mean_std(frame.assign(value="x"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=12), st.integers(0, 1))
def test_matches_numpy(values, ddof):
    frame = pd.DataFrame({"cell": "c", "seed": range(len(values)), "value": values})
    out = mean_std(frame, ddof=ddof).iloc[0]
    assert out["n"] == len(values)
    assert out["mean"] == pytest.approx(np.mean(values), rel=1e-9, abs=1e-6)
    assert out["std"] == pytest.approx(np.std(values, ddof=ddof), rel=1e-9, abs=1e-6)
    assert min(values) - 1e-6 <= out["mean"] <= max(values) + 1e-6
