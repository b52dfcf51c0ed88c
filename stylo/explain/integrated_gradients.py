"""Per-token Integrated Gradients (Sundararajan et al. 2017) for the neural pair verifiers.

Captum's ``LayerIntegratedGradients`` runs over the model's input (word) embedding layer: the
path goes from the embeddings of a baseline input, in which every token of the texts is the
tokenizer's ``[PAD]`` (``[MASK]`` if it has none) and the special tokens (``[CLS]``,
``[SEP]``) are kept, to those of the real input, with the attention mask and token types of
the real input throughout. A token's attribution is the sum over the embedding dimensions, so
by completeness the attributions of one run sum to ``f(input) - f(baseline)`` up to Captum's
convergence delta; the special tokens have the same embedding on both ends of the path, so
their attribution is exactly 0 and they get no row.

Both functions return a tidy DataFrame, one row per token of the texts (:data:`COLUMNS`):
``side`` (``"a"``/``"b"``), ``position`` (index among that side's tokens), ``token``,
``start``/``end`` (the token's character span in the text as given, from the fast
tokenizer's offset mapping, so ``text[start:end]`` is what the token covers) and
``attribution``. ``.attrs`` holds ``method``, ``score`` (``f`` at the input), ``delta`` (the
largest absolute convergence delta of the runs), ``n_steps``, ``max_tokens``, ``truncated``
(whether a text was cut), ``truncated_sides`` and ``text_a``/``text_b`` (the texts the
offsets refer to). Each text keeps its first ``max_tokens`` tokens, as the verifiers' first
chunk does; to explain another chunk, pass that chunk's text.

Deterministic: the model is put in eval mode for the call (and restored), and Captum's
Gauss-Legendre path has no randomness. torch and captum are imported on first use only.
"""

from __future__ import annotations

import contextlib
import numbers

import numpy as np
import pandas as pd

__all__ = ["COLUMNS", "explain_cross", "explain_siamese"]

COLUMNS = ("side", "position", "token", "start", "end", "attribution")


def explain_cross(
    model, tokenizer, text_a, text_b, max_tokens=128, n_steps=50, target=1, batch_size=8
):
    """Attribute a cross-encoder's probability of class ``target`` to the tokens of both texts.

    ``model`` is a sequence classifier over the pair ``[CLS] a [SEP] b [SEP]`` (a Hugging Face
    ``AutoModelForSequenceClassification``): with one logit (``num_labels=1``, as bert-pair)
    the probability of class 1 is its sigmoid, with more the softmax of ``.logits``.
    ``target=1`` is the same-author class, so the attributions are in units of the verifier's
    score and sum to ``score - f(baseline)``. ``max_tokens`` is the per-text budget (the
    verifier's chunk length), ``n_steps`` the number of points on the path, ``batch_size`` how
    many of them go through the model at once (memory).
    """
    torch, captum_attr = _imports()
    max_tokens, n_steps, batch_size = _check_ints(max_tokens, n_steps, batch_size)
    n_classes = max(model.config.num_labels, 2)  # one logit: two classes
    if isinstance(target, bool) or not isinstance(target, numbers.Integral):
        raise ValueError(f"target must be an int class index, got {target!r}")
    if not 0 <= target < n_classes:
        raise ValueError(f"target must be in [0, {n_classes}), got {target}")
    (seen_a, cut_a), (seen_b, cut_b) = (_cut(tokenizer, t, max_tokens) for t in (text_a, text_b))
    enc = tokenizer(seen_a, seen_b, return_offsets_mapping=True, return_tensors="pt")

    def prob(input_ids, attention_mask, token_type_ids):
        logits = model(**_kwargs(input_ids, attention_mask, token_type_ids)).logits
        if logits.shape[-1] == 1:
            same = torch.sigmoid(logits[:, 0])
            return same if target == 1 else 1 - same
        return torch.softmax(logits, dim=-1)[:, target]

    with _eval(model):
        inputs, baseline, args = _model_inputs(torch, model, tokenizer, enc)
        attributions, delta, score = _integrated_gradients(
            torch, captum_attr, model, prob, inputs, baseline, args, n_steps, batch_size
        )
    frame = _frame([(enc, attributions, ("a", "b"))], tokenizer)
    return _finish(
        frame, "cross", score, [delta], n_steps, max_tokens, cut_a, cut_b, text_a, text_b
    )


