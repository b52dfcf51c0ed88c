"""Integrated Gradients on tiny randomly initialised BERTs with a vocabulary written to
tmp_path (no download): completeness, determinism, offsets and truncation."""

from __future__ import annotations

import pandas as pd
import pytest
from explain_models import tiny_cross, tiny_encoder, tiny_tokenizer

# skipped without the extra (and captum), a failure under CI (conftest.py)
pytestmark = pytest.mark.extra("neural")

TEXT_A = "The cat sat on the mat, said Mr. Smith of NASA in 2021."
TEXT_B = "Yesterday a dog slept under the table; Smith said so."


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return tiny_tokenizer(tmp_path_factory.mktemp("vocab"))


@pytest.fixture(scope="module", params=[1, 2], ids=["one-logit", "two-logit"])
def cross(request, tokenizer):
    """bert-pair's head (one logit, sigmoid) and a softmax head over two classes."""
    return tiny_cross(tokenizer, num_labels=request.param)


@pytest.fixture(scope="module")
def siamese(tokenizer):
    return tiny_encoder(tokenizer)


def _blank(tokenizer, enc):
    """The IG baseline built independently: every text token becomes [PAD]."""
    ids = enc["input_ids"].clone()
    for i, sequence in enumerate(enc.sequence_ids(0)):
        if sequence is not None:
            ids[0, i] = tokenizer.pad_token_id
    return ids


def _prob(model, enc, ids, target=1):
    import torch

    with torch.no_grad():
        logits = model(
            input_ids=ids,
            attention_mask=enc["attention_mask"],
            token_type_ids=enc["token_type_ids"],
        ).logits
    if logits.shape[-1] == 1:
        same = float(torch.sigmoid(logits[0, 0]))
        return same if target == 1 else 1 - same
    return float(torch.softmax(logits, dim=-1)[0, target])


def _embed(model, enc, ids):
    import torch

    with torch.no_grad():
        hidden = model(input_ids=ids, attention_mask=enc["attention_mask"]).last_hidden_state
    return hidden.mean(dim=1)[0]  # one unpadded text: the masked mean is the plain mean


def _score(u, v):
    import torch

    return (float(torch.nn.functional.cosine_similarity(u, v, dim=0)) + 1) / 2


@pytest.mark.parametrize("target", [0, 1])
def test_cross_attributions_sum_to_the_output_change(cross, tokenizer, target):
    from stylo.explain import explain_cross

    frame = explain_cross(
        cross, tokenizer, TEXT_A, TEXT_B, max_tokens=64, n_steps=64, target=target
    )
    enc = tokenizer(TEXT_A, TEXT_B, return_tensors="pt")
    f_input = _prob(cross, enc, enc["input_ids"], target)
    f_baseline = _prob(cross, enc, _blank(tokenizer, enc), target)
    assert abs(f_input - f_baseline) > 0.01  # the check below is not 0 = 0
    assert frame.attrs["score"] == pytest.approx(f_input, abs=1e-6)
    assert frame.attrs["delta"] < 0.01 * abs(f_input - f_baseline)
    total = frame["attribution"].sum()
    assert total == pytest.approx(f_input - f_baseline, abs=frame.attrs["delta"] + 1e-5)
    assert frame.attrs["method"] == "cross" and not frame.attrs["truncated"]


def test_siamese_attributions_sum_per_side_to_the_score_change(siamese, tokenizer):
    from stylo.explain import explain_siamese

    frame = explain_siamese(siamese, tokenizer, TEXT_A, TEXT_B, max_tokens=64, n_steps=64)
    encs = [tokenizer(t, return_tensors="pt") for t in (TEXT_A, TEXT_B)]
    real = [_embed(siamese, e, e["input_ids"]) for e in encs]
    blank = [_embed(siamese, e, _blank(tokenizer, e)) for e in encs]
    assert frame.attrs["score"] == pytest.approx(_score(*real), abs=1e-6)
    for side, expected in (
        ("a", _score(real[0], real[1]) - _score(blank[0], real[1])),
        ("b", _score(real[0], real[1]) - _score(real[0], blank[1])),
    ):
        assert abs(expected) > 0.005
        got = frame.loc[frame["side"] == side, "attribution"].sum()
        assert got == pytest.approx(expected, abs=frame.attrs["delta"] + 1e-5)


