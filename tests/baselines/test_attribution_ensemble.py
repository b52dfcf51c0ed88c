"""The PAN winners' attribution ensemble on synthetic problems: it finds the author, its
open-set margin comes from simulated training problems only, and it keeps the contract."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from attribution_synth import attribution_problem
from baselines_synth import synthetic_corpus
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.decomposition import PCA
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import MaxAbsScaler
from sklearn.svm import LinearSVC

from baselines import attribution_ensemble
from baselines._row_space import first_axis, gram_factor, span_coordinates
from baselines.attribution_ensemble import EnsembleAttributor, _balanced_confident
from baselines.svm import lead_scores
from stylo.corpus import Corpus
from stylo.features import TextDistortion, gram
from stylo.features.ngrams import TOKEN_PATTERN
from stylo.verifier import AttributionOnly

_VIEWS = EnsembleAttributor().views  # the registered views, the reference writes them out


@pytest.fixture(scope="module")
def corpus():
    return synthetic_corpus(n_authors=6, per_author=6, n_words=120, seed=3)


def _split(corpus, n_known=4):
    by_author = corpus.by_author()
    names = sorted(by_author)
    known = [[corpus.texts[i] for i in by_author[a][:n_known]] for a in names]
    rest = [(corpus.texts[i], j) for j, a in enumerate(names) for i in by_author[a][n_known:]]
    return known, [t for t, _ in rest], np.array([j for _, j in rest])


def _problems_corpus(seed: int) -> Corpus:
    """Two training problems in the layout the cross-domain protocol passes to fit."""
    rows = []
    for p in range(2):
        c = synthetic_corpus(n_authors=5, per_author=4, n_words=100, seed=seed + p)
        rows += [
            {
                "text": t,
                "author": f"p{p}{a}",
                "problem": f"problem{p}",
                "candidate": f"p{p}{a}",
                "role": "known",
            }
            for t, a in zip(c.texts, c.frame["author"], strict=True)
        ]
    frame = pd.DataFrame(rows)
    return Corpus.from_lists(
        frame["text"].tolist(),
        frame["author"].tolist(),
        problem=frame["problem"].tolist(),
        candidate=frame["candidate"].tolist(),
        role=frame["role"].tolist(),
    )


def test_finds_the_author_and_scores_follow_the_lead(corpus):
    known, texts, truth = _split(corpus)
    m = EnsembleAttributor(reject_margin=0.0).fit()
    scores = m.attribute(known, texts)
    assert scores.shape == (len(texts), len(known))
    assert (scores.argmax(axis=1) == truth).mean() >= 0.9
    # exactly one candidate per text at or above 0.5 with no margin: the best one
    assert ((scores >= 0.5).sum(axis=1) == 1).all()


def _wordless_problem(seed: int = 0):
    """Four candidates writing in symbols alone (U+2600 on: no word character), each drawing
    them from a distribution of their own: three known texts each and two texts to attribute."""
    rng = np.random.default_rng(seed)
    alphabet = np.array([chr(c) for c in range(0x2600, 0x2600 + 200)])
    known, texts, truth = [], [], []
    for a in range(4):
        p = rng.dirichlet(np.full(len(alphabet), 0.3))
        draw = ["".join(rng.choice(alphabet, size=300, p=p)) for _ in range(5)]
        known.append(draw[:3])
        texts += draw[3:]
        truth += [a, a]
    return known, texts, np.array(truth)


def test_views_without_an_ngram_are_left_out_with_a_warning_not_an_error():
    # without a word character no text has a word n-gram; the character views carry on
    known, texts, truth = _wordless_problem()
    m = EnsembleAttributor(reject_margin=0.0).fit()
    with pytest.warns(UserWarning, match=r"20 texts left out: word \(1, 3\)$"):
        scores = m.attribute(known, texts)
    assert (scores.argmax(axis=1) == truth).all()
    kept = tuple(v for v in m.views if v[0] != "word")
    alone = EnsembleAttributor(views=kept, reject_margin=0.0).fit().attribute(known, texts)
    np.testing.assert_array_equal(scores, alone)
    with pytest.raises(ValueError, match="none of its views"):
        EnsembleAttributor(views=(("word", (1, 2)),), reject_margin=0.0).fit().attribute(
            known, texts
        )


def test_margin_is_fitted_on_simulated_training_problems_and_rejects(corpus):
    m = EnsembleAttributor(random_state=1).fit(_problems_corpus(10))
    assert set(m.margin_scores_) and m.reject_margin_ in m.margin_scores_
    assert m.margin_scores_[m.reject_margin_] == max(m.margin_scores_.values())
    again = EnsembleAttributor(random_state=1).fit(_problems_corpus(10))
    assert again.reject_margin_ == m.reject_margin_ and again.margin_scores_ == m.margin_scores_
    known, texts, _ = _split(corpus)
    wide = EnsembleAttributor(reject_margin=10.0).fit()
    assert (wide.attribute(known, texts).max(axis=1) < 0.5).all()  # every text: unknown
    # without training problems there is nothing to fit: closed set
    assert EnsembleAttributor().fit(corpus).reject_margin_ == 0.0


def _reference_weights(rows, labels, axis=None):
    """Each view's accuracy above chance on three folds of the known rows (every candidate's
    texts dealt round them in order, or cut into three runs along ``axis``), normalised; equal
    if none is above chance."""
    fold = np.zeros(len(labels), dtype=int)
    for c in set(labels):
        mine = np.flatnonzero(labels == c)
        if axis is None:
            fold[mine] = np.arange(len(mine)) % 3
        else:
            for k, i in enumerate(sorted(mine, key=lambda i: axis[i])):
                fold[i] = 3 * k // len(mine)
    above = []
    for x in rows:
        right = 0
        for f in range(3):
            fit = LinearSVC(random_state=0).fit(x[fold != f], labels[fold != f])
            right += np.sum(fit.decision_function(x[fold == f]).argmax(axis=1) == labels[fold == f])
        above.append(max(right / len(labels) - 1 / len(set(labels)), 0.0))
    above = np.array(above)
    return above / above.sum() if above.sum() > 0 else np.full(len(rows), 1 / len(rows))


def _reference_axis(x):
    """The rows' first principal component (scikit-learn), signed as ``first_axis`` signs
    it."""
    got = PCA(n_components=1, svd_solver="full").fit_transform(x)[:, 0]
    return got if got[np.argmax(np.abs(got))] > 0 else -got


def _reference_decisions(
    known, texts, views, scaling, combination, min_df=2, pseudo=None, weighting="equal"
):
    """The ensemble written out with scikit-learn's vectorizers, view by view (and scaling
    by scaling, for a tuple of them); ``pseudo`` = (mask of texts, their labels) joins the
    known texts' rows in every model's training rows; ``weighting="cv"`` weighs the views by
    ``_reference_weights``, ``"topic"`` too, its folds along the first word view's principal
    axis (scikit-learn's PCA)."""
    everything = [t for c in known for t in c] + texts
    labels = np.repeat(np.arange(len(known)), [len(c) for c in known])
    rewritten = {
        kind: TextDistortion(k=k).fit(everything).transform(everything)
        for kind, k in (("distorted", 100), ("masked", 0))
    }
    decisions, known_rows = [], []
    scalings = [scaling] if isinstance(scaling, str) else scaling
    for (kind, ngram_range), scaling in itertools.product(views, scalings):
        vectorizer = TfidfVectorizer(
            **(
                {"analyzer": "word", "token_pattern": TOKEN_PATTERN}
                if kind == "word"
                else {"analyzer": "char"}
            ),
            ngram_range=ngram_range,
            lowercase=False,
            min_df=min_df,
            sublinear_tf=True,
            norm=None if scaling == "maxabs" else "l2",
        )
        x = vectorizer.fit_transform(rewritten.get(kind, everything))
        if scaling.endswith("maxabs"):
            x = MaxAbsScaler().fit_transform(x)
        x_known, x_texts, y = x[: len(labels)], x[len(labels) :], labels
        known_rows.append(x_known)
        if pseudo is not None:
            x_known = sp.vstack([x_known, x_texts[pseudo[0]]])
            y = np.concatenate([labels, pseudo[1]])
        d = LinearSVC(random_state=0).fit(x_known, y).decision_function(x_texts)
        if combination == "zscore":
            d = (d - d.mean(axis=1, keepdims=True)) / d.std(axis=1, keepdims=True)
        decisions.append(d)
    if weighting == "equal":
        return sum(decisions) / len(decisions)
    axis = None
    if weighting == "topic":
        word = known_rows[[kind for kind, _ in views].index("word") * len(scalings)]
        axis = _reference_axis(word.toarray())
    weights = _reference_weights(known_rows, labels, axis)
    return sum(w * d for w, d in zip(weights, decisions, strict=True))


@pytest.mark.parametrize(
    "scaling, combination",
    [
        ("l2-maxabs", "zscore"),
        ("maxabs", "zscore"),
        ("l2", "mean"),
        ("l2", "zscore"),
        (("l2", "l2-maxabs"), "zscore"),
        (("maxabs", "l2"), "mean"),
    ],
)
@pytest.mark.parametrize("weighting", ["equal", "cv", "topic"])
def test_decisions_agree_with_a_view_by_view_reference(
    scaling, combination, weighting, monkeypatch
):
    monkeypatch.setattr(attribution_ensemble, "_GRAM_MAX_ROWS", 0)  # the reference's rows
    known, texts, _ = attribution_problem(n_candidates=4, seed=5)
    m = EnsembleAttributor(
        scaling=scaling, combination=combination, weighting=weighting, self_training=0.0
    ).fit()
    np.testing.assert_allclose(
        m._decisions(known, texts),
        _reference_decisions(known, texts, _VIEWS, scaling, combination, weighting=weighting),
        rtol=1e-6,
        atol=1e-8,
    )


def test_self_training_refits_on_an_equal_number_of_confident_texts_per_candidate(monkeypatch):
    d = np.array(
        [
            [3.0, 0.0, 0.0],
            [2.0, 1.5, 0.0],
            [0.0, 2.0, 0.0],
            [0.0, 4.0, 1.0],
            [0.0, 0.5, 1.0],
            [1.0, 0.0, 0.0],
        ]  # fmt: skip
    )
    # candidate 2 wins one text (row 4), so every candidate gets at most one
    np.testing.assert_array_equal(_balanced_confident(d, 1.0), [1, 0, 0, 1, 1, 0])
    np.testing.assert_array_equal(_balanced_confident(d, 0.3), [0] * 6)  # 0.3 * 6 / 3 < 1
    assert _balanced_confident(d[:, :2], 1.0).all()  # each of two candidates wins three
    # a candidate that wins nothing: no text joins any candidate
    assert not _balanced_confident(d[:4, :], 1.0).any()
    monkeypatch.setattr(attribution_ensemble, "_GRAM_MAX_ROWS", 0)  # the reference's rows
    known, texts, _ = attribution_problem(n_candidates=4, seed=5)
    one = {"scaling": "l2-maxabs"}
    plain = EnsembleAttributor(self_training=0.0, **one).fit()._decisions(known, texts)
    chosen = _balanced_confident(plain, 1.0)
    assert chosen.sum() >= 4  # something joins, or the test below shows nothing
    got = EnsembleAttributor(self_training=1.0, **one).fit()._decisions(known, texts)
    # the views keep the weights their models earned on the known texts alone
    pseudo = (chosen, plain.argmax(axis=1)[chosen])
    want = _reference_decisions(
        known, texts, _VIEWS, "l2-maxabs", "zscore", pseudo=pseudo, weighting="topic"
    )
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    assert np.abs(got - plain).max() > 1e-2
    for bad in ({"self_training": 1.5}, {"self_training": -0.1}):
        with pytest.raises(ValueError, match="self_training must be in"):
            EnsembleAttributor(**bad).fit()
    with pytest.raises(ValueError, match="self_training_rounds must be an int"):
        EnsembleAttributor(self_training_rounds=-1).fit()


def test_cv_folds_along_the_topic_axis_cut_each_candidate_into_runs():
    labels = np.repeat(np.arange(3), 7)
    rng = np.random.default_rng(1)
    # view 0 tells the candidates apart only on one side of the axis, view 1 on both
    place = np.tile(np.arange(7.0), 3)
    side = np.where((place < 3)[:, None], np.eye(3)[labels] * 3.0, 0.0)
    one_sided = side + rng.normal(0, 0.3, (21, 3))
    both = np.eye(3)[labels] * 3.0 + rng.normal(0, 0.3, (21, 3))
    m = EnsembleAttributor(weighting="topic")
    views = [(one_sided, None), (both, None)]
    w = m._view_weights(views, labels, place)
    np.testing.assert_allclose(w, _reference_weights([one_sided, both], labels, place))
    # a run of texts unlike the rest is never seen in training: the one-sided view loses
    # the weight that folds dealt in order give it
    dealt = m._view_weights(views, labels)
    assert w[0] == 0.0 and dealt[0] > 0.2


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(3, 12),
    d=st.integers(2, 30),
    seed=st.integers(0, 2**16),
)
def test_first_axis_is_the_first_principal_component(n, d, seed):
    x = sp.random(n, d, density=0.5, format="csr", random_state=seed)
    values = np.linalg.svd(x.toarray() - x.toarray().mean(axis=0), compute_uv=False)
    # a first axis is defined when the first component stands apart from the second
    assume(values[0] > 1e-6 and (len(values) < 2 or values[1] < 0.9 * values[0]))
    want = _reference_axis(x.toarray())
    for rows in (x.toarray(), x):  # the Gram factor's dense rows and sparse rows
        got = first_axis(rows)
        np.testing.assert_allclose(got * np.linalg.norm(want), want, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 12),
    d=st.integers(1, 30),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
)
def test_gram_rows_keep_every_inner_product(n, d, density, seed):
    x = sp.random(n, d, density=density, format="csr", random_state=seed)
    rows = gram_factor(gram(x))
    assert rows.shape == (n, n)
    np.testing.assert_allclose(rows @ rows.T, (x @ x.T).toarray(), atol=1e-10)


