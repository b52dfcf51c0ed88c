"""Small synthetic authorship data for the baselines tests (no corpus text)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from stylo.corpus import Corpus, PairSet

_LETTERS = list("abcdefghijklmnopqrstuvwxyz")


def _vocabulary(rng: np.random.Generator, size: int = 300) -> list[str]:
    return ["".join(rng.choice(_LETTERS, size=rng.integers(2, 8))) for _ in range(size)]


def _author_style(rng, vocab_size: int):
    # each author prefers its own random subset of words, and its own punctuation habit
    weights = rng.pareto(1.2, size=vocab_size) + 1e-3
    return weights / weights.sum(), rng.choice([", ", "; ", " - ", ". "])


def _text(rng, vocab, style, n_words: int) -> str:
    probs, punct = style
    words = rng.choice(vocab, size=n_words, p=probs)
    out = []
    for i, w in enumerate(words):
        out.append(w)
        out.append(punct if i % 7 == 6 else " ")
    return "".join(out).strip()


def synthetic_corpus(
    n_authors: int = 8, per_author: int = 4, n_words: int = 150, seed: int = 0
) -> Corpus:
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng)
    texts, authors = [], []
    for a in range(n_authors):
        style = _author_style(rng, len(vocab))
        for _ in range(per_author):
            texts.append(_text(rng, vocab, style, n_words))
            authors.append(f"author{a}")
    return Corpus.from_lists(texts, authors, name="synthetic")


def synthetic_pairs(n_pairs: int = 40, n_words: int = 150, seed: int = 0) -> PairSet:
    """Half same-author, half different-author pairs, in alternating order."""
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng)
    known, unknown, same = [], [], []
    for i in range(n_pairs):
        s1 = _author_style(rng, len(vocab))
        is_same = i % 2 == 0
        s2 = s1 if is_same else _author_style(rng, len(vocab))
        known.append(_text(rng, vocab, s1, n_words))
        unknown.append(_text(rng, vocab, s2, n_words))
        same.append(is_same)
    return PairSet.from_lists(known, unknown, same=same, name="synthetic_pairs")


def author_topic_labels(n_authors: int, n_topics: int, min_size: int, max_size: int):
    """Hypothesis strategy: a list of (author index, topic index or None), one per text."""
    return st.lists(
        st.tuples(
            st.integers(0, n_authors - 1), st.one_of(st.none(), st.integers(0, n_topics - 1))
        ),
        min_size=min_size,
        max_size=max_size,
    )


def labelled_corpus(labels) -> tuple[Corpus, list[str], list[str | None]]:
    """(corpus of texts ``x0, x1, ...``, their authors ``a<i>``, their topics ``t<j>`` or None)
    from :func:`author_topic_labels`' labels."""
    authors = [f"a{a}" for a, _ in labels]
    topics = [None if t is None else f"t{t}" for _, t in labels]
    texts = [f"x{i}" for i in range(len(labels))]
    return Corpus.from_lists(texts, authors, topics=topics), authors, topics
