"""The filters of ``load``: a registered corpus's own cleaning, column values, minimum length,
minimum and sampled texts per author; each recorded with its counts in the result's
``history``."""

from __future__ import annotations

import re

import numpy as np

from stylo.corpus import Corpus, FilterStep, PairSet

_TOKEN = re.compile(r"\S+")


def _n_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def registry_cleaning(obj: Corpus | PairSet, entry: dict) -> Corpus | PairSet:
    """``obj`` without what its registry entry says is not the corpus's text: texts under
    ``min_text_tokens`` whitespace tokens (mlpapers: placeholders such as "Abstract
    Unavailable", an author's name or affiliation, a truncated first line), then, with
    ``drop_repeated_texts``, every copy of a text after its first row (an abstract listed
    twice, a post that several bloggers carry: a query would meet itself as a candidate, under
    another author's name when the copy is another author's). Corpora only."""
    if not isinstance(obj, Corpus):
        return obj
    min_tokens = entry.get("min_text_tokens")
    if min_tokens is not None:
        obj = _filter(
            obj, _token_mask(obj, int(min_tokens)), "registry min_text_tokens", f"{min_tokens}"
        )
    if entry.get("drop_repeated_texts"):
        first = ~obj.frame["text"].duplicated(keep="first").to_numpy()
        obj = _filter(obj, first, "registry drop_repeated_texts", "first row of each text kept")
    return obj


def apply_filters(
    obj: Corpus | PairSet,
    name: str,
    where: dict,
    min_tokens: int | None,
    min_per_author: int | None,
    per_author: int | None,
    seed: int,
) -> Corpus | PairSet:
    """``obj`` filtered in this order: ``where`` (column=value), ``min_tokens``, then for a
    corpus ``min_per_author`` and ``per_author`` (sampled with ``seed``); see ``load``."""
    for col, value in where.items():
        if col not in obj.frame.columns:
            raise ValueError(f"dataset {name!r} has no column {col!r} to filter on")
        mask = (obj.frame[col] == value).to_numpy()
        if not mask.any():
            values = sorted(map(str, obj.frame[col].dropna().unique()))[:20]
            raise ValueError(f"dataset {name!r}: no rows with {col}={value!r}; values: {values}")
        obj = _filter(obj, mask, f"{col}={value}")
    if min_tokens is not None:
        obj = _filter(obj, _token_mask(obj, min_tokens), f"min_tokens={min_tokens}")
    if isinstance(obj, Corpus):
        if min_per_author is not None:
            counts = obj.frame["author"].map(obj.frame["author"].value_counts())
            obj = _filter(
                obj, (counts >= min_per_author).to_numpy(), f"min_per_author={min_per_author}"
            )
        if per_author is not None:
            obj = _filter(
                obj,
                _sample_per_author(obj, per_author, seed),
                f"per_author={per_author}",
                f"seed={seed}",
            )
    return obj


def _filter(obj, mask, step: str, detail: str = ""):
    out = obj.subset(np.asarray(mask, dtype=bool))
    out.history.append(FilterStep(step, len(obj), len(out), detail))
    return out


def _token_mask(obj, min_tokens: int) -> np.ndarray:
    if isinstance(obj, Corpus):
        return np.array([_n_tokens(t) >= min_tokens for t in obj.texts])
    return np.array(
        [
            _n_tokens(u) >= min_tokens and all(_n_tokens(k) >= min_tokens for k in ks)
            for ks, u in zip(obj.known, obj.unknown)
        ]
    )


def _sample_per_author(corpus: Corpus, n: int, seed: int) -> np.ndarray:
    if n < 1:
        raise ValueError(f"per_author must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(corpus), dtype=bool)
    for _, idx in corpus.by_author().items():
        chosen = idx if len(idx) <= n else rng.choice(idx, size=n, replace=False)
        keep[chosen] = True
    return keep
