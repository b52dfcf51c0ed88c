"""Seeded sampling of text pairs under author and topic rules, shared by the AIDBench protocols.

For a text ``i`` its *partners* under a rule are the texts it may be paired with:

============  =================================  ====================================
rule          same author (positive)             different author (negative)
============  =================================  ====================================
any topic     same author, not ``i``             any other author
cross-topic   same author, another topic         another author, the same topic
============  =================================  ====================================

(the cross-topic row is the "Guardian rule" of AIDBench). Drawing ``i`` with probability
proportional to its number of partners and then a partner uniformly gives every valid unordered
pair the same probability.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stylo.corpus import Corpus, PairSet
from stylo.protocols.base import ProtocolError


class PairRules:
    """Index of a corpus by author, topic and (author, topic) cell, for partner look-ups.

    ``cross_topic=True`` needs a ``topic`` column; texts without a topic are left out (their
    count is kept in ``n_without_topic``).
    """

    def __init__(self, corpus: Corpus, cross_topic: bool):
        self.corpus = corpus
        self.cross_topic = cross_topic
        frame = corpus.frame
        if cross_topic:
            if not corpus.has_topics:
                raise ProtocolError(
                    f"corpus {corpus.name!r} has no topic labels, so the "
                    f"cross-topic rule cannot be applied"
                )
            ok = frame["topic"].notna().to_numpy()
        else:
            ok = np.ones(len(frame), dtype=bool)
        self.n_without_topic = int((~ok).sum())
        self.pos = np.flatnonzero(ok)  # corpus positions in play
        self._author = pd.factorize(frame["author"].to_numpy()[self.pos])[0]
        self._topic = (
            pd.factorize(frame["topic"].to_numpy()[self.pos])[0]
            if cross_topic
            else np.zeros(len(self.pos), dtype=np.int64)
        )
        self._cell = pd.factorize(
            self._author * (int(self._topic.max(initial=0)) + 1) + self._topic
        )[0]
        self.by_author = _groups(self._author)
        self.by_topic = _groups(self._topic)
        self.by_cell = _groups(self._cell)
        m_author = np.bincount(self._author)[self._author]
        m_topic = np.bincount(self._topic)[self._topic]
        m_cell = np.bincount(self._cell)[self._cell]
        if cross_topic:
            self.n_pos_partners = m_author - m_cell
            self.n_neg_partners = m_topic - m_cell
        else:
            self.n_pos_partners = m_author - 1
            self.n_neg_partners = len(self.pos) - m_author

    # -- partners ------------------------------------------------------------------------
    def partners(self, i: int, same: bool) -> np.ndarray:
        """Local indices (into ``self.pos``) that local text ``i`` may be paired with."""
        if same:
            group = self.by_author[self._author[i]]
            excl = self.by_cell[self._cell[i]] if self.cross_topic else np.array([i])
        else:
            group = self.by_topic[self._topic[i]] if self.cross_topic else np.arange(len(self.pos))
            excl = (
                self.by_cell[self._cell[i]] if self.cross_topic else self.by_author[self._author[i]]
            )
        return np.setdiff1d(group, excl, assume_unique=True)

    def n_pairs(self, same: bool) -> int:
        """Number of distinct valid unordered pairs."""
        counts = self.n_pos_partners if same else self.n_neg_partners
        return int(counts.sum()) // 2

    def describe(self, same: bool) -> str:
        kind = "same-author" if same else "different-author"
        rule = (
            (" (same author, different topic)" if same else " (different author, same topic)")
            if self.cross_topic
            else ""
        )
        return f"{kind} pairs{rule}"

    # -- sampling ------------------------------------------------------------------------
    def sample_pairs(self, n: int, same: bool, rng: np.random.Generator) -> list[tuple[int, int]]:
        """``n`` distinct valid unordered pairs, each uniformly oriented; corpus positions."""
        total = self.n_pairs(same)
        if n > total:
            raise ProtocolError(
                f"corpus {self.corpus.name!r}: asked for {n} "
                f"{self.describe(same)} but only {total} distinct ones exist"
            )
        if n == 0:
            return []
        counts = self.n_pos_partners if same else self.n_neg_partners
        if 2 * n > total:  # dense request: enumerate, then draw without replacement
            pairs = [
                (i, j) for i in np.flatnonzero(counts) for j in self.partners(i, same) if i < j
            ]
            chosen = [pairs[k] for k in rng.choice(len(pairs), size=n, replace=False)]
        else:
            weights = counts / counts.sum()
            seen, chosen = set(), []
            while len(chosen) < n:
                i = int(rng.choice(len(counts), p=weights))
                j = int(rng.choice(self.partners(i, same)))
                key = (min(i, j), max(i, j))
                if key not in seen:
                    seen.add(key)
                    chosen.append(key)
        out = []
        for i, j in chosen:
            a, b = (i, j) if rng.random() < 0.5 else (j, i)
            out.append((int(self.pos[a]), int(self.pos[b])))
        return out


def labelled_pairs(
    rules: PairRules, n_pos: int, n_neg: int, rng: np.random.Generator, ids_prefix: str, name: str
) -> PairSet:
    """``n_pos`` same-author and ``n_neg`` different-author pairs under ``rules``, shuffled.

    Columns besides the PairSet's own: ``id_a``, ``id_b`` (corpus ids of the two texts) and,
    as the PAN20/21 reader gives them, ``authors`` and ``topics`` (two labels per pair; topics
    None when the corpus has none). Problem ids are ``f"{ids_prefix}-{k}"``.
    """
    pairs = [(a, b, True) for a, b in rules.sample_pairs(n_pos, True, rng)] + [
        (a, b, False) for a, b in rules.sample_pairs(n_neg, False, rng)
    ]
    pairs = [pairs[k] for k in rng.permutation(len(pairs))]
    f = rules.corpus.frame
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    col = {c: f[c].to_numpy() for c in ("id", "text", "author")}
    topic = f["topic"].to_numpy() if "topic" in f.columns else np.full(len(f), None)
    return PairSet.from_lists(
        list(col["text"][a]),
        list(col["text"][b]),
        same=[p[2] for p in pairs],
        ids=[f"{ids_prefix}-{k}" for k in range(len(pairs))],
        name=name,
        id_a=list(col["id"][a]),
        id_b=list(col["id"][b]),
        authors=[[x, y] for x, y in zip(col["author"][a], col["author"][b], strict=True)],
        topics=[[x, y] for x, y in zip(topic[a], topic[b], strict=True)],
    )


def _groups(codes: np.ndarray) -> list[np.ndarray]:
    """Sorted positions of each code ``0..max``; ``codes`` come from ``pd.factorize``."""
    order = np.argsort(codes, kind="stable")
    return np.split(order, np.cumsum(np.bincount(codes))[:-1])
