"""stylo.features.shared_counts: extractors fitted and used inside one context give the
matrices, names and errors of extractors counting afresh, and the texts are counted once."""

import pickle

import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stylo.features import CharNgrams, WordNgrams
from stylo.features._ngram_base import NgramCounts
from stylo.features.shared_counts import shared_counts

ALPHABET = list("abcAB xyz.,;'’0\t\n") + ["é", "İ", "Σ", "😀", "中"]
documents = st.lists(st.text(alphabet=ALPHABET, max_size=30), min_size=2, max_size=10)
extractors = st.sampled_from(
    [
        (CharNgrams, dict(ngram_range=(1, 3))),
        (CharNgrams, dict(ngram_range=(2, 4), lowercase=False, max_features=7)),
        (CharNgrams, dict(ngram_range=(1, 2), analyzer="char_wb", min_df=2, binary=True)),
        (
            CharNgrams,
            dict(ngram_range=(1, 4), use_idf=True, sublinear_tf=True, norm="l2", max_df=0.8),
        ),
        (WordNgrams, dict(ngram_range=(1, 2), max_features=5, use_idf=True, norm="l1")),
        (WordNgrams, dict(ngram_range=(1, 1), lowercase=False, min_df=0.3)),
    ]
)


def _bits(x):
    return x.shape, x.indptr.tolist(), x.indices.tolist(), x.data.tobytes(), x.dtype


def _outcome(make, fit_docs, other_docs):
    """(fit_transform, transform of fit and other documents, names) or the error's text."""
    try:
        ext = make()
        got = ext.fit_transform(fit_docs)
        return (
            _bits(got),
            _bits(ext.transform(fit_docs[::-1])),
            _bits(ext.transform(other_docs)),
            list(ext.get_feature_names_out()),
        ), ext
    except ValueError as exc:
        return str(exc), None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, extractors, st.data())
def test_fits_inside_a_context_equal_fresh_fits(docs, extractor, data):
    cls, params = extractor
    subset = data.draw(st.lists(st.sampled_from(docs), min_size=1, max_size=len(docs)))
    others = data.draw(st.lists(st.text(alphabet=ALPHABET, max_size=30), min_size=1, max_size=3))
    want, fresh = _outcome(lambda: cls(**params), subset, others)
    with shared_counts(docs):
        got, shared = _outcome(lambda: cls(**params), subset, others)
        if shared is not None:  # the rows came from the shared count
            assert shared._shared_token is not None
    assert got == want
    if shared is not None:  # after the context, the extractor counts as a fresh one
        assert _bits(shared.transform(docs + others)) == _bits(fresh.transform(docs + others))
        again = pickle.loads(pickle.dumps(shared))
        assert _bits(again.transform(others)) == _bits(fresh.transform(others))


def test_each_configuration_is_counted_once(monkeypatch):
    calls = []
    count_learn = NgramCounts._count_learn

    def spy(self, docs, *args):
        calls.append(len(docs))
        return count_learn(self, docs, *args)

    monkeypatch.setattr(NgramCounts, "_count_learn", spy)
    monkeypatch.setattr(NgramCounts, "_count_fixed", lambda *a: pytest.fail("counted again"))
    docs = [f"text {i} by someone, with words {i % 3}" for i in range(12)]
    with shared_counts(docs):
        for fold in (docs[:8], docs[4:], docs[::2]):  # three folds, two extractors each
            for size in (5, 50):
                ext = CharNgrams((1, 4), max_features=size, use_idf=True, norm="l2")
                ext.fit(fold)
                ext.transform(docs[-3:])
        WordNgrams().fit(docs).transform(docs[:2])
    assert calls == [12, 12]  # one char count, one word count, of all twelve texts


def test_texts_outside_the_context_and_refits_are_counted_afresh():
    docs = ["alpha beta", "gamma delta", "beta gamma"]
    with shared_counts(docs):
        ext = CharNgrams((1, 2)).fit(docs)
        assert ext._shared_token is not None
        ext.fit(["zeta eta", "alpha"])  # not all shared: an ordinary fit
        assert ext._shared_token is None
        got = ext.transform(docs)
    want = CharNgrams((1, 2)).fit(["zeta eta", "alpha"]).transform(docs)
    assert _bits(got) == _bits(want)
    assert isinstance(got, sp.csr_matrix) and got.has_sorted_indices
    with shared_counts(docs), pytest.raises(ValueError, match="empty vocabulary"):
        WordNgrams().fit([".,", "..."])  # not shared: no word anywhere
    with shared_counts(["", "a b", "long text", "ab", "xyz"]):
        with pytest.raises(ValueError, match="empty vocabulary"):
            CharNgrams((4, 4)).fit(["", "a b"])  # shared, but no 4-gram in these rows
        with pytest.raises(ValueError, match="no terms remain"):
            CharNgrams((1, 1), min_df=2).fit(["ab", "xyz"])  # no character in both
    with shared_counts(docs):  # a fixed vocabulary: counted as ever
        fixed = CharNgrams((1, 1), vocabulary=["b", "a"]).fit_transform(docs)
    assert _bits(fixed) == _bits(CharNgrams((1, 1), vocabulary=["b", "a"]).fit_transform(docs))


def test_a_context_inside_one_holding_its_texts_is_that_one():
    # a grid task's context serves a stacked verifier's own context among its cells
    with shared_counts(["a b", "c d", "e f"]) as outer:
        with shared_counts(["c d", "a b"]) as inner:
            assert inner is outer
            ext = CharNgrams((1, 2))
            x = ext.fit_transform(["a b"])
            assert ext._shared_token == outer.token
        with shared_counts(["a b", "g h"]) as other:
            assert other is not outer and other.holds(["g h"]) and not outer.holds(["g h"])
    fresh = CharNgrams((1, 2)).fit_transform(["a b"])
    assert _bits(x) == _bits(fresh)
