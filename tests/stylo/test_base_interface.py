import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from baselines.random_guess import RandomGuess
from stylo.corpus import Corpus, PairSet, join_known
from stylo.text_input import has_text
from stylo.verifier import NO_ANSWER, Verifier, rank_each_query, training_pairs


class _LengthRatio(Verifier):
    """A tiny concrete verifier: shorter/longer length ratio."""

    def __init__(self, offset: float = 0.0):
        self.offset = offset

    def _fit_impl(self, X, y):
        self.n_train_ = len(X)

    def _score_impl(self, a, b):
        la = np.array([len(x) for x in a], float)
        lb = np.array([len(x) for x in b], float)
        return np.minimum(la, lb) / np.maximum(la, lb) + self.offset


@pytest.fixture
def corpus():
    return Corpus.from_lists(
        [f"text number {i} " * (i % 4 + 1) for i in range(20)], [f"a{i % 5}" for i in range(20)]
    )


def test_not_fitted_error_before_fit():
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        _LengthRatio().score_pairs(["a"], ["b"])
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        _LengthRatio().rank("q", ["a", "b"])


def test_fit_validates_and_returns_self(corpus):
    v = _LengthRatio()
    assert v.fit(corpus) is v and v.n_train_ == 20
    with pytest.raises(TypeError, match="PairSet or a Corpus"):
        _LengthRatio().fit(["a", "b"])
    with pytest.raises(ValueError, match="needs training data"):
        _LengthRatio().fit()
    assert clone(v).get_params() == {"offset": 0.0}


def test_empty_texts_give_no_answer_with_a_warning(corpus):
    v = _LengthRatio().fit(corpus)
    with pytest.warns(UserWarning, match="1 pair"):
        s = v.score_pairs(["abc", "  ", "abcd"], ["abc", "x", "ab"])
    assert s[1] == NO_ANSWER and s[0] == 1.0 and s[2] == 0.5


def test_bad_inputs_are_clear(corpus):
    v = _LengthRatio().fit(corpus)
    with pytest.raises(TypeError, match=r"texts_b\[1\] is NoneType"):
        v.score_pairs(["a", "b"], ["a", None])
    with pytest.raises(ValueError, match="2 items but texts_b has 1"):
        v.score_pairs(["a", "b"], ["a"])
    with pytest.raises(TypeError, match="not a single string"):
        v.score_pairs("ab", "ab")


def test_scores_are_clipped_into_unit_interval(corpus):
    s = _LengthRatio(offset=0.7).fit(corpus).score_pairs(["aa", "a"], ["aa", "aaaa"])
    assert s.tolist() == [1.0, 0.95]


def test_rank_choose_and_problems(corpus):
    v = _LengthRatio().fit(corpus)
    assert v.choose("aaaa", "a", "aaa") == 1 and v.choose("aaaa", "aaaa", "a") == 0
    ps = PairSet.from_lists([["ab", "cd"], "a"], ["abcde", "a"], same=[True, False])
    assert v.score_problems(ps).tolist() == [5 / 6, 1.0]  # known joined: "ab\n\ncd"


def test_problems_leave_out_empty_known_texts_and_answer_none_without_text(corpus):
    """score_problems guards as the other calls do: the kernel sees only non-empty texts."""
    seen = []

    class _Seeing(_LengthRatio):
        def _problem_impl(self, known_lists, unknowns):
            seen.append((known_lists, unknowns))
            return super()._problem_impl(known_lists, unknowns)

    v = _Seeing().fit(corpus)
    ps = PairSet.from_lists([["ab", " ", "cd"], [""], ["abc"]], ["abcde", "abc", "\n"])
    with pytest.warns(UserWarning, match="2 problem"):
        s = v.score_problems(ps)
    assert s.tolist() == [5 / 6, NO_ANSWER, NO_ANSWER]  # known joined: "ab\n\ncd"
    assert seen == [([["ab", "cd"]], ["abcde"])]
    with pytest.raises(TypeError, match=r"known\[0\]\[1\] is NoneType"):
        v.score_problems(PairSet.from_lists([["ab", None]], ["abc"]))


def test_attribute_scores_each_candidate_as_a_problem(corpus):
    """The default attribution: candidate j's score for a text is the score of the problem
    (candidate j's known texts joined, text); empty texts get no answer for every candidate;
    bad candidates are refused."""
    v = _LengthRatio().fit(corpus)
    cands = [["ab", "cd"], ["a"], ["abcdefgh"]]
    with pytest.warns(UserWarning, match="1 empty text"):
        s = v.attribute(cands, ["abcde", " ", "a"])
    assert s.shape == (3, 3)
    np.testing.assert_allclose(s[0], [5 / 6, 1 / 5, 5 / 8])
    np.testing.assert_array_equal(s[1], [NO_ANSWER] * 3)
    np.testing.assert_allclose(s[2], [1 / 6, 1.0, 1 / 8])
    with pytest.raises(ValueError, match="each with known texts"):
        v.attribute([["ab"], []], ["abc"])
    with pytest.raises(TypeError, match=r"candidates\[1\]\[0\] is NoneType"):
        v.attribute([["ab"], [None]], ["abc"])
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        _LengthRatio().attribute(cands, ["abc"])


