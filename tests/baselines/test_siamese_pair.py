"""siamese-pair on a tiny randomly initialised BERT (no download): chunk-embedding averaging,
scores from the embeddings, one embedding per text when ranking, determinism, learning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import roc_auc_score
from tiny_bert import STYLE_A, STYLE_B, TINY_PARAMS, easy_pairs, tiny_model_path

pytestmark = pytest.mark.extra("neural")


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return tiny_model_path(tmp_path_factory)


def siamese(path, **params):
    from baselines.siamese_pair import SiamesePair

    return SiamesePair(model_path=path, **{**TINY_PARAMS, **params})


@pytest.fixture(scope="module")
def fitted(path):
    return siamese(path, epochs=5).fit(easy_pairs(40, n_words=40))


def test_a_text_embedding_is_the_normalised_mean_of_its_chunk_embeddings(fitted):
    import torch

    a0, a1 = " ".join(STYLE_A + STYLE_A[:6]), " ".join(STYLE_B + STYLE_B[:6])  # 16 tokens each
    tok = fitted.tokenizer_
    with torch.no_grad():
        pooled = fitted._pooled(
            fitted.model_, [tok(t, add_special_tokens=False)["input_ids"] for t in (a0, a1)]
        ).double()
    mean = pooled.mean(0).numpy()
    whole, first = fitted.embed([f"{a0} {a1}", a0])
    np.testing.assert_allclose(whole, mean / np.linalg.norm(mean), atol=1e-5)
    assert not np.allclose(whole, first, atol=1e-3)  # the first chunk alone is another vector
    np.testing.assert_allclose(np.linalg.norm(fitted.embed([a0, a1]), axis=1), 1.0, atol=1e-9)


def test_scores_are_the_shifted_cosine_in_every_protocol_call(fitted):
    test = easy_pairs(6, seed=9)
    a, b = test.texts_a(), test.unknown
    e_a, e_b = fitted.embed(a), fitted.embed(b)
    expected = (np.einsum("ij,ij->i", e_a, e_b) + 1) / 2
    np.testing.assert_allclose(fitted.score_pairs(a, b), expected, atol=1e-9)
    np.testing.assert_allclose(fitted.score_problems(test), expected, atol=1e-9)
    np.testing.assert_allclose(fitted.score_cross(a, b), (e_a @ e_b.T + 1) / 2, atol=1e-9)
    ranked = fitted.rank_many(b[:2], [a[:3], a[3:]])
    np.testing.assert_allclose(ranked[0], (e_a[:3] @ e_b[0] + 1) / 2, atol=1e-9)
    assert fitted.choose(b[0], a[0], a[1]) == int(ranked[0][1] > ranked[0][0])
    assert fitted.attribute([a[:2], a[2:4]], b[:3]).shape == (3, 2)


def test_ranking_embeds_each_text_once(path):
    model = siamese(path, epochs=1).fit(easy_pairs(8))
    pool = easy_pairs(12, seed=3).unknown
    queries = easy_pairs(5, seed=4).unknown
    encoded = []
    pooled = model._pooled
    model._pooled = lambda m, chunks: encoded.extend(chunks) or pooled(m, chunks)
    model.rank_many(queries, [pool] * len(queries))
    # 24-word texts are two chunks each: every distinct text's chunks encoded once
    assert len(encoded) == 2 * (len(pool) + len(queries))


def test_training_moves_scores_toward_the_labels(path):
    test = easy_pairs(40, seed=5, n_words=40)
    before = siamese(path, epochs=1, learning_rate=1e-6).fit(easy_pairs(8, seed=4))
    model = siamese(path, epochs=10).fit(easy_pairs(40, seed=4, n_words=40))
    s = model.score_problems(test)
    assert roc_auc_score(test.labels, s) > 0.9
    gap = s[test.labels].mean() - s[~test.labels].mean()
    s0 = before.score_problems(test)
    assert gap > 0.3 and gap > 2 * (s0[test.labels].mean() - s0[~test.labels].mean())


def test_empty_text_gets_no_answer_with_one_warning(fitted):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = fitted.score_pairs(["", "cat dog"], ["cat", ""])
    np.testing.assert_array_equal(s, [0.5, 0.5])
    assert len(caught) == 1 and "2 pair(s) with an empty text" in str(caught[0].message)


def test_sklearn_contract_and_length_check(path):
    model = siamese(path, max_chunks=2)
    copy = clone(model)
    assert copy.get_params() == model.get_params() and not hasattr(copy, "model_")
    # one chunk and two specials: 62 tokens fit the tiny model's 64 positions, 63 do not
    siamese(path, max_tokens=62).fit(easy_pairs(4))
    with pytest.raises(ValueError, match="takes at most 64"):
        siamese(path, max_tokens=63).fit(easy_pairs(4))
