"""Platt scaling, the grey zone and the Calibrated wrapper."""

import numpy as np
import pytest
from baselines_synth import synthetic_pairs
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from baselines.calibration import (
    OBJECTIVES,
    Calibrated,
    ScoreCalibrator,
    _fit_grey_zone,
    _fit_grey_zone_reference,
    shift_scores,
)
from stylo.metrics.pan import auc, c_at_1, evaluate_all
from stylo.verifier import Verifier


class LengthRatio(Verifier):
    """Toy verifier: a score from the two lengths (tests only)."""

    requires_fit = False

    def _score_impl(self, a, b):
        la = np.array([len(x) for x in a], float)
        lb = np.array([len(x) for x in b], float)
        return np.minimum(la, lb) / np.maximum(la, lb)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=30), st.floats(0.01, 0.97), st.floats(0.0, 0.5)
)
def test_shift_scores_bands(scores, p1, width):
    p2 = min(p1 + width, 0.98)
    s = np.array(scores)
    out = shift_scores(s, p1, p2)
    assert ((out >= 0) & (out <= 1)).all()
    assert (out[s <= p1] <= 0.49 + 1e-12).all()
    assert (out[(s > p1) & (s < p2)] == 0.5).all()
    assert (out[(s >= p2) & (s > p1)] >= 0.51 - 1e-12).all()
    # monotone: the order of answers never contradicts the order of scores
    order = np.argsort(s, kind="stable")
    assert (np.diff(out[order]) >= -1e-12).all()


# scores with ties, values on the grid, and neighbours one ulp apart (which the shift can round
# to one float, the case the fast search must hand to the plain one)
_score = st.one_of(
    st.floats(0, 1),
    st.sampled_from([0.0, 0.25, 0.5, 0.51, 0.3, 1.0]),
    st.integers(0, 100).map(lambda k: k / 100),
)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(_score, st.booleans(), st.booleans()), min_size=2, max_size=60).filter(
        lambda r: len({y for _, y, _ in r}) == 2
    ),
    st.sampled_from(sorted(OBJECTIVES)),
    st.sampled_from([0.02, 0.05, 0.1]),
)
def test_fast_grey_zone_search_equals_the_plain_one(rows, objective, step):
    s = np.array([np.nextafter(v, 1.0) if bump else v for v, _, bump in rows])
    s = np.clip(s, 0.0, 1.0)
    y = np.array([lab for _, lab, _ in rows])
    grid = np.arange(step, 1.0 - step, step)
    assert _fit_grey_zone(s, y, objective, grid, 3) == _fit_grey_zone_reference(
        s, y, objective, grid, 3
    )


def test_shift_scores_rejects_bad_thresholds():
    with pytest.raises(ValueError, match=r"need 0 < p1 <= p2 < 1, got p1=0\.6, p2=0\.4"):
        shift_scores([0.3], 0.6, 0.4)


def _ambiguous_scores(seed=0, n=80):
    # same-author scores high, different-author low, and a band in the middle that is a coin
    # flip: a good grey zone covers that band
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2 == 0
    s = np.where(y, rng.uniform(0.6, 1.0, n), rng.uniform(0.0, 0.4, n))
    flip = rng.random(n) < 0.3
    s[flip] = rng.uniform(0.45, 0.55, flip.sum())
    return s, y


def test_grey_zone_covers_the_coin_flip_band_and_improves_the_objective():
    s, y = _ambiguous_scores()
    cal = ScoreCalibrator(platt=False, objective="pan20-baseline").fit(s, y)
    assert cal.p1_ < 0.5 < cal.p2_
    assert 0.4 <= cal.p1_ and cal.p2_ <= 0.6
    out = cal.transform(s)
    assert ((out == 0.5) == ((s > cal.p1_) & (s < cal.p2_))).all()
    no_zone = evaluate_all(y, s)
    with_zone = evaluate_all(y, out)
    assert with_zone["c@1"] > no_zone["c@1"]


