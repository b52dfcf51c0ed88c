"""Labelled training items a method draws from a Corpus: pairs (:func:`training_pairs`) and
ranking triplets (:func:`training_triplets`), under the corpus's ``pair_rule``.

A protocol whose test pairs follow a topic rule gives its training corpus that rule
(``Corpus.pair_rule``), so what a method learns from pairs is learnt on pairs drawn like the
ones it is tested on: under ``"cross_topic"`` (AIDBench's Guardian rule) same-author pairs cross
topics and different-author pairs share one, so a method cannot learn topic for author.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stylo.corpus import Corpus, PairSet

__all__ = ["training_pairs", "training_triplets"]


def training_pairs(X: PairSet | Corpus, n_pairs: int = 200, seed: int = 0) -> PairSet:
    """Labelled pairs to fit on: ``X`` itself if it is a PairSet, else pairs drawn from a Corpus.

    From a Corpus, half the pairs (rounded down) are same-author and the rest different-author,
    drawn with ``seed`` (with replacement) under the corpus's ``pair_rule``: ``"any"``, two
    different texts of an author with at least two texts and texts of two authors;
    ``"cross_topic"``, two texts of an author on different topics and texts of two authors on
    one topic, a first text drawn in proportion to its partners under the rule and then one of
    them (so every such pair is as likely). A side the corpus has no cross-topic pair for (an
    author fold whose authors each wrote on one topic) is drawn as under ``"any"``.
    """
    if isinstance(X, PairSet):
        if not X.labelled:
            raise ValueError(f"training pairs {X.name!r} have no `same` labels")
        return X
    if not isinstance(X, Corpus):
        raise TypeError(f"expected a PairSet or a Corpus, got {type(X).__name__}")
    rng = np.random.default_rng(seed)
    groups = {a: rng.permutation(idx) for a, idx in X.by_author().items()}
    multi = _multi_text_authors(X, groups, "training pairs")
    cross = _CrossTopicPartners(X) if X.pair_rule == "cross_topic" else None
    n_pos = n_pairs // 2
    pos = cross.draw(n_pos, True, rng) if cross else None
    if pos is None:
        pos = []
        for _ in range(n_pos):
            idx = groups[multi[rng.integers(len(multi))]]
            pos.append(tuple(rng.choice(idx, size=2, replace=False)))
    neg = cross.draw(n_pairs - n_pos, False, rng) if cross else None
    if neg is None:
        authors, neg = list(groups), []
        for _ in range(n_pairs - n_pos):
            a1, a2 = rng.choice(len(authors), size=2, replace=False)
            neg.append((rng.choice(groups[authors[a1]]), rng.choice(groups[authors[a2]])))
    texts = X.texts
    return PairSet.from_lists(
        [texts[i] for i, _ in pos + neg],
        [texts[j] for _, j in pos + neg],
        same=[True] * len(pos) + [False] * len(neg),
        name=f"{X.name}:training_pairs",
    )


def _multi_text_authors(corpus: Corpus, groups: dict, what: str) -> list[str]:
    """The authors of ``groups`` (author -> text positions) with two texts or more; an error
    naming ``what`` could not be drawn when there is none or fewer than two authors."""
    multi = [a for a, idx in groups.items() if len(idx) >= 2]
    if not multi or len(groups) < 2:
        raise ValueError(
            f"corpus {corpus.name!r} needs an author with two texts and at least two "
            f"authors to draw {what}"
        )
    return multi


class _CrossTopicPartners:
    """A corpus's texts by author, topic and (author, topic) cell: a text's cross-topic
    partners are its author's texts on other topics (same) or other authors' texts on its
    topic (different). Texts without a topic have none."""

    def __init__(self, corpus: Corpus):
        frame = corpus.frame
        if "topic" not in frame.columns:
            raise ValueError(
                f"corpus {corpus.name!r} has pair_rule 'cross_topic' but no topic column"
            )
        self.pos = np.flatnonzero(frame["topic"].notna().to_numpy())
        self.author = pd.factorize(frame["author"].to_numpy()[self.pos])[0]
        self.topic = pd.factorize(frame["topic"].to_numpy()[self.pos])[0]
        self.cell = self.author * (int(self.topic.max(initial=0)) + 1) + self.topic

    def _partners(self, same: bool) -> np.ndarray:
        """Each text's number of partners of one kind."""
        key = self.author if same else self.topic  # what a partner shares with the text
        _, key_inv, key_n = np.unique(key, return_inverse=True, return_counts=True)
        _, cell_inv, cell_n = np.unique(self.cell, return_inverse=True, return_counts=True)
        return key_n[key_inv] - cell_n[cell_inv]

    def _mate(self, i: int, same: bool, rng: np.random.Generator) -> int:
        """A partner of text ``i`` of one kind, uniformly (local index)."""
        key = self.author if same else self.topic
        return int(rng.choice(np.flatnonzero((key == key[i]) & (self.cell != self.cell[i]))))

    def draw(self, n: int, same: bool, rng: np.random.Generator) -> list[tuple[int, int]] | None:
        """``n`` (i, j) corpus positions, or None when no text has a partner."""
        partners = self._partners(same)
        if n and not partners.any():
            return None
        out = []
        for _ in range(n):
            i = int(rng.choice(len(partners), p=partners / partners.sum()))
            out.append((int(self.pos[i]), int(self.pos[self._mate(i, same, rng)])))
        return out

    def draw_triplets(self, n: int, rng: np.random.Generator) -> list[tuple] | None:
        """``n`` (query, same-author, other-author) corpus positions, the query uniform among
        the texts with both kinds of partner; None when there is none."""
        queries = np.flatnonzero((self._partners(True) > 0) & (self._partners(False) > 0))
        if n and not len(queries):
            return None
        out = []
        for _ in range(n):
            q = int(rng.choice(queries))
            s, o = self._mate(q, True, rng), self._mate(q, False, rng)
            out.append((int(self.pos[q]), int(self.pos[s]), int(self.pos[o])))
        return out


def training_triplets(corpus: Corpus, n: int, seed: int = 0) -> tuple[list, list, list]:
    """``n`` (query, same-author text, another author's text) drawn from ``corpus`` with
    ``seed`` (with replacement), as three lists: what a model that learns to rank candidates
    fits on.

    Under ``pair_rule="any"`` the query is a text of an author with at least two texts, drawn by
    first drawing such an author, the same-author text another of theirs, the other author
    uniform among the rest and then one of their texts. Under ``"cross_topic"`` the query is
    drawn among the texts that have both kinds of partner, the same-author text on another
    topic and the other author's text on the query's topic (AIDBench's Guardian triplets);
    a corpus without such a query is drawn as under ``"any"``.
    """
    rng = np.random.default_rng([seed, 5])
    groups = corpus.by_author()
    names = list(groups)
    multi = _multi_text_authors(corpus, groups, "training triplets")
    texts, out = corpus.texts, ([], [], [])
    cross = _CrossTopicPartners(corpus) if corpus.pair_rule == "cross_topic" else None
    drawn = cross.draw_triplets(n, rng) if cross else None
    if drawn is not None:
        for side, picks in zip(out, zip(*drawn), strict=True):
            side.extend(texts[k] for k in picks)
        return out
    for _ in range(n):
        a = multi[rng.integers(len(multi))]
        i, j = rng.choice(groups[a], size=2, replace=False)
        b = names[rng.integers(len(names) - 1)]
        b = names[-1] if b == a else b  # uniform over the other authors
        for side, k in zip(out, (i, j, rng.choice(groups[b])), strict=True):
            side.append(texts[k])
    return out
