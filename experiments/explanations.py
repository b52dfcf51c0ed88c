"""How much the neural verifiers lean on named entities (issue 16, item 4): Integrated
Gradients on a sample of test pairs, for bert-pair / siamese-pair fitted with and without
entity masking on closed and open Rethinking-AV splits, summarised as the share of absolute
attribution on entity tokens (:mod:`stylo.explain.entity_mass`) beside the share of tokens
that are entity tokens, and a rendering of a few explained pairs.

The fitted verifiers are duck-typed: an object with ``model_`` and ``tokenizer_`` (and
``max_tokens``, the per-text chunk length; 128 without it), the model being a sequence
classifier (``...ForSequenceClassification``: a cross-encoder, explained with
:func:`~stylo.explain.explain_cross`) or a bare encoder (a bi-encoder,
:func:`~stylo.explain.explain_siamese`); or a masking wrapper around one, with the fitted
masker as ``masker_`` and the fitted inner verifier as ``verifier_``
(:class:`~baselines.masked.MaskedVerifier`). A masked model is explained on the masked texts
it saw, and its entity tokens are the placeholders (see :mod:`stylo.explain.entity_mass`).
Each pair is explained on the first chunk of each text (the first ``max_tokens`` tokens).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from stylo.corpus import PairSet
from stylo.explain import explain_cross, explain_siamese, summarise_entity_mass
from stylo.explain.render import render_html, render_png

__all__ = ["Cell", "TABLE_COLUMNS", "entity_mass_table", "explain_pair", "sample_pairs"]

#: the tidy table's columns, one row per cell
TABLE_COLUMNS = (
    "model",
    "masking",
    "split",
    "entity_mass_mean",
    "entity_mass_std",
    "n",
    "entity_token_share",
    "n_steps",
    "seconds",
)


@dataclass(frozen=True)
class Cell:
    """One fitted verifier and the test pairs of the split it was fitted on."""

    model: str
    masking: str
    split: str
    verifier: object
    pairs: PairSet


def sample_pairs(pairs: PairSet, n: int, seed: int) -> list[int]:
    """``n`` positions of ``pairs`` (all when fewer), a seeded choice in pair order; the same
    for every cell of one split, so models and maskings are compared on the same pairs."""
    if len(pairs) <= n:
        return list(range(len(pairs)))
    return sorted(np.random.default_rng(seed).choice(len(pairs), size=n, replace=False).tolist())


def explain_pair(verifier, text_a: str, text_b: str, n_steps: int = 32):
    """``(attributions, masker)`` for one pair: the frame of the explainer that fits the
    verifier's model, on the texts as the model sees them; ``masker`` is the verifier's
    fitted masker, None when it does not mask."""
    masker = getattr(verifier, "masker_", None)
    inner = verifier.verifier_ if masker is not None else verifier
    seen_a, seen_b = masker.transform([text_a, text_b]) if masker is not None else (text_a, text_b)
    cross = type(inner.model_).__name__.endswith("ForSequenceClassification")
    explain = explain_cross if cross else explain_siamese
    frame = explain(
        inner.model_,
        inner.tokenizer_,
        seen_a,
        seen_b,
        max_tokens=getattr(inner, "max_tokens", 128),
        n_steps=n_steps,
    )
    return frame, masker


def entity_mass_table(
    cells: Iterable[Cell],
    n_pairs: int = 12,
    n_steps: int = 32,
    seed: int = 0,
    html_path=None,
    png_path=None,
    n_rendered: int = 3,
) -> pd.DataFrame:
    """The entity-mass table (:data:`TABLE_COLUMNS`), one row per cell, over ``n_pairs``
    sampled test pairs of each (``seconds``: the cell's explanation time).

    With ``html_path`` (``png_path``), the first ``n_rendered`` explained pairs of every cell
    (of the first cell only for the PNG, which grows fast) are rendered there.
    """
    rows, rendered, titles = [], [], []
    for cell in cells:
        start = time.perf_counter()
        a, b = cell.pairs.texts_a(), cell.pairs.texts_b()
        labels = cell.pairs.labels
        explained = []
        masker = None
        for i in sample_pairs(cell.pairs, n_pairs, seed):
            frame, masker = explain_pair(cell.verifier, a[i], b[i], n_steps)
            explained.append((frame, a[i], b[i]))
            if len(explained) <= n_rendered:
                rendered.append(frame)
                same = "same author" if labels[i] else "different authors"
                titles.append(f"{cell.model} / {cell.masking} / {cell.split}, pair {i} ({same})")
        summary = summarise_entity_mass(explained, masker)
        rows.append(
            {
                "model": cell.model,
                "masking": cell.masking,
                "split": cell.split,
                **summary,
                "n_steps": n_steps,
                "seconds": time.perf_counter() - start,
            }
        )
    if html_path is not None:
        render_html(rendered, Path(html_path), titles)
    if png_path is not None and rendered:
        first = min(n_rendered, len(rendered))
        render_png(rendered[:first], Path(png_path), titles[:first])
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
