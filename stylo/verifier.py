"""The one interface every stylo method implements, and that every protocol evaluates.

A :class:`Verifier` answers "did the author of A write B?" with a score in [0, 1]: higher means
more likely the same author and exactly 0.5 means "no answer" (PAN's convention). Ranking for
one-to-many and the choice for one-to-two come from the same object, so every method runs
through every protocol.

The public methods validate input, refuse use before ``fit`` (scikit-learn's
``NotFittedError``), give empty texts 0.5 with a warning, clip scores into [0, 1] and call a
private kernel with what is left. Subclasses override kernels, never the public methods:

====================  ==========================================  ============================
kernel                default                                     overridden by
====================  ==========================================  ============================
``_fit_impl``         learns nothing                              every method that learns
``_score_impl``       none: every method has one (an              every method
                      :class:`Attributor` raises
                      :class:`AttributionOnly`)
``_problem_impl``     known texts joined by a blank line (PAN13/  GeneralImpostors (a profile
                      14 baselines), then ``score_pairs``         of the known texts), wrappers
``_rank_many_impl``   every (query, candidate) pair of every      methods with their own
                      query in one ``score_pairs`` call           ranking (through
                                                                  :func:`rank_each_query`),
                                                                  wrappers
``_attribute_impl``   each (candidate, text) as a problem, in     attribution-native methods
                      one ``score_problems`` call                 (one classifier over the
                                                                  candidates), wrappers
``_cross_impl``       every (a, b) of two lists through           methods whose score is a
                      ``_score_impl``                             product of per-text vectors
                                                                  (CharNgramCosine)
====================  ==========================================  ============================

Kernel arguments:

- ``_fit_impl(X, y)``: a :class:`~stylo.corpus.PairSet` (labelled training pairs), a
  :class:`~stylo.corpus.Corpus` (background, impostor pool, calibration data) or None.
- ``_score_impl(texts_a, texts_b)``: aligned lists of non-empty texts; scores (n,).
- ``_problem_impl(known_lists, unknowns)``: problems whose known lists and unknown texts are
  all non-empty; scores (n,).
- ``_rank_many_impl(queries, candidate_lists)``: one score array per query, one score per
  candidate; ``rank`` is its call with one query, ``choose`` compares ``rank``'s two scores.
- ``_attribute_impl(candidates, texts)``: candidate authors (a list of known texts each) and
  non-empty texts; scores (n_texts, n_candidates).
- ``_cross_impl(texts_a, texts_b)``: two lists of non-empty texts; scores (n_a, n_b) of every
  pair (a[i], b[j]) (score normalisation scores each text against a background pool).

Methods around another method (calibration, masking, chunking) derive from
:class:`stylo.verifier_wrapper.VerifierWrapper`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from stylo.corpus import Corpus, PairSet, join_known
from stylo.progress import advance
from stylo.text_input import check_texts, has_text
from stylo.training_draws import training_pairs

__all__ = [
    "AttributionOnly",
    "Attributor",
    "NO_ANSWER",
    "Verifier",
    "attribution_problems",
    "rank_each_query",
    "training_pairs",
]

NO_ANSWER = 0.5


def attribution_problems(candidates: list, texts: list) -> tuple[list, list]:
    """(known side, unknown text) of every (text, candidate) of an attribution, text-major:
    item ``i * len(candidates) + j`` is ``texts[i]`` against ``candidates[j]``, the layout
    ``attribute``'s (n_texts, n_candidates) answer is reshaped from."""
    return [c for _ in texts for c in candidates], [t for t in texts for _ in candidates]


def rank_each_query(
    rank_one: Callable[[str, list[str]], np.ndarray],
    queries: list[str],
    candidate_lists: list[list[str]],
) -> list[np.ndarray]:
    """``rank_one(query, candidates)`` for each query in turn, telling
    :func:`stylo.progress.advance` after each: the ``_rank_many_impl`` of a method that ranks
    one query's candidates at a time (a language model's prompt, an embedding search)."""
    out = []
    for q, c in zip(queries, candidate_lists):
        out.append(rank_one(q, c))
        advance("queries", len(out), len(queries))
    return out


class AttributionOnly(NotImplementedError):
    """Raised by a method that attributes texts among candidate authors (``attribute``) but
    has no score for a single (known, unknown) pair."""


def _answered(got, shape: tuple[int, ...], kernel: str, owner: object) -> np.ndarray:
    """A kernel's scores as floats of ``shape``, NaN read as no answer, clipped into [0, 1]."""
    got = np.asarray(got, dtype=np.float64)
    if got.shape != shape:
        raise RuntimeError(
            f"{type(owner).__name__}.{kernel} returned shape {got.shape}, expected {shape}"
        )
    return np.clip(np.nan_to_num(got, nan=NO_ANSWER), 0.0, 1.0)


