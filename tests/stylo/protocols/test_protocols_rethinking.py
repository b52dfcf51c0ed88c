"""Rethinking-AV splits: the disjointness properties of each setup, on corpora and pair sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stylo.corpus import Corpus, PairSet
from stylo.protocols import PROTOCOLS, ProtocolError
from stylo.protocols.rethinking import (
    SPLITS,
    RethinkingAV,
    assign_splits,
    split_corpus,
    split_pairset,
)


def random_corpus(seed: int, n_authors: int, n_topics: int, max_per_cell: int = 4) -> Corpus:
    rng = np.random.default_rng(seed)
    texts, authors, topics = [], [], []
    for a in range(n_authors):
        for t in range(n_topics):
            for k in range(int(rng.integers(0, max_per_cell + 1))):
                texts.append(f"a{a} t{t} k{k} {rng.integers(1 << 40)}")
                authors.append(f"a{a}")
                topics.append(f"t{t}")
    return Corpus.from_lists(texts, authors, topics=topics, name="random")


def check_split_properties(split, authors, topics, labels):
    """The guarantees of each setup, stated over texts (one label per text)."""
    authors, topics, labels = map(np.asarray, (authors, topics, labels))
    a = {p: set(authors[labels == p]) for p in ("train", "val", "test")}
    t = {p: set(topics[labels == p]) for p in ("train", "val", "test")}
    assert set(labels) <= {"train", "val", "test", ""}
    if split == "closed":
        assert not (labels == "").any()
        for p in ("val", "test"):
            assert a[p] <= a["train"] and t[p] <= t["train"]
            # the stronger per-cell form: each val/test (author, topic) cell has a train text
            cells = set(zip(authors[labels == "train"], topics[labels == "train"], strict=True))
            assert set(zip(authors[labels == p], topics[labels == p], strict=True)) <= cells
    if split == "clopen":
        assert not (labels == "").any()
        unseen = (a["val"] | a["test"]) - a["train"]
        assert unseen, "clopen must hold out some authors"
        for p in ("val", "test"):
            seen_rows = (labels == p) & np.isin(authors, list(a["train"]))
            cells = set(zip(authors[labels == "train"], topics[labels == "train"], strict=True))
            assert set(zip(authors[seen_rows], topics[seen_rows], strict=True)) <= cells
        assert not (a["val"] - a["train"]) & (a["test"] - a["train"])
    if split in ("open_unseen_authors", "open_all"):
        assert not a["train"] & a["test"] and not a["train"] & a["val"]
        assert not a["val"] & a["test"]
    if split in ("open_unseen_topics", "open_all"):
        assert not t["train"] & t["test"] and not t["train"] & t["val"]
        assert not t["val"] & t["test"]
    if split in ("open_unseen_authors", "open_unseen_topics"):
        assert not (labels == "").any()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_authors=st.integers(6, 14),
    n_topics=st.integers(4, 7),
    split=st.sampled_from(SPLITS),
)
def test_split_properties_on_random_corpora(seed, n_authors, n_topics, split):
    corpus = random_corpus(seed, n_authors, n_topics)
    labels = assign_splits(corpus.authors, corpus.topics, split, seed)
    check_split_properties(split, corpus.authors, corpus.topics, labels)
    parts, info = split_corpus(corpus, split, seed)
    ids = [set(parts[p].ids) for p in ("train", "val", "test")]
    assert not ids[0] & ids[1] and not ids[0] & ids[2] and not ids[1] & ids[2]
    assert sum(info["texts"].values()) + info["left_out"] == len(corpus)


def _pairs_from(corpus: Corpus, n: int, seed: int) -> PairSet:
    rng = np.random.default_rng(seed)
    f = corpus.frame
    a = rng.integers(len(f), size=n)
    b = rng.integers(len(f), size=n)
    keep = a != b
    a, b = a[keep], b[keep]
    return PairSet.from_lists(
        list(f["text"].to_numpy()[a]),
        list(f["text"].to_numpy()[b]),
        same=list(f["author"].to_numpy()[a] == f["author"].to_numpy()[b]),
        authors=[
            [x, y]
            for x, y in zip(f["author"].to_numpy()[a], f["author"].to_numpy()[b], strict=True)
        ],
        topics=[
            [x, y] for x, y in zip(f["topic"].to_numpy()[a], f["topic"].to_numpy()[b], strict=True)
        ],
    )


@pytest.mark.parametrize("split", SPLITS)
def test_pairset_splits_keep_pairs_whole_and_disjoint(split):
    corpus = random_corpus(3, 12, 6, max_per_cell=5)
    pairs = _pairs_from(corpus, 3000, 0)
    parts, info = split_pairset(pairs, split, seed=1)
    assert sum(info["pairs"].values()) + info["pairs_left_out"] == len(pairs)
    # texts of kept pairs, with their split: no text in two splits
    docs = {}
    for p in ("train", "val", "test"):
        part = parts[p]
        for k, u, au, tp in zip(
            part.known, part.unknown, part.frame["authors"], part.frame["topics"], strict=True
        ):
            for text, a, t in ((k[0], au[0], tp[0]), (u, au[1], tp[1])):
                assert docs.setdefault(text, (a, t, p))[2] == p, "text in two splits"
    if split.startswith("open"):
        a, t, labels = zip(*docs.values(), strict=True)
        check_split_properties(split, a, t, labels)
    else:
        # closed/clopen guarantee a train text per (author, topic) cell at the text level
        authors, topics = _doc_labels(pairs)
        check_split_properties(split, authors, topics, assign_splits(authors, topics, split, 1))


def _doc_labels(pairs: PairSet):
    seen = {}
    for k, u, au, tp in zip(
        pairs.known, pairs.unknown, pairs.frame["authors"], pairs.frame["topics"], strict=True
    ):
        seen.setdefault(k[0], (au[0], tp[0]))
        seen.setdefault(u, (au[1], tp[1]))
    return [v[0] for v in seen.values()], [v[1] for v in seen.values()]


def test_seeds_reproduce_and_differ():
    corpus = random_corpus(0, 10, 5)
    for split in SPLITS:
        a = assign_splits(corpus.authors, corpus.topics, split, 7)
        assert (a == assign_splits(corpus.authors, corpus.topics, split, 7)).all()
        assert (a != assign_splits(corpus.authors, corpus.topics, split, 8)).any()


def test_impossible_requests():
    corpus = random_corpus(0, 10, 5)
    with pytest.raises(ProtocolError, match="unknown split"):
        assign_splits(corpus.authors, corpus.topics, "half-open", 0)
    with pytest.raises(ProtocolError, match="too few"):
        assign_splits(["a", "b"] * 5, ["x", "y", "z", "w", "v"] * 2, "open_unseen_authors", 0)
    with pytest.raises(ProtocolError, match="too few"):
        assign_splits(corpus.authors, ["x"] * len(corpus), "open_unseen_topics", 0)
    with pytest.raises(ProtocolError, match="need author and topic"):
        split_corpus(Corpus.from_lists(["x", "y"], ["a", "b"]), "closed", 0)
    with pytest.raises(ProtocolError, match="no text has a topic"):
        assign_splits(["a", "b"], [None, None], "closed", 0)
    pairs = PairSet.from_lists(["x"], ["y"], same=[False])
    with pytest.raises(ProtocolError, match="'authors' column"):
        split_pairset(pairs, "closed", 0)


def test_texts_without_topic_are_counted_not_split():
    corpus = random_corpus(1, 8, 5)
    topics = corpus.frame["topic"].astype(object).copy()
    topics.iloc[::7] = None
    frame = corpus.frame.assign(topic=topics)
    parts, info = split_corpus(Corpus(frame, name="holes"), "open_unseen_topics", 0)
    assert info["without_topic"] == int(topics.isna().sum()) > 0
    assert sum(len(p) for p in parts.values()) == len(corpus) - info["without_topic"]


def test_protocol_sample_pairs_come_from_their_split():
    corpus = random_corpus(2, 12, 6, max_per_cell=5)
    p = PROTOCOLS["rethinking_av"]
    # open_all's val part (2 authors x 1 topic) is empty or has one text at seeds 0-2
    assert [s["split"] for s in p.settings(corpus)] == list(SPLITS[:4])
    task = p.sample(corpus, {"split": "open_unseen_authors"}, seed=0)
    train_authors = {a for pair in task.train.frame["authors"] for a in pair}
    test_authors = {a for pair in task.test.frame["authors"] for a in pair}
    assert not train_authors & test_authors
    assert task.test.labels.any() and not task.test.labels.all()
    assert task.info["pairs"]["test"] == len(task.test) <= task.info["pairs_requested"]["test"]
    assert (task.test.frame["same"] == [a == b for a, b in task.test.frame["authors"]]).all()


def test_pairset_train_part_is_capped_and_the_rest_left_whole():
    pairs = _pairs_from(random_corpus(3, 12, 6, max_per_cell=5), 3000, 0)
    whole = RethinkingAV(max_train_problems=None).sample(pairs, {"split": "closed"}, 0)
    capped = RethinkingAV(max_train_problems=100).sample(pairs, {"split": "closed"}, 0)
    available = whole.info["n_train_available"]
    assert len(whole.train) == available == whole.info["pairs"]["train"] > 100
    assert len(capped.train) == 100 and capped.info["n_train_available"] == available
    assert set(capped.train.ids) <= set(whole.train.ids)
    share = whole.train.labels.mean()
    assert abs(capped.train.labels.mean() - share) <= 0.01
    assert list(capped.test.ids) == list(whole.test.ids)
    assert list(capped.val.ids) == list(whole.val.ids)


def test_guardian_rethinking_real(dataset):
    corpus = dataset("guardian")
    p = PROTOCOLS["rethinking_av"]
    task = p.sample(corpus, {"split": "open_unseen_topics"}, seed=0)
    train_topics = {t for pair in task.train.frame["topics"] for t in pair}
    test_topics = {t for pair in task.test.frame["topics"] for t in pair}
    assert test_topics and not train_topics & test_topics
    assert not set(task.train.unknown) & set(task.test.unknown)


def test_settings_offer_only_splits_that_can_be_sampled():
    # 6 authors x 2 topics, one text per cell: open_all's val part can never hold a
    # same-author pair (a val author has one text in the val topic), the others can
    corpus = Corpus.from_lists(
        [f"x{i}" for i in range(36)],
        [f"a{i % 6}" for i in range(36)],
        topics=[f"t{i % 12 // 6}" for i in range(36)],
    )
    p = PROTOCOLS["rethinking_av"]
    offered = [s["split"] for s in p.settings(corpus)]
    assert "open_all" not in offered
    for split in offered:
        for seed in p.PROBE_SEEDS:
            p.sample(corpus, {"split": split}, seed)
    with pytest.raises(ProtocolError, match="both kinds are needed|too few"):
        p.sample(corpus, {"split": "open_all"}, seed=0)


def test_guardian_open_all_is_not_offered_but_asking_explains(dataset):
    corpus = dataset("guardian")
    p = PROTOCOLS["rethinking_av"]
    offered = [s["split"] for s in p.settings(corpus)]
    assert "open_all" not in offered and "closed" in offered
    with pytest.raises(ProtocolError, match="open_all:val.*both kinds are needed"):
        p.sample(corpus, {"split": "open_all"}, seed=0)
