"""The attribution-only methods (``svm-attribution``, ``ensemble-attribution``) and three
verifiers that attribute (``ensemble``, ``impostors``, ``lambdag``) on a few official PAN18 and
PAN19 problems through the ``cdaa_attribution`` protocol, their macro-F1 and accuracy pinned to
the values measured when each test was written.

The problems are the smallest of each corpus, so the test stays fast: PAN18 test problems 4, 8
and 12 (5 candidates each, 75 unknown texts; closed set) and PAN19 problems 10 and 14
(9 candidates each, 84 unknown texts; open set, so also the ``*_no_reject`` metrics).
"""

from __future__ import annotations

import pytest
from conftest import load_or_skip

from baselines.registry import make
from stylo.protocols import PROTOCOLS

pytestmark = pytest.mark.real_data

SLICES = {
    "pan18_cdaa": ("test", ["problem00004", "problem00008", "problem00012"]),
    "pan19_cdaa": ("train", ["problem00010", "problem00014"]),
}
# Measured 2026-12-01 at commit 306e97f with exactly this computation (seed 0), twice, equal
# to the bit: the per-problem LinearSVC (fixed random_state) and its 5-fold calibration
# (unshuffled folds) are deterministic.
REFERENCE = {
    ("svm-attribution", "pan18_cdaa"): {
        "macro_f1": 0.6237878246690977,
        "accuracy": 0.7232456140350877,
    },
    ("svm-attribution", "pan19_cdaa"): {
        "macro_f1": 0.579059829059829,
        "accuracy": 0.7225400457665905,
        "macro_f1_no_reject": 0.5477674615832511,
        "accuracy_no_reject": 0.44279176201372994,
    },
    # measured 2026-12-04 at the commit that added the fourth view (every word masked), twice,
    # equal to the bit: LinearSVCs with a fixed random_state, the open-set margin fitted on
    # simulated problems drawn with the seed
    # PAN18 re-measured 2026-12-06 when the views' votes began to be weighed by their accuracy
    # on held-out folds of the known texts (twice, equal to the bit; PAN19's slice unchanged);
    # both again the same day when the folds were cut along the known texts' topic axis
    # (twice, equal to the bit; PAN19's answers without rejection unchanged, its margin moved)
    ("ensemble-attribution", "pan18_cdaa"): {
        "macro_f1": 0.6064599176794299,
        "accuracy": 0.6765350877192983,
    },
    ("ensemble-attribution", "pan19_cdaa"): {
        "macro_f1": 0.6687691450849346,
        "accuracy": 0.6767734553775744,
        "macro_f1_no_reject": 0.6272788452613014,
        "accuracy_no_reject": 0.4954233409610984,
        "unknown_share": 0.2866132723112128,
    },
    # verifiers attributing through `attribute`, measured 2026-12-04 when attribution stopped
    # reading their grey zone (which tied the candidates inside it at 0.5: `ensemble` and
    # `impostors` scored differently before, `lambdag` the same on these problems)
    # `ensemble` re-measured 2026-12-05 when its s-normalised base began to normalise against
    # the scored texts (a problem's candidates' texts and texts to attribute; transductive)
    # `ensemble` and `lambdag` re-measured 2026-12-06 when the PAN corpora began to name each
    # person once (labels sharing a text merged at load): their training pairs and reference
    # samples are drawn by author label, so the draws changed; the others draw nothing by label
    # `impostors` re-measured 2026-12-06 when it went from 100 to 50 iterations (PAN18's slice
    # and all but one PAN19 figure unchanged)
    # `ensemble` re-measured 2026-12-07 when LambdaG became its fifth base, and again that day
    # when its meta-model's weights were held non-negative (macro-F1 0.549 and 0.597 before),
    # and again when its cosine came to be s-normalised three times in a row (macro-F1 0.623
    # and 0.580 before; PAN19 without rejection 0.585), and again when the word-masked cosine
    # became its sixth base (macro-F1 0.620 and 0.666 before; PAN19 without rejection 0.604)
    ("ensemble", "pan18_cdaa"): {
        "macro_f1": 0.6105230831546621,
        "accuracy": 0.731578947368421,
    },
    ("ensemble", "pan19_cdaa"): {
        "macro_f1": 0.6862433862433863,
        "accuracy": 0.6636155606407322,
        "macro_f1_no_reject": 0.6147426647426647,
        "accuracy_no_reject": 0.4954233409610984,
        "unknown_share": 0.42334096109839814,
    },
    ("impostors", "pan18_cdaa"): {
        "macro_f1": 0.5001448259342997,
        "accuracy": 0.6164473684210526,
    },
    ("impostors", "pan19_cdaa"): {
        "macro_f1": 0.43267859591389,
        "accuracy": 0.4364988558352403,
        "macro_f1_no_reject": 0.4216810479968375,
        "accuracy_no_reject": 0.38386727688787187,
        "unknown_share": 0.15503432494279176,
    },
    ("lambdag", "pan18_cdaa"): {
        "macro_f1": 0.6266072532253942,
        "accuracy": 0.7173245614035088,
    },
    ("lambdag", "pan19_cdaa"): {
        "macro_f1": 0.5352372935706269,
        "accuracy": 0.44279176201372994,
        "macro_f1_no_reject": 0.5352372935706269,
        "accuracy_no_reject": 0.44279176201372994,
        "unknown_share": 0.0,
    },
}
TOL = 1e-9


@pytest.mark.parametrize(
    ("name", "corpus"), sorted(REFERENCE), ids=[f"{m}-{c}" for m, c in sorted(REFERENCE)]
)
def test_attribution_on_pan_problems(name, corpus):
    split, problems = SLICES[corpus]
    data = load_or_skip(corpus)
    protocol = PROTOCOLS["cdaa_attribution"]
    task = protocol.sample(
        data.subset(data.frame["problem"].isin(problems).to_numpy()), {"split": split}, seed=0
    )
    assert task.info["problems"] == len(problems)
    table = protocol.evaluate(make(name, seed=0), task)
    got = table[table["group"] == "all"].set_index("metric")["value"].to_dict()
    for key, ref in REFERENCE[(name, corpus)].items():
        assert got[key] == pytest.approx(ref, abs=TOL), (key, got[key], ref)
