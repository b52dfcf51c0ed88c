"""The label-shift estimates of ``benchmarks.label_shift`` on data where the answer is known."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.label_shift import acc_prior, adjust, em_prior


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(0.01, 0.99), min_size=1, max_size=50),
    st.floats(0.05, 0.95),
    st.floats(0.05, 0.95),
)
def test_adjust_is_the_identity_at_the_training_share_and_keeps_order(p, prior, share):
    p = np.array(p)
    assert np.allclose(adjust(p, prior, prior), p)
    moved = adjust(p, prior, share)
    assert np.all(np.diff(moved[np.argsort(p, kind="stable")]) >= -1e-12)
    assert np.allclose(adjust(moved, share, prior), p)


def test_both_estimates_recover_the_share_of_a_calibrated_score():
    # a score whose Platt posterior under a balanced prior is exact: two unit-variance
    # Gaussians at -1 and +1, so the posterior at x is sigmoid(2x)
    rng = np.random.default_rng(0)
    for share in (0.25, 0.5, 0.75):
        y = rng.random(4000) < share
        x = rng.normal(np.where(y, 1.0, -1.0), 1.0)
        y_train = rng.random(4000) < 0.5
        x_train = rng.normal(np.where(y_train, 1.0, -1.0), 1.0)
        p, p_train = 1 / (1 + np.exp(-2 * x)), 1 / (1 + np.exp(-2 * x_train))
        assert abs(em_prior(p, 0.5) - share) < 0.03
        assert abs(acc_prior(p, p_train, y_train) - share) < 0.04
