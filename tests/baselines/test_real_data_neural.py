"""bert-pair and siamese-pair on a fixed PAN15-en slice through the real packaged
all-MiniLM-L6-v2: PAN metrics pinned to the values measured when this test was written.

The slice: fit on the first 40 official training problems, score every 25th of the 500
official test problems (20 problems). As registered, each method fine-tunes on 400 pairs for
one or two epochs, minutes on a shared 2-core machine; here one epoch over the 40 pairs with
32-token chunks (at most 2 a text) exercises the same path in seconds; the registered sizes
are checked below.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_or_skip

from baselines.registry import make
from stylo.metrics.pan import evaluate_all

pytestmark = [pytest.mark.real_data, pytest.mark.extra("neural")]

SLICE = {"max_tokens": 32, "max_chunks": 2, "epochs": 1, "n_train_pairs": 40}
REGISTERED = {
    "bert-pair": {"max_tokens": 32, "max_chunks": 2, "epochs": 2, "n_train_pairs": 400},
    "siamese-pair": {"max_tokens": 32, "max_chunks": 4, "epochs": 1, "n_train_pairs": 400},
}
# Measured 2026-12-02 (bert-pair at its chosen learning rate, 5e-5), twice in separate
# processes, equal to the bit: auc, overall (pan21), c@1, mean score (seed 0). 20 problems (13
# same-author) and 40 pairs of one epoch pin the path, not the methods' quality (the grid's
# rows measure that).
REFERENCE = {
    "bert-pair": (0.43956043956043955, 0.5598233605123187, 0.5, 0.4993311516940594),
    "siamese-pair": (0.15384615384615385, 0.5840352237044821, 0.6, 0.6031427009734008),
}
# float32 model outputs; 1e-6 absorbs a different reduction order (thread count, BLAS build),
# while any change of model, chunking, head or training moves them by far more
TOL = 1e-6


@pytest.fixture(scope="module")
def pan15():
    train = load_or_skip("pan15_av_en", split="train")
    test = load_or_skip("pan15_av_en", split="test")
    return train.subset(np.arange(40)), test.subset(np.arange(0, len(test), 25))


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_neural_verifier_on_pan15_slice(name, pan15):
    train, test = pan15
    est = make(name, seed=0)
    assert {k: est.get_params()[k] for k in REGISTERED[name]} == REGISTERED[name]
    scores = est.set_params(**SLICE).fit(train).score_problems(test)
    m = evaluate_all(test.labels, scores)
    got = (m["auc"], m["overall"], m["c@1"], float(np.mean(scores)))
    np.testing.assert_allclose(got, REFERENCE[name], rtol=0, atol=TOL)
