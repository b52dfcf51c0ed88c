"""Random guessing: the floor every method must beat, and a check on the protocols.

Each score is a deterministic function of ``random_state`` and the texts involved (a keyed
hash), so a pair gets the same score whatever order or batch it is scored in, and the same
seed reproduces a run exactly. Ranks are a uniformly random permutation of the candidates,
which is what AIDBench's "random guess" row assumes.
"""

from __future__ import annotations

import hashlib

import numpy as np

from stylo.verifier import Verifier, rank_each_query

__all__ = ["RandomGuess"]


def _uniform(seed: int, *texts: str) -> float:
    h = hashlib.blake2b(digest_size=8, key=str(int(seed)).encode())
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    # 53 random bits -> a float in [0, 1)
    return (int.from_bytes(h.digest(), "little") >> 11) / float(1 << 53)


class RandomGuess(Verifier):
    """Uniform random scores in [0, 1] (never exactly 0.5 in practice)."""

    requires_fit = False

    def __init__(self, random_state: int = 0):
        self.random_state = random_state

    def _score_impl(self, texts_a, texts_b):
        return np.array(
            [_uniform(self.random_state, "pair", a, b) for a, b in zip(texts_a, texts_b)]
        )

    def _rank_many_impl(self, queries, candidate_lists):
        return rank_each_query(self._rank_query, queries, candidate_lists)

    def _rank_query(self, query, candidates):
        # each candidate's position matters so that identical candidate texts still get
        # distinct scores, as a random permutation would give them
        return np.array(
            [
                _uniform(self.random_state, "rank", query, str(i), c)
                for i, c in enumerate(candidates)
            ]
        )
