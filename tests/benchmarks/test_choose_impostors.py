"""The General Impostors score study's candidates: the win rate, and the margin with the win
rate's score shifting, a Platt map or its training quantiles, and
the last with its grey zone fitted in each call or where the call's texts are from the
training texts' domain, with 100 iterations or fewer (50: the registered verifier)."""

from __future__ import annotations

import numpy as np
from baselines_synth import synthetic_corpus, synthetic_pairs

from baselines.impostors import GeneralImpostors
from baselines.registry import make
from benchmarks.choose_impostors import _CANDIDATES


def test_candidates_differ_only_in_the_verification_score():
    train, test = synthetic_corpus(seed=1), synthetic_pairs(n_pairs=30, seed=2)
    names = ("wins", "margin", "margin-platt", "margin-quantile")
    wins, margin, platt, quantile = (_CANDIDATES[c]().fit(train) for c in names)
    assert repr(_CANDIDATES["auto-iter-50"]().get_params()) == repr(
        make("impostors", 0).get_params()
    )
    assert _CANDIDATES["margin-quantile-auto"]().get_params() == {
        **make("impostors", 0).get_params(),
        "n_iter": 100,
    }
    want = GeneralImpostors(100).fit(train)._raw_scores(test.known, test.unknown, margin=True)
    call, auto = (_CANDIDATES[f"margin-quantile-{c}"]().fit(train) for c in ("call", "auto"))
    assert call.get_params() == {**quantile.get_params(), "shift_pool": "call"}
    assert auto.get_params() == {**quantile.get_params(), "shift_pool": "auto"}
    for est in (margin, platt, quantile, call, auto):
        np.testing.assert_array_equal(est.raw_scores(test), want)
        # a monotone map of the margin
        s = est.score_problems(test)
        assert np.all(np.diff(s[np.argsort(want, kind="stable")]) >= -1e-12)
    assert not np.array_equal(wins.raw_scores(test), want)
    assert platt.calibrator_.platt_ is not None and margin.calibrator_.platt_ is None
    assert margin.calibrator_.quantiles_ is None and quantile.calibrator_.quantiles_ is not None
