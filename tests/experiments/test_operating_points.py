"""Precision at a given recall, and the one-to-one operating-point table of the report."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.operating_points import precision_at_recall


def _plain(y_true, y_score, recall):
    """Every distinct score as a threshold, highest first; the first that reaches ``recall``."""
    t, s = np.asarray(y_true, bool), np.asarray(y_score, float)
    for thr in sorted(set(s), reverse=True):
        said = s >= thr
        if (said & t).sum() / t.sum() >= recall - 1e-12:
            return (said & t).sum() / said.sum()
    raise AssertionError("recall 1 is always reached at the lowest score")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), st.sampled_from([0.0, 0.2, 0.5, 0.51, 0.9, 1.0])),
        min_size=1,
        max_size=40,
    ),
    st.floats(0.0, 1.0),
)
def test_precision_at_recall_agrees_with_the_plain_scan(items, recall):
    y = [t for t, _ in items]
    s = [v for _, v in items]
    if not any(y):
        assert np.isnan(precision_at_recall(y, s, recall))
        return
    assert precision_at_recall(y, s, recall) == pytest.approx(_plain(y, s, recall), abs=1e-12)


def test_precision_at_recall_reads_the_curve():
    y = [True, True, False, True, False, False]
    s = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    assert precision_at_recall(y, s, 0.5) == 1.0  # top two: both right
    assert precision_at_recall(y, s, 1.0) == 0.75  # top four: three of four
    assert precision_at_recall(y, s, 0.0) == 1.0


def test_operating_points_read_the_stored_scores(tmp_path):
    import pandas as pd

    from experiments.cells import CellStore
    from experiments.operating_points import operating_points

    store = CellStore(tmp_path)
    y = [True, True, False, True, False, False]
    scores = pd.DataFrame(
        {
            "id": list("abcdef"),
            "y_true": y,
            "y_score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4],
            "group": "all",
        }
    )
    store.write({"key": "k0", "status": "ok", "rows": []}, scores)
    setting = '{"cross_topic": false, "mix": "100/100"}'
    table = pd.DataFrame(
        [
            {
                "dataset": "blog",
                "protocol": "aidbench_one_to_one",
                "setting": setting,
                "method": "m",
                "seed": 0,
                "group": "all",
                "metric": m,
                "value": v,
                "n": 6,
                "runtime": 1.0,
                "key": "k0",
            }
            for m, v in (("precision", 0.5), ("recall", 0.25))
        ]
    )
    published = pd.DataFrame(
        [
            {
                "dataset": "blog",
                "protocol": "aidbench_one_to_one",
                "setting": '{"mix": "100/100"}',
                "method": "GPT-4-turbo",
                "metric": m,
                "value": v,
            }
            for m, v in (("precision", 90.0), ("recall", 66.0))
        ]
    )
    out = operating_points(tmp_path, table, published)
    assert len(out) == 1
    row = out.iloc[0]
    # recall 66 % needs the top two of three positives: precision 100 %
    assert row["precision at that recall"] == 100.0
    assert (row["own precision"], row["own recall"], row["seeds"]) == (50.0, 25.0, 1)