def test_objective_is_selectable():
    s, y = _ambiguous_scores(seed=3)
    a = ScoreCalibrator(platt=False, objective="auc_c1", grid_step=0.02).fit(s, y)
    out = a.transform(s)
    assert a.train_objective_ == round(auc(y, out) * c_at_1(y, out), 3)
    b = ScoreCalibrator(platt=False, objective="pan21", grid_step=0.02).fit(s, y)
    assert b.train_objective_ == round(evaluate_all(y, b.transform(s))["overall"], 3)
    with pytest.raises(ValueError, match="unknown objective"):
        ScoreCalibrator(objective="nope").fit(s, y)


def test_platt_maps_any_scale_into_unit_interval():
    s, y = _ambiguous_scores(seed=1)
    raw = 40.0 * s - 7.0  # far outside [0, 1]
    cal = ScoreCalibrator(platt=True, grid_step=0.02).fit(raw, y)
    out = cal.transform(raw)
    assert ((out >= 0) & (out <= 1)).all()
    assert auc(y, cal.probabilities(raw)) == pytest.approx(auc(y, s))
    with pytest.raises(ValueError, match="outside"):
        ScoreCalibrator(platt=False).fit(raw, y)


def test_needs_both_classes():
    with pytest.raises(ValueError, match="both"):
        ScoreCalibrator().fit([0.2, 0.4], [True, True])


def test_calibrated_wrapper_contract():
    pairs = synthetic_pairs(30, seed=2)
    model = Calibrated(LengthRatio(), objective="auc_c1")
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        model.score_pairs(["a b"], ["c d"])
    model.fit(pairs)
    s = model.score_problems(pairs)
    assert s.shape == (30,) and ((s >= 0) & (s <= 1)).all()
    with pytest.warns(UserWarning, match="empty"):
        got = model.score_pairs(["", "some text"], ["other", "more text"])
    assert got[0] == 0.5
    r = model.rank("query text", ["a", "query texts", "zz"])
    assert r.shape == (3,) and len(np.unique(r)) == 3


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3), min_size=4, max_size=30, unique=True),
    st.floats(1.0, 1e6),
)
def test_platt_never_reverses_the_order_of_the_scores(raw, offset):
    # labels that the scores order backwards: the fitted slope would be negative
    s = np.sort(np.array(raw)) + offset
    # distinct raw values may meet once offset (1e-75 + 1.0 == 1.0): equal scores have no order
    assume(len(np.unique(s)) == len(s))
    y = np.arange(len(s)) < len(s) // 2
    cal = ScoreCalibrator(grey_zone=False).fit(s, y)
    p = cal.probabilities(s)
    assert np.all(np.diff(p) >= 0) and p[-1] > p[0]
    assert cal.platt_.coef_[0, 0] > 0
    # flat at the training share of same-author pairs
    assert p == pytest.approx(np.full(len(s), y.mean()), abs=1e-5)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0.45, 0.55), min_size=4, max_size=40),
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20),
)
def test_quantile_map_spreads_crowded_scores_and_keeps_their_order(train, new):
    # scores crowded in a narrow band (as General Impostors' margins are) become their
    # mid-rank quantile among the training scores, in (0, 1), and no two scores swap places
    s = np.array(train)
    y = np.arange(len(s)) % 2 == 0
    cal = ScoreCalibrator(platt=False, quantiles=True, grey_zone=False).fit(s, y)
    values = np.unique(s)
    ranks = np.array([(np.sum(s < v) + np.sum(s <= v)) / 2.0 / len(s) for v in values])
    np.testing.assert_allclose(cal.probabilities(values), 0.999 * ranks + 0.001 * values)
    x = np.sort(np.concatenate([s, new]))
    p = cal.probabilities(x)
    assert np.all(np.diff(p) >= 0) and np.all((p >= 0) & (p <= 1))


def test_quantile_map_excludes_platt():
    s, y = _ambiguous_scores(seed=4)
    with pytest.raises(ValueError, match="platt and quantiles are two first maps"):
        ScoreCalibrator(platt=True, quantiles=True).fit(s, y)
