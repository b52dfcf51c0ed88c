"""SVM attribution: synthetic sanity and the estimator contract."""

import numpy as np
import pytest
from pseudoword_synth import synthetic_corpus
from sklearn.exceptions import NotFittedError

from baselines.svm import (
    SVMAttributor,
    SVMOpenSetAttributor,
    fit_reject_margin,
    top2_margin,
)
from stylo.verifier import AttributionOnly


@pytest.fixture(scope="module")
def corpus():
    return synthetic_corpus(n_authors=5, per_author=6, seed=3)


def split(corpus):
    test = np.arange(len(corpus)) % 6 == 0
    texts = np.array(corpus.texts, dtype=object)
    return (list(texts[~test]), corpus.authors[~test], list(texts[test]), corpus.authors[test])


def test_attributes_synthetic_authors_and_ranks(corpus):
    k_texts, k_auth, u_texts, u_auth = split(corpus)
    clf = SVMAttributor().fit(k_texts, k_auth)
    assert (clf.predict(u_texts) == u_auth).all()
    scores = clf.decision_function(u_texts)
    assert scores.shape == (len(u_texts), 5)
    assert (clf.classes_[scores.argmax(axis=1)] == u_auth).all()


def test_two_authors_give_one_column_per_author(corpus):
    k_texts, k_auth, u_texts, _ = split(corpus)
    two = np.isin(k_auth, ["author0", "author1"])
    clf = SVMAttributor().fit([t for t, k in zip(k_texts, two) if k], k_auth[two])
    scores = clf.decision_function(u_texts)
    assert scores.shape == (len(u_texts), 2)
    np.testing.assert_allclose(scores[:, 0], -scores[:, 1])


def test_rejection_margin_answers_unknown(corpus):
    k_texts, k_auth, u_texts, _ = split(corpus)
    clf = SVMAttributor(reject_margin=np.inf).fit(k_texts, k_auth)
    assert set(clf.predict(u_texts)) == {"<UNK>"}
    clf = SVMAttributor(reject_margin=0.0).fit(k_texts, k_auth)
    assert "<UNK>" not in set(clf.predict(u_texts))


def test_top2_margin_by_hand():
    np.testing.assert_allclose(
        top2_margin(np.array([[0.1, 0.7, 0.4], [1.0, -1.0, 0.9]])), [0.3, 0.1]
    )
    assert np.isinf(top2_margin(np.array([[0.2]]))).all()


def test_fit_reject_margin_finds_the_separating_margin():
    # margins of known-author texts are 0.8 and 0.6; of unknown-author texts 0.1 and 0.2
    scores = np.array([[0.9, 0.1], [0.1, 0.7], [0.5, 0.4], [0.3, 0.5]])
    classes = np.array(["a", "b"])
    y_true = np.array(["a", "b", "<UNK>", "<UNK>"], dtype=object)
    margin = fit_reject_margin([(scores, classes, y_true)])
    assert 0.2 < margin <= 0.6
    with pytest.raises(ValueError, match="fit_reject_margin needs at least one problem"):
        fit_reject_margin([])


def test_attributor_contract(corpus):
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        SVMAttributor().predict(["a b"])
    with pytest.raises(ValueError, match="SVMAttributor needs at least two authors"):
        SVMAttributor().fit(["a", "b"], ["x", "x"])
    k_texts, k_auth, u_texts, _ = split(corpus)
    a = SVMAttributor(random_state=1).fit(k_texts, k_auth).decision_function(u_texts)
    b = SVMAttributor(random_state=1).fit(k_texts, k_auth).decision_function(u_texts)
    np.testing.assert_array_equal(a, b)


def candidates_and_unknowns(corpus):
    k_texts, k_auth, u_texts, u_auth = split(corpus)
    names = sorted(set(k_auth))
    return (
        [[t for t, a in zip(k_texts, k_auth) if a == n] for n in names],
        names,
        u_texts,
        list(u_auth),
    )


def test_open_set_attributor_picks_the_author_and_follows_pan19_reject_rule(corpus):
    cands, names, u_texts, u_auth = candidates_and_unknowns(corpus)
    ver = SVMOpenSetAttributor().fit()
    scores = ver.attribute(cands, u_texts)
    assert scores.shape == (len(u_texts), len(cands))
    assert [names[j] for j in scores.argmax(axis=1)] == u_auth
    # the best score minus 0.5, doubled, plus the threshold is the top-two probability lead
    lead = 2 * (scores.max(axis=1) - 0.5) + 0.1
    assert np.all((lead > 0) & (lead <= 1))
    strict = SVMOpenSetAttributor(reject_threshold=0.99).fit().attribute(cands, u_texts)
    assert np.all(strict.max(axis=1) < 0.5)  # no lead reaches 0.99: every text is rejected
    lenient = SVMOpenSetAttributor(reject_threshold=0.0).fit().attribute(cands, u_texts)
    assert np.all(lenient.max(axis=1) >= 0.5)
    np.testing.assert_array_equal(lenient.argmax(axis=1), scores.argmax(axis=1))
    again = SVMOpenSetAttributor().fit().attribute(cands, u_texts)
    np.testing.assert_array_equal(scores, again)


def test_open_set_attributor_refuses_what_it_cannot_do(corpus):
    cands, _, u_texts, _ = candidates_and_unknowns(corpus)
    ver = SVMOpenSetAttributor().fit(corpus)
    with pytest.raises(AttributionOnly, match="no score for a single pair"):
        ver.score_pairs(["a b c"], ["a b d"])
    with pytest.raises(ValueError, match="at least two candidates"):
        ver.attribute(cands[:1], u_texts)
    with pytest.raises(ValueError, match="two known texts per candidate"):
        ver.attribute([cands[0], cands[1][:1]], u_texts)
    with pytest.raises(ValueError, match="reject_threshold"):
        SVMOpenSetAttributor(reject_threshold=1.0).fit()
    with pytest.raises(ValueError, match="cv must be"):
        SVMOpenSetAttributor(cv=1).fit()
    with pytest.warns(UserWarning, match="empty"):
        out = ver.attribute(cands, ["", u_texts[0]])
    np.testing.assert_array_equal(out[0], 0.5)
    assert out[1].max() > 0.5
