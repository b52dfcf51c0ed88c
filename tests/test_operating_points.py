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
@given(st.lists(st.tuples(st.booleans(), st.sampled_from([0.0, 0.2, 0.5, 0.51, 0.9, 1.0])),
                min_size=1, max_size=40), st.floats(0.0, 1.0))
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
    assert precision_at_recall(y, s, 0.5) == 1.0        # top two: both right
    assert precision_at_recall(y, s, 1.0) == 0.75       # top four: three of four
    assert precision_at_recall(y, s, 0.0) == 1.0
