"""The Numba PPM kernel against its plain Python reference, exactly."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baselines._ppm import ppm_cross_entropies, ppm_cross_entropy_reference

# small alphabets make long shared contexts (the interesting back-off paths) likely
texts = st.text(
    alphabet=st.sampled_from(list("ab c\n") + ["é", "😀", "\x00"]), min_size=1, max_size=60
)


@settings(max_examples=60, deadline=None)
@given(a=texts, b=texts, order=st.integers(0, 6))
def test_numba_equals_reference(a, b, order):
    got = ppm_cross_entropies([a], [b], order=order)
    assert got[0, 0] == ppm_cross_entropy_reference(a, b, order)
    assert got[0, 1] == ppm_cross_entropy_reference(b, a, order)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(texts, texts), min_size=1, max_size=8))
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_batch_equals_one_by_one(n_jobs, pairs):
    # two threads: round-robin batches of pairs, put back in the pairs' order
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    batch = ppm_cross_entropies(a, b, n_jobs=n_jobs)
    for i in range(len(pairs)):
        assert np.array_equal(batch[i], ppm_cross_entropies([a[i]], [b[i]])[0])


def test_unseen_characters_cost_log2_alphabet():
    # nothing of "xyz" occurs in the model text: each char costs log2(256) = 8 bits
    assert ppm_cross_entropy_reference("aaaa", "xyz") == 8.0
    assert ppm_cross_entropies(["aaaa"], ["xyz"])[0, 0] == 8.0


def test_hand_computed_value():
    # model "abab": order-1 context "a" is always followed by "b", "b" by "a" (once of once);
    # query "ab": 'a' at order 0 has p = 2/4, 'b' after "a" has p = 2/2
    expected = (-math.log2(0.5) - math.log2(1.0)) / 2
    assert ppm_cross_entropy_reference("abab", "ab") == expected
    assert ppm_cross_entropies(["abab"], ["ab"])[0, 0] == expected


def test_own_text_is_cheaper_than_other_text():
    a = "the cat sat on the mat and the cat sat again " * 5
    b = "quick brown foxes jump over lazy dogs every day " * 5
    own = ppm_cross_entropies([a], [a])[0, 0]
    other = ppm_cross_entropies([a], [b])[0, 0]
    assert own < other


def test_empty_text_is_nan_not_a_crash():
    got = ppm_cross_entropies(["", "abc"], ["abc", ""])
    assert np.isnan(got).all()


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError, match="1 texts_a but 2 texts_b"):
        ppm_cross_entropies(["a"], ["a", "b"])


@settings(max_examples=25, deadline=None)
@given(
    st.lists(texts, min_size=1, max_size=4),
    st.lists(texts, min_size=1, max_size=5),
    st.integers(0, 6),
)
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_pairs_sharing_texts_equal_the_reference(n_jobs, known, unknown, order):
    # every unknown text against every known one, both ways round: each text is the anchor of
    # its pairs, whose ids and counts are shared, on one side or the other
    a = [k for u in unknown for k in known] + unknown
    b = [u for u in unknown for _ in known] + [known[0]] * len(unknown)
    got = ppm_cross_entropies(a, b, order=order, n_jobs=n_jobs)
    for i in range(len(a)):
        assert got[i, 0] == ppm_cross_entropy_reference(a[i], b[i], order)
        assert got[i, 1] == ppm_cross_entropy_reference(b[i], a[i], order)


# long texts on three letters: contexts seen 64 times and more, past the kernel's table of
# log2 ratios, at the short orders; sparse novel substrings at the long ones
long_texts = st.text(alphabet=st.sampled_from(list("ab ")), min_size=150, max_size=600)


@settings(max_examples=20, deadline=None)
@given(st.lists(long_texts, min_size=1, max_size=3), long_texts, st.integers(0, 6))
def test_long_texts_equal_the_reference(known, unknown, order):
    a = known + [unknown]
    b = [unknown] * len(known) + [known[0]]
    got = ppm_cross_entropies(a, b, order=order)
    for i in range(len(a)):
        assert got[i, 0] == ppm_cross_entropy_reference(a[i], b[i], order)
        assert got[i, 1] == ppm_cross_entropy_reference(b[i], a[i], order)
