"""Plain Python references for the Numba kernels (slow, obviously correct, used by tests
and as the exact fallback when n-grams do not fit a 63-bit key)."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from stylo.features._utf8 import TOKEN_PATTERN, WORD_PATTERN

_WHITESPACE_RUN = re.compile(r"\s\s+")
#: TextDistortion's words (``WORD_PATTERN``) as a group: ``split`` keeps them (at odd positions)
_WORDS = re.compile(f"({WORD_PATTERN})")
_DIGITS = re.compile(r"\d+")
_DIGIT = re.compile(r"\d")
_TOKEN = re.compile(TOKEN_PATTERN)


def char_ngrams(text: str, min_n: int, max_n: int) -> list[str]:
    """n-grams of the text after collapsing whitespace runs (>= 2 chars) to one space."""
    text = _WHITESPACE_RUN.sub(" ", text)
    return [text[i : i + n] for n in range(min_n, max_n + 1) for i in range(len(text) - n + 1)]


def char_wb_ngrams(text: str, min_n: int, max_n: int) -> list[str]:
    """n-grams inside space-padded words; a padded word of length <= max_n also counts once."""
    out = []
    for word in text.split():
        w = f" {word} "
        out += [
            w[i : i + n]
            for n in range(min_n, min(max_n, len(w) - 1) + 1)
            for i in range(len(w) - n + 1)
        ]
        if len(w) <= max_n:
            out.append(w)
    return out


def tokenize(text: str) -> list[str]:
    """Tokens of ``WordNgrams`` (``TOKEN_PATTERN``)."""
    return _TOKEN.findall(text)


def word_ngrams(text: str, min_n: int, max_n: int) -> list[str]:
    """Space-joined token n-grams."""
    toks = tokenize(text)
    return [
        " ".join(toks[i : i + n]) for n in range(min_n, max_n + 1) for i in range(len(toks) - n + 1)
    ]


def count_ngrams(ngrams: list[str]) -> dict[str, int]:
    return dict(Counter(ngrams))


def pack(symbols: list[int], bits: int, width: int) -> int:
    """Left-aligned packing of symbol ids (>= 1) into one integer, as the kernels do."""
    key = 0
    for k, s in enumerate(symbols):
        key |= int(s) << (bits * (width - 1 - k))
    return key


def merge_sorted(a: list[int], b: list[int]) -> tuple[list[int], list[int], list[int]]:
    """Sorted union of two lists and the position of each item of ``a`` and ``b`` in it."""
    union = sorted(set(a) | set(b))
    where = {v: i for i, v in enumerate(union)}
    return union, [where[v] for v in a], [where[v] for v in b]


def argsort_keys(keys: list[int]) -> list[int]:
    """Positions of ``keys`` in ascending order, equal keys in their order (a stable sort)."""
    return sorted(range(len(keys)), key=lambda i: (keys[i], i))


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


def row_similarity(x, y, kind: str) -> float:
    """One pair of dense rows: "minmax" (Ruzicka similarity, 0 for two zero rows), "cosine"
    (similarity, 0 if a row is zero) or "manhattan" (L1 distance)."""
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    if kind == "minmax":
        num = sum(min(a, b) for a, b in zip(x, y, strict=True))
        den = sum(max(a, b) for a, b in zip(x, y, strict=True))
        return num / den if den > 0 else 0.0
    if kind == "cosine":
        nx = sum(a * a for a in x) ** 0.5
        ny = sum(b * b for b in y) ** 0.5
        dot = sum(a * b for a, b in zip(x, y, strict=True))
        return dot / (nx * ny) if nx > 0 and ny > 0 else 0.0
    return sum(abs(a - b) for a, b in zip(x, y, strict=True))


def delta(z1, z2, kind: str) -> float:
    """Burrows / Argamon / cosine / Eder Delta between two z-score vectors (columns in rank
    order)."""
    k = len(z1)
    if kind == "argamon":
        return sum((a - b) ** 2 for a, b in zip(z1, z2, strict=True)) ** 0.5
    if kind == "burrows":
        return sum(abs(a - b) for a, b in zip(z1, z2, strict=True)) / k
    if kind == "eder":
        return (
            sum(abs(a - b) * (k - r) / k for r, (a, b) in enumerate(zip(z1, z2, strict=True))) / k
        )
    return 1.0 - row_similarity(z1, z2, "cosine")


def z_scores(counts, reference, max_features, ddof=1):
    """Delta z-scores of ``counts`` rows from a dense reference count matrix."""

    def rel(M):
        out = []
        for row in M:
            s = float(sum(row))
            out.append([v / s if s > 0 else 0.0 for v in row])
        return out

    R = rel(reference)
    n = len(R)
    means = [sum(r[j] for r in R) / n for j in range(len(R[0]))]
    ranked = sorted(range(len(means)), key=lambda j: (-float(np.round(means[j], 12)), j))
    cols = ranked[:max_features]
    mu = [means[j] for j in cols]
    sd = [(sum((r[j] - means[j]) ** 2 for r in R) / (n - ddof)) ** 0.5 for j in cols]
    return [
        [(row[j] - m) / s if s > 1e-12 else 0.0 for j, m, s in zip(cols, mu, sd, strict=True)]
        for row in rel(counts)
    ]


def distortion_counts(docs: list[str]) -> Counter:
    """TextDistortion's word counts: each word (``WORD_PATTERN``) lowered."""
    return Counter(w.lower() for doc in docs for w in _WORDS.findall(doc))


def distort(docs: list[str], keep: set[str], single: bool) -> list[str]:
    """The documents with every word whose lowered form is not in ``keep`` masked: one ``*``
    a letter and one ``#`` a digit, or (``single``) one ``*`` a word and one ``#`` a run of
    digits."""
    masked = _Masked(keep, single)
    # split on the words (kept at odd positions) and join, rather than a callback per word
    # from re.sub: a third less time on IMDb62's reviews
    digits = _DIGITS if single else _DIGIT
    out = []
    for doc in docs:
        parts = _WORDS.split(doc)
        parts[1::2] = map(masked.__getitem__, parts[1::2])
        out.append(digits.sub("#", "".join(parts)))
    return out


class _Masked(dict):
    """Word -> its masked form, each distinct word decided once (on its first lookup): a seen
    word is a dict lookup in C, without a Python call per word."""

    def __init__(self, keep: set[str], single: bool):
        super().__init__()
        self.keep = keep
        self.single = single

    def __missing__(self, w: str) -> str:
        m = self[w] = w if w.lower() in self.keep else "*" if self.single else "*" * len(w)
        return m
