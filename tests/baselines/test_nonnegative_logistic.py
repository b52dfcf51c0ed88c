"""The non-negative logistic regression of ``ensemble``'s meta-model: scikit-learn's objective
with the weights bounded below by 0."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.special import expit
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from baselines.nonnegative_logistic import NonNegativeLogisticRegression


def _data(seed: int, weights, n: int = 300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(weights)))
    y = (rng.random(n) < expit(X @ np.asarray(weights) - 0.3)).astype(int)
    return X, y


def _gradient(est, X, y):
    """The objective's gradient in the weights at the fitted solution."""
    sign = np.where(y == est.classes_[1], 1.0, -1.0)
    margin = sign * est.decision_function(X)
    return X.T @ (-est.C * sign * expit(-margin)) + est.coef_[0]


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    weights=st.lists(st.floats(0.8, 3.0), min_size=1, max_size=4),
    C=st.sampled_from([0.1, 1.0, 10.0]),
)
def test_agrees_with_sklearn_where_its_weights_are_non_negative(seed, weights, C):
    X, y = _data(seed, weights)
    assume(len(set(y)) == 2)
    free = LogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(X, y)
    assume((free.coef_ > 0.05).all())  # else the bound binds: nothing to compare
    ours = NonNegativeLogisticRegression(C=C).fit(X, y)
    np.testing.assert_allclose(ours.coef_, free.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, free.intercept_, atol=1e-5)
    np.testing.assert_allclose(ours.predict_proba(X), free.predict_proba(X), atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    weights=st.lists(st.floats(-3.0, 3.0), min_size=2, max_size=5),
)
def test_weights_are_non_negative_and_optimal_under_the_bound(seed, weights):
    X, y = _data(seed, weights)
    assume(len(set(y)) == 2)
    est = NonNegativeLogisticRegression().fit(X, y)
    w, grad = est.coef_[0], _gradient(est, X, y)
    assert (w >= 0).all()
    # Karush-Kuhn-Tucker: a free weight has no slope, a weight held at 0 would rise the loss
    np.testing.assert_allclose(grad[w > 1e-8], 0.0, atol=1e-4)
    assert (grad[w <= 1e-8] > -1e-4).all()


def test_a_weight_sklearn_makes_negative_is_held_at_zero():
    X, y = _data(0, [2.0, -1.5])
    assert LogisticRegression().fit(X, y).coef_[0, 1] < -0.5
    est = NonNegativeLogisticRegression().fit(X, y)
    assert est.coef_[0, 1] == 0.0 and est.coef_[0, 0] > 1.0


def test_without_intercept_and_with_string_classes():
    X, y = _data(1, [1.5, 1.0])
    labels = np.where(y == 1, "same", "other")
    est = NonNegativeLogisticRegression(fit_intercept=False).fit(X, labels)
    assert est.intercept_.tolist() == [0.0]
    assert list(est.classes_) == ["other", "same"]
    assert set(est.predict(X)) <= {"other", "same"}
    assert clone(est).get_params() == est.get_params()


@pytest.mark.parametrize("C", [0, -1.0, float("nan"), "strong", None])
def test_a_bad_regularisation_is_refused(C):
    with pytest.raises(ValueError, match="C must be a positive number"):
        NonNegativeLogisticRegression(C=C).fit(*_data(0, [1.0]))


def test_one_class_is_refused():
    X = np.zeros((4, 1))
    with pytest.raises(ValueError, match="two classes"):
        NonNegativeLogisticRegression().fit(X, [1, 1, 1, 1])
