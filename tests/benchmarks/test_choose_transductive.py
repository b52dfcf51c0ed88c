"""The transductive study's variants: every s-normalised part switched, nothing else; and their
PAN metrics on the PAN15-en slice of ``test_real_data_verifiers.py``, pinned to the values
measured when benchmarks/README.md's figures were taken."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_or_skip

from baselines.normalization import BackgroundNormalized
from benchmarks.choose_transductive import built
from stylo.metrics.pan import evaluate_all

# Measured 2026-12-04 (seed 0), when the training pool was registered: auc, overall (pan21),
# c@1, mean score; the registered (transductive) values are in test_real_data_verifiers.py
TRAINING_POOL = {
    "naive-norm": (0.7761674718196457, 0.6933731838572766, 0.5985, 0.7108409704174966),
    "cosine-norm": (0.7856280193236715, 0.712277183922145, 0.638, 0.7634473308424545),
    "ensemble": (0.8057568438003221, 0.7498263184857318, 0.6844, 0.6706843761164621),
}


@pytest.mark.parametrize("name", sorted(TRAINING_POOL))
@pytest.mark.parametrize("transductive", [False, True])
def test_built_switches_every_normalised_part_and_nothing_else(name, transductive):
    est = built(name, transductive)
    parts = [est] if isinstance(est, BackgroundNormalized) else list(est.bases)
    normalised = [p for p in parts if isinstance(p, BackgroundNormalized)]
    assert normalised and all(p.transductive is transductive for p in normalised)
    other = built(name, not transductive)
    for a, b in zip(parts, [other] if isinstance(other, BackgroundNormalized) else other.bases):
        params = {k: v for k, v in a.get_params(deep=False).items() if k != "transductive"}
        assert type(a) is type(b) and repr(params) == repr(
            {k: v for k, v in b.get_params(deep=False).items() if k != "transductive"}
        )


@pytest.mark.real_data
@pytest.mark.parametrize("name", sorted(TRAINING_POOL))
def test_training_pool_variant_on_the_pan15_slice(name):
    train = load_or_skip("pan15_av_en", split="train")
    test = load_or_skip("pan15_av_en", split="test")
    test = test.subset(np.arange(0, len(test), 5))
    scores = built(name, False).fit(train).score_problems(test)
    m = evaluate_all(test.labels, scores, version="pan21")
    got = (m["auc"], m["overall"], m["c@1"], float(np.mean(scores)))
    assert got == pytest.approx(TRAINING_POOL[name], abs=1e-9), (name, got)
