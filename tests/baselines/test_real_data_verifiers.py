"""Every registered verifier on a fixed PAN15-en slice: its PAN metrics pinned to the values
measured when this test was written, so a method that breaks on real text fails CI.

The slice: fit on the 100 official training problems, score every fifth of the 500 official
test problems (100 problems, 54 same-author), PAN 2021 metrics. All these methods are
deterministic here (fitted on a PairSet, nothing is drawn) except ``impostors``, which samples
features and impostors; see its tolerance. The LLM and embedding verifiers are pinned in
``test_real_data_rankers.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_or_skip

from baselines.registry import make
from stylo.metrics.pan import evaluate_all

pytestmark = pytest.mark.real_data

# Measured 2026-12-01 at commit 306e97f with exactly this computation (seed 0):
# auc, overall (pan21), c@1, mean score. The methods with a max_features cut of TF-IDF
# n-grams (naive, logreg-pair, the -norm ones, ensemble) re-measured 2026-12-02 after its ties
# went to the first n-gram by name (they had followed NumPy's unstable sort, which orders
# equal counts differently on AVX-512 and AVX2 machines). The zstd measures (ncd, cdm,
# zstd-xent, their -cal variants and the ensemble's cdm base) re-measured 2026-12-05 when their
# zstd levels became the ones chosen on training data (9 before; baselines.compression).
REFERENCE = {
    "random": (0.6090982286634461, 0.5971152091655834, 0.55, 0.4624942668551143),
    "naive": (0.7387278582930756, 0.6890977975753959, 0.5916, 0.6028730143395873),
    "ppm": (0.7455716586151369, 0.6985380106806447, 0.63, 0.5502127955521012),
    "ncd": (0.5869565217391305, 0.5313552166444154, 0.5252, 0.34429089749707775),
    "cdm": (0.6904186795491143, 0.6142076446538945, 0.5711999999999999, 0.39148724782844224),
    "zstd-xent": (0.6473429951690821, 0.6581041892983707, 0.58, 0.6146969608349371),
    "ppm-cal": (0.7473832528180354, 0.7062108652525707, 0.6496, 0.5387711828518191),
    "ncd-cal": (0.5881642512077294, 0.5492646936685704, 0.5311, 0.47921261806383547),
    "cdm-cal": (0.6934380032206119, 0.6443894065459658, 0.605, 0.47437221267669555),
    "zstd-xent-cal": (0.645330112721417, 0.6537582241204165, 0.5537, 0.5805513015938695),
    "delta": (0.8063607085346216, 0.7465770810611521, 0.7, 0.5213502493395391),
    "logreg-pair": (0.6231884057971014, 0.6522224645988765, 0.62, 0.49651557251664485),
    # seeded draws (folds, reference sentences), reproducible to the bit for seed 0
    "lambdag": (0.8115942028985508, 0.7590973112594883, 0.6897, 0.5705057051934418),
    # the s-norm wrappers and the stacked ensemble, re-measured 2026-12-05 when they began to
    # normalise against the scored texts (transductive), each pair's two texts left out; the
    # wrappers again 2026-12-07 when they came to s-normalise three times in a row (AUC 0.777
    # and 0.796, overall 0.702 and 0.746 before)
    "naive-norm": (0.84158615136876, 0.8091834982292054, 0.7688, 0.5600887340529399),
    "cosine-norm": (0.8770128824476651, 0.8269461039547974, 0.795, 0.5350277889078865),
    # ``ensemble`` re-measured 2026-12-07 when LambdaG became its fifth base, and again that day
    # when its meta-model's weights were held non-negative (AUC 0.8295 before), and again when
    # its cosine came to be s-normalised three times in a row (AUC 0.814, overall 0.775 before),
    # and 2026-12-07 again when the word-masked cosine became its sixth base (AUC 0.877,
    # overall 0.824 before)
    "ensemble": (0.8713768115942029, 0.8146758203958484, 0.7752, 0.47606524301973285),
}
# ``random`` is a keyed hash of the texts and the seed, so its seed-0 value is exact too.
DETERMINISTIC_TOL = 1e-9

# General Impostors with its registered defaults (50 iterations, k=100, m=10; verification
# by the margin through its training quantiles), seed 0. Measured 2026-12-05 when the margin
# replaced the win rate: seeds 0-5 on this slice gave AUC 0.868-0.879 and overall 0.790-0.829
# (the win rate: 0.765-0.782 and 0.707-0.767), so seed 0 is within 0.007 AUC and 0.036 overall
# of every other seed. The margins (0.02 AUC, 0.065 overall) thus let a change of the random
# stream pass while a real loss (e.g. the 0.05-0.09 AUC of a broken similarity, or going back
# to the win rate) fails. Seed 0 itself is reproducible to the bit. Re-measured 2026-12-06 when
# the grey zone began to be fitted in the call for texts of the training texts' domain: seeds
# 0-5 AUC 0.870-0.878, overall 0.837-0.848 (the zone moves overall, not the ordering); and
# when it went from 100 to 50 iterations: seeds 0-5 AUC 0.866-0.875, overall 0.830-0.844.
IMPOSTORS = {"auc": (0.8724, 0.02), "overall": (0.8410, 0.065)}


@pytest.fixture(scope="module")
def pan15():
    train = load_or_skip("pan15_av_en", split="train")
    test = load_or_skip("pan15_av_en", split="test")
    return train, test.subset(np.arange(0, len(test), 5))


def _metrics(name, pan15):
    train, test = pan15
    scores = make(name, seed=0).fit(train).score_problems(test)
    assert scores.shape == (len(test),) and np.all((scores >= 0) & (scores <= 1))
    return evaluate_all(test.labels, scores, version="pan21"), scores


@pytest.mark.parametrize("name", sorted(REFERENCE), ids=sorted(REFERENCE))
def test_verifier_on_pan15_slice(name, pan15):
    m, scores = _metrics(name, pan15)
    got = (m["auc"], m["overall"], m["c@1"], float(np.mean(scores)))
    assert got == pytest.approx(REFERENCE[name], abs=DETERMINISTIC_TOL), (name, got)


@pytest.mark.parametrize("name", ["impostors"], ids=["impostors"])
def test_impostors_defaults_on_pan15_slice(name, pan15):
    m, _ = _metrics(name, pan15)
    for key, (ref, tol) in IMPOSTORS.items():
        assert abs(m[key] - ref) <= tol, (key, m[key], ref, tol)
