"""Retrieve, then ask: AIDBench's RAG pipeline for candidate sets too large for one prompt.

A first-stage ranker (embedding search, or any stylo method) scores all candidates and keeps
the ``keep`` best ("50 filter 10" = 50 candidates, keep 10; "200 filter 50"); the language
model then ranks only those (Wen et al., arXiv 2411.13226, Section 4). The final ranking is the
model's order of the kept candidates (ties, and candidates the model did not rank, in
first-stage order), followed by every filtered-out candidate in first-stage order.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from stylo.verifier import Verifier, rank_each_query

__all__ = ["RAGRanker"]


class RAGRanker(Verifier):
    """A first-stage ranker keeps the top ``keep`` candidates; a second (the LLM) orders them.

    Parameters
    ----------
    retriever : Verifier
        First stage (e.g. :class:`baselines.embedding.EmbeddingSearch`).
    reranker : Verifier
        Second stage (e.g. :class:`baselines.llm.PromptedLLM`); also answers one-to-one pairs.
    keep : int
        Candidates passed to the reranker.

    Fitted attributes: ``retriever_``, ``reranker_`` (fitted clones; both fitted on the same
    data, or on nothing when they need none). Scores from :meth:`rank` are
    ``(n - position) / n`` of the final order, so they lie in (0, 1].
    """

    def __init__(self, retriever, reranker, keep: int = 10):
        self.retriever = retriever
        self.reranker = reranker
        self.keep = keep

    @property
    def requires_fit(self) -> bool:
        return bool(
            getattr(self.retriever, "requires_fit", True)
            or getattr(self.reranker, "requires_fit", True)
        )

    def _fit_impl(self, X, y) -> None:
        if int(self.keep) < 1:
            raise ValueError(f"keep must be >= 1, got {self.keep}")
        for stage in (self.retriever, self.reranker):
            if not isinstance(stage, Verifier):
                raise TypeError(f"RAGRanker stages must be Verifiers, got {type(stage).__name__}")
        self.retriever_ = clone(self.retriever).fit(X, y)
        self.reranker_ = clone(self.reranker).fit(X, y)

    def order(self, query: str, candidates: list[str]) -> np.ndarray:
        """Candidate indices, best first: reranked kept ones, then the filtered-out ones."""
        self._check_fitted()
        first = np.asarray(self.retriever_.rank(query, candidates), dtype=np.float64)
        by_first = np.argsort(-first, kind="stable")
        kept, rest = by_first[: int(self.keep)], by_first[int(self.keep) :]
        if len(kept) > 1:
            second = np.asarray(
                self.reranker_.rank(query, [candidates[i] for i in kept]), dtype=np.float64
            )
            kept = kept[np.argsort(-second, kind="stable")]
        return np.concatenate([kept, rest])

    def _rank_many_impl(self, queries, candidate_lists):
        return rank_each_query(self._rank_query, queries, candidate_lists)

    def _rank_query(self, query, candidates):
        n = len(candidates)
        scores = np.empty(n)
        scores[self.order(query, candidates)] = (n - np.arange(n)) / n
        return scores

    def _score_impl(self, texts_a, texts_b):
        return self.reranker_.score_pairs(texts_a, texts_b)
