"""Figures benchmarks/README.md publishes, recomputed in full: the PAN15-en row of the PAN
verification table (all 500 test problems, PAN 2021 metrics) and the Federalist attributions of
every Delta variant. The pan-code columns and PAN's attribution baselines are in
``test_parity_pancode.py``; AIDBench Table 3 in ``test_protocols_evaluate.py``.
"""

from __future__ import annotations

import pytest
from conftest import load_or_skip

from baselines.registry import make
from stylo.metrics.pan import evaluate_all

pytestmark = pytest.mark.real_data

# the README prints 3 decimals: a figure is reproduced when it rounds to the printed one
PRINTED = 0.0005 + 1e-12

# benchmarks/README.md, PAN verification table, row "PAN15 en (500)": overall, AUC x c@1 (naive's
# row is the pan-code cngdist parity test). Measured at commit 306e97f: ppm 0.69021 / 0.46592;
# delta (its paragraph under the AIDBench table: AUC 0.795, c@1 0.662, overall 0.718, AUC x c@1
# 0.526) 0.794624, 0.662, 0.717500, 0.526041. The zstd measures at their chosen levels
# (2026-12-05): ncd 0.51832 / 0.30957, cdm 0.58231 / 0.36441, zstd-xent 0.65459 / 0.38074.
PAN15_ROW = {
    "ppm": (0.690, 0.466),
    "ncd": (0.518, 0.310),
    "cdm": (0.582, 0.364),
    "zstd-xent": (0.655, 0.381),
    "delta": (0.718, 0.526),
}
# impostors draws features and impostors: seeds 0-5 gave overall 0.8081-0.8212 and AUC x c@1
# 0.6698-0.6912 on the full test split (50 iterations, the grey zone fitted in the call where
# the call's texts are of the training texts' domain, 2026-12-06; with 100 iterations
# 0.8093-0.8162 and 0.6642-0.6835, with the fit-time zone 0.7385-0.7835 and 0.6096-0.6586, with
# the win rate 0.7244-0.7331 and 0.5380-0.5532), so the README's .817 / .684 (seed 0's run) is
# checked to within the widest of those spreads (0.045 each).
IMPOSTORS = ((0.817, 0.045), (0.684, 0.045))


@pytest.fixture(scope="module")
def pan15():
    return (load_or_skip("pan15_av_en", split="train"), load_or_skip("pan15_av_en", split="test"))


def _row(name, pan15):
    train, test = pan15
    m = evaluate_all(
        test.labels, make(name, seed=0).fit(train).score_problems(test), version="pan21"
    )
    return m, (m["overall"], m["auc"] * m["c@1"])


@pytest.mark.parametrize("name", sorted(PAN15_ROW), ids=sorted(PAN15_ROW))
def test_pan15_row_of_the_readme(name, pan15):
    m, got = _row(name, pan15)
    assert got == pytest.approx(PAN15_ROW[name], abs=PRINTED), got
    if name == "delta":
        assert (m["auc"], m["c@1"]) == pytest.approx((0.795, 0.662), abs=PRINTED)


@pytest.mark.parametrize("name", ["impostors"], ids=["impostors"])
def test_pan15_row_of_the_readme_impostors(name, pan15):
    _, got = _row(name, pan15)
    for value, (printed, spread) in zip(got, IMPOSTORS, strict=True):
        assert abs(value - printed) <= spread, (got, IMPOSTORS)


# benchmarks/README.md: Burrows, Argamon and cosine Delta give all 12 disputed essays to Madison;
# Eder's Delta gives 11 (No. 55 to Hamilton). The margins (best minus second-best score, summed over
# the 12 essays, measured at commit 306e97f) pin the numbers behind the answers: the closest calls
# are Burrows' (0.00048, No. 55 too) and Eder's.
FEDERALIST_MARGIN_SUMS = {
    "argamon": 8.572784694887698,
    "burrows": 0.41276667104267484,
    "cosine": 2.449671082369721,
    "eder": 0.32727257696734624,
}


@pytest.fixture(scope="module")
def federalist():
    """``python -m experiments.federalist``'s table; every Delta variant in one call."""
    from experiments.federalist import attribute_disputed

    load_or_skip("federalist")
    return attribute_disputed()


@pytest.mark.parametrize(
    "delta",
    sorted(FEDERALIST_MARGIN_SUMS),
    ids=[f"delta-{d}-federalist" for d in sorted(FEDERALIST_MARGIN_SUMS)],
)
def test_federalist_attributions_of_every_delta(delta, federalist):
    rows = federalist[federalist["delta"] == delta]
    assert sorted(rows["essay"]) == [49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 62, 63]
    expected = {e: "Hamilton" if delta == "eder" and e == 55 else "Madison" for e in rows["essay"]}
    assert dict(zip(rows["essay"], rows["predicted"])) == expected
    assert rows["margin"].sum() == pytest.approx(FEDERALIST_MARGIN_SUMS[delta], abs=1e-9)