def _answer_where(ok: np.ndarray, width: int | None, unanswered: str, kernel: str, call, owner):
    """Scores of the items ``ok`` marks, from ``call(idx)`` (``kernel`` run on those items,
    shape (len(idx),) or (len(idx), width)); the other items get 0.5 (no answer) and one
    warning, "N ``unanswered``", pointing at the caller of the public method."""
    tail = () if width is None else (width,)
    scores = np.full((len(ok), *tail), NO_ANSWER, dtype=np.float64)
    if not ok.all():
        warnings.warn(f"{type(owner).__name__}: {int((~ok).sum())} {unanswered}", stacklevel=3)
    if ok.any():
        idx = np.flatnonzero(ok)
        scores[idx] = _answered(call(idx), (len(idx), *tail), kernel, owner)
    return scores


class Verifier(BaseEstimator):
    """Base class: authorship verification, one-to-two choice and one-to-many ranking."""

    #: whether ``fit`` needs data; methods with nothing to learn set this to False
    requires_fit: bool = True

    # -- fitting ---------------------------------------------------------------------------
    def fit(self, X: PairSet | Corpus | None = None, y=None):
        """Learn from training pairs or a background corpus; returns self."""
        if X is not None and not isinstance(X, (PairSet, Corpus)):
            raise TypeError(f"fit expects a PairSet or a Corpus, got {type(X).__name__}")
        if X is None and self.requires_fit:
            raise ValueError(
                f"{type(self).__name__}.fit needs training data (a PairSet or a Corpus)"
            )
        self._fit_impl(X, y)
        self.is_fitted_ = True
        return self

    def _fit_impl(self, X, y) -> None:
        """Override to learn; the default learns nothing."""

    def _check_fitted(self) -> None:
        if not getattr(self, "is_fitted_", False):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. "
                f"Call 'fit' with appropriate arguments before using it."
            )

    # -- verification ----------------------------------------------------------------------
    def score_pairs(self, texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
        """P(same author) for each aligned pair (a[i], b[i]); shape (n_pairs,), in [0, 1]."""
        self._check_fitted()
        a = check_texts(texts_a, "texts_a")
        b = check_texts(texts_b, "texts_b")
        if len(a) != len(b):
            raise ValueError(f"texts_a has {len(a)} items but texts_b has {len(b)}")
        ok = np.array([has_text(x) and has_text(y) for x, y in zip(a, b)], dtype=bool)
        return _answer_where(
            ok,
            None,
            f"pair(s) with an empty text scored {NO_ANSWER} (no answer)",
            "_score_impl",
            lambda idx: self._score_impl([a[i] for i in idx], [b[i] for i in idx]),
            self,
        )

    def _score_impl(self, texts_a: list[str], texts_b: list[str]) -> np.ndarray:
        raise NotImplementedError

    def score_problems(self, pairs: PairSet) -> np.ndarray:
        """Scores for every problem of a PairSet, in its order. Empty known texts are left out
        of their problem; a problem with no known text left or an empty unknown text gets 0.5
        (no answer), with a warning."""
        if not isinstance(pairs, PairSet):
            raise TypeError(f"score_problems expects a PairSet, got {type(pairs).__name__}")
        self._check_fitted()
        known = []
        for i, k in enumerate(pairs.known):
            k = check_texts(k, f"known[{i}]")
            known.append(k if all(map(has_text, k)) else [t for t in k if has_text(t)])
        unknowns = check_texts(pairs.unknown, "unknown")
        ok = np.array([bool(k) and has_text(u) for k, u in zip(known, unknowns)], dtype=bool)
        return _answer_where(
            ok,
            None,
            f"problem(s) with an empty text scored {NO_ANSWER} (no answer)",
            "_problem_impl",
            lambda idx: self._problem_impl([known[i] for i in idx], [unknowns[i] for i in idx]),
            self,
        )

    def _problem_impl(self, known_lists: list[list[str]], unknowns: list[str]) -> np.ndarray:
        return self.score_pairs(join_known(known_lists), unknowns)

    def score_cross(self, texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
        """``score_pairs`` of every pair (a[i], b[j]): shape (len(a), len(b)), in [0, 1]. A row
        or column of an empty text is 0.5 (no answer), with a warning."""
        self._check_fitted()
        a = check_texts(texts_a, "texts_a")
        b = check_texts(texts_b, "texts_b")
        scores = np.full((len(a), len(b)), NO_ANSWER, dtype=np.float64)
        ok_a = np.flatnonzero([has_text(x) for x in a])
        ok_b = np.flatnonzero([has_text(y) for y in b])
        if len(ok_a) < len(a) or len(ok_b) < len(b):
            warnings.warn(
                f"{type(self).__name__}: {len(a) - len(ok_a) + len(b) - len(ok_b)} "
                f"empty text(s) scored {NO_ANSWER} (no answer)",
                stacklevel=2,
            )
        if len(ok_a) and len(ok_b):
            got = self._cross_impl([a[i] for i in ok_a], [b[j] for j in ok_b])
            scores[np.ix_(ok_a, ok_b)] = _answered(got, (len(ok_a), len(ok_b)), "_cross_impl", self)
        return scores

    def _cross_impl(self, texts_a: list[str], texts_b: list[str]) -> np.ndarray:
        flat = self._score_impl(
            [x for x in texts_a for _ in texts_b], [y for _ in texts_a for y in texts_b]
        )
        return np.asarray(flat, dtype=np.float64).reshape(len(texts_a), len(texts_b))

    # -- attribution -----------------------------------------------------------------------
    def attribute(self, candidates: Sequence[Sequence[str]], texts: Sequence[str]) -> np.ndarray:
        """Scores of each candidate author for each text: shape (n_texts, n_candidates), in
        [0, 1]; ``candidates[j]`` holds candidate j's known texts. Higher = more likely that
        candidate; below 0.5 = "not this author" (the open-set rule of cross-domain
        attribution answers "unknown author" when every candidate is below 0.5). An empty
        text gets 0.5 for every candidate (no answer), with a warning."""
        self._check_fitted()
        cands = [check_texts(c, f"candidates[{j}]") for j, c in enumerate(candidates)]
        if not cands or any(not c for c in cands):
            raise ValueError("attribute needs at least one candidate, each with known texts")
        items = check_texts(texts, "texts")
        ok = np.array([has_text(t) for t in items], dtype=bool)
        return _answer_where(
            ok,
            len(cands),
            f"empty text(s) scored {NO_ANSWER} for every candidate (no answer)",
            "_attribute_impl",
            lambda idx: self._attribute_impl(cands, [items[i] for i in idx]),
            self,
        )

    def _attribute_impl(self, candidates: list[list[str]], texts: list[str]) -> np.ndarray:
        pairs = PairSet.from_lists(*attribution_problems(candidates, texts))
        return self.score_problems(pairs).reshape(len(texts), len(candidates))

    # -- ranking and choice ----------------------------------------------------------------
    def rank(self, query: str, candidates: Sequence[str]) -> np.ndarray:
        """Scores of each candidate for one query; higher = more likely the query's author."""
        self._check_fitted()
        if not isinstance(query, str):
            raise TypeError(f"query is {type(query).__name__}, expected str")
        cands = check_texts(candidates, "candidates")
        if not cands:
            raise ValueError("rank needs at least one candidate")
        return self._ranked([query], [cands])[0]

    def rank_many(
        self, queries: Sequence[str], candidate_lists: Sequence[Sequence[str]]
    ) -> list[np.ndarray]:
        """``rank`` for each query and its own candidates: a list of score arrays.

        Protocols use this so that a method scoring pairs in batches (General Impostors,
        compression, n-gram distances) gets all pairs of a task in one call instead of one
        call per query."""
        self._check_fitted()
        qs = check_texts(queries, "queries")
        if len(candidate_lists) != len(qs):
            raise ValueError(f"{len(qs)} queries but {len(candidate_lists)} candidate lists")
        lists = [check_texts(c, f"candidate_lists[{i}]") for i, c in enumerate(candidate_lists)]
        empty = [i for i, c in enumerate(lists) if not c]
        if empty:
            raise ValueError(
                f"rank needs at least one candidate; candidate_lists[{empty[0]}] is empty"
            )
        return self._ranked(qs, lists)

    def _ranked(self, queries: list[str], candidate_lists: list[list[str]]) -> list[np.ndarray]:
        out = [
            np.asarray(s, dtype=np.float64) for s in self._rank_many_impl(queries, candidate_lists)
        ]
        if [len(s) for s in out] != [len(c) for c in candidate_lists]:
            raise RuntimeError(
                f"{type(self).__name__}._rank_many_impl returned score arrays of the wrong lengths"
            )
        return out

    def _rank_many_impl(
        self, queries: list[str], candidate_lists: list[list[str]]
    ) -> list[np.ndarray]:
        return self._score_query_pairs(queries, candidate_lists)

    def _score_query_pairs(
        self, queries: list[str], candidate_lists: list[list[str]], query_first: bool = True
    ) -> list[np.ndarray]:
        """Every (query, candidate) pair in one ``score_pairs`` call, the query as the first
        text (``query_first``) or the second; one score array per query."""
        queries_flat = [q for q, c in zip(queries, candidate_lists) for _ in c]
        candidates_flat = [x for c in candidate_lists for x in c]
        flat = (
            self.score_pairs(queries_flat, candidates_flat)
            if query_first
            else self.score_pairs(candidates_flat, queries_flat)
        )
        return np.split(flat, np.cumsum([len(c) for c in candidate_lists])[:-1])

    def choose(self, query: str, candidate_a: str, candidate_b: str) -> int:
        """One-to-two: 0 if ``candidate_a`` is judged the query's author, else 1 (0 on a tie;
        the one-to-two protocol scores ties as half right, from :meth:`rank_many`)."""
        s = self.rank(query, [candidate_a, candidate_b])
        return int(s[1] > s[0])


class Attributor(Verifier):
    """Base of the methods that attribute a text among candidate authors with one classifier
    over the candidates (``attribute``) and have no score for a single (known, unknown) pair:
    ``score_pairs`` and everything built on it raise :class:`AttributionOnly`. Subclasses
    implement ``_fit_impl`` and ``_attribute_impl``."""

    def _score_impl(self, texts_a, texts_b):
        raise AttributionOnly(
            f"{type(self).__name__} attributes a text among candidate "
            f"authors (attribute, the cdaa_attribution protocol); it has no "
            f"score for a single pair"
        )
