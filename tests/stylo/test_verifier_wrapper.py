"""VerifierWrapper: every public call answered by the inner verifier's public methods between
the two hooks; wrappers compose; masking an attribution-only method works."""

import numpy as np
import pytest
from baselines_synth import synthetic_corpus
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from baselines.calibration import Calibrated
from baselines.masked import MaskedVerifier
from baselines.svm import SVMOpenSetAttributor
from stylo.corpus import Corpus, PairSet
from stylo.features import TextDistortion
from stylo.verifier import AttributionOnly, Verifier
from stylo.verifier_wrapper import VerifierWrapper

#: what a wrapper's calls reach: its rank is its rank_many of one query, so it reaches the
#: inner verifier's rank_many, and its choice compares its own rank's scores
REACHED = ("fit", "score_pairs", "score_problems", "rank_many", "attribute")


class _LengthRatio(Verifier):
    """shorter/longer length ratio; needs no data."""

    requires_fit = False

    def _score_impl(self, a, b):
        la = np.array([len(x) for x in a], float)
        lb = np.array([len(x) for x in b], float)
        return np.minimum(la, lb) / np.maximum(la, lb)


class _Logged(_LengthRatio):
    """Logs every public call it receives (name, texts), so a test sees that a wrapper reached
    it through the public methods and with which texts."""

    def fit(self, X=None, y=None):
        self.log_ = [("fit", None if X is None else sorted(X.texts))]
        return super().fit(X, y)

    def score_pairs(self, texts_a, texts_b):
        self.log_.append(("score_pairs", list(texts_a) + list(texts_b)))
        return super().score_pairs(texts_a, texts_b)

    def score_problems(self, pairs):
        self.log_.append(("score_problems", [t for k in pairs.known for t in k] + pairs.unknown))
        return super().score_problems(pairs)

    def rank(self, query, candidates):
        self.log_.append(("rank", [query, *candidates]))
        return super().rank(query, candidates)

    def rank_many(self, queries, candidate_lists):
        self.log_.append(("rank_many", list(queries) + [c for cs in candidate_lists for c in cs]))
        return super().rank_many(queries, candidate_lists)

    def attribute(self, candidates, texts):
        self.log_.append(("attribute", [t for c in candidates for t in c] + list(texts)))
        return super().attribute(candidates, texts)


class _Shouting(VerifierWrapper):
    """Upper-cases the texts going in; scores come out as 1 - s (so the order reverses) and
    every hook call is kept for the test to read."""

    def _fit_impl(self, X, y):
        self.out_ = []
        super()._fit_impl(X, y)

    def _texts_in(self, texts):
        return [t.upper() for t in texts]

    def _scores_out(self, scores, known, unknown, ranking):
        self.out_.append((list(map(list, known)), list(unknown), ranking))
        return 1.0 - scores


def _train():
    return Corpus.from_lists(["ab cd", "ef", "gh ij kl", "mn"], ["x", "x", "y", "y"])


def test_every_public_call_reaches_the_inner_public_method_with_the_hooks_applied():
    w = _Shouting(_Logged()).fit(_train())
    inner = w.verifier_
    assert inner.log_ == [("fit", ["AB CD", "EF", "GH IJ KL", "MN"])]
    plain = _LengthRatio().fit()

    def first_call(answer):
        """What ``answer()`` returns and the first call it made of the inner verifier (the
        inner verifier's own defaults then call its other public methods)."""
        before = len(inner.log_)
        return answer(), inner.log_[before]

    got, call = first_call(lambda: w.score_pairs(["ab", "c"], ["abc", "cd"]))
    np.testing.assert_array_equal(got, 1 - plain.score_pairs(["ab", "c"], ["abc", "cd"]))
    assert call == ("score_pairs", ["AB", "C", "ABC", "CD"])
    assert w.out_[-1] == ([["AB"], ["C"]], ["ABC", "CD"], False)

    ps = PairSet.from_lists([["ab", "cd"], ["e"]], ["abcde", "ef"])
    got, call = first_call(lambda: w.score_problems(ps))
    np.testing.assert_array_equal(got, 1 - plain.score_problems(ps))
    assert call == ("score_problems", ["AB", "CD", "E", "ABCDE", "EF"])
    assert w.out_[-1] == ([["AB", "CD"], ["E"]], ["ABCDE", "EF"], False)

    lists = [["a", "abc"], ["abcd"]]
    got, call = first_call(lambda: w.rank_many(["ab", "abcd"], lists))
    for r, p in zip(got, plain.rank_many(["ab", "abcd"], lists)):
        np.testing.assert_array_equal(r, 1 - p)
    assert call == ("rank_many", ["AB", "ABCD", "A", "ABC", "ABCD"])
    # candidates are the known side, the query the unknown one
    assert w.out_[-1] == ([["A"], ["ABC"], ["ABCD"]], ["AB", "AB", "ABCD"], True)

    got, call = first_call(lambda: w.rank("ab", ["a", "abc"]))
    np.testing.assert_array_equal(got, 1 - plain.rank("ab", ["a", "abc"]))
    assert call == ("rank_many", ["AB", "A", "ABC"]) and w.out_[-1][2] is True
    # the choice follows the wrapper's scores, not the inner verifier's
    assert plain.choose("aaaa", "a", "aaa") == 1 and w.choose("aaaa", "a", "aaa") == 0

    cands = [["ab", "cd"], ["abcdefgh"]]
    got, call = first_call(lambda: w.attribute(cands, ["abcde", "a"]))
    np.testing.assert_array_equal(got, 1 - plain.attribute(cands, ["abcde", "a"]))
    assert call == ("attribute", ["AB", "CD", "ABCDEFGH", "ABCDE", "A"])
    # attribution orders candidates: no grey zone (ranking=True), which would tie them
    assert w.out_[-1] == ([["AB", "CD"], ["ABCDEFGH"]] * 2, ["ABCDE", "ABCDE", "A", "A"], True)
    assert {name for name, _ in inner.log_} == set(REACHED)


