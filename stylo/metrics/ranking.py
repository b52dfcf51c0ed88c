"""Ranking metrics for one-to-many identification (AIDBench's Rank@k, precision@k, MRR).

A query has ``n`` candidates with scores (higher = ranked earlier, i.e. more likely the
query's author) and a boolean ``relevant`` mask (candidates by the query's author).

Ties: candidates with equal scores have no order, so every metric takes a ``ties`` policy:

- ``"expected"`` (default): the exact expected value over a uniformly random order of the
  tied candidates. Deterministic, unbiased, and a method whose scores are all equal gets
  exactly the random-guess expectation (see :func:`expected_rank_at_k_random`).
- ``"pessimistic"``: relevant candidates are placed after the tied irrelevant ones.
- ``"optimistic"``: relevant candidates are placed before the tied irrelevant ones.

A query without any relevant candidate (e.g. a retrieval filter dropped them all) is a miss:
Rank@k, precision@k and reciprocal rank are 0.0. Scores must not be NaN; +-inf are allowed.
:func:`per_query` applies a metric to many queries of varying length.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["TIES", "expected_rank_at_k_random", "mrr", "per_query", "precision_at_k", "rank_at_k"]

TIES = ("expected", "pessimistic", "optimistic")


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    return int(k)


def _tie_groups(scores, relevant, ties: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Groups of equal score, best first: ``(sizes, n_relevant, n_before)``, each (g,) ints."""
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    s = np.asarray(scores, dtype=np.float64)
    r = np.asarray(relevant)
    if s.ndim != 1 or r.ndim != 1:
        raise ValueError(f"scores and relevant must be 1-D, got shapes {s.shape} and {r.shape}")
    if len(s) != len(r):
        raise ValueError(f"{len(s)} scores but {len(r)} relevance flags")
    if len(s) == 0:
        raise ValueError("a query needs at least one candidate")
    if np.isnan(s).any():
        raise ValueError(f"scores[{int(np.flatnonzero(np.isnan(s))[0])}] is NaN")
    if r.dtype != bool:
        if not np.isin(r, (0, 1)).all():
            raise ValueError("relevant must be boolean (or 0/1)")
        r = r.astype(bool)
    order = np.argsort(-s, kind="stable")
    s, r = s[order], r[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    sizes = np.diff(np.r_[starts, len(s)])
    n_rel = np.add.reduceat(r.astype(np.int64), starts)
    return sizes, n_rel, starts


def _first_relevant_group(sizes, n_rel, before):
    """``(n_before, size, n_relevant)`` of the best group holding a relevant candidate."""
    hit = np.flatnonzero(n_rel > 0)
    if len(hit) == 0:
        return None
    j = hit[0]
    return int(before[j]), int(sizes[j]), int(n_rel[j])


def _p_hit_within(m: int, r: int, draws: int) -> float:
    """P(at least one of r marked items among the first ``draws`` of m in random order)."""
    if r == 0:
        return 0.0
    if draws >= m:
        return 1.0
    # hypergeometric 1 - C(m - r, draws) / C(m, draws), as one exact integer ratio so the
    # result is correctly rounded (e.g. exactly 9/19 for m=19, r=9, draws=1)
    total = math.comb(m, draws)
    return (total - math.comb(m - r, draws)) / total


def rank_at_k(scores, relevant, k: int, ties: str = "expected") -> float:
    """Rank@k: 1.0 if at least one relevant candidate is among the top ``k``, else 0.0
    (under ``"expected"`` ties, the probability of that).

    scores : (n,) floats, higher = better. relevant : (n,) bool. k : int >= 1; k >= n gives
    1.0 whenever a relevant candidate exists.
    """
    k = _check_k(k)
    first = _first_relevant_group(*_tie_groups(scores, relevant, ties))
    if first is None:
        return 0.0
    before, m, r = first
    if before >= k:
        return 0.0
    if ties == "optimistic":
        return 1.0
    if ties == "pessimistic":
        return float(before + m - r + 1 <= k)
    return _p_hit_within(m, r, k - before)


def precision_at_k(scores, relevant, k: int, ties: str = "expected") -> float:
    """Precision@k: relevant candidates among the top ``k``, divided by ``k``.

    The denominator is always ``k`` (the TREC convention), so when ``k > n`` the value is at
    most n_relevant / k. Under ``"expected"`` ties, a partially included tie group of size m
    with r relevant contributes r * (slots left) / m.
    """
    k = _check_k(k)
    sizes, n_rel, before = _tie_groups(scores, relevant, ties)
    slots = np.clip(k - before, 0, sizes)  # how many of each group fall in the top k
    if ties == "expected":
        hits = float(np.sum(n_rel * slots / sizes))
    elif ties == "optimistic":
        hits = float(np.minimum(n_rel, slots).sum())
    else:
        hits = float(np.maximum(slots - (sizes - n_rel), 0).sum())
    return hits / k


def mrr(scores, relevant, ties: str = "expected") -> float:
    """Reciprocal rank of the best-ranked relevant candidate (1/rank, ranks from 1); its mean
    over queries (see :func:`per_query`) is the mean reciprocal rank.

    Under ``"expected"`` ties it is E[1 / rank] over random orders of the tied candidates.
    0.0 when no candidate is relevant.
    """
    first = _first_relevant_group(*_tie_groups(scores, relevant, ties))
    if first is None:
        return 0.0
    before, m, r = first
    if ties == "optimistic":
        return 1.0 / (before + 1)
    if ties == "pessimistic":
        return 1.0 / (before + m - r + 1)
    # the first relevant of r among m shuffled slots sits at position i = 1..m-r+1 with
    # P(i) = C(m - i, r - 1) / C(m, r); successive ratios avoid big integers
    i = np.arange(1, m - r + 1)
    ratios = (m - i - r + 1) / (m - i)
    p = (r / m) * np.r_[1.0, np.cumprod(ratios)]
    positions = before + np.arange(1, m - r + 2)
    return float(np.sum(p / positions))


def per_query(
    metric: Callable[..., float], scores: Sequence, relevant: Sequence, **kwargs
) -> np.ndarray:
    """Apply a single-query ``metric`` to each query: returns a (n_queries,) float array.

    scores, relevant : sequences (lists, or 2-D arrays) of per-query arrays; queries may
    have different numbers of candidates. ``kwargs`` go to the metric (``k``, ``ties``).
    Example: ``per_query(rank_at_k, scores, relevant, k=5).mean()``.
    """
    if len(scores) != len(relevant):
        raise ValueError(f"{len(scores)} score arrays but {len(relevant)} relevance arrays")
    out = np.empty(len(scores), dtype=np.float64)
    for q, (s, r) in enumerate(zip(scores, relevant, strict=True)):
        try:
            out[q] = metric(s, r, **kwargs)
        except ValueError as exc:
            raise ValueError(f"query {q}: {exc}") from None
    return out


def expected_rank_at_k_random(n_candidates: int, n_relevant: int, k: int) -> float:
    """Exact expected Rank@k of a uniformly random ranking of ``n_candidates`` candidates of
    which ``n_relevant`` are relevant: 1 - C(n - r, k) / C(n, k) (hypergeometric).

    AIDBench one-to-many with a authors x 10 texts and one query: n = 10a - 1, r = 9; e.g.
    a = 2 gives Rank@1 = 9/19 = 0.474.
    """
    k = _check_k(k)
    for name, v in (("n_candidates", n_candidates), ("n_relevant", n_relevant)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {v!r}")
    if n_candidates < 1 or not 0 <= n_relevant <= n_candidates:
        raise ValueError(
            f"need n_candidates >= 1 and 0 <= n_relevant <= n_candidates, got "
            f"{n_candidates} and {n_relevant}"
        )
    return _p_hit_within(int(n_candidates), int(n_relevant), k)
