"""The General Impostors score study's candidates: the registered verifier, and the margin in
its place with the same score shifting or a Platt map."""

from __future__ import annotations

import numpy as np
from baselines_synth import synthetic_corpus, synthetic_pairs

from baselines.impostors import GeneralImpostors
from baselines.registry import make
from benchmarks.choose_impostors import _CANDIDATES


def test_candidates_differ_only_in_the_verification_score():
    train, test = synthetic_corpus(seed=1), synthetic_pairs(n_pairs=30, seed=2)
    names = ("wins", "margin", "margin-platt", "margin-quantile")
    wins, margin, platt, quantile = (_CANDIDATES[c]() for c in names)
    assert repr(wins.get_params()) == repr(make("impostors", 0).get_params())
    for est in (wins, margin, platt, quantile):
        est.fit(train)
    reference = GeneralImpostors().fit(train)
    want = reference._raw_scores(test.known, test.unknown, margin=True)
    np.testing.assert_array_equal(margin.raw_scores(test), want)
    np.testing.assert_array_equal(platt.raw_scores(test), want)
    np.testing.assert_array_equal(quantile.raw_scores(test), want)
    # the margin candidates' scores are a monotone map of the margin; the registered one's
    # are the shifted win rate
    for est in (margin, platt, quantile):
        s = est.score_problems(test)
        assert np.all(np.diff(s[np.argsort(want, kind="stable")]) >= -1e-12)
    # the training margins' quantiles spread over (0, 1): each training margin's mid-rank
    values, quantiles = quantile.quantiles_
    assert np.all(np.diff(values) > 0) and 0 < quantiles[0] < quantiles[-1] < 1
    assert np.array_equal(wins.score_problems(test), reference.score_problems(test))
    assert platt.calibrator_.platt_ is not None and margin.calibrator_.platt_ is None
