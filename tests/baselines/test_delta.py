"""Delta: the four distances against hand-computed values, z-scoring, classifier, verifier."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from pseudoword_synth import synthetic_corpus, synthetic_pairs
from sklearn.exceptions import NotFittedError

from baselines.delta import DeltaClassifier, DeltaVerifier, ZScores
from stylo.features import DELTAS, paired_delta, pairwise_delta
from stylo.metrics.pan import auc

A = np.array([[1.0, -1.0, 2.0]])
B = np.array([[0.0, 1.0, 2.0]])


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("burrows", (1 + 2 + 0) / 3),
        ("argamon", np.sqrt(1 + 4 + 0)),
        # weights (3 - i) / 3 for i = 0, 1, 2: 1, 2/3, 1/3, and the mean over the 3 words
        ("eder", (1 * 1 + 2 * 2 / 3 + 0 * 1 / 3) / 3),
        # a.b = 0 - 1 + 4 = 3; |a| = sqrt(6), |b| = sqrt(5)
        ("cosine", 1 - 3 / np.sqrt(30)),
    ],
)
def test_deltas_on_a_hand_computed_example(kind, expected):
    assert pairwise_delta(A, B, kind)[0, 0] == pytest.approx(expected, rel=1e-12)
    assert paired_delta(A, B, kind)[0] == pytest.approx(expected, rel=1e-12)
    # the name table and the classes are one thing: the name picks that class's kernels
    delta = DELTAS[kind]()
    assert delta.name == kind
    assert delta.pairwise(A, B)[0, 0] == pairwise_delta(A, B, kind)[0, 0]


@settings(max_examples=40, deadline=None)
@given(
    arrays(np.float64, (4, 5), elements=st.floats(-5, 5)),
    arrays(np.float64, (4, 5), elements=st.floats(-5, 5)),
    st.sampled_from(list(DELTAS)),
)
def test_paired_is_the_diagonal_of_pairwise(z1, z2, kind):
    full = pairwise_delta(z1, z2, kind)
    np.testing.assert_allclose(paired_delta(z1, z2, kind), np.diag(full), atol=1e-9)
    assert np.all(full >= -1e-12)
    self_dist = np.diag(pairwise_delta(z1, z1, kind))
    if kind == "cosine":
        # a zero vector has no direction: its cosine Delta is 1 by convention, even to itself;
        # rows of subnormal size are left out, their cosine is not numerically meaningful
        norms = np.linalg.norm(z1, axis=1)
        np.testing.assert_allclose(self_dist[norms == 0], 1.0)
        self_dist = self_dist[norms > 1e-100]
    np.testing.assert_allclose(self_dist, 0.0, atol=1e-9)


def test_zero_vector_has_cosine_delta_one_and_unknown_kind_raises():
    assert pairwise_delta(np.zeros((1, 3)), B, "cosine")[0, 0] == 1.0
    with pytest.raises(ValueError, match="unknown delta"):
        pairwise_delta(A, B, "manhattan")


def test_zscores_by_hand():
    texts = ["a a b", "a b b", "a c c"]
    z = ZScores(n_features=2).fit(texts)
    # mean relative frequencies: a 4/9, b 3/9, c 2/9 -> keep a, b; frequencies are relative
    # to all tokens of a text, not only to the kept words
    assert list(z.features_) == ["a", "b"]
    freqs = np.array([[2 / 3, 1 / 3], [1 / 3, 2 / 3], [1 / 3, 0.0]])
    expected = (freqs - freqs.mean(axis=0)) / freqs.std(axis=0, ddof=1)
    np.testing.assert_allclose(z.transform(texts), expected)
    # a feature constant over the fitting texts gets z = 0, not NaN
    flat = ZScores(n_features=5).fit(["x y", "x z"])
    assert np.isfinite(flat.transform(["x y", "q"])).all()
    with pytest.raises(ValueError, match="needs at least two texts"):
        ZScores().fit(["only one"])


def test_classifier_attributes_synthetic_authors():
    corpus = synthetic_corpus(n_authors=5, per_author=6, seed=3)
    authors = corpus.authors
    train = np.arange(len(corpus)) % 6 != 0
    texts = corpus.texts
    for kind in DELTAS:
        clf = DeltaClassifier(kind=kind, n_features=100)
        clf.fit([t for t, k in zip(texts, train) if k], authors[train])
        test = [t for t, k in zip(texts, train) if not k]
        assert (clf.predict(test) == authors[~train]).mean() == 1.0
        scores = clf.decision_function(test)
        assert scores.shape == (len(test), 5)
        dist = clf.distance_matrix(test)
        assert dist.shape == (len(test), len(test))
        np.testing.assert_allclose(np.diag(dist), 0.0, atol=1e-9)


def test_classifier_not_fitted():
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        DeltaClassifier().predict(["a b"])


def test_verifier_separates_synthetic_pairs_and_follows_the_contract():
    corpus = synthetic_corpus(seed=0)
    test = synthetic_pairs(synthetic_corpus(seed=5), seed=2)
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        DeltaVerifier().score_pairs(["a"], ["b"])
    ver = DeltaVerifier(n_features=100).fit(corpus)
    scores = ver.score_pairs(test.texts_a(), test.texts_b())
    assert auc(test.labels, scores) > 0.9
    again = DeltaVerifier(n_features=100).fit(corpus).score_pairs(test.texts_a(), test.texts_b())
    np.testing.assert_array_equal(scores, again)
    with pytest.warns(UserWarning, match="empty"):
        out = ver.score_pairs(["", test.texts_a()[0]], [test.texts_b()[0], ""])
    np.testing.assert_array_equal(out, [0.5, 0.5])


def _call_reference(ver, texts):
    """The plain formula: z-scores of ``texts`` against the mean and std (ddof 1, at least
    the training texts') of the relative frequencies of ``texts`` and, when fewer than
    ``n_background``, the first training texts of the pool not among them."""
    freqs = ver.zscores_.frequencies(texts)
    extra = [t for t in ver.background_ if t not in set(texts)]
    ref = np.vstack([freqs, ver.zscores_.frequencies(extra)[: ver.n_background - len(texts)]])
    std = np.maximum(ref.std(axis=0, ddof=1), ver.zscores_.scaler_.std_)
    out = np.zeros_like(freqs)
    for j in range(freqs.shape[1]):
        if std[j] > 1e-12:
            out[:, j] = (freqs[:, j] - ref[:, j].mean()) / std[j]
    return out


@pytest.mark.parametrize("n_background", [5, 200])
def test_transductive_verifier_z_scores_each_call_against_its_own_texts(n_background):
    corpus = synthetic_corpus(seed=0)
    test = synthetic_pairs(synthetic_corpus(seed=5), seed=2)
    ver = DeltaVerifier(n_features=100, transductive=True, n_background=n_background).fit(corpus)
    plain = DeltaVerifier(n_features=100).fit(corpus)
    # the fit is the same: features, logistic regression; only scoring calls change
    np.testing.assert_array_equal(ver.logistic_.coef_, plain.logistic_.coef_)
    texts = list(dict.fromkeys(test.texts_a() + test.texts_b()))
    assert (len(texts) < n_background) is (n_background == 200)  # both paths of the top-up
    np.testing.assert_allclose(ver.call_zscores(texts), _call_reference(ver, texts), atol=1e-9)
    # the floor binds: some words vary less in this call than in the training texts
    call_std = ver.zscores_.frequencies(texts).std(axis=0, ddof=1)
    assert (call_std < ver.zscores_.scaler_.std_).any()
    np.testing.assert_array_equal(plain.call_zscores(texts), plain.zscores_.transform(texts))
    a, b = test.texts_a(), test.texts_b()
    scores = ver.score_pairs(a, b)
    z = _call_reference(ver, texts)
    row = {t: i for i, t in enumerate(texts)}
    d = ver.delta_.paired(z[[row[t] for t in a]], z[[row[t] for t in b]])
    np.testing.assert_allclose(scores, ver.logistic_.predict_proba(d[:, None])[:, 1], atol=1e-9)
    assert auc(test.labels, scores) > 0.9
    # a pair's score depends on the call it is scored in, not on the order of the call
    order = np.random.default_rng(0).permutation(len(a))
    shuffled = ver.score_pairs([a[i] for i in order], [b[i] for i in order])
    np.testing.assert_allclose(shuffled, scores[order], atol=1e-12)


def test_transductive_verifier_checks_n_background():
    with pytest.raises(ValueError, match="n_background must be >= 2"):
        DeltaVerifier(transductive=True, n_background=1).fit(synthetic_corpus(seed=0))