def test_training_pairs_from_corpus_are_labelled_right(corpus):
    ps = training_pairs(corpus, n_pairs=41, seed=1)
    assert len(ps) == 41 and ps.labels.sum() == 20
    author_of = dict(zip(corpus.texts, corpus.authors))
    for a, b, same in zip(ps.known_joined, ps.unknown, ps.labels):
        assert (author_of[a] == author_of[b]) == same
        if same:
            assert a != b
    again = training_pairs(corpus, n_pairs=41, seed=1)
    assert again.known == ps.known and again.unknown == ps.unknown
    with pytest.raises(ValueError, match="two authors"):
        training_pairs(Corpus.from_lists(["a", "b"], ["x", "x"]))


def test_random_guess_is_seeded_and_order_free():
    rg = RandomGuess(random_state=7).fit()
    a, b = ["one", "two", "three"], ["uno", "dos", "tres"]
    s = rg.score_pairs(a, b)
    assert np.all((s >= 0) & (s < 1)) and len(set(s)) == 3
    assert rg.score_pairs(a[::-1], b[::-1]).tolist() == s[::-1].tolist()
    assert not np.array_equal(RandomGuess(random_state=8).fit().score_pairs(a, b), s)
    r = rg.rank("q", ["same", "same", "other"])
    assert len(set(r)) == 3


def test_random_guess_ranks_are_uniform_permutations():
    # the top slot among 4 candidates should be each candidate ~1/4 of the time
    cands = ["c0", "c1", "c2", "c3"]
    tops = np.bincount(
        [int(np.argmax(RandomGuess(random_state=s).fit().rank("q", cands))) for s in range(4000)],
        minlength=4,
    )
    assert np.all(np.abs(tops / 4000 - 0.25) < 0.03)


class _CountingLengthRatio(_LengthRatio):
    """Counts _score_impl calls, to see that rank_many batches them."""

    def _score_impl(self, a, b):
        self.calls_ = getattr(self, "calls_", 0) + 1
        return super()._score_impl(a, b)


class _OwnRanker(_LengthRatio):
    """A method with its own ranking (reversed lengths), which rank_many must respect."""

    def _rank_many_impl(self, queries, candidate_lists):
        return rank_each_query(self._reversed, queries, candidate_lists)

    @staticmethod
    def _reversed(query, candidates):
        return -np.array([len(c) for c in candidates], float)


def test_rank_many_agrees_with_one_query_at_a_time(corpus):
    queries = ["abc", "a much longer query text", "q"]
    lists = [["ab", "abcd", "abcdefgh"], ["short", "a much longer candidate"], ["x"]]
    batched = _CountingLengthRatio().fit(corpus)
    got = batched.rank_many(queries, lists)
    assert batched.calls_ == 1  # every pair of every query in one call
    single = _LengthRatio().fit(corpus)
    for q, c, s in zip(queries, lists, got):
        np.testing.assert_array_equal(s, single.rank(q, c))
    own = _OwnRanker().fit(corpus)
    for q, c, s in zip(queries, lists, own.rank_many(queries, lists)):
        np.testing.assert_array_equal(s, own.rank(q, c))
    with pytest.raises(ValueError, match="candidate_lists\\[1\\] is empty"):
        single.rank_many(["q", "r"], [["a"], []])
    with pytest.raises(ValueError, match="2 queries but 1 candidate lists"):
        single.rank_many(["q", "r"], [["a"]])


@given(st.text(alphabet=st.sampled_from(list(" \t\n\u00a0\u2003\u3000\x1fab")), max_size=8))
def test_has_text_is_strip_without_the_copy(text):
    assert has_text(text) == bool(text.strip())


def test_join_known_shares_one_string_per_distinct_known_list():
    known = [["a", "b"], ["c"], ["a", "b"], ["a", "b"]]
    joined = join_known(known)
    assert joined == ["a\n\nb", "c", "a\n\nb", "a\n\nb"]
    assert joined[0] is joined[2] is joined[3]
    ps = PairSet.from_lists(known, ["x", "y", "z", "w"])
    from_pairs = ps.known_joined
    assert from_pairs == joined and from_pairs[0] is from_pairs[3]
