import dataclasses

import numpy as np
import pytest
from baselines_synth import author_topic_labels, labelled_corpus
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from baselines.random_guess import RandomGuess
from stylo.corpus import Corpus, PairSet, join_known
from stylo.text_input import has_text
from stylo.training_draws import training_triplets
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


@settings(max_examples=60, deadline=None)
@given(labels=author_topic_labels(4, 3, min_size=3, max_size=20), seed=st.integers(0, 1000))
def test_cross_topic_training_pairs_follow_the_rule_where_the_corpus_allows(labels, seed):
    c, authors, topics = labelled_corpus(labels)
    c = dataclasses.replace(c, pair_rule="cross_topic")
    if len(set(authors)) < 2 or max(authors.count(a) for a in authors) < 2:
        with pytest.raises(ValueError, match="two authors"):
            training_pairs(c, n_pairs=9, seed=seed)
        return
    ps = training_pairs(c, n_pairs=9, seed=seed)
    assert len(ps) == 9 and ps.labels.sum() == 4
    at = {f"x{i}": (authors[i], topics[i]) for i in range(len(labels))}
    # a side is drawn by the rule whenever any pair of the corpus follows it
    ok = [
        any(
            (authors[i] == authors[j]) == same
            and topics[i] is not None
            and topics[j] is not None
            and (topics[i] == topics[j]) != same
            for i in range(len(labels))
            for j in range(len(labels))
            if i != j
        )
        for same in (False, True)
    ]
    for a, b, same in zip(ps.known_joined, ps.unknown, ps.labels):
        (author_a, topic_a), (author_b, topic_b) = at[a], at[b]
        assert a != b and (author_a == author_b) == same
        if ok[int(same)]:
            assert topic_a is not None and topic_b is not None and (topic_a == topic_b) != same
    again = training_pairs(c, n_pairs=9, seed=seed)
    assert again.known == ps.known and again.unknown == ps.unknown


@pytest.mark.parametrize("rule", ["any", "cross_topic"])
def test_training_triplets_put_a_same_author_text_beside_another_authors(rule):
    authors = [f"a{i % 4}" for i in range(24)]
    topics = [f"t{(i // 4) % 3}" for i in range(24)]  # every author on every topic, twice
    c = Corpus.from_lists([f"x{i}" for i in range(24)], authors, topics=topics)
    c = dataclasses.replace(c, pair_rule=rule)
    at = dict(zip(c.texts, zip(authors, topics)))
    q, same, other = training_triplets(c, 50, seed=2)
    assert len(q) == len(same) == len(other) == 50
    for x, s, o in zip(q, same, other):
        assert x != s and at[x][0] == at[s][0] and at[x][0] != at[o][0]
        if rule == "cross_topic":
            assert at[x][1] != at[s][1] and at[x][1] == at[o][1]
    assert training_triplets(c, 50, seed=2) == (q, same, other)
    # one topic each: no cross-topic query, so the triplets are drawn as under "any"
    single = Corpus.from_lists(c.texts, authors, topics=authors)
    assert training_triplets(dataclasses.replace(single, pair_rule="cross_topic"), 9, 2) == (
        training_triplets(single, 9, 2)
    )
    with pytest.raises(ValueError, match="two authors"):
        training_triplets(Corpus.from_lists(["a", "b"], ["x", "y"]), 3)


def test_pair_rule_is_checked_and_kept_by_subsets(corpus):
    with pytest.raises(ValueError, match="pair_rule must be one of"):
        dataclasses.replace(corpus, pair_rule="cross-topic")
    crossed = dataclasses.replace(corpus, pair_rule="cross_topic")
    assert crossed.subset(np.arange(5)).pair_rule == "cross_topic"
    assert crossed.filter(np.arange(20) < 10, "first half").pair_rule == "cross_topic"
    with pytest.raises(ValueError, match="pair_rule 'cross_topic' but no topic column"):
        training_pairs(crossed)


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