def test_views_of_a_set_of_texts_are_its_views_of_reordered_bit_for_bit():
    # what lets a problem's simulated problems (the same texts, other orders) share one
    # computation of the views without changing a decision
    known, texts, _ = attribution_problem(n_candidates=4, seed=7)
    m = EnsembleAttributor().fit()
    everything = [t for c in known for t in c] + texts
    order = sorted(range(len(everything)), key=everything.__getitem__)
    where = np.argsort(order)
    direct = m._views_of(everything)
    ordered = m._views_of([everything[i] for i in order])
    assert len(direct) == len(ordered) == 2 * len(m.views)  # two scalings each
    assert [kind for kind, _ in direct] == [kind for kind, _ in m.views for _ in range(2)]
    for (_, a), (_, b) in zip(direct, ordered, strict=True):
        assert np.array_equal(a, b[np.ix_(where, where)])
    # kept views serve a problem with the same texts otherwise split, and only those
    views = {}
    m._decisions(known, texts, views)
    moved = ([c[1:] for c in known], texts + [c[0] for c in known])
    assert np.array_equal(m._decisions(*moved, views), m._decisions(*moved))
    assert len(views) == 1
    m._decisions(known, texts[1:], views)
    assert len(views) == 2


def test_fits_on_gram_rows_give_the_sparse_fits_decisions(monkeypatch):
    known, texts, _ = attribution_problem(n_candidates=4, seed=5)
    m = EnsembleAttributor().fit()
    everything = [t for c in known for t in c] + texts
    x = m._view_matrices(everything, 0)[0][0][1]  # char 2-5-grams, L2 rows
    labels = np.repeat(np.arange(len(known)), [len(c) for c in known])
    k = len(labels)
    # one SVM solved tightly: the same problem on either rows, so the same decisions
    tight = {"tol": 1e-9, "max_iter": 100_000, "random_state": 0}
    monkeypatch.setattr(attribution_ensemble, "_GRAM_MAX_ROWS", 0)
    sparse_x = m._view_matrices(everything, 0)[0][0][1]
    np.testing.assert_allclose(x @ x.T, (sparse_x @ sparse_x.T).toarray(), atol=1e-12)
    on_gram = LinearSVC(**tight).fit(x[:k], labels).decision_function(x[k:])
    on_sparse = LinearSVC(**tight).fit(sparse_x[:k], labels).decision_function(sparse_x[k:])
    np.testing.assert_allclose(on_gram, on_sparse, atol=1e-7)
    # the ensemble at liblinear's default tolerance (1e-4): the solvers' paths part by
    # rounding, so z-scored decisions differ in the third decimal, the answers not at all
    sparse = m._decisions(known, texts)
    monkeypatch.setattr(attribution_ensemble, "_GRAM_MAX_ROWS", 2000)
    gram = m._decisions(known, texts)
    np.testing.assert_allclose(sparse, gram, atol=1e-2)
    np.testing.assert_array_equal(sparse.argmax(axis=1), gram.argmax(axis=1))