def test_explanations_are_deterministic_and_leave_the_model_mode(cross, siamese, tokenizer):
    from stylo.explain import explain_cross, explain_siamese

    for explain, model in ((explain_cross, cross), (explain_siamese, siamese)):
        first = explain(model, tokenizer, TEXT_A, TEXT_B, max_tokens=16, n_steps=8)
        model.train()  # dropout on: the explainer must still run the model in eval mode
        try:
            second = explain(model, tokenizer, TEXT_A, TEXT_B, max_tokens=16, n_steps=8)
            assert model.training
        finally:
            model.eval()
        pd.testing.assert_frame_equal(first, second, check_exact=True)
        assert first.attrs == second.attrs


@pytest.mark.parametrize("kind", ["cross", "siamese"])
def test_offsets_map_tokens_back_to_their_substrings(cross, siamese, tokenizer, kind):
    from stylo.explain import COLUMNS, explain_cross, explain_siamese

    explain, model = (explain_cross, cross) if kind == "cross" else (explain_siamese, siamese)
    frame = explain(model, tokenizer, TEXT_A, TEXT_B, max_tokens=64, n_steps=4)
    assert tuple(frame.columns) == COLUMNS
    for side, text in (("a", TEXT_A), ("b", TEXT_B)):
        rows = frame[frame["side"] == side]
        alone = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert list(rows["token"]) == tokenizer.convert_ids_to_tokens(alone)
        assert list(rows["position"]) == list(range(len(rows)))
        for token, start, end in zip(rows["token"], rows["start"], rows["end"]):
            assert text[start:end].lower() == token.removeprefix("##")
    assert "smith" in set(frame.loc[frame["side"] == "b", "token"])


@pytest.mark.parametrize("kind", ["cross", "siamese"])
def test_long_texts_are_cut_to_their_first_tokens_and_say_so(cross, siamese, tokenizer, kind):
    from stylo.explain import explain_cross, explain_siamese

    explain, model = (explain_cross, cross) if kind == "cross" else (explain_siamese, siamese)
    short_b = "the dog"
    frame = explain(model, tokenizer, TEXT_A, short_b, max_tokens=5, n_steps=4)
    assert frame.attrs["truncated"] and frame.attrs["truncated_sides"] == ("a",)
    alone = tokenizer.convert_ids_to_tokens(
        tokenizer(TEXT_A, add_special_tokens=False)["input_ids"]
    )
    assert list(frame.loc[frame["side"] == "a", "token"]) == alone[:5]
    assert list(frame.loc[frame["side"] == "b", "token"]) == ["the", "dog"]
    assert frame.attrs["text_a"] == TEXT_A  # offsets still index the whole text
    whole = explain(model, tokenizer, TEXT_A, short_b, max_tokens=64, n_steps=4)
    assert not whole.attrs["truncated"] and whole.attrs["truncated_sides"] == ()


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10", None])
def test_bad_integer_parameters_are_refused(cross, tokenizer, bad):
    from stylo.explain import explain_cross, explain_siamese

    with pytest.raises(ValueError, match="n_steps"):
        explain_cross(cross, tokenizer, TEXT_A, TEXT_B, n_steps=bad)
    with pytest.raises(ValueError, match="max_tokens"):
        explain_siamese(cross.bert, tokenizer, TEXT_A, TEXT_B, max_tokens=bad)


def test_inputs_longer_than_the_model_takes_are_refused(cross, tokenizer):
    from stylo.explain import explain_cross

    long = " ".join(["cat"] * 70)  # 2 x 70 + 3 tokens; the tiny model has 128 positions
    with pytest.raises(ValueError, match="at most 128"):
        explain_cross(cross, tokenizer, long, long, max_tokens=70, n_steps=2)


def test_target_must_be_a_class_of_the_model(cross, tokenizer):
    from stylo.explain import explain_cross

    for bad in (2, -1, True, 1.0):
        with pytest.raises(ValueError, match="target"):
            explain_cross(cross, tokenizer, TEXT_A, TEXT_B, target=bad)
