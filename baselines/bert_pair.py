"""bert-pair: the cross-encoder of "Rethinking the Authorship Verification Experimental
Setups" (Brad, Manolache et al., EMNLP 2022): a pre-trained BERT-family encoder fine-tuned as a
binary classifier of concatenated pairs, ``[CLS] a [SEP] b [SEP]``.

Each text is cut into chunks of ``max_tokens`` tokens; training sees one random chunk pair per
text pair per epoch, and prediction averages the same-author probability over every pair of
the texts' chunks (at most ``max_chunks`` of each, a seeded choice; the paper reports up to 10
points of overall from averaging). The default encoder is the packaged, offline
all-MiniLM-L6-v2 (a 6-layer BERT, 384 wide) so that it fine-tunes on a laptop CPU; any local
Hugging Face checkpoint can be named instead. Needs the ``neural`` extra.
"""

from __future__ import annotations

import numpy as np

from baselines._transformer import TransformerVerifier, padded, quiet_load

__all__ = ["BertPair"]


class BertPair(TransformerVerifier):
    """A fine-tuned cross-encoder; the score is the mean same-author probability of the texts'
    chunk pairs (higher = same author).

    Parameters
    ----------
    model_path : str or None
        A local Hugging Face checkpoint folder; None: the packaged all-MiniLM-L6-v2.
    max_tokens : int
        Tokens per chunk of each text (a pair's input is two chunks and three special tokens).
    max_chunks : int
        Chunks of each text used at prediction (so at most ``max_chunks ** 2`` chunk pairs);
        a text with more keeps a choice seeded by ``random_state`` and the text.
    epochs : int
        Passes over the training pairs, a fresh random chunk pair each time.
    n_train_pairs : int
        Training budget: at most this many labelled pairs (a seeded subset of a larger
        PairSet; drawn from a Corpus, see :func:`stylo.verifier.training_pairs`).
    batch_size : int
        Chunk pairs per optimiser step and per forward pass at prediction.
    learning_rate, warmup : float
        AdamW's peak learning rate, reached linearly over the first ``warmup`` share of the
        steps, then decayed linearly to 0.
    random_state : int
        Seeds the head, dropout, the chunk draws and the order of the training pairs.
    n_jobs : int
        torch threads.
    progress : bool
        A progress bar per training epoch.

    Fitted attributes: ``model_`` (the fine-tuned model), ``tokenizer_``, ``special_``.
    """

    _specials_per_input = 3
    _chunks_per_input = 2
    _explainer = "explain_cross"

    def _new_model(self, path: str):
        from transformers import AutoModelForSequenceClassification

        # one logit and a logistic loss: the probability of "same author" is its sigmoid
        return quiet_load(
            lambda p: AutoModelForSequenceClassification.from_pretrained(p, num_labels=1), path
        )

    def _inputs(self, chunks_a, chunks_b) -> dict:
        built = [self.special_.two(a, b) for a, b in zip(chunks_a, chunks_b, strict=True)]
        return padded([ids for ids, _ in built], self.special_.pad_id, [t for _, t in built])

    def _logits(self, model, chunks_a, chunks_b):
        return model(**self._inputs(chunks_a, chunks_b)).logits[:, 0]

    def _loss(self, model, chunks_a, chunks_b, labels):
        import torch

        return torch.nn.functional.binary_cross_entropy_with_logits(
            self._logits(model, chunks_a, chunks_b), labels
        )

    def _score_impl(self, texts_a, texts_b):
        kept = {t: self._kept_chunks(t) for t in dict.fromkeys([*texts_a, *texts_b])}
        owner, left, right = [], [], []
        for i, (a, b) in enumerate(zip(texts_a, texts_b, strict=True)):
            for ca in kept[a]:
                for cb in kept[b]:
                    owner.append(i), left.append(ca), right.append(cb)

        def run(idx):
            logits = self._logits(self.model_, [left[i] for i in idx], [right[i] for i in idx])
            return logits.sigmoid().double().numpy()

        probs = self._batched(len(owner), lambda i: len(left[i]) + len(right[i]), run)
        # every chunk pair of a text pair counts once: the mean of its probabilities
        sums = np.bincount(owner, weights=probs, minlength=len(texts_a))
        return sums / np.bincount(owner, minlength=len(texts_a))
