"""Protocol.evaluate: tidy tables through stylo.metrics, an oracle that must score perfectly,
and AIDBench Table 3's random-guess row reproduced empirically on mlpapers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from attribution_synth import cdaa_corpus

from baselines.random_guess import RandomGuess
from stylo.corpus import Corpus, PairSet
from stylo.metrics import ranking
from stylo.protocols import PROTOCOLS, ProtocolError
from stylo.protocols.aidbench import OneToOne, OneToTwo
from stylo.protocols.aidbench_one_to_many import OneToMany
from stylo.protocols.base import RankingQuery, Task, Triplets, readable_texts, task_texts
from stylo.verifier import Verifier

COLUMNS = ["metric", "value", "n", "group"]


class AuthorOracle(Verifier):
    """Reads the author from the first token of each text: a perfect verifier for the
    synthetic corpora below, so every metric has a known value."""

    requires_fit = False

    def _score_impl(self, texts_a, texts_b):
        return np.array(
            [float(a.split()[0] == b.split()[0]) for a, b in zip(texts_a, texts_b, strict=True)]
        )


class NeedsData(AuthorOracle):
    requires_fit = True


def corpus(n_authors=8, n_topics=4, per_cell=4, seed=0) -> Corpus:
    rng = np.random.default_rng(seed)
    rows = [
        (f"a{a} t{t} {k} {rng.integers(1 << 40)}", f"a{a}", f"t{t}")
        for a in range(n_authors)
        for t in range(n_topics)
        for k in range(per_cell)
    ]
    texts, authors, topics = zip(*rows, strict=True)
    return Corpus.from_lists(texts, authors, topics=topics, name="synthetic")


def values(table, group="all"):
    assert list(table.columns) == COLUMNS
    t = table[table["group"] == group]
    return dict(zip(t["metric"], t["value"], strict=True))


def test_one_to_one_oracle_and_random():
    c = corpus()
    task = OneToOne().sample(c, {"mix": "150/50", "cross_topic": True}, seed=0)
    v = values(PROTOCOLS["aidbench_one_to_one"].evaluate(AuthorOracle(), task))
    assert set(v) == {
        "auc",
        "c@1",
        "F1",
        "f_05_u",
        "brier",
        "overall",
        "precision",
        "recall",
        "accuracy",
    }
    assert v["auc"] == v["accuracy"] == v["precision"] == v["recall"] == 1.0
    table = OneToOne().evaluate(RandomGuess(random_state=1), task)
    r = values(table)
    assert 0.3 < r["auc"] < 0.7 and 0 <= r["accuracy"] <= 1
    scores = table.attrs["scores"]  # per-item scores for ROC curves
    assert list(scores["id"]) == list(task.test.ids)
    assert (scores["y_true"].to_numpy() == task.test.labels).all()
    assert scores["y_score"].between(0, 1).all()


def test_a_non_answer_is_read_as_different_by_the_decision_metrics():
    """0.5 decides "different": right on a different-author pair, wrong on a same-author one;
    c@1 credits it at the answered accuracy instead."""
    from stylo.protocols._scoring import verification_table

    v = values(verification_table([True, False, True, False], [0.5, 0.5, 0.9, 0.1]))
    assert v["accuracy"] == 0.75
    assert v["recall"] == 0.5 and v["precision"] == 1.0
    assert v["c@1"] == (2 + 2 * 2 / 4) / 4


def test_one_to_two_oracle():
    task = OneToTwo().sample(corpus(), {"cross_topic": True}, seed=0)
    table = OneToTwo().evaluate(AuthorOracle(), task)
    # the oracle names the first slot exactly where the truth is
    first = 1 - task.info["answer_in_slot_b"] / 200
    assert values(table) == {"accuracy": 1.0, "tie_rate": 0.0, "first_slot_rate": first}
    assert 0.4 < first < 0.6
    assert table["n"].tolist() == [200, 200, 200]


class _Undecided(Verifier):
    """Scores every pair alike: a method that never prefers one candidate."""

    requires_fit = False

    def _score_impl(self, a, b):
        return np.full(len(a), 0.5)


def test_one_to_two_ties_count_half_and_are_reported():
    task = OneToTwo(n_triplets=40).sample(corpus(), {"cross_topic": False}, seed=1)
    table = OneToTwo().evaluate(_Undecided(), task)
    # slot 0 is the truth in about half the triplets; a tie must not be read as "slot 0"
    assert values(table) == {"accuracy": 0.5, "tie_rate": 1.0, "first_slot_rate": 0.0}


class _FirstSlot(Verifier):
    """Prefers whichever candidate comes first: a pure position bias."""

    requires_fit = False

    def _rank_many_impl(self, queries, candidate_lists):
        return [np.linspace(1.0, 0.5, len(c)) for c in candidate_lists]


def test_position_bias_is_measured_not_hidden_in_accuracy():
    task = OneToTwo(n_triplets=40).sample(corpus(), {"cross_topic": False}, seed=1)
    r = values(OneToTwo().evaluate(_FirstSlot(), task))
    assert r["first_slot_rate"] == 1.0 and r["tie_rate"] == 0.0
    assert r["accuracy"] == 1 - task.info["answer_in_slot_b"] / 40
    c = corpus(n_authors=6, n_topics=3, per_cell=4)
    many = OneToMany()
    r = values(many.evaluate(_FirstSlot(), many.sample(c, {"n_authors": 5}, seed=0)))
    assert r["first_slot_top"] == 1.0
    assert (
        values(many.evaluate(AuthorOracle(), many.sample(c, {"n_authors": 5}, seed=0)))[
            "first_slot_top"
        ]
        < 0.5
    )


def test_one_to_many_oracle_groups_and_rag():
    c = corpus(n_authors=6, n_topics=3, per_cell=4)
    p = OneToMany()
    table = p.evaluate(AuthorOracle(), p.sample(c, {"n_authors": 5}, seed=0))
    assert set(table["group"]) == {"0", "1", "2", "all"}
    assert table.loc[table["group"] == "all", "n"].iloc[0] == 30
    v = values(table)
    assert v["rank@1"] == v["mrr"] == v["precision@5"] == 1.0
    # RAG: a random first stage keeps 10 of 49; the oracle then finds a relevant text exactly
    # when the filter kept one, so rank@1 equals the filter's recall
    rag = OneToMany(first_stage=RandomGuess(random_state=3), n_groups=20)
    task = rag.sample(c, {"pool_size": 50, "keep": 10}, seed=1)
    v = values(rag.evaluate(AuthorOracle(), task))
    assert 0 < v["filter_recall"] < 1
    assert v["rank@1"] == pytest.approx(v["filter_recall"])
    # without a first stage the oracle filters for itself and never loses a relevant text
    assert values(OneToMany().evaluate(AuthorOracle(), task))["filter_recall"] == 1.0


def test_methods_needing_data_get_a_clear_error_when_there_is_none():
    c = Corpus.from_lists([f"a{i // 3} x{i}" for i in range(9)], [f"a{i // 3}" for i in range(9)])
    task = OneToOne().sample(c, {"mix": "9/27"}, seed=0)
    assert task.train is None
    with pytest.raises(ProtocolError, match="needs training data"):
        OneToOne().evaluate(NeedsData(), task)


def test_evaluate_clones_the_method():
    method = NeedsData()
    p = OneToOne(train_policy="disjoint_texts")
    task = p.sample(corpus(n_authors=12), {"mix": "50/150", "cross_topic": False}, 0)
    assert values(p.evaluate(method, task))["auc"] == 1.0
    assert not hasattr(method, "is_fitted_")


def test_rethinking_evaluate_oracle():
    p = PROTOCOLS["rethinking_av"]
    task = p.sample(corpus(n_authors=12, n_topics=6), {"split": "open_all"}, seed=0)
    v = values(p.evaluate(AuthorOracle(), task))
    assert v["auc"] == 1.0 and v["c@1"] == 1.0


@pytest.mark.real_data
def test_pan_verification_real(dataset):
    data = dataset("pan15_av_en")
    p = PROTOCOLS["pan_verification"]
    assert p.settings(data) == [{"train": "train", "test": "test"}]
    task = p.sample(data, p.settings(data)[0], seed=0)
    assert (task.info["n_train"], task.info["n_test"], task.info["test_positive"]) == (
        100,
        500,
        250,
    )
    v = values(p.evaluate(RandomGuess(), task))
    assert v["auc*c@1"] == pytest.approx(v["auc"] * v["c@1"])
    assert 0.4 < v["auc"] < 0.6


# -- AIDBench Table 3, random guess --------------------------------------------------------
TABLE3 = {2: (0.474, 0.876, 0.978), 5: (0.184, 0.464, 0.655)}


@pytest.mark.real_data
@pytest.mark.parametrize("n_authors", [2, 5], ids=["random-2-authors", "random-5-authors"])
def test_random_guess_reproduces_aidbench_table3(dataset, n_authors):
    """2 x 10 texts: 9 relevant of 19 candidates; 5 x 10: 9 of 49. The closed form
    1 - C(n - 9, k) / C(n, k) gives the paper's numbers to the printed 0.1 %, and RandomGuess
    through the protocol lands within 4 standard errors of them."""
    papers = dataset("mlpapers")
    n_queries = 1000
    p = OneToMany(n_groups=n_queries, n_repeats=1)
    task = p.sample(papers, {"n_authors": n_authors, "first_author": True}, seed=2024)
    assert task.info["n_candidates"] == 10 * n_authors - 1
    assert task.info["relevant_min"] == task.info["relevant_max"] == 9
    v = values(p.evaluate(RandomGuess(random_state=7), task))
    n_cand = 10 * n_authors - 1
    for k, paper in zip((1, 3, 5), TABLE3[n_authors], strict=True):
        exact = ranking.expected_rank_at_k_random(n_cand, 9, k)
        assert exact == pytest.approx(1 - math.comb(n_cand - 9, k) / math.comb(n_cand, k))
        assert abs(exact - paper) < 0.0005 + 1e-12
        se = math.sqrt(exact * (1 - exact) / n_queries)
        assert abs(v[f"rank@{k}"] - paper) < 4 * se + 0.0005, (k, v[f"rank@{k}"], paper)


# -- cross-domain attribution (PAN18/19 layout) ----------------------------------------------
@pytest.mark.parametrize("open_set", [False, True])
def test_cdaa_oracle_is_perfect(open_set):
    p = PROTOCOLS["cdaa_attribution"]
    data = cdaa_corpus(open_set)
    assert p.settings(data) == [{"split": None}]
    task = p.sample(data, {"split": None}, seed=0)
    assert task.info["open_set"] is open_set and task.info["problems"] == 2
    assert set(task.train.frame["role"]) == {"known"}
    table = p.evaluate(AuthorOracle(), task)
    assert set(table["group"]) == {"p1", "p2", "all"}
    v = values(table)
    assert v["macro_f1"] == v["accuracy"] == 1.0
    assert ("accuracy_no_reject" in v) is open_set
    assert v.get("unknown_share") == (0.25 if open_set else None)  # one <UNK> text in four
    r = values(p.evaluate(RandomGuess(), task))
    assert r["accuracy"] < 1.0


def test_cdaa_runs_an_attribution_native_method():
    """A method that only attributes (``AttributionOnly`` for pairs) runs through the
    protocol, whose open-set answer is "<UNK>" when every candidate scores below 0.5."""
    from baselines.svm import SVMOpenSetAttributor

    p = PROTOCOLS["cdaa_attribution"]
    task = p.sample(cdaa_corpus(open_set=True), {"split": None}, seed=0)
    rejecting = values(p.evaluate(SVMOpenSetAttributor(reject_threshold=0.99), task))
    # everything answered <UNK>: right only for the one <UNK> text of each problem
    assert rejecting["accuracy"] == 0.25
    assert rejecting["unknown_share"] == 1.0
    v = values(p.evaluate(SVMOpenSetAttributor(reject_threshold=0.0), task))
    assert v["accuracy"] <= 0.75  # never <UNK>: the <UNK> texts are wrong
    assert v["unknown_share"] == 0.0
    # without the rejection both give the same answers: the best candidate of each text
    assert rejecting["accuracy_no_reject"] == v["accuracy_no_reject"] == v["accuracy"]
    assert rejecting["macro_f1_no_reject"] == v["macro_f1"]


def test_cdaa_truth_outside_candidates():
    p = PROTOCOLS["cdaa_attribution"]
    task = p.sample(cdaa_corpus(open_set=True, stray=True), {"split": None}, seed=0)
    assert task.info["truth_outside_candidates"] == ["p1-u0", "p2-u0"]
    assert (task.test.unknown["truth"] == "<UNK>").sum() == 4
    with pytest.raises(ProtocolError, match="candidate with no known texts"):
        p.sample(cdaa_corpus(open_set=False, stray=True), {"split": None}, seed=0)
    with pytest.raises(ProtocolError, match="needs a corpus with columns"):
        p.sample(corpus(), {"split": None}, seed=0)


def test_task_texts_reads_each_part_a_method_may_read_once():
    corpus = Corpus.from_lists(["t1", "t2", "t3"], ["a", "a", "b"])
    pairs = PairSet.from_lists([["k1", "k2"], ["t1"]], ["u1", "t2"], same=[True, False])
    triplets = Triplets(pd.DataFrame({"query": ["q"], "a": ["x"], "b": ["t3"], "answer": [0]}))
    ranking = [RankingQuery("q", "q2", ("c1", "c2"), ("y1", "t1"), np.array([True, False]), 0, 0)]
    assert readable_texts(pairs) == ["k1", "k2", "t1", "k1\n\nk2", "t1", "u1", "t2"]
    assert readable_texts(triplets) == ["q", "x", "t3"]
    assert readable_texts(ranking) == ["q2", "y1", "t1"]
    assert readable_texts(None) == [] and readable_texts(["plain", "strings"]) == []
    task = Task("p", {}, 0, corpus, triplets, val=pairs)
    assert task_texts(task) == ["t1", "t2", "t3", "q", "x", "k1", "k2", "k1\n\nk2", "u1"]
    assert task_texts(object()) == []
