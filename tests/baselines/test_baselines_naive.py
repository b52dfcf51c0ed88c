"""PAN's cngdist baseline: contract, synthetic data and a small real slice."""

import numpy as np
import pytest
import scipy.sparse as sp
from baselines_synth import synthetic_corpus, synthetic_pairs
from conftest import load_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from baselines._features import RecentRows
from baselines.naive import CharNgramCosine, NaiveDistance
from stylo.metrics.pan import auc


def test_not_fitted_raises():
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        NaiveDistance().score_pairs(["a text"], ["b text"])


def test_cosine_equals_pan_codes_scikit_learn_pipeline():
    # pan-code's cngdist: TfidfVectorizer(max_features=3000, analyzer="char", ngram 4) fitted
    # on both texts of every training pair, cosine of the two rows. Its 3,000 are given as the
    # vocabulary: TfidfVectorizer's own cut keeps CPU-dependent ones among tied counts
    # (an unstable sort), stylo the first in name order
    pairs = synthetic_pairs(10, seed=4)
    v = CharNgramCosine().fit(pairs)
    texts = [t for ab in zip(pairs.texts_a(), pairs.texts_b()) for t in ab]
    full = CountVectorizer(analyzer="char", ngram_range=(4, 4))
    counts = np.asarray(full.fit_transform(texts).sum(axis=0)).ravel()
    assert len(counts) > 3000
    top = np.sort(np.argsort(-counts, kind="stable")[:3000])
    vocabulary = full.get_feature_names_out()[top]
    tfidf = TfidfVectorizer(analyzer="char", ngram_range=(4, 4), vocabulary=vocabulary).fit(texts)
    xa, xb = tfidf.transform(pairs.texts_a()), tfidf.transform(pairs.texts_b())
    expected = np.diag(cosine_similarity(xa, xb))
    assert np.allclose(v.score_pairs(pairs.texts_a(), pairs.texts_b()), expected, atol=1e-12)


def test_synthetic_scores_separate_and_are_deterministic():
    train, test = synthetic_pairs(40, seed=0), synthetic_pairs(40, seed=1)
    model = NaiveDistance().fit(train)
    s = model.score_problems(test)
    assert ((s >= 0) & (s <= 1)).all()
    assert auc(test.labels, s) > 0.8
    assert 0 < model.calibrator_.p1_ < model.calibrator_.p2_ < 1
    assert np.array_equal(s, NaiveDistance().fit(train).score_problems(test))


def test_fit_on_a_corpus_and_bad_input():
    model = NaiveDistance(n_pairs=40).fit(synthetic_corpus())
    with pytest.warns(UserWarning, match="empty"):
        s = model.score_pairs(["", "abc abc abc"], ["some text here", "abc abc abd"])
    assert s[0] == 0.5
    with pytest.warns(UserWarning, match="no vocabulary"):
        s = model.score_pairs(["zq"], ["xw"])  # shorter than one 4-gram: no vector
    assert s[0] == 0.5
    with pytest.raises(TypeError, match="index 0 is missing"):
        model.score_pairs([None], ["x"])


@pytest.mark.real_data
def test_real_slice_pan15():
    train = load_or_skip("pan15_av_en", split="train")
    test = load_or_skip("pan15_av_en", split="test")
    test = test.subset(np.arange(0, 500, 5))  # every 5th of the 500 test problems (54 same-author)
    s = NaiveDistance().fit(train).score_problems(test)
    assert s.shape == (100,) and ((s >= 0) & (s <= 1)).all()
    assert auc(test.labels, s) > 0.65


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(0, 11), min_size=1, max_size=9),
        min_size=1,
        max_size=8,
    ),
    st.integers(1, 3),
)
def test_recent_rows_equal_the_transform_whatever_the_calls(calls, keep):
    # texts picked from a few, so calls overlap, repeat texts and outlive the kept calls
    vocab = [f"text {i} " * (i + 1) + "abc" * i for i in range(12)]
    vectorizer = TfidfVectorizer(analyzer="char", ngram_range=(1, 3)).fit(vocab)
    seen = []
    rows = RecentRows(lambda texts: (seen.extend(texts), vectorizer.transform(texts))[1], keep)
    for picks in calls:
        texts = [vocab[i] for i in picks]
        before = len(seen)
        got = rows(texts)
        assert sp.issparse(got) and got.shape == (len(texts), len(vectorizer.vocabulary_))
        np.testing.assert_array_equal(got.toarray(), vectorizer.transform(texts).toarray())
        # only texts none of the kept calls had are transformed, each once
        assert len(seen) - before == len(set(seen[before:])) <= len(set(texts))


def test_s_normalised_cosine_transforms_each_text_once_a_call(monkeypatch):
    pairs = synthetic_pairs(12, seed=2)
    v = CharNgramCosine(min_n=1).fit(pairs)
    calls = []
    transform = v.vectorizer_.transform
    monkeypatch.setattr(v._rows, "transform", lambda t: (calls.append(list(t)), transform(t))[1])
    a, b = pairs.texts_a(), pairs.texts_b()
    first = v.score_pairs(a, b)
    cross = v.score_cross(a, b)
    np.testing.assert_allclose(np.diag(cross), first, rtol=0, atol=1e-12)
    # score_cross read every text from the rows score_pairs made
    assert sum(map(len, calls)) == len(set(a) | set(b))
