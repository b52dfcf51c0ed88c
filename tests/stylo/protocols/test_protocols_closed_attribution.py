"""Closed-set attribution protocol: sizes, disjointness, topic rule, seeds, scoring."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from baselines_synth import synthetic_corpus

from baselines import registry
from stylo.corpus import Corpus
from stylo.protocols import PROTOCOLS, ProtocolError

PROTOCOL = PROTOCOLS["closed_attribution"]


def _topical(n_authors=12, per_topic=4, n_topics=4, seed=0) -> Corpus:
    base = synthetic_corpus(n_authors=n_authors, per_author=per_topic * n_topics, seed=seed)
    frame = base.frame.copy()
    frame["topic"] = [f"t{(i // per_topic) % n_topics}" for i in range(len(frame))]
    return Corpus(frame, name="topical")


def test_default_size_is_the_largest_the_corpus_allows():
    big = PROTOCOL.settings(synthetic_corpus(n_authors=12, per_author=15))
    assert [(s["authors"], s["train"], s["test"]) for s in big] == [(10, 10, 5)]
    small = PROTOCOL.settings(synthetic_corpus(n_authors=12, per_author=7))
    assert [(s["authors"], s["train"], s["test"]) for s in small] == [(10, 5, 2)]
    assert PROTOCOL.settings(synthetic_corpus(n_authors=4, per_author=7)) == []
    assert [s["cross_topic"] for s in PROTOCOL.settings(_topical())] == [False, True]


def test_no_text_is_used_twice_and_the_truth_is_a_candidate():
    corpus = synthetic_corpus(n_authors=12, per_author=45)  # room for 3 problems each
    task = PROTOCOL.sample(corpus, {"authors": 10, "train": 10, "test": 5}, seed=3)
    unknown = task.test.unknown
    assert task.info["problems"] == 3 and len(unknown) == 3 * 10 * 5
    assert not set(unknown["id"]) & set(task.train.ids)
    assert unknown["id"].is_unique and pd.Series(task.train.ids).is_unique
    for prob, group in unknown.groupby("problem"):
        cands = task.test.known[prob]
        assert len(cands) == 10 and all(len(t) == 10 for t in cands.values())
        assert set(group["truth"]) <= set(cands)


def test_cross_topic_test_texts_avoid_the_authors_known_topics():
    corpus = _topical()
    task = PROTOCOL.sample(
        corpus, {"authors": 5, "train": 5, "test": 2, "cross_topic": True}, seed=1
    )
    topic = dict(zip(corpus.ids, corpus.frame["topic"], strict=True))
    author = dict(zip(corpus.ids, corpus.frame["author"], strict=True))
    known_topics: dict[str, set] = {}
    for i in task.train.ids:
        known_topics.setdefault(author[i], set()).add(topic[i])
    assert len(task.test.unknown)
    for i, truth in zip(task.test.unknown["id"], task.test.unknown["truth"], strict=True):
        assert topic[i] not in known_topics[truth]


def test_same_seed_same_task_other_seed_other_task():
    corpus = synthetic_corpus(n_authors=12, per_author=20)
    setting = {"authors": 10, "train": 5, "test": 2}
    a, b = (PROTOCOL.sample(corpus, setting, seed=0) for _ in range(2))
    c = PROTOCOL.sample(corpus, setting, seed=1)
    assert a.test.unknown.equals(b.test.unknown)
    assert not a.test.unknown["id"].equals(c.test.unknown["id"])


def test_within_keeps_a_problem_in_one_language():
    corpus = synthetic_corpus(n_authors=24, per_author=7)
    frame = corpus.frame.copy()
    frame["language"] = np.where(frame["author"].str[6:].astype(int) % 2 == 0, "en", "pl")
    corpus = Corpus(frame, name="two_languages")
    (setting,) = PROTOCOL.settings(corpus)
    assert setting["within"] == "language"
    task = PROTOCOL.sample(corpus, setting, seed=0)
    language = dict(zip(corpus.frame["author"], corpus.frame["language"], strict=False))
    for cands in task.test.known.values():
        assert len({language[a] for a in cands}) == 1


def test_bad_settings_name_the_problem():
    corpus = synthetic_corpus(n_authors=6, per_author=6)
    with pytest.raises(ProtocolError, match="fewer than 10 authors"):
        PROTOCOL.sample(corpus, {"authors": 10, "train": 3, "test": 2}, seed=0)
    with pytest.raises(ProtocolError, match="'train' must be a positive int"):
        PROTOCOL.sample(corpus, {"authors": 3, "train": 0, "test": 2}, seed=0)
    with pytest.raises(ProtocolError, match="no topics"):
        PROTOCOL.sample(corpus, {"authors": 3, "train": 3, "test": 2, "cross_topic": True}, 0)


def test_evaluate_scores_a_strong_method_above_chance():
    corpus = synthetic_corpus(n_authors=12, per_author=15, n_words=200)
    task = PROTOCOL.sample(corpus, {"authors": 10, "train": 10, "test": 5}, seed=0)
    table = PROTOCOL.evaluate(registry.make("svm-attribution", seed=0), task)
    overall = table[table["group"] == "all"].set_index("metric")
    assert set(overall.index) == {"macro_precision", "macro_recall", "macro_f1", "accuracy"}
    assert overall.loc["accuracy", "n"] == len(task.test.unknown) == 50  # one problem fits
    assert overall.loc["accuracy", "value"] > 0.5  # chance is 0.1
    rand = PROTOCOL.evaluate(registry.make("random", seed=0), task)
    assert rand.query("group == 'all' and metric == 'accuracy'")["value"].item() < 0.4


def test_a_pan_corpus_problem_columns_are_not_passed_to_fit():
    # PAN attribution corpora carry their own open-set problems; a closed task's training
    # texts must not, or an attributor fits an open-set rule the closed task never uses
    corpus = synthetic_corpus(n_authors=12, per_author=7)
    frame = corpus.frame.copy()
    frame["problem"], frame["candidate"], frame["role"] = "p1", frame["author"], "known"
    (setting,) = PROTOCOL.settings(Corpus(frame, name="pan_like"))
    task = PROTOCOL.sample(Corpus(frame, name="pan_like"), setting, seed=0)
    assert not {"problem", "candidate", "role"} & set(task.train.frame.columns)
    assert {"id", "text", "author"} <= set(task.train.frame.columns)
    est = registry.make("ensemble-attribution", seed=0).fit(task.train)
    assert est.reject_margin_ == 0.0
