"""How much of a verifier's attribution falls on named entities, by the entity masker's rules.

A token is an *entity token* when its character span overlaps a span that
:class:`~stylo.features.masking.EntityMasker` replaces (entities and numbers: everything the
masking ablation hides). For a model trained and explained on masked texts the entities are
gone, so there the entity tokens are the placeholders standing in for them: the question
becomes how much the model leans on "a name was here".

Which case applies is read from the attributions' ``attrs["text_a"]``/``["text_b"]`` (the
texts the offsets refer to, set by :mod:`stylo.explain.integrated_gradients`): the original
text, or the masker's output for it. A frame without them is taken to index the originals.

The entity mass of a pair is ``sum |attribution| over entity tokens / sum |attribution|``; its
baseline is the share of tokens that are entity tokens, which it would equal if attribution
ignored entityhood, so mass above that share is concentration on entities beyond their
frequency.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import clone

from stylo.features.masking import EntityMasker

__all__ = ["entity_mass", "entity_tokens", "summarise_entity_mass"]


def entity_tokens(attributions, text_a, text_b, masker=None) -> np.ndarray:
    """A boolean per row of ``attributions``: does the token overlap a replaced span?

    ``text_a``/``text_b`` are the original (unmasked) texts; ``masker`` an
    :class:`EntityMasker` (default parameters if None) with the placeholders the model saw.
    """
    if masker is not None and not isinstance(masker, EntityMasker):
        raise TypeError(f"masker must be an EntityMasker, got {type(masker).__name__}")
    masker = clone(masker if masker is not None else EntityMasker()).fit([text_a, text_b])
    flags = np.zeros(len(attributions), dtype=bool)
    sides = attributions["side"].to_numpy()
    starts = attributions["start"].to_numpy()
    ends = attributions["end"].to_numpy()
    for side, original in (("a", text_a), ("b", text_b)):
        rows = sides == side
        spans = _entity_spans(masker, original, attributions.attrs.get(f"text_{side}", original))
        flags[rows] = _overlaps(starts[rows], ends[rows], spans)
    return flags


def entity_mass(attributions, text_a, text_b, masker=None) -> float:
    """Share of absolute attribution on entity tokens (NaN when all attributions are 0)."""
    weight = np.abs(attributions["attribution"].to_numpy(dtype=np.float64))
    total = weight.sum()
    if total == 0:
        return math.nan
    return float(weight[entity_tokens(attributions, text_a, text_b, masker)].sum() / total)


def summarise_entity_mass(explanations, masker=None) -> dict:
    """Entity mass over many pairs: ``explanations`` yields ``(attributions, text_a, text_b)``.

    Returns ``entity_mass_mean``, ``entity_mass_std`` (sample std, NaN below 2 pairs), ``n``
    (pairs with any attribution; the others have no defined share and are left out) and
    ``entity_token_share`` (the mean per-pair share of entity tokens over the same pairs).
    """
    masses, shares = [], []
    for attributions, text_a, text_b in explanations:
        weight = np.abs(attributions["attribution"].to_numpy(dtype=np.float64))
        if weight.sum() == 0:
            continue
        flags = entity_tokens(attributions, text_a, text_b, masker)
        masses.append(weight[flags].sum() / weight.sum())
        shares.append(flags.mean())
    n = len(masses)
    return {
        "entity_mass_mean": float(np.mean(masses)) if n else math.nan,
        "entity_mass_std": float(np.std(masses, ddof=1)) if n > 1 else math.nan,
        "n": n,
        "entity_token_share": float(np.mean(shares)) if n else math.nan,
    }


def _entity_spans(masker, original, seen):
    """``(starts, ends)`` of the entity spans in ``seen``, which is ``original`` or its mask."""
    replaced = masker.replaced_spans([original])[0]
    if seen == original:
        return (
            np.array([s for s, _, _ in replaced], dtype=np.int64),
            np.array([e for _, e, _ in replaced], dtype=np.int64),
        )
    if seen != masker.transform([original])[0]:
        raise ValueError(
            "the attributions' text is neither the given text nor the masker's output for it"
        )
    placeholder = {"entity": masker.entity_token, "number": masker.number_token}
    starts, ends, shift = [], [], 0
    for start, end, kind in replaced:
        starts.append(start + shift)
        ends.append(start + shift + len(placeholder[kind]))
        shift += len(placeholder[kind]) - (end - start)
    return np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)


def _overlaps(token_starts, token_ends, spans):
    """Whether each token ``[s, e)`` overlaps one of the spans (all pairs: both are short)."""
    span_starts, span_ends = spans
    return (
        (token_starts[:, None] < span_ends[None, :]) & (span_starts[None, :] < token_ends[:, None])
    ).any(axis=1)
