"""bert-pair on a tiny randomly initialised BERT (no download): special tokens, chunk-pair
averaging, determinism, entity masking of its inputs, learning an easy task, the contract."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import roc_auc_score
from tiny_bert import STYLE_A, STYLE_B, TINY_PARAMS, easy_pairs, tiny_model_path

from stylo.progress import listening

# skipped without the extra, a failure under CI (conftest.py)
pytestmark = pytest.mark.extra("neural")


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return tiny_model_path(tmp_path_factory)


def bert(path, **params):
    from baselines.bert_pair import BertPair

    return BertPair(model_path=path, **{**TINY_PARAMS, **params})


@pytest.fixture(scope="module")
def fitted(path):
    # trained enough that its chunk scores differ (a fresh head scores every input ~0.5)
    return bert(path, epochs=20).fit(easy_pairs(40, n_words=40))


def test_special_tokens_are_read_off_the_tokenizer(fitted):
    tok = fitted.tokenizer_
    cls, sep = tok.cls_token_id, tok.sep_token_id
    assert fitted.special_.one([7, 8]) == [cls, 7, 8, sep]
    ids, types = fitted.special_.two([7, 8], [9])
    assert ids == [cls, 7, 8, sep, 9, sep] and types == [0, 0, 0, 0, 1, 1]
    # the tokenizer's own pair encoding, built from text
    a, b = (tok(t, add_special_tokens=False)["input_ids"] for t in ("cat dog", "mat"))
    expected = tok("cat dog", "mat")
    assert fitted.special_.two(a, b) == (expected["input_ids"], expected["token_type_ids"])


def test_prediction_averages_every_chunk_pair(fitted):
    # 16 tokens a chunk: a has two chunks, b one
    a0, a1 = " ".join(STYLE_A + STYLE_A[:6]), " ".join(STYLE_B + STYLE_B[:6])
    b = " ".join(STYLE_A[:4])
    whole, first, second = fitted.score_pairs([f"{a0} {a1}", a0, a1], [b, b, b])
    assert abs(first - second) > 1e-4  # so a score of the first chunk only would fail below
    assert whole == pytest.approx((first + second) / 2, abs=1e-5)
    # both sides: 2 x 2 chunk pairs
    four = fitted.score_pairs([f"{a0} {a1}"], [f"{a1} {a0}"])[0]
    parts = fitted.score_pairs([a0, a0, a1, a1], [a1, a0, a1, a0])
    assert four == pytest.approx(parts.mean(), abs=1e-5)


def test_chunks_over_the_cap_are_a_seeded_choice(path, fitted):
    long = " ".join(STYLE_A * 9)  # six chunks
    capped = clone(fitted).set_params(max_chunks=2).fit(easy_pairs(4))
    kept = capped._kept_chunks(long)
    assert len(kept) == 2 and kept == capped._kept_chunks(long)
    assert len(fitted._kept_chunks(long)) == 4


def test_training_moves_scores_toward_the_labels(path):
    test = easy_pairs(40, seed=5, n_words=40)
    untrained = bert(path, epochs=1, learning_rate=1e-6).fit(easy_pairs(8, seed=4))
    model = bert(path, epochs=20).fit(easy_pairs(80, seed=4, n_words=40))
    s = model.score_problems(test)
    assert roc_auc_score(test.labels, s) > 0.85
    assert s[test.labels].mean() - s[~test.labels].mean() > 0.15
    # a fresh head scores every pair about alike
    assert np.ptp(untrained.score_problems(test)) < 0.01


def test_entity_masking_changes_the_model_inputs(path):
    from baselines.masked import MaskedVerifier
    from stylo.features import EntityMasker

    train = easy_pairs(8)
    a = ["the cat met John Smith on the mat in London.", "the cat ran to Paris."]
    b = ["the dog sat in Paris with John.", "a dog met Smith on the rug."]
    plain = bert(path, epochs=1).fit(train)
    masked = MaskedVerifier(bert(path, epochs=1), EntityMasker()).fit(train)
    s_plain, s_masked = plain.score_pairs(a, b), masked.score_pairs(a, b)
    vocab = plain.tokenizer_.get_vocab()
    names = {vocab[w] for w in ("john", "smith", "london", "paris")}

    def ids_seen(model, texts):
        return {t for text in texts for chunk in model._chunk_memo[text] for t in chunk}

    assert names <= ids_seen(plain, a + b)
    # the inner model saw (and was trained on) the masked texts only: placeholders, no names
    inner = masked.verifier_
    seen = set(inner._chunk_memo)
    assert not set(a + b) & seen
    masked_ids = ids_seen(inner, masked.masker_.transform(a + b))
    assert not names & masked_ids and vocab["@"] in masked_ids
    assert not np.allclose(s_plain, s_masked)


def test_empty_text_gets_no_answer_with_one_warning(fitted):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = fitted.score_pairs(["", "cat dog", "  "], ["cat", "", "dog"])
    np.testing.assert_array_equal(s, [0.5, 0.5, 0.5])
    assert len(caught) == 1 and "3 pair(s) with an empty text" in str(caught[0].message)


def test_every_protocol_call_runs(fitted):
    test = easy_pairs(6, seed=9)
    s = fitted.score_problems(test)
    assert s.shape == (6,) and ((s >= 0) & (s <= 1)).all()
    ranked = fitted.rank_many(test.unknown[:2], [test.texts_a()[:3], test.texts_a()[3:]])
    assert [len(r) for r in ranked] == [3, 3]
    np.testing.assert_allclose(
        fitted.rank(test.unknown[0], test.texts_a()[:3]), ranked[0], atol=1e-6
    )
    assert fitted.choose(test.unknown[0], test.texts_a()[0], test.texts_a()[1]) in (0, 1)
    att = fitted.attribute([test.texts_a()[:2], test.texts_a()[2:4]], test.unknown[:3])
    assert att.shape == (3, 2)


def test_progress_reports_epochs(path):
    seen = []
    with listening(lambda stage, done, total: seen.append(stage), every=0.0):
        bert(path, epochs=2, batch_size=4).fit(easy_pairs(8))
    assert {"epoch 1/2 batches", "epoch 2/2 batches"} <= set(seen)


def test_sklearn_contract_and_parameter_checks(path):
    model = bert(path, max_chunks=3)
    copy = clone(model)
    assert copy.get_params() == model.get_params() and not hasattr(copy, "model_")
    assert copy.set_params(random_state=7).random_state == 7 and model.random_state == 0
    for bad in ({"max_tokens": 0}, {"epochs": 1.5}, {"learning_rate": 0}, {"warmup": 1.0}):
        with pytest.raises(ValueError):
            bert(path, **bad).fit(easy_pairs(4))
    # two 31-token chunks and three specials are longer than the tiny model's 64 positions
    bert(path, max_tokens=30).fit(easy_pairs(4))
    with pytest.raises(ValueError, match="takes at most 64"):
        bert(path, max_tokens=31).fit(easy_pairs(4))
