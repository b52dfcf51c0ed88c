"""A tiny randomly initialised BERT (hidden 32, 2 layers) and its word-level vocabulary, saved
to a folder that the transformer verifiers load as ``model_path`` (no download), and an easy
synthetic verification task for it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from stylo.corpus import PairSet

#: two disjoint word sets: a "style" is which set a text draws from
STYLE_A = "the a cat dog sat ran on mat rug fire".split()
STYLE_B = "red blue green house tree river stone bird sky sun".split()
#: words the entity masker replaces (capitalised in the texts) and its placeholder
ENTITIES = ["john", "smith", "london", "paris", "@"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *STYLE_A, *STYLE_B, *ENTITIES, ".", ","]


def tiny_bert(folder: Path, max_positions: int = 64, seed: int = 0) -> str:
    """Save the tiny model and its tokenizer in ``folder``; returns its path."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer.from_pretrained(str(folder))
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
    )
    BertModel(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return str(folder)


#: small-model training settings the tests start from (16-token chunks, a high learning rate)
TINY_PARAMS = dict(max_tokens=16, epochs=2, batch_size=8, learning_rate=1e-3)


def tiny_model_path(tmp_path_factory) -> str:
    """The tiny model in a fresh folder of the test session (for a module-scoped fixture)."""
    return tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


def style_text(rng: np.random.Generator, style: int, n_words: int = 24) -> str:
    return " ".join(rng.choice(STYLE_B if style else STYLE_A, n_words))


def easy_pairs(n: int, seed: int = 0, n_words: int = 24) -> PairSet:
    """``n`` pairs, every other one same-author: a same-author pair's texts share a style."""
    rng = np.random.default_rng(seed)
    a, b, same = [], [], []
    for i in range(n):
        style = int(rng.integers(2))
        is_same = i % 2 == 0
        a.append(style_text(rng, style, n_words))
        b.append(style_text(rng, style if is_same else 1 - style, n_words))
        same.append(is_same)
    return PairSet.from_lists(a, b, same=same, name="easy")
