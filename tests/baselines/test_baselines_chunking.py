"""Token chunks and the chunk-averaging wrapper."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baselines.chunking import Chunked, token_chunks
from stylo.verifier import Verifier


class FirstWordMatch(Verifier):
    """1 if both texts start with the same word, else 0 (tests only); counts its calls."""

    requires_fit = False

    def _score_impl(self, a, b):
        return np.array([float(x.split()[0] == y.split()[0]) for x, y in zip(a, b)])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "bb", "c,", "d.", "é", "\n", "  "]), max_size=80),
    st.integers(1, 12),
)
def test_chunks_keep_every_token_in_order(parts, size):
    text = " ".join(parts)
    chunks = token_chunks(text, size)
    tokens = re.findall(r"\S+", text)
    assert [t for c in chunks for t in c.split()] == tokens
    if tokens:
        assert all(len(c.split()) <= size + size // 2 for c in chunks)
        assert all(c in text for c in chunks)


def test_short_remainder_is_merged_and_max_chunks_spaces_evenly():
    text = " ".join(f"w{i}" for i in range(23))
    chunks = token_chunks(text, 10)  # 10 + 13 (remainder of 3 < 5 merged)
    assert [len(c.split()) for c in chunks] == [10, 13]
    many = token_chunks(" ".join(f"w{i}" for i in range(100)), 10, max_chunks=3)
    assert [c.split()[0] for c in many] == ["w0", "w40", "w90"]
    with pytest.raises(ValueError, match="chunk_size must be >= 1, got 0"):
        token_chunks("a b", 0)


def test_han_and_kana_are_tokens_of_their_own():
    # a Chinese text has no space: each character is a token, punctuation one of its own
    text = "床前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。 ok"
    chunks = token_chunks(text, 12)
    assert chunks == ["床前明月光，疑是地上霜。", "舉頭望明月，低頭思故鄉。 ok"]
    assert token_chunks("東京で ok", 2) == ["東京", "で ok"]


def test_chunked_averages_over_all_chunk_pairs():
    # A: chunks start "x", "y"; B: chunks start "x", "x", "z" -> matches 2 of 6 pairs
    a = "x " + "p " * 4 + "y " + "p " * 4
    b = "x " + "q " * 4 + "x " + "q " * 4 + "z " + "q " * 4
    model = Chunked(FirstWordMatch(), chunk_size=5).fit()
    assert model.score_pairs([a], [b])[0] == pytest.approx(2 / 6)
    # a text shorter than one chunk is scored whole
    assert model.score_pairs(["x y"], ["x z"])[0] == 1.0


def test_chunked_long_texts_and_empty_text():
    long_a = " ".join(["alpha beta"] * 3000)
    long_b = " ".join(["alpha gamma"] * 3000)
    model = Chunked(FirstWordMatch(), chunk_size=500, max_chunks=4).fit()
    s = model.score_pairs([long_a, long_a], [long_b, "beta alpha " * 600])
    assert s[0] == 1.0 and s[1] == 0.0
    with pytest.warns(UserWarning, match="empty"):
        assert model.score_pairs([long_a], ["   "])[0] == 0.5
