"""Chunking for any verifier: score long documents as the mean over their chunk pairs.

As the long-document evaluation of "Rethinking the Authorship Verification Experimental Setups"
(Brad, Manolache, Burceanu, Barbalau, Ionescu & Popescu, EMNLP 2022) does: split both texts into
chunks of ``chunk_size`` tokens (runs of non-space characters, each Han ideograph or kana a
token by itself, as those scripts put no space between words), score every (chunk of A, chunk of
B) pair with the inner verifier and average. A chunk is the original text from its first token
to its last (inner whitespace and punctuation kept); a final remainder shorter than ``min_last``
tokens is merged into the previous chunk, so no text is dropped. A text with at most
``chunk_size`` tokens is one chunk. ``max_chunks`` (optional) keeps evenly spaced chunks only,
to bound the n_a x n_b inner scores.
"""

from __future__ import annotations

import re

import numpy as np

from stylo.features._utf8 import ALONE
from stylo.verifier import NO_ANSWER, Verifier
from stylo.verifier_wrapper import VerifierWrapper

__all__ = ["Chunked", "token_chunks"]

_TOKEN = re.compile(f"{ALONE}|(?:(?!{ALONE})\\S)+")


def token_chunks(
    text: str, chunk_size: int, min_last: int | None = None, max_chunks: int | None = None
) -> list[str]:
    """Consecutive chunks of ``chunk_size`` tokens of ``text`` (see module doc).

    ``min_last`` defaults to ``chunk_size // 2``. An empty or whitespace-only text gives [].
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    min_last = chunk_size // 2 if min_last is None else min_last
    spans = [m.span() for m in _TOKEN.finditer(text)]
    if not spans:
        return []
    starts = list(range(0, len(spans), chunk_size))
    if len(starts) > 1 and len(spans) - starts[-1] < min_last:
        starts.pop()
    ends = starts[1:] + [len(spans)]
    chunks = [text[spans[s][0] : spans[e - 1][1]] for s, e in zip(starts, ends)]
    if max_chunks is not None and len(chunks) > max_chunks:
        keep = np.unique(np.linspace(0, len(chunks) - 1, max_chunks).round().astype(int))
        chunks = [chunks[i] for i in keep]
    return chunks


class Chunked(VerifierWrapper):
    """Mean inner score over all chunk pairs of the two texts.

    Parameters
    ----------
    verifier : the inner Verifier; a clone is fitted on the same training data as given (whole
        texts). Wrap the result in :class:`~baselines.calibration.Calibrated` to calibrate the
        averaged chunk scores.
    chunk_size : tokens per chunk (default 500).
    min_last : shortest final chunk kept on its own (default ``chunk_size // 2``).
    max_chunks : at most this many evenly spaced chunks per text (default: all).

    Chunk pairs the inner verifier leaves unanswered (0.5) count in the mean like any score.
    """

    def __init__(
        self,
        verifier: Verifier,
        chunk_size: int = 500,
        min_last: int | None = None,
        max_chunks: int | None = None,
    ):
        self.verifier = verifier
        self.chunk_size = chunk_size
        self.min_last = min_last
        self.max_chunks = max_chunks

    # a chunk pair is a pair: problems, rankings and attributions are scored as pairs, as a
    # plain Verifier scores them, so that each of them is chunked by _score_impl
    _problem_impl = Verifier._problem_impl
    _rank_many_impl = Verifier._rank_many_impl
    _attribute_impl = Verifier._attribute_impl

    def _fit_impl(self, X, y) -> None:
        if not isinstance(self.chunk_size, (int, np.integer)) or self.chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive int, got {self.chunk_size!r}")
        if self.max_chunks is not None and self.max_chunks < 1:
            raise ValueError(f"max_chunks must be >= 1 or None, got {self.max_chunks}")
        super()._fit_impl(X, y)

    def _score_impl(self, texts_a, texts_b):
        chunks_a = [
            token_chunks(t, self.chunk_size, self.min_last, self.max_chunks) for t in texts_a
        ]
        chunks_b = [
            token_chunks(t, self.chunk_size, self.min_last, self.max_chunks) for t in texts_b
        ]
        left, right, owner = [], [], []
        for i, (ca, cb) in enumerate(zip(chunks_a, chunks_b)):
            for x in ca:
                for z in cb:
                    left.append(x)
                    right.append(z)
                    owner.append(i)
        out = np.full(len(texts_a), NO_ANSWER, dtype=np.float64)
        if not left:
            return out
        # one batched call, so fast verifiers keep their batch speed
        scores = self.verifier_.score_pairs(left, right)
        owner = np.asarray(owner)
        sums = np.bincount(owner, weights=scores, minlength=len(texts_a))
        counts = np.bincount(owner, minlength=len(texts_a))
        has = counts > 0
        out[has] = sums[has] / counts[has]
        return out