def explain_siamese(model, tokenizer, text_a, text_b, max_tokens=128, n_steps=50, batch_size=8):
    """Attribute a bi-encoder's score ``(cos + 1) / 2`` to the tokens of both texts.

    ``model`` embeds one text ``[CLS] t [SEP]`` (a Hugging Face ``AutoModel``; for a
    sentence-transformers model pass its ``[0].auto_model``); the embedding is the mean of
    ``last_hidden_state`` over the attention mask, special tokens included, as
    sentence-transformers pools. The score rather than the bare cosine is attributed so that
    both explainers speak in units of the verifier's score (the attributions are half the
    cosine's).

    One IG run per side, with the other side's embedding held fixed: side a's attributions sum
    to ``score(a, b) - score(baseline_a, b)``, and likewise for b. A joint run would start
    from two all-``[PAD]`` texts whose embeddings are nearly identical, a baseline scoring as a
    near-certain same-author pair, so every token would be explained as a move away from
    identity; holding the other text fixed asks instead what each text's content adds to its
    similarity with the real other text, which is the question a bi-encoder answers.
    """
    torch, captum_attr = _imports()
    max_tokens, n_steps, batch_size = _check_ints(max_tokens, n_steps, batch_size)
    seen = [_cut(tokenizer, t, max_tokens) for t in (text_a, text_b)]
    encs = [tokenizer(s, return_offsets_mapping=True, return_tensors="pt") for s, _ in seen]

    def embed(input_ids, attention_mask, token_type_ids):
        hidden = model(**_kwargs(input_ids, attention_mask, token_type_ids)).last_hidden_state
        weight = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weight).sum(dim=1) / weight.sum(dim=1).clamp(min=1e-9)

    parts, deltas = [], []
    with _eval(model):
        prepared = [_model_inputs(torch, model, tokenizer, enc) for enc in encs]
        with torch.no_grad():
            fixed = [embed(inputs, *args) for inputs, _, args in prepared]
            value = (float(torch.nn.functional.cosine_similarity(*fixed, dim=-1)[0]) + 1) / 2
        for side, (enc, (inputs, baseline, args)) in enumerate(zip(encs, prepared)):
            other = fixed[1 - side]

            def similarity(input_ids, attention_mask, token_type_ids, other=other):
                cos = torch.nn.functional.cosine_similarity(
                    embed(input_ids, attention_mask, token_type_ids), other, dim=-1
                )
                return (cos + 1) / 2

            attributions, delta, _ = _integrated_gradients(
                torch, captum_attr, model, similarity, inputs, baseline, args, n_steps, batch_size
            )
            parts.append((enc, attributions, ("ab"[side],)))
            deltas.append(delta)
    frame = _frame(parts, tokenizer)
    (_, cut_a), (_, cut_b) = seen
    return _finish(
        frame, "siamese", value, deltas, n_steps, max_tokens, cut_a, cut_b, text_a, text_b
    )


def _imports():
    import torch
    from captum import attr

    return torch, attr


def _check_ints(max_tokens, n_steps, batch_size):
    checked = []
    for name, value in (
        ("max_tokens", max_tokens),
        ("n_steps", n_steps),
        ("batch_size", batch_size),
    ):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        checked.append(int(value))
    return checked


