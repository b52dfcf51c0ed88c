"""siamese-pair: the siamBERT of "Rethinking the Authorship Verification Experimental Setups"
(Brad, Manolache et al., EMNLP 2022): one encoder embeds each text on its own and the pair is
scored by the similarity of the two embeddings.

A chunk's embedding is the mean of its last-layer token vectors (the pooling of
all-MiniLM-L6-v2, the packaged default encoder); a text's is the mean of its chunks'
(at most ``max_chunks``, a seeded choice), unit-normalised. Fine-tuning sees one random chunk
of each text of a training pair per epoch and minimises the logistic loss of (cos + 1) / 2,
the score itself, against the same-author label. Each text is embedded once per fitted model
(memoised), so ranking a candidate pool for many queries embeds every candidate once: the
neural row of one-to-many. Needs the ``neural`` extra.
"""

from __future__ import annotations

import numpy as np

from baselines._transformer import TransformerVerifier, padded, quiet_load
from stylo.verifier import rank_each_query

__all__ = ["SiamesePair"]


class SiamesePair(TransformerVerifier):
    """A fine-tuned bi-encoder; the score is (cos + 1) / 2 of the two texts' embeddings
    (higher = same author).

    Parameters are :class:`~baselines.bert_pair.BertPair`'s: ``model_path``, ``max_tokens``
    (tokens per chunk), ``max_chunks`` (chunks averaged per text), ``epochs``,
    ``n_train_pairs``, ``batch_size`` (chunks per forward pass; pairs per optimiser step),
    ``learning_rate``, ``warmup``, ``random_state``, ``n_jobs``, ``progress``.

    Fitted attributes: ``model_`` (the fine-tuned encoder), ``tokenizer_``, ``special_``.
    """

    def _new_model(self, path: str):
        from transformers import AutoModel

        return quiet_load(AutoModel.from_pretrained, path)

    def _fit_impl(self, X, y) -> None:
        self._embedding_memo: dict[str, np.ndarray] = {}
        super()._fit_impl(X, y)

    def _pooled(self, model, chunks):
        """Mean-pooled last-layer vectors of each chunk, shape (len(chunks), width)."""
        batch = padded([self.special_.one(c) for c in chunks], self.special_.pad_id)
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1)

    def _loss(self, model, chunks_a, chunks_b, labels):
        import torch

        cos = torch.nn.functional.cosine_similarity(
            self._pooled(model, chunks_a), self._pooled(model, chunks_b)
        )
        # clamped: a probability of exactly 0 or 1 has an infinite log loss
        p = ((cos + 1) / 2).clamp(1e-6, 1 - 1e-6)
        return torch.nn.functional.binary_cross_entropy(p, labels)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length text embeddings, shape (len(texts), width), float64."""
        self._check_fitted()
        todo = [t for t in dict.fromkeys(texts) if t not in self._embedding_memo]
        if todo:
            owner, chunks = [], []
            for i, t in enumerate(todo):
                for c in self._kept_chunks(t):
                    owner.append(i), chunks.append(c)

            def run(idx):
                return self._pooled(self.model_, [chunks[i] for i in idx]).double().numpy()

            vecs = self._batched(len(chunks), lambda i: len(chunks[i]), run)
            counts = np.bincount(owner, minlength=len(todo))[:, None]
            means = np.zeros((len(todo), vecs.shape[1]))
            np.add.at(means, owner, vecs)
            means /= counts
            means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
            self._embedding_memo.update(zip(todo, means, strict=True))
        return np.stack([self._embedding_memo[t] for t in texts])

    @staticmethod
    def _similarity(cos):
        return (np.clip(cos, -1.0, 1.0) + 1.0) / 2.0

    def _score_impl(self, texts_a, texts_b):
        return self._similarity(np.einsum("ij,ij->i", self.embed(texts_a), self.embed(texts_b)))

    def _cross_impl(self, texts_a, texts_b):
        return self._similarity(self.embed(texts_a) @ self.embed(texts_b).T)

    def _rank_many_impl(self, queries, candidate_lists):
        return rank_each_query(
            lambda q, c: self._similarity(self.embed(c) @ self.embed([q])[0]),
            queries,
            candidate_lists,
        )
