"""Tiny randomly initialised BERTs (hidden 32, 2 layers) and a fast tokenizer over a
vocabulary written to a folder (no download), for the explanation tests: whole words for a few
common ones, every ASCII letter, digit and punctuation mark otherwise, so any ASCII text
tokenises without [UNK] and every token maps back to its substring."""

from __future__ import annotations

import string
from pathlib import Path

WORDS = ["the", "cat", "sat", "on", "mat", "said", "smith", "of", "dog", "table", "so"]


def tiny_tokenizer(folder: Path):
    from transformers import BertTokenizerFast

    chars = list(string.ascii_lowercase + string.digits)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *string.punctuation, *WORDS, *chars]
    vocab += [f"##{c}" for c in chars]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "vocab.txt"
    path.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return BertTokenizerFast(vocab=str(path))


def _config(tokenizer):
    from transformers import BertConfig

    # a wide initialisation so a random model's output moves visibly along the IG path
    return BertConfig(
        vocab_size=len(tokenizer.get_vocab()),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        initializer_range=0.5,
    )


def tiny_cross(tokenizer, num_labels: int = 1, seed: int = 0):
    """A pair classifier in eval mode; ``num_labels=1`` is bert-pair's one-logit head."""
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(seed)
    config = _config(tokenizer)
    config.num_labels = num_labels
    return BertForSequenceClassification(config).eval()


def tiny_encoder(tokenizer, seed: int = 1):
    """A bare encoder in eval mode (a bi-encoder's)."""
    import torch
    from transformers import BertModel

    torch.manual_seed(seed)
    return BertModel(_config(tokenizer), add_pooling_layer=False).eval()
