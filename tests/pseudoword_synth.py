"""Pseudo-word authorship data shared by the impostors, Delta, SVM and pair-logistic tests: authors
who prefer different pseudo-words (no corpus text)."""

from __future__ import annotations

import numpy as np

from stylo.corpus import Corpus, PairSet


def synthetic_corpus(n_authors=8, per_author=4, n_words=150, seed=0) -> Corpus:
    """Authors who prefer different pseudo-words: easy to tell apart by character n-grams.

    The 300 pseudo-words are the same for every ``seed``; the authors' preferences differ.
    """
    words = np.random.default_rng(12345)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    vocab = ["".join(words.choice(letters, size=words.integers(2, 7))) for _ in range(300)]
    rng = np.random.default_rng(seed)
    texts, authors = [], []
    for a in range(n_authors):
        prefs = rng.dirichlet(np.full(len(vocab), 0.2))
        for _ in range(per_author):
            texts.append(" ".join(rng.choice(vocab, size=n_words, p=prefs)))
            authors.append(f"author{a}")
    return Corpus.from_lists(texts, authors)


def synthetic_pairs(corpus: Corpus, seed=1) -> PairSet:
    """Every author once as a same-author and once as a different-author problem."""
    rng = np.random.default_rng(seed)
    groups = corpus.by_author()
    names = sorted(groups)
    known, unknown, same = [], [], []
    for i, a in enumerate(names):
        idx = groups[a]
        known.append([corpus.texts[idx[0]], corpus.texts[idx[1]]])
        unknown.append(corpus.texts[idx[2]])
        same.append(True)
        other = groups[names[(i + 1) % len(names)]]
        known.append([corpus.texts[idx[3]]])
        unknown.append(corpus.texts[other[int(rng.integers(len(other)))]])
        same.append(False)
    return PairSet.from_lists(known, unknown, same=same)
