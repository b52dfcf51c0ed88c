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

# Measured 2026-12-05 (seed 0): auc, overall (pan21), c@1, mean score; the registered methods'
# own values (training pool) are in test_real_data_verifiers.py
TRANSDUCTIVE = {
    "naive-norm": (0.7769726247987118, 0.7018851424360821, 0.6077, 0.6011286239271004),
    "cosine-norm": (0.7960950080515298, 0.7461394839878845, 0.6696, 0.6052093763200153),
    "ensemble": (0.8015297906602254, 0.7789961386112951, 0.7182, 0.5163806915897086),
}


@pytest.mark.parametrize("name", sorted(TRANSDUCTIVE))
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
@pytest.mark.parametrize("name", sorted(TRANSDUCTIVE))
def test_transductive_variant_on_the_pan15_slice(name):
    train = load_or_skip("pan15_av_en", split="train")
    test = load_or_skip("pan15_av_en", split="test")
    test = test.subset(np.arange(0, len(test), 5))
    scores = built(name, True).fit(train).score_problems(test)
    m = evaluate_all(test.labels, scores, version="pan21")
    got = (m["auc"], m["overall"], m["c@1"], float(np.mean(scores)))
    assert got == pytest.approx(TRANSDUCTIVE[name], abs=1e-9), (name, got)
