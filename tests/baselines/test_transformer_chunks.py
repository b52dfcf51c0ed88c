"""Token chunking of the transformer verifiers (baselines._transformer): plain Python, no torch."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from baselines._transformer import chunk_choice, token_id_chunks, token_id_chunks_reference

ids_lists = st.lists(st.integers(0, 30_000), max_size=200)


@given(ids_lists, st.integers(1, 40))
def test_fast_chunks_agree_with_the_reference(ids, max_tokens):
    assert token_id_chunks(ids, max_tokens) == token_id_chunks_reference(ids, max_tokens)


@given(ids_lists, st.integers(1, 40))
def test_chunks_cover_the_ids_in_order_each_within_the_budget(ids, max_tokens):
    chunks = token_id_chunks(ids, max_tokens)
    assert [t for c in chunks for t in c] == ids
    assert all(1 <= len(c) <= max_tokens for c in chunks)
    # only the last chunk may be short
    assert all(len(c) == max_tokens for c in chunks[:-1])
    assert len(chunks) == -(-len(ids) // max_tokens)


def test_chunks_of_known_lengths():
    assert token_id_chunks(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert token_id_chunks([], 3) == []
    assert token_id_chunks([5, 6], 8) == [[5, 6]]


@given(st.integers(0, 60), st.integers(1, 10), st.integers(0, 2**32 - 1))
def test_chunk_choice_keeps_all_up_to_the_cap_else_a_seeded_sorted_subset(n, cap, seed):
    got = chunk_choice(n, cap, np.random.default_rng(seed))
    if n <= cap:
        np.testing.assert_array_equal(got, np.arange(n))
    else:
        assert len(got) == cap and len(set(got.tolist())) == cap
        assert (np.diff(got) > 0).all() and got.min() >= 0 and got.max() < n
        np.testing.assert_array_equal(got, chunk_choice(n, cap, np.random.default_rng(seed)))


def test_chunk_choice_depends_on_the_seed():
    draws = {tuple(chunk_choice(50, 4, np.random.default_rng(s))) for s in range(10)}
    assert len(draws) > 1
