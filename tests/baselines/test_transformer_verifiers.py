"""What bert-pair and siamese-pair share through their base (baselines/_transformer.py), on a
tiny randomly initialised BERT (no download): seeding and explanations."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from sklearn.base import clone
from tiny_bert import STYLE_A, STYLE_B, TINY_PARAMS, easy_pairs, tiny_model_path

# skipped without the extra, a failure under CI (conftest.py)
pytestmark = pytest.mark.extra("neural")

#: each model, and the epochs that train it far enough for its scores to differ
MODELS = {
    "bert-pair": ("baselines.bert_pair", "BertPair", 20),
    "siamese-pair": ("baselines.siamese_pair", "SiamesePair", 5),
}


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return tiny_model_path(tmp_path_factory)


def make(name, path, **params):
    module, cls, _ = MODELS[name]
    return getattr(importlib.import_module(module), cls)(
        model_path=path, **{**TINY_PARAMS, **params}
    )


@pytest.fixture(scope="module", params=list(MODELS))
def fitted(request, path):
    return make(request.param, path, epochs=MODELS[request.param][2]).fit(
        easy_pairs(40, n_words=40)
    )


@pytest.mark.parametrize("name", list(MODELS))
def test_same_seed_same_scores_other_seed_other_scores(name, path):
    train, test = easy_pairs(16, seed=1), easy_pairs(8, seed=2)
    runs = [make(name, path, random_state=s).fit(train).score_problems(test) for s in (3, 3, 4)]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.allclose(runs[0], runs[2])


def test_explain_attributes_the_pair_score(fitted):
    from sklearn.exceptions import NotFittedError

    # one chunk a text (under max_tokens), so the explained score is the verifier's score
    a, b = " ".join(STYLE_A[:6]), " ".join(STYLE_B[:5])
    frame = fitted.explain(a, b, n_steps=16)
    assert set(frame["side"]) == {"a", "b"}
    assert frame.attrs["score"] == pytest.approx(fitted.score_pairs([a], [b])[0], abs=1e-5)
    assert not frame.attrs["truncated"]
    assert np.isfinite(frame["attribution"]).all() and frame["attribution"].abs().sum() > 0
    with pytest.raises(NotFittedError):
        clone(fitted).explain(a, b)
