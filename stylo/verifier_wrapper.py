"""A verifier around another verifier: calibration, masking, chunking, score normalisation.

:class:`VerifierWrapper` holds an unfitted inner ``verifier``, fits a clone of it as
``verifier_`` and answers every public call (``fit``, ``score_pairs``, ``score_problems``,
``rank``, ``rank_many``, ``choose``, ``attribute``) by calling the same public method of
``verifier_``, so wrappers compose (``MaskedVerifier(Calibrated(x), masker)``) and the inner
method's own kernels (its batching, its attribution classifier) stay in use. A wrapper says
what it changes with two hooks:

================  =====================================  ===================================
hook              default                                overridden by
================  =====================================  ===================================
``_texts_in``     texts as they are                      MaskedVerifier (the masked texts)
``_scores_out``   scores as they are                     Calibrated (Platt scaling and a
                                                         grey zone)
================  =====================================  ===================================

``_texts_in(texts)`` maps a list of texts to the list the inner verifier sees, item for item;
it applies to the training data as well (``fit`` passes the inner verifier a Corpus or PairSet
with its texts mapped). ``_scores_out(scores, known, unknown, ranking)`` maps the inner
verifier's scores (1-D) to the wrapper's: ``scores[i]`` is the inner score of ``unknown[i]``
(a text) against ``known[i]`` (a list of texts, both as the inner verifier saw them): the
pair's first text in ``score_pairs``, the problem's known texts in ``score_problems``, the
candidate in ``rank``/``rank_many`` (whose query is the unknown), the candidate author's texts
in ``attribute``. ``ranking`` is True for ``rank``/``rank_many``/``choose`` and ``attribute``,
whose scores order candidates: a grey zone would tie the candidates inside it at 0.5, and the
first of them would win (the open-set rule of attribution reads the probabilities at 0.5). A
hook that needs state learns it in ``_fit_impl`` (calling ``super()._fit_impl(X, y)`` to fit
the inner verifier) and may score through ``verifier_``'s public methods. A subclass that
builds its inner verifier itself instead of taking a ``verifier`` parameter overrides
``_make_inner`` (NaiveDistance); one that changes more than texts and scores overrides the
kernels it changes (Chunked scores every call as chunk pairs).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from stylo.corpus import Corpus, PairSet
from stylo.verifier import Verifier, attribution_problems

__all__ = ["VerifierWrapper"]


class VerifierWrapper(Verifier):
    """Base class of verifiers that answer through an inner one (see the module docstring).

    Parameters
    ----------
    verifier : an unfitted :class:`~stylo.verifier.Verifier`; a clone is fitted as
        ``verifier_``.
    """

    def __init__(self, verifier: Verifier):
        self.verifier = verifier

    @property
    def requires_fit(self) -> bool:  # as demanding as the wrapped method
        return getattr(self.verifier, "requires_fit", True)

    # -- hooks -----------------------------------------------------------------------------
    def _texts_in(self, texts: list[str]) -> list[str]:
        return texts

    def _scores_out(
        self, scores: np.ndarray, known: list[list[str]], unknown: list[str], ranking: bool
    ) -> np.ndarray:
        return scores

    def _make_inner(self) -> Verifier:
        """The unfitted inner verifier: a clone of the ``verifier`` parameter."""
        if not isinstance(self.verifier, Verifier):
            raise TypeError(f"verifier must be a Verifier, got {type(self.verifier).__name__}")
        return clone(self.verifier)

    # -- kernels: the inner verifier's public methods between the two hooks ----------------
    def _fit_impl(self, X, y) -> None:
        self.verifier_ = self._make_inner().fit(self._data_in(X), y)

    def _score_impl(self, texts_a, texts_b):
        a, b = self._texts_in(texts_a), self._texts_in(texts_b)
        return self._scores_out(
            self.verifier_.score_pairs(a, b), [[t] for t in a], b, ranking=False
        )

    def _problem_impl(self, known_lists, unknowns):
        known, unknown = self._lists_in(known_lists), self._texts_in(unknowns)
        raw = self.verifier_.score_problems(PairSet.from_lists(known, unknown))
        return self._scores_out(raw, known, unknown, ranking=False)

    def _rank_many_impl(self, queries, candidate_lists):
        qs, lists = self._texts_in(queries), self._lists_in(candidate_lists)
        ranked = self.verifier_.rank_many(qs, lists)
        if not ranked:
            return []
        known = [[c] for cands in lists for c in cands]
        unknown = [q for q, cands in zip(qs, lists) for _ in cands]
        out = self._scores_out(np.concatenate(ranked), known, unknown, ranking=True)
        return np.split(out, np.cumsum([len(c) for c in lists])[:-1])

    def _attribute_impl(self, candidates, texts):
        cands, items = self._lists_in(candidates), self._texts_in(texts)
        raw = self.verifier_.attribute(cands, items)
        known, unknown = attribution_problems(cands, items)
        return self._scores_out(raw.ravel(), known, unknown, ranking=True).reshape(raw.shape)

    # -- texts in --------------------------------------------------------------------------
    def _lists_in(self, lists: list[list[str]]) -> list[list[str]]:
        """``_texts_in`` of every list, in one call (a hook may batch or cache)."""
        flat = self._texts_in([t for texts in lists for t in texts])
        ends = np.cumsum([len(texts) for texts in lists]).tolist()
        return [flat[start:end] for start, end in zip([0, *ends[:-1]], ends)]

    def _data_in(self, X: Corpus | PairSet | None) -> Corpus | PairSet | None:
        """Training data with ``_texts_in`` applied; ``X`` itself when no text changes."""
        if X is None:
            return None
        name = f"{X.name}:{type(self).__name__}"
        if isinstance(X, Corpus):
            texts = self._texts_in(X.texts)
            return X if texts == X.texts else Corpus(X.frame.assign(text=texts), name=name)
        known, unknown = X.known, X.unknown
        mapped = self._lists_in([*known, unknown])
        if mapped[:-1] == known and mapped[-1] == unknown:
            return X
        frame = X.frame.assign(unknown=mapped[-1])
        frame["known"] = mapped[:-1]
        return PairSet(frame, name=name)