def test_fits_on_span_coordinates_give_the_gram_rows_decisions():
    # the weights lie in the training rows' span: the same dual problem on m columns, the same
    # decisions (as many columns as rows included, where dual="auto" would switch solvers)
    known, texts, _ = attribution_problem(n_candidates=4, seed=5)
    m = EnsembleAttributor().fit()
    everything = [t for c in known for t in c] + texts
    labels = np.repeat(np.arange(len(known)), [len(c) for c in known])
    k = len(labels)
    for x_known, x_texts in m._view_matrices(everything, k)[0]:
        for rows in (slice(None), slice(0, x_known.shape[0] // 2)):
            a, b = x_known[rows], x_texts
            fit_labels = labels[rows]
            if len(set(fit_labels)) < 2:
                continue
            small, small_texts = span_coordinates(a, b)
            assert small.shape == (a.shape[0], a.shape[0])
            assert small_texts.shape == (b.shape[0], a.shape[0])
            np.testing.assert_allclose(small @ small.T, a @ a.T, atol=1e-12)
            svm = LinearSVC(dual=True, random_state=0)
            np.testing.assert_allclose(
                svm.fit(small, fit_labels).decision_function(small_texts),
                svm.fit(a, fit_labels).decision_function(b),
                atol=1e-9,
            )


def test_every_view_counts_and_zscores_put_views_on_one_scale():
    known, texts, truth = attribution_problem(n_candidates=4, seed=6)
    full = EnsembleAttributor().fit()._decisions(known, texts)
    for i in range(len(_VIEWS)):
        fewer = _VIEWS[:i] + _VIEWS[i + 1 :]
        got = EnsembleAttributor(views=fewer).fit()._decisions(known, texts)
        assert np.abs(got - full).max() > 1e-3, f"dropping view {_VIEWS[i]} changed nothing"
    # one view standardised: every text's candidates have mean 0 and standard deviation 1
    one = EnsembleAttributor(views=_VIEWS[2:3], scaling="l2", self_training=0.0).fit()
    one = one._decisions(known, texts)
    np.testing.assert_allclose(one.mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(one.std(axis=1), 1.0)
    assert (full.argmax(axis=1) == truth).mean() >= 0.75


def test_lead_scores_by_hand():
    got = lead_scores(np.array([[0.9, 0.2, 0.1], [0.4, 0.5, 0.45]]), 0.1)
    np.testing.assert_allclose(got, [[0.8, 0.1, 0.05], [0.4, 0.475, 0.425]])


def test_contract(corpus):
    with pytest.raises(AttributionOnly, match="no score for a single pair"):
        EnsembleAttributor().fit().score_pairs(["a b c"], ["a b d"])
    with pytest.raises(ValueError, match="needs at least two candidates"):
        EnsembleAttributor().fit().attribute([["a b c", "d e f"]], ["a b"])
    with pytest.raises(ValueError, match="reject_margin must be >= 0"):
        EnsembleAttributor(reject_margin=-0.1).fit()
    with pytest.raises(ValueError, match="n_simulated must be an int >= 1"):
        EnsembleAttributor(n_simulated=0).fit()
    with pytest.raises(ValueError, match="C must be > 0"):
        EnsembleAttributor(C=0).fit()
    for views in ((), (("chars", (1, 3)),), (("word", (3, 1)),), (("word", 2),)):
        with pytest.raises(ValueError, match="views must be a non-empty tuple"):
            EnsembleAttributor(views=views).fit()
    for scaling in ("minmax", (), ("l2", "minmax"), None):
        with pytest.raises(ValueError, match="scaling must be one of"):
            EnsembleAttributor(scaling=scaling).fit()
    with pytest.raises(ValueError, match="combination must be one of"):
        EnsembleAttributor(combination="vote").fit()


def test_cv_weights_follow_each_views_held_out_accuracy():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 6)
    signal = np.eye(3)[labels] * 3.0 + rng.normal(0, 0.3, (18, 3))  # separates the candidates
    noise = rng.normal(0, 1.0, (18, 3))  # says nothing of them
    m = EnsembleAttributor(weighting="cv")
    w = m._view_weights([(signal, signal[:0]), (noise, noise[:0])], labels)
    np.testing.assert_allclose(w.sum(), 1.0)
    assert w[0] > 0.8 and w[0] > 4 * w[1]
    np.testing.assert_allclose(w, _reference_weights([signal, noise], labels))
    # equal weights: asked for, one view, no view above chance, or too few known texts
    for got in (
        EnsembleAttributor(weighting="equal")._view_weights([(signal, None)] * 2, labels),
        m._view_weights([(noise, None)] * 2, labels),
        m._view_weights([(signal[::6], None)] * 2, labels[::6]),
    ):
        np.testing.assert_array_equal(got, [0.5, 0.5])
    np.testing.assert_array_equal(m._view_weights([(signal, None)], labels), [1.0])
    with pytest.raises(ValueError, match=r"weighting must be one of \('equal', 'cv', 'topic'\)"):
        EnsembleAttributor(weighting="x").fit()
