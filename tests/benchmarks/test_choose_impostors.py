"""The General Impostors score study's candidates: the win rate, and the margin with the win
rate's score shifting, a Platt map or its training quantiles, and
the last with its grey zone fitted in each call or where the call's texts are from the
training texts' domain, with 100 iterations or fewer (50: the registered verifier)."""

from __future__ import annotations

import numpy as np
import pytest
from baselines_synth import synthetic_corpus, synthetic_pairs

import benchmarks.choose_impostors as study
import benchmarks.choose_transductive as transductive
from baselines.impostors import GeneralImpostors
from baselines.registry import make
from benchmarks.choose_impostors import _CANDIDATES, main


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


def test_ranking_part_fits_on_one_half_and_ranks_the_others_triplets(monkeypatch):
    corpus = synthetic_corpus(n_authors=8, per_author=4, seed=4)
    groups = corpus.by_author()
    names = sorted(groups)
    fit = corpus.subset(np.isin(corpus.authors, names[:4]))
    queries, pairs = [], []
    for k, a in enumerate(names[4:]):
        other = names[4 + (k + 1) % 4]
        queries.append(corpus.texts[groups[a][0]])
        pairs.append([corpus.texts[groups[a][1]], corpus.texts[groups[other][1]]])
    seen = []
    # the ranking part's corpora and draws (choose_transductive's) made synthetic
    monkeypatch.setattr(transductive, "_RANKING", ("toy",))
    monkeypatch.setattr(transductive, "training_part", lambda name, seed: corpus)
    monkeypatch.setattr(transductive, "author_halves", lambda train, seed: (fit, None))
    monkeypatch.setattr(transductive, "held_triplets", lambda name, held, seed: (queries, pairs))
    monkeypatch.setattr(study, "_CANDIDATES", {"small": lambda: seen.append(1) or small()})
    table = study.study({"ranking"}, [0, 1], ["small"])
    assert list(table["part"]) == ["ranking", "ranking"] and list(table["seed"]) == [0, 1]
    assert (table["n"] == 4).all() and len(seen) == 2
    # the same-author text comes first in each pair: the synthetic authors are told apart
    assert (table["accuracy"] >= 0.75).all()


def small():
    return GeneralImpostors(n_iter=20, n_candidates=8, n_impostors=4, max_features=2000)


def test_unknown_parts_and_candidates_are_refused_in_one_line(capsys):
    for argv, said in ((["--parts", "ranks"], "--parts takes"), (["--candidates", "x"], "x")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2 and said in capsys.readouterr().err
