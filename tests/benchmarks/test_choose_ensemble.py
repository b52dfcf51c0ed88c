"""The ranking study of benchmarks/choose_ensemble weighs distinct stacks, whatever bases the
registry gives ``ensemble`` (once LambdaG was registered as its rank base, the study's "without"
candidates had silently included it), and its held-out figures."""

import numpy as np
import pandas as pd
import pytest

from baselines.registry import make
from benchmarks.choose_ensemble import (
    _candidates,
    _ranking_candidates,
    choose,
    held_one_of_k,
    held_rank_at_1,
)
from stylo.corpus import Corpus


def _names(bases) -> list[str]:
    return [type(b).__name__ for b in bases]


def test_ranking_candidates_differ_in_bases_and_meta_model():
    got = _ranking_candidates()
    registered = make("ensemble", 0)
    names = _names(registered.bases)[:-1]  # the five bases before the word-masked cosine
    assert "LambdaG" in names and registered.ranking == "meta"
    assert _names(registered.bases)[-1] == "MaskedVerifier"
    assert repr(registered) == repr(got["bases + mask0"])  # the chosen one is registered
    assert {n: _names(s.rank_bases) for n, s in got.items()} == {
        "bases": [],
        "bases + dist300": ["MaskedVerifier"],
        "bases + mask0": [],
        "bases + mask0sa": [],
        "pairwise": [],
        "pairwise without lambdag": [],
        "pairwise + dist300": ["MaskedVerifier"],
    }
    assert {n: s.ranking for n, s in got.items()} == {
        "bases": "meta",
        "bases + dist300": "meta",
        "bases + mask0": "meta",
        "bases + mask0sa": "meta",
        "pairwise": "pairwise",
        "pairwise without lambdag": "pairwise",
        "pairwise + dist300": "pairwise",
    }
    for name, stack in got.items():
        expected = [n for n in names if n != "LambdaG"] if "without" in name else names
        expected = [*expected, "MaskedVerifier"] if "mask0" in name else expected
        assert _names(stack.bases) == expected
    # the word-masked cosine: the registered cosine on text with every word masked
    for name, method in (("bases + mask0", "dv_ma"), ("bases + mask0sa", "dv_sa")):
        masked = got[name].bases[-1]
        assert masked.masker.get_params() == {"k": 0, "method": method}
        assert repr(masked.verifier) == repr(registered.bases[0])
    assert "MaskedVerifier" not in _names(got["bases"].bases)


def test_held_one_of_k_puts_the_author_first_among_other_authors():
    frame = pd.DataFrame(
        {
            "id": [str(i) for i in range(12)],
            "author": [a for a in "abcdef" for _ in range(2)],
            "text": [f"text {i}" for i in range(12)],
        }
    )
    held = Corpus(frame, name="held")
    author = dict(zip(frame["text"], frame["author"]))
    queries, candidates = held_one_of_k(held, 5, 40, seed=0)
    assert len(queries) == len(candidates) == 40
    for q, cands in zip(queries, candidates):
        assert len(cands) == 5 and q not in cands
        assert author[cands[0]] == author[q]
        assert len({author[c] for c in cands}) == 5  # four other authors, one text each
    assert (queries, candidates) == held_one_of_k(held, 5, 40, seed=0)


def test_held_rank_at_1_counts_ties_at_their_expectation():
    ranked = [np.array([0.9, 0.1, 0.2]), np.array([0.5, 0.5, 0.1]), np.array([0.2, 0.7, 0.7])]
    assert held_rank_at_1(ranked) == pytest.approx((1 + 0.5 + 0) / 3)


def test_choose_reads_the_rule_figure_only():
    table = pd.DataFrame(
        {
            "candidate": ["cheap", "dear", "cheap", "dear"],
            "figure": ["accuracy", "accuracy", "one-of-5 rank@1", "one-of-5 rank@1"],
            "auc": [0.70, 0.72, 0.90, 0.10],
            "seconds": [1.0, 2.0, 1.0, 2.0],
        }
    )
    assert choose(table) == "dear"


def test_the_registered_bases_are_the_chosen_auc_candidate():
    chosen = _candidates()["3f-small+cdm+lambdag-r5p100-sn3+mask0"]
    assert repr(chosen.bases) == repr(make("ensemble", 0).bases)
    assert chosen.n_folds == make("ensemble", 0).n_folds