def _cut(tokenizer, text, max_tokens):
    """The prefix of ``text`` holding its first ``max_tokens`` tokens, and whether it was cut.

    Cutting the text rather than the token ids keeps every offset an offset into ``text``.
    """
    if not isinstance(text, str):
        raise TypeError(f"texts must be str, got {type(text).__name__}")
    # the whole text is tokenised only to find where to cut it: verbose=False keeps the
    # tokenizer from warning that it is longer than the model takes
    offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)[
        "offset_mapping"
    ]
    if len(offsets) <= max_tokens:
        return text, False
    return text[: offsets[max_tokens - 1][1]], True


def _model_inputs(torch, model, tokenizer, enc):
    """``(input_ids, baseline_ids, (attention_mask, token_type_ids))`` on the model's device."""
    token = (
        tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.mask_token_id
    )
    if token is None:
        raise ValueError("the tokenizer has neither a pad nor a mask token for the IG baseline")
    longest = getattr(model.config, "max_position_embeddings", None)
    if longest is not None and enc["input_ids"].shape[1] > longest:
        raise ValueError(
            f"max_tokens gives inputs of {enc['input_ids'].shape[1]} tokens; the model takes at "
            f"most {longest}"
        )
    device = next(model.parameters()).device
    input_ids = enc["input_ids"].to(device)
    special = torch.tensor([s is None for s in enc.sequence_ids(0)], device=device)
    baseline = torch.where(special, input_ids, torch.full_like(input_ids, token))
    token_types = enc.get("token_type_ids")
    if token_types is not None:
        token_types = token_types.to(device)
    return input_ids, baseline, (enc["attention_mask"].to(device), token_types)


def _kwargs(input_ids, attention_mask, token_type_ids):
    """The model's inputs; token types only where the tokenizer makes them (DistilBERT-like
    models take none)."""
    kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
    if token_type_ids is not None:
        kwargs["token_type_ids"] = token_type_ids
    return kwargs


def _integrated_gradients(torch, captum_attr, model, f, inputs, baseline, args, n_steps, batch):
    """Per-token attributions (numpy, one per input position), |delta| and ``f(inputs)``."""
    ig = captum_attr.LayerIntegratedGradients(f, model.get_input_embeddings())
    attributions, delta = ig.attribute(
        inputs,
        baselines=baseline,
        additional_forward_args=args,
        n_steps=n_steps,
        method="gausslegendre",
        internal_batch_size=batch,
        return_convergence_delta=True,
    )
    with torch.no_grad():
        value = float(f(inputs, *args)[0])
    per_token = attributions.sum(dim=-1)[0].detach().cpu().double().numpy()
    return per_token, abs(float(delta[0])), value


def _frame(parts, tokenizer):
    """Rows for the non-special tokens; ``sides`` names the encoding's sequences in order."""
    rows = []
    for enc, attributions, sides in parts:
        tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][0].tolist())
        offsets = enc["offset_mapping"][0].tolist()
        positions = dict.fromkeys(sides, 0)
        for i, sequence in enumerate(enc.sequence_ids(0)):
            if sequence is None:
                continue
            side = sides[sequence]
            start, end = offsets[i]
            rows.append((side, positions[side], tokens[i], start, end, attributions[i]))
            positions[side] += 1
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return frame.astype(
        {
            "side": str,
            "position": np.int64,
            "token": str,
            "start": np.int64,
            "end": np.int64,
            "attribution": np.float64,
        }
    )


def _finish(frame, method, score, deltas, n_steps, max_tokens, cut_a, cut_b, text_a, text_b):
    frame.attrs.update(
        method=method,
        score=score,
        delta=max(deltas),
        n_steps=n_steps,
        max_tokens=max_tokens,
        truncated=cut_a or cut_b,
        truncated_sides=tuple(s for s, cut in (("a", cut_a), ("b", cut_b)) if cut),
        text_a=text_a,
        text_b=text_b,
    )
    return frame


@contextlib.contextmanager
def _eval(model):
    """Dropout off for the call, the caller's train/eval mode back afterwards."""
    training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(training)