def test_wrapper_keeps_the_contract():
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        _Shouting(_LengthRatio()).rank("q", ["a"])
    with pytest.raises(TypeError, match="verifier must be a Verifier, got str"):
        _Shouting("nope").fit(_train())
    assert _Shouting(_LengthRatio()).requires_fit is False
    assert _Shouting(Calibrated(_LengthRatio())).requires_fit is True
    with pytest.raises(ValueError, match="needs training data"):
        _Shouting(Calibrated(_LengthRatio())).fit()
    # empty texts never reach the inner verifier: the wrapper's own guard answers them
    w = _Shouting(_Logged()).fit()
    with pytest.warns(UserWarning, match="1 pair"):
        s = w.score_pairs(["ab", " "], ["abc", "x"])
    assert s[1] == 0.5 and w.verifier_.log_[-1] == ("score_pairs", ["AB", "ABC"])


_texts = st.lists(
    st.text(alphabet="ab c", min_size=1, max_size=6).filter(str.strip), min_size=1, max_size=5
)


@settings(max_examples=40, deadline=None)
@given(_texts, _texts, _texts)
def test_a_wrapper_without_hooks_answers_as_its_inner_verifier(a, b, c):
    inner = _LengthRatio().fit()
    w = VerifierWrapper(_LengthRatio()).fit()
    n = min(len(a), len(b))
    np.testing.assert_array_equal(w.score_pairs(a[:n], b[:n]), inner.score_pairs(a[:n], b[:n]))
    ps = PairSet.from_lists([a, c], b[:2] if len(b) > 1 else b * 2)
    np.testing.assert_array_equal(w.score_problems(ps), inner.score_problems(ps))
    for got, want in zip(w.rank_many(a, [c] * len(a)), inner.rank_many(a, [c] * len(a))):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(w.attribute([a, c], b), inner.attribute([a, c], b))


def test_masked_calibrated_is_calibrated_on_masked_texts():
    """masked(calibrated(x)) answers as calibrated(x) fitted on and scoring masked texts, in
    every call; and calibrated(masked(x)) composes too."""
    corpus = synthetic_corpus(n_authors=6, per_author=4, n_words=30, seed=1)
    train, test = corpus.texts[:16], corpus.texts[16:]
    train_corpus = Corpus.from_lists(train, corpus.authors[:16])
    masker = TextDistortion(k=20)
    both = MaskedVerifier(Calibrated(_LengthRatio(), n_pairs=40), masker).fit(train_corpus)
    fitted = both.masker_
    mask = fitted.transform
    alone = Calibrated(_LengthRatio(), n_pairs=40).fit(
        Corpus.from_lists(mask(train), corpus.authors[:16])
    )
    a, b = test[:4], test[4:]
    np.testing.assert_array_equal(both.score_pairs(a, b), alone.score_pairs(mask(a), mask(b)))
    for got, want in zip(
        both.rank_many(a, [b, b[:2], b, b[1:]]),
        alone.rank_many(mask(a), [mask(b), mask(b[:2]), mask(b), mask(b[1:])]),
    ):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        both.attribute([a[:2], a[2:]], b), alone.attribute([mask(a[:2]), mask(a[2:])], mask(b))
    )
    assert both.choose(a[0], b[0], b[1]) == alone.choose(*mask([a[0], b[0], b[1]]))
    outside_in = Calibrated(MaskedVerifier(_LengthRatio(), masker), n_pairs=40).fit(train_corpus)
    s = outside_in.score_pairs(a, b)
    assert s.shape == (4,) and ((s >= 0) & (s <= 1)).all()


def test_masking_an_attribution_only_method_attributes_masked_texts():
    corpus = synthetic_corpus(n_authors=3, per_author=6, n_words=60, seed=2)
    texts = np.array(corpus.texts, dtype=object)
    authors = np.asarray(corpus.authors)
    known = [list(texts[(authors == a)][:4]) for a in sorted(set(authors))]
    unknown = [t for a in sorted(set(authors)) for t in texts[authors == a][4:]]
    masked = MaskedVerifier(SVMOpenSetAttributor(), TextDistortion(k=50)).fit(corpus)
    mask = masked.masker_.transform
    got = masked.attribute(known, unknown)
    want = SVMOpenSetAttributor().fit().attribute([mask(k) for k in known], mask(unknown))
    np.testing.assert_array_equal(got, want)
    assert got.shape == (6, 3) and (got.argmax(axis=1) == np.repeat([0, 1, 2], 2)).all()
    with pytest.raises(AttributionOnly):
        masked.score_pairs(unknown[:1], unknown[1:2])
