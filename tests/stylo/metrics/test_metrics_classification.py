"""Classification metrics against scikit-learn and PAN 2019's open-set attribution rule."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from stylo.metrics.classification import (
    accuracy,
    attribution_scores,
    f1_score,
    precision,
    recall,
)

UNK = "<UNK>"


def _pan19_reference(y_true, y_pred):
    """PAN 2019 CDAA evaluator semantics expressed with scikit-learn."""
    gold = set(y_true) | {UNK}
    pred = [p if p in gold else UNK for p in y_pred]
    labels = sorted(set(y_true) - {UNK})
    if not labels:  # only unknown authors: our documented 0.0 (scikit-learn has no answer)
        return {
            "macro_precision": 0.0,
            "macro_recall": 0.0,
            "macro_f1": 0.0,
            "accuracy": skm.accuracy_score(y_true, pred),
        }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = {"labels": labels, "average": "macro", "zero_division": 0.0}
        return {
            "macro_precision": skm.precision_score(y_true, pred, **kw),
            "macro_recall": skm.recall_score(y_true, pred, **kw),
            "macro_f1": skm.f1_score(y_true, pred, **kw),
            "accuracy": skm.accuracy_score(y_true, pred),
        }


authors = st.sampled_from(["a", "b", "c", "d"])
attributions = st.integers(1, 30).flatmap(
    lambda n: st.tuples(
        st.lists(st.one_of(authors, st.just(UNK)), min_size=n, max_size=n),
        st.lists(
            st.one_of(authors, st.just(UNK), st.just("stranger"), st.none()), min_size=n, max_size=n
        ),
    )
)


@settings(max_examples=30, deadline=None)
@given(attributions)
def test_open_set_matches_pan19_rule(pair):
    y_true, y_pred = pair
    got = attribution_scores(y_true, y_pred, unknown_label=UNK)
    want = _pan19_reference(y_true, y_pred)
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key
    assert f1_score(y_true, y_pred, average="macro", unknown_label=UNK) == got["macro_f1"]
    assert accuracy(y_true, y_pred, unknown_label=UNK) == got["accuracy"]


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 30).flatmap(
        lambda n: st.tuples(
            st.lists(authors, min_size=n, max_size=n), st.lists(authors, min_size=n, max_size=n)
        )
    )
)
def test_closed_set_macro_matches_scikit_learn(pair):
    y_true, y_pred = pair
    kw = {"average": "macro", "zero_division": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert precision(y_true, y_pred, average="macro") == pytest.approx(
            skm.precision_score(y_true, y_pred, **kw), abs=1e-12
        )
        assert recall(y_true, y_pred, average="macro") == pytest.approx(
            skm.recall_score(y_true, y_pred, **kw), abs=1e-12
        )
        assert f1_score(y_true, y_pred, average="macro") == pytest.approx(
            skm.f1_score(y_true, y_pred, **kw), abs=1e-12
        )
        assert f1_score(y_true, y_pred, average="macro", labels=["a", "b"]) == pytest.approx(
            skm.f1_score(y_true, y_pred, labels=["a", "b"], **kw), abs=1e-12
        )
    assert accuracy(y_true, y_pred) == skm.accuracy_score(y_true, y_pred)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=30))
def test_binary_matches_scikit_learn(pairs):
    y_true = np.array([p[0] for p in pairs], dtype=bool)
    y_pred = np.array([p[1] for p in pairs], dtype=bool)
    kw = {"zero_division": 0.0}
    if len(pairs):
        assert precision(y_true, y_pred) == skm.precision_score(y_true, y_pred, **kw)
        assert recall(y_true, y_pred) == skm.recall_score(y_true, y_pred, **kw)
        assert f1_score(y_true, y_pred) == pytest.approx(skm.f1_score(y_true, y_pred, **kw))
        assert accuracy(y_true, y_pred) == skm.accuracy_score(y_true, y_pred)
    for fn in (precision, recall, f1_score):
        assert 0.0 <= fn(y_true, y_pred) <= 1.0


def test_hand_computed_open_set():
    y_true = ["a", "a", "b", UNK, UNK]
    y_pred = ["a", None, "a", UNK, "zed"]  # None -> miss; "zed" unseen -> <UNK>, correct
    res = attribution_scores(y_true, y_pred, unknown_label=UNK)
    # a: tp 1, fp 1 (b's text), fn 1 -> P 1/2, R 1/2, F1 1/2; b: tp 0, fn 1 -> all 0
    assert res == {
        "macro_precision": 0.25,
        "macro_recall": 0.25,
        "macro_f1": 0.25,
        "accuracy": 3 / 5,
    }
    # closed set: None is wrong and no class, "zed" and "<UNK>" are ordinary classes
    closed = attribution_scores(y_true, y_pred)
    assert closed["accuracy"] == 2 / 5
    assert closed["macro_f1"] == pytest.approx((0.5 + 0 + 2 / 3 + 0) / 4)


def test_degenerate_and_bad_input():
    assert attribution_scores([], []) == {
        "macro_precision": 0.0,
        "macro_recall": 0.0,
        "macro_f1": 0.0,
        "accuracy": 0.0,
    }
    assert precision([0, 0], [0, 0]) == 0.0
    with pytest.raises(ValueError, match="bool or 0/1"):
        precision(["a", "b"], ["a", "a"])
    with pytest.raises(ValueError, match="2 labels but y_pred has 1"):
        accuracy(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="None"):
        accuracy(["a", None], ["a", "a"])
    with pytest.raises(ValueError, match="average"):
        recall([1], [1], average="micro")
    with pytest.raises(ValueError, match="'macro' only"):
        recall([1], [1], unknown_label=UNK)
    with pytest.raises(TypeError, match="single string"):
        accuracy("ab", "ab")
