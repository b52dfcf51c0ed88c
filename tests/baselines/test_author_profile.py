"""The author-profile verifier: its vectorised kernel against the plain reference, the
transductive statistics, and what it refuses."""

import numpy as np
import pytest
from baselines_synth import synthetic_corpus, synthetic_pairs
from hypothesis import given, settings
from hypothesis import strategies as st

from baselines.author_profile import AuthorProfile, profile_correlation_reference
from baselines.naive import CharNgramCosine


@pytest.fixture(scope="module")
def corpus():
    return synthetic_corpus(n_authors=12, per_author=5, n_words=120, seed=3)


def _cosine():
    return CharNgramCosine(max_features=2000)


@settings(max_examples=10, deadline=None)
@given(max_texts=st.integers(12, 40), seed=st.integers(0, 3))
def test_kernel_agrees_with_the_reference(corpus, max_texts, seed):
    train, test = corpus.subset(np.arange(40)), corpus.subset(np.arange(40, 60))
    est = AuthorProfile(_cosine(), max_texts=max_texts, random_state=seed).fit(train)
    # every author keeps a reference text however few are drawn
    assert len(est.texts_) == min(max_texts, 40) and set(est.author_index_) == set(range(8))
    a, b = test.texts[:6], test.texts[6:12]
    got = est.score_pairs(a, b)
    cross = est.verifier_.score_cross
    for i in range(len(a)):
        ref = profile_correlation_reference(
            cross([a[i]], est.texts_)[0].tolist(),
            cross([b[i]], est.texts_)[0].tolist(),
            est.author_index_.tolist(),
            est.mean_.tolist(),
            est.std_.tolist(),
        )
        assert got[i] == pytest.approx(ref, abs=1e-9)
    flat = est.score_pairs([x for x in a for _ in b], [y for _ in a for y in b])
    np.testing.assert_allclose(est.score_cross(a, b).ravel(), flat, atol=1e-12)


def test_author_statistics_leave_out_the_authors_own_texts(corpus):
    est = AuthorProfile(_cosine()).fit(corpus)
    raw, owner = est.reference_means_, est.author_index_
    for k in range(len(est.mean_)):
        other = raw[owner != k, k]
        assert est.mean_[k] == pytest.approx(other.mean()) and est.std_[k] == pytest.approx(
            other.std()
        )


def test_profiles_tell_unseen_authors_apart(corpus):
    train, test = corpus.subset(np.arange(40)), corpus.subset(np.arange(40, 60))
    for transductive in (False, True):
        est = AuthorProfile(_cosine(), transductive=transductive).fit(train)
        scores = est.score_pairs(test.texts[:-1], test.texts[1:])
        same = np.asarray(test.authors[:-1]) == np.asarray(test.authors[1:])
        assert scores[same].mean() > scores[~same].mean() + 0.15


def test_transductive_statistics_read_the_call_and_top_up_from_training(corpus):
    train, test = corpus.subset(np.arange(40)), corpus.subset(np.arange(40, 60))
    est = AuthorProfile(_cosine(), transductive=True, n_background=8).fit(train)
    texts = test.texts[:12]
    raw = est._author_means(est.verifier_.score_cross(texts, est.texts_), len(est.mean_))
    rng = np.random.default_rng(0)
    rows = raw[np.sort(rng.choice(12, 8, replace=False))]
    mean, std = est._call_stats(raw)
    np.testing.assert_allclose(mean, rows.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(std, rows.std(axis=0), atol=1e-12)
    # three texts: five reference rows fill the pool, each without its own author's column
    mean, _ = est._call_stats(raw[:3])
    extra = np.random.default_rng(0).permutation(len(est.texts_))[:5]
    for k in range(len(mean)):
        kept = [
            *raw[:3, k],
            *[est.reference_means_[i, k] for i in extra if est.author_index_[i] != k],
        ]
        assert mean[k] == pytest.approx(np.mean(kept), abs=1e-12)


def test_pairs_give_pseudo_authors_and_fewer_than_three_are_refused(corpus):
    pairs = synthetic_pairs(20)
    est = AuthorProfile(_cosine()).fit(pairs)
    assert len(est.mean_) >= 3
    assert est.score_problems(pairs).shape == (len(pairs),)
    two = corpus.subset(np.isin(corpus.authors, np.unique(corpus.authors)[:2]))
    with pytest.raises(ValueError, match="needs texts of at least 3 authors"):
        AuthorProfile(_cosine()).fit(two)


@pytest.mark.parametrize(("param", "value"), [("max_texts", 2), ("n_background", 1.5)])
def test_sizes_are_checked_at_fit(corpus, param, value):
    with pytest.raises(ValueError, match=f"{param} must be an integer >= 3"):
        AuthorProfile(_cosine(), **{param: value}).fit(corpus)
