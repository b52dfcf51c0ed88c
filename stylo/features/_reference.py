"""Plain Python references for the Numba kernels (slow, obviously correct, used by tests
and as the exact fallback when n-grams do not fit a 63-bit key)."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

_WHITESPACE_RUN = re.compile(r"\s\s+")
_TOKEN = re.compile(r"(?u)\w+(?:['\u2019]\w+)*")


def char_ngrams(text: str, min_n: int, max_n: int) -> list[str]:
    """n-grams of the text after collapsing whitespace runs (>= 2 chars) to one space."""
    text = _WHITESPACE_RUN.sub(" ", text)
    return [text[i:i + n] for n in range(min_n, max_n + 1) for i in range(len(text) - n + 1)]


def char_wb_ngrams(text: str, min_n: int, max_n: int) -> list[str]:
    """n-grams inside space-padded words; a padded word of length <= max_n also counts once."""
    out = []
    for word in text.split():
        w = f" {word} "
        out += [w[i:i + n] for n in range(min_n, min(max_n, len(w) - 1) + 1)
                for i in range(len(w) - n + 1)]
        if len(w) <= max_n:
            out.append(w)
    return out


def tokenize(text: str) -> list[str]:
    """Tokens of ``WordNgrams`` (``TOKEN_PATTERN``)."""
    return _TOKEN.findall(text)


def word_ngrams(text: str, min_n: int, max_n: int) -> list[str]:
    """Space-joined token n-grams."""
    toks = tokenize(text)
    return [" ".join(toks[i:i + n]) for n in range(min_n, max_n + 1)
            for i in range(len(toks) - n + 1)]


def count_ngrams(ngrams: list[str]) -> dict[str, int]:
    return dict(Counter(ngrams))


def pack(symbols: list[int], bits: int, width: int) -> int:
    """Left-aligned packing of symbol ids (>= 1) into one integer, as the kernels do."""
    key = 0
    for k, s in enumerate(symbols):
        key |= int(s) << (bits * (width - 1 - k))
    return key


def count_matrix(docs: list[str], analyzer: str, min_n: int, max_n: int):
    """Dense (n_docs, V) counts and the sorted feature names, from the functions above."""
    fn = {"char": char_ngrams, "char_wb": char_wb_ngrams, "word": word_ngrams}[analyzer]
    counts = [Counter(fn(d, min_n, max_n)) for d in docs]
    names = sorted(set().union(*counts))
    col = {t: i for i, t in enumerate(names)}
    X = np.zeros((len(docs), len(names)), dtype=np.int64)
    for r, c in enumerate(counts):
        for t, v in c.items():
            X[r, col[t]] = v
    return X, names
