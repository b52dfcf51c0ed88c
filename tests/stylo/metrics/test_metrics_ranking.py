"""Ranking metrics: tie policies against brute-force enumeration, properties, AIDBench's
random-guess row."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stylo.metrics.ranking import (
    TIES,
    expected_rank_at_k_random,
    mrr,
    per_query,
    precision_at_k,
    rank_at_k,
)


def _plain_metrics(order_relevant, k):
    """Rank@k, precision@k, reciprocal rank of one fully ordered relevance list."""
    top = order_relevant[:k]
    first = next((i + 1 for i, r in enumerate(order_relevant) if r), None)
    return float(any(top)), sum(top) / k, (1.0 / first if first else 0.0)


def _all_tie_breaks(scores, relevant, k):
    """Metric triples for every order consistent with the scores (ties broken all ways)."""
    n = len(scores)
    out = []
    for perm in itertools.permutations(range(n)):
        order = sorted(range(n), key=lambda i: (-scores[i], perm[i]))
        out.append(_plain_metrics([relevant[i] for i in order], k))
    return np.array(out)


def _metrics(scores, relevant, k, ties):
    return (
        rank_at_k(scores, relevant, k, ties),
        precision_at_k(scores, relevant, k, ties),
        mrr(scores, relevant, ties),
    )


queries = st.integers(1, 6).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.integers(1, n + 2),
    )
)


@settings(max_examples=60, deadline=None)
@given(queries)
def test_tie_policies_match_enumeration_of_tie_breaks(query):
    scores, relevant, k = query
    brute = _all_tie_breaks(scores, relevant, k)
    np.testing.assert_allclose(
        _metrics(scores, relevant, k, "expected"), brute.mean(axis=0), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        _metrics(scores, relevant, k, "pessimistic"), brute.min(axis=0), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        _metrics(scores, relevant, k, "optimistic"), brute.max(axis=0), rtol=0, atol=1e-12
    )


@settings(max_examples=60, deadline=None)
@given(queries, st.sampled_from(TIES))
def test_properties(query, ties):
    scores, relevant, _ = query
    n = len(scores)
    hits = [rank_at_k(scores, relevant, k, ties) for k in range(1, n + 3)]
    assert all(0.0 <= h <= 1.0 for h in hits)
    assert all(a <= b + 1e-15 for a, b in itertools.pairwise(hits))  # monotone in k
    rr = mrr(scores, relevant, ties)
    if any(relevant):
        assert hits[n - 1 :] == [1.0] * 3  # k >= n
        assert 0.0 < rr <= 1.0
        assert rank_at_k(scores, relevant, 1, ties) <= rr + 1e-15
    else:
        assert hits == [0.0] * (n + 2) and rr == 0.0
    for k in range(1, n + 3):
        p = precision_at_k(scores, relevant, k, ties)
        assert 0.0 <= p <= min(1.0, sum(relevant) / k) + 1e-15


def test_strict_order_needs_no_tie_policy():
    scores = [0.1, 0.9, 0.4, 0.7]
    relevant = [True, False, False, True]  # ranks: 0.9, 0.7*, 0.4, 0.1*
    for ties in TIES:
        assert rank_at_k(scores, relevant, 1, ties) == 0.0
        assert rank_at_k(scores, relevant, 2, ties) == 1.0
        assert precision_at_k(scores, relevant, 2, ties) == 0.5
        assert precision_at_k(scores, relevant, 4, ties) == 0.5
        assert precision_at_k(scores, relevant, 8, ties) == 0.25
        assert mrr(scores, relevant, ties) == 0.5


def test_hand_computed_ties():
    # best group: 3 tied candidates, 1 relevant; the relevant one is 1st, 2nd or 3rd
    scores, relevant = [1.0, 1.0, 1.0, 0.0], [False, True, False, True]
    assert rank_at_k(scores, relevant, 1) == pytest.approx(1 / 3)
    assert rank_at_k(scores, relevant, 2) == pytest.approx(2 / 3)
    assert mrr(scores, relevant) == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert precision_at_k(scores, relevant, 2) == pytest.approx(1 / 3)
    assert rank_at_k(scores, relevant, 2, "pessimistic") == 0.0
    assert mrr(scores, relevant, "pessimistic") == pytest.approx(1 / 3)


def test_constant_scores_give_the_random_expectation():
    for n, r in [(19, 9), (49, 9), (7, 1), (30, 30)]:
        relevant = np.arange(n) < r
        for k in (1, 3, 5, 40):
            assert rank_at_k(np.zeros(n), relevant, k) == pytest.approx(
                expected_rank_at_k_random(n, r, k), abs=1e-15
            )


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 7).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n + 1))
    )
)
def test_closed_form_random_equals_enumeration_over_permutations(nrk):
    n, r, k = nrk
    relevant = [i < r for i in range(n)]
    hits = [any(relevant[i] for i in perm[:k]) for perm in itertools.permutations(range(n))]
    assert expected_rank_at_k_random(n, r, k) == pytest.approx(np.mean(hits), abs=1e-12)


def test_aidbench_table3_random_row():
    # research papers, a authors x 10 texts: one query, 10a - 1 candidates, 9 relevant
    two = [expected_rank_at_k_random(19, 9, k) for k in (1, 3, 5)]
    five = [expected_rank_at_k_random(49, 9, k) for k in (1, 3, 5)]
    assert [round(100 * v, 1) for v in two] == [47.4, 87.6, 97.8]
    assert [round(100 * v, 1) for v in five] == [18.4, 46.4, 65.5]
    assert two[0] == 9 / 19
    assert two[1] == 1 - math.comb(10, 3) / math.comb(19, 3)


def test_per_query_handles_varying_lengths():
    scores = [np.array([0.9, 0.1]), np.array([0.2, 0.8, 0.5, 0.4]), np.array([0.3])]
    relevant = [np.array([False, True]), np.array([True, False, False, True]), np.array([True])]
    np.testing.assert_array_equal(per_query(rank_at_k, scores, relevant, k=1), [0, 0, 1])
    np.testing.assert_allclose(per_query(mrr, scores, relevant), [0.5, 1 / 3, 1.0])
    np.testing.assert_allclose(per_query(precision_at_k, scores, relevant, k=2), [0.5, 0.0, 0.5])
    grid = np.array([[0.9, 0.1], [0.1, 0.9]])
    np.testing.assert_array_equal(per_query(rank_at_k, grid, grid > 0.5, k=1), [1, 1])


def test_bad_input_raises():
    with pytest.raises(ValueError, match="k must be"):
        rank_at_k([0.1, 0.2], [True, False], 0)
    with pytest.raises(ValueError, match="NaN"):
        mrr([0.1, np.nan], [True, False])
    with pytest.raises(ValueError, match="at least one candidate"):
        mrr([], [])
    with pytest.raises(ValueError, match="ties"):
        mrr([0.1], [True], ties="random")
    with pytest.raises(ValueError, match="2 scores but 3"):
        precision_at_k([0.1, 0.2], [True, False, True], 1)
    with pytest.raises(ValueError, match="query 1: "):
        per_query(mrr, [[0.1], [np.nan]], [[True], [True]])
    with pytest.raises(ValueError, match="n_relevant"):
        expected_rank_at_k_random(5, 6, 1)
