"""AIDBench protocols: sampling invariants on synthetic corpora, and a fast real-data check."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from baselines_synth import author_topic_labels, labelled_corpus
from hypothesis import given, settings
from hypothesis import strategies as st

from stylo.corpus import Corpus
from stylo.protocols import PROTOCOLS, ProtocolError
from stylo.protocols._sampling import PairRules
from stylo.protocols.aidbench import OneToOne, OneToTwo, parse_mix
from stylo.protocols.aidbench_one_to_many import OneToMany
from stylo.protocols.base import capped_corpus
from stylo.verifier import training_pairs


def make_corpus(n_authors=8, n_topics=4, per_cell=4, topics=True, seed=0) -> Corpus:
    """Unique texts whose content names their author and topic (so tests can read them)."""
    rng = np.random.default_rng(seed)
    texts, authors, tops = [], [], []
    for a in range(n_authors):
        for t in range(n_topics):
            for k in range(per_cell + int(rng.integers(0, 2))):
                texts.append(f"author{a} topic{t} text{k} {rng.integers(1 << 30)}")
                authors.append(f"a{a}")
                tops.append(f"t{t}")
    return Corpus.from_lists(texts, authors, topics=tops if topics else None, name="synthetic")


def _meta(corpus):
    f = corpus.frame.set_index("id")
    return f["author"].to_dict(), (f["topic"].to_dict() if "topic" in f else None)


# -- the pair index against brute force -------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    labels=author_topic_labels(5, 4, min_size=2, max_size=25),
    cross=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_pair_rules_match_brute_force(labels, cross, seed):
    c, authors, topics = labelled_corpus(labels)
    if cross and not c.has_topics:
        with pytest.raises(ProtocolError, match="no topic labels, so the cross-topic rule"):
            PairRules(c, cross)
        return
    rules = PairRules(c, cross)
    ok = [not cross or t is not None for t in topics]
    for same in (True, False):
        valid = {
            (i, j)
            for i in range(len(c))
            for j in range(i + 1, len(c))
            if ok[i]
            and ok[j]
            and (authors[i] == authors[j]) == same
            and (not cross or (topics[i] == topics[j]) != same)
        }
        assert rules.n_pairs(same) == len(valid)
        n = len(valid) // 2 + (len(valid) % 2)
        got = rules.sample_pairs(n, same, np.random.default_rng(seed))
        assert len({frozenset(p) for p in got}) == n
        assert {tuple(sorted(p)) for p in got} <= valid


# -- one-to-one ------------------------------------------------------------------------------
@pytest.mark.parametrize("mix", ["150/50", "100/100", "50/150"])
@pytest.mark.parametrize("cross", [False, True])
def test_one_to_one_mix_labels_and_topic_rule(mix, cross):
    corpus = make_corpus()
    task = OneToOne().sample(corpus, {"mix": mix, "cross_topic": cross}, seed=3)
    pairs = task.test.frame
    pos, neg = parse_mix(mix)
    assert len(pairs) == pos + neg == 200
    assert int(pairs["same"].sum()) == pos
    author, topic = _meta(corpus)
    text = dict(zip(corpus.ids, corpus.texts, strict=True))
    for _, row in pairs.iterrows():
        assert row["id_a"] != row["id_b"]
        assert row["known"] == [text[row["id_a"]]] and row["unknown"] == text[row["id_b"]]
        assert row["same"] == (author[row["id_a"]] == author[row["id_b"]])
        if cross:
            same_topic = topic[row["id_a"]] == topic[row["id_b"]]
            assert same_topic != row["same"]  # positives cross topic, negatives share it
    keys = {frozenset((a, b)) for a, b in zip(pairs["id_a"], pairs["id_b"], strict=True)}
    assert len(keys) == len(pairs), "pairs must be distinct"


def test_one_to_one_seeds():
    corpus = make_corpus()
    p = OneToOne()
    setting = {"mix": "100/100", "cross_topic": True}
    a = p.sample(corpus, setting, seed=1).test.frame
    b = p.sample(corpus, setting, seed=1).test.frame
    c = p.sample(corpus, setting, seed=2).test.frame
    pd.testing.assert_frame_equal(a, b)
    assert list(a["id_a"] + a["id_b"]) != list(c["id_a"] + c["id_b"])


def test_one_to_one_training_corpus_is_disjoint():
    corpus = make_corpus(n_authors=12)
    task = OneToOne(train_policy="disjoint_authors").sample(
        corpus, {"mix": "50/150", "cross_topic": False}, seed=0
    )
    assert task.info["train_policy"] == "disjoint_authors"
    used = set(task.test.frame["id_a"]) | set(task.test.frame["id_b"])
    test_authors = {a for pair in task.test.frame["authors"] for a in pair}
    if task.train is not None:
        assert not used & set(task.train.ids)
        assert not test_authors & set(task.train.authors)
    assert task.train is None or task.train.pair_rule == "any"
    loose = OneToOne(train_policy="disjoint_texts").sample(
        corpus, {"mix": "50/150", "cross_topic": False}, seed=0
    )
    assert not used & set(loose.train.ids)
    assert len(loose.train) == len(corpus) - len(used)


def test_one_to_one_impossible_requests():
    with pytest.raises(ProtocolError, match="no topic labels"):
        OneToOne().sample(make_corpus(topics=False), {"mix": "100/100", "cross_topic": True}, 0)
    # one topic per author: no same-author cross-topic pair exists
    c = Corpus.from_lists(
        [f"t{i}" for i in range(20)],
        [f"a{i % 4}" for i in range(20)],
        topics=[f"x{i % 4}" for i in range(20)],
    )
    with pytest.raises(ProtocolError, match="only 0 distinct"):
        OneToOne().sample(c, {"mix": "100/100", "cross_topic": True}, 0)
    small = make_corpus(n_authors=2, n_topics=1, per_cell=3)
    with pytest.raises(ProtocolError, match="asked for 150 same-author pairs"):
        OneToOne().sample(small, {"mix": "150/50", "cross_topic": False}, 0)
    with pytest.raises(ProtocolError, match="mix must look like"):
        parse_mix("half")


def test_one_to_one_dense_request_uses_every_pair():
    # 3 authors x 3 texts: exactly 9 same-author pairs; asking for all 9 must succeed
    c = Corpus.from_lists([f"x{i}" for i in range(9)], [f"a{i // 3}" for i in range(9)])
    task = OneToOne(train_policy="disjoint_texts").sample(c, {"mix": "9/27"}, seed=5)
    assert task.test.labels.sum() == 9 and len(task.test) == 36
    assert task.train is None


def test_settings_offer_cross_topic_only_when_possible():
    assert all(s["cross_topic"] for s in OneToOne().settings(make_corpus()))
    assert not any(s["cross_topic"] for s in OneToOne().settings(make_corpus(topics=False)))


# -- one-to-two ------------------------------------------------------------------------------
@pytest.mark.parametrize("cross", [False, True])
def test_one_to_two_invariants(cross):
    corpus = make_corpus()
    task = OneToTwo().sample(corpus, {"cross_topic": cross}, seed=7)
    frame = task.test.frame
    assert len(frame) == 200
    author, topic = _meta(corpus)
    for _, r in frame.iterrows():
        assert r["query_id"] not in (r["a_id"], r["b_id"])
        true_id, other_id = (r["a_id"], r["b_id"]) if r["answer"] == 0 else (r["b_id"], r["a_id"])
        assert author[true_id] == author[r["query_id"]] != author[other_id]
        if cross:
            assert topic[true_id] != topic[r["query_id"]] == topic[other_id]
    # the true slot is randomised: both slots used, roughly half each
    assert 60 < frame["answer"].sum() < 140
    assert len(set(zip(frame["query_id"], frame["a_id"], frame["b_id"], strict=True))) == 200


def test_one_to_two_seeds_and_errors():
    corpus = make_corpus()
    p = OneToTwo()
    a = p.sample(corpus, {"cross_topic": True}, 4).test.frame
    pd.testing.assert_frame_equal(a, p.sample(corpus, {"cross_topic": True}, 4).test.frame)
    assert not a.equals(p.sample(corpus, {"cross_topic": True}, 5).test.frame)
    tiny = make_corpus(n_authors=2, n_topics=2, per_cell=1)
    with pytest.raises(ProtocolError, match="one-to-two triplets"):
        p.sample(tiny, {"cross_topic": True}, 0)


# -- one-to-many -----------------------------------------------------------------------------
@pytest.mark.parametrize("n_authors", [2, 5])
def test_one_to_many_structure(n_authors):
    corpus = make_corpus(n_authors=6, n_topics=3, per_cell=4)
    task = OneToMany().sample(corpus, {"n_authors": n_authors}, seed=11)
    assert len(task.test) == 30  # 10 groups x 3 repeats
    author, _ = _meta(corpus)
    for q in task.test:
        assert len(q.candidates) == n_authors * 10 - 1
        assert q.query_id not in q.candidate_ids
        assert len(set(q.candidate_ids)) == len(q.candidate_ids)
        assert int(q.relevant.sum()) == 9
        cand_authors = {author[c] for c in q.candidate_ids}
        assert len(cand_authors) == n_authors and set(q.authors) == cand_authors
        for cid, rel in zip(q.candidate_ids, q.relevant, strict=True):
            assert rel == (author[cid] == author[q.query_id])
    assert sorted({(q.repeat, q.group) for q in task.test}) == [
        (r, g) for r in range(3) for g in range(10)
    ]


def test_one_to_many_seeds_and_errors():
    corpus = make_corpus(n_authors=6, n_topics=3, per_cell=4)
    p = OneToMany()
    a = [q.candidate_ids for q in p.sample(corpus, {"n_authors": 2}, 1).test]
    assert a == [q.candidate_ids for q in p.sample(corpus, {"n_authors": 2}, 1).test]
    assert a != [q.candidate_ids for q in p.sample(corpus, {"n_authors": 2}, 2).test]
    with pytest.raises(ProtocolError, match="10 authors with at least 10 texts"):
        p.sample(corpus, {"n_authors": 10}, 0)
    with pytest.raises(ProtocolError, match="at least 30 texts"):
        p.sample(corpus, {"n_authors": 2, "texts_per_author": 30}, 0)
    with pytest.raises(ProtocolError, match="multiple of"):
        p.sample(corpus, {"pool_size": 45, "keep": 10}, 0)
    with pytest.raises(ProtocolError, match="keep must be in"):
        p.sample(corpus, {"pool_size": 50, "keep": 49}, 0)
    with pytest.raises(ProtocolError, match="no 'authors' list column"):
        p.sample(corpus, {"n_authors": 2, "first_author": False}, 0)


def _coauthored_corpus(seed=0) -> Corpus:
    """Papers with author lists: first authors f0..f5 and shared co-authors c0..c2."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(240):
        first = f"f{i % 6}"
        co = [f"c{int(x)}" for x in rng.choice(3, size=int(rng.integers(0, 2)), replace=False)]
        if rng.random() < 0.1:
            co.append(f"f{(i + 1) % 6}")
        rows.append(
            {
                "id": f"p{i}",
                "text": f"paper {i} {rng.integers(1 << 30)}",
                "author": first,
                "authors": [first, *co],
            }
        )
    return Corpus(pd.DataFrame(rows), name="papers")


def test_one_to_many_any_position_relevance():
    corpus = _coauthored_corpus()
    setting = {"n_authors": 5, "first_author": False}
    assert setting in OneToMany().settings(corpus)
    task = OneToMany().sample(corpus, setting, seed=2)
    lists = corpus.frame.set_index("id")["authors"].to_dict()
    saw_extra = False
    for q in task.test:
        chosen = set(q.authors)
        for cid, rel in zip(q.candidate_ids, q.relevant, strict=True):
            assert rel == bool(set(lists[cid]) & set(lists[q.query_id]))
        for cid in (q.query_id, *q.candidate_ids):
            assert len(set(lists[cid]) & chosen) == 1  # each text lists one chosen author
        assert q.relevant.sum() >= 9
        saw_extra |= q.relevant.sum() > 9
    assert saw_extra, "shared co-authors should make some other-slice candidates relevant"
    assert task.info["relevant_max"] > 9


def test_one_to_many_rag_shape():
    corpus = make_corpus(n_authors=6, n_topics=3, per_cell=4)
    task = OneToMany(n_groups=2, n_repeats=1).sample(corpus, {"pool_size": 50, "keep": 10}, seed=0)
    assert task.info["keep"] == 10
    assert all(len(q.candidates) == 49 and q.relevant.sum() == 9 for q in task.test)


# -- registry and real data --------------------------------------------------------------------
def test_registry_names():
    assert {
        "aidbench_one_to_one",
        "aidbench_one_to_two",
        "aidbench_one_to_many",
        "pan_verification",
    } <= set(PROTOCOLS)
    for name, p in PROTOCOLS.items():
        assert p.name == name


def test_guardian_cross_topic_real(dataset):
    corpus = dataset("guardian")
    p = PROTOCOLS["aidbench_one_to_one"]
    settings = p.settings(corpus)
    assert [s["mix"] for s in settings] == ["150/50", "100/100", "50/150"]
    assert all(s["cross_topic"] for s in settings)
    task = p.sample(corpus, settings[0], seed=0)
    f = task.test.frame
    assert (f["same"] == [a == b for a, b in f["authors"]]).all()
    assert (f["same"] != [a == b for a, b in f["topics"]]).all()
    trip = PROTOCOLS["aidbench_one_to_two"].sample(corpus, {"cross_topic": True}, seed=0)
    assert len(trip.test) == 200


def test_placeholder_unknown_author_is_never_sampled():
    """PAN 2019 labels every open-set text '<UNK>': not one author, so never a positive."""
    base = make_corpus(n_authors=6, n_topics=2, per_cell=6, topics=False)
    frame = base.frame.copy()
    frame.loc[frame.index[:30], "author"] = "<UNK>"
    corpus = Corpus(frame, name="with-unk")
    task = OneToOne().sample(corpus, {"mix": "50/50"}, seed=0)
    assert task.info["unknown_author_texts_excluded"] == 30
    assert not {a for pair in task.test.frame["authors"] for a in pair} & {"<UNK>"}
    many = OneToMany(n_groups=5, n_repeats=1).sample(corpus, {"n_authors": 2}, seed=0)
    assert all("<UNK>" not in q.authors for q in many.test)
    assert many.info["unknown_author_texts_excluded"] == 30


# -- the training corpus: auto policy ----------------------------------------------------------
def _test_ids(task) -> set:
    """Corpus ids of every text a task's test items use."""
    if isinstance(task.test, list):
        return {i for q in task.test for i in (q.query_id, *q.candidate_ids)}
    f = task.test.frame
    if "query_id" in f:
        return set(f["query_id"]) | set(f["a_id"]) | set(f["b_id"])
    return set(f["id_a"]) | set(f["id_b"])


def _check_usable_train(task):
    assert task.train is not None and not _test_ids(task) & set(task.train.ids)
    assert task.info["train_usable"]
    assert len(training_pairs(task.train, n_pairs=20)) == 20


def test_auto_policy_prefers_author_disjoint_training():
    corpus = make_corpus(n_authors=60, n_topics=1, per_cell=4, topics=False)
    task = OneToOne().sample(corpus, {"mix": "10/10"}, seed=0)
    assert task.info["train_policy"] == "disjoint_authors"
    test_authors = {a for pair in task.test.frame["authors"] for a in pair}
    assert not test_authors & set(task.train.authors)
    assert task.info["n_train_authors_with_2_texts"] >= 20
    _check_usable_train(task)


def test_auto_policy_falls_back_to_text_disjoint_training():
    # 30 authors x 40 texts: 200 pairs touch (nearly) every author, but leave most texts
    corpus = make_corpus(n_authors=30, n_topics=1, per_cell=40, topics=False)
    task = OneToOne(max_train_texts=None).sample(corpus, {"mix": "100/100"}, seed=0)
    strict = OneToOne(train_policy="disjoint_authors").sample(corpus, {"mix": "100/100"}, 0)
    assert task.info["train_policy"] == "disjoint_texts"
    assert strict.train is None or strict.train.frame["author"].nunique() < 20
    assert len(task.train) == len(corpus) - len(_test_ids(task))
    pd.testing.assert_frame_equal(task.test.frame, strict.test.frame)  # same test items
    _check_usable_train(task)


@pytest.mark.parametrize(
    "protocol", [OneToOne(), OneToTwo(n_triplets=60), OneToMany(n_groups=4, n_repeats=1)]
)
def test_auto_policy_reserves_texts_when_the_test_uses_almost_all(protocol):
    # 8 authors x 6 texts: the test items alone would use nearly every text
    corpus = make_corpus(n_authors=8, n_topics=2, per_cell=3, topics=False)
    setting = (
        {"mix": "40/40"}
        if protocol.name.endswith("one")
        else ({"n_authors": 2, "texts_per_author": 3} if protocol.name.endswith("many") else {})
    )
    task = protocol.sample(corpus, setting, seed=3)
    assert task.info["train_policy"] == "reserve"
    assert task.info["n_reserved_for_train"] >= 2 * 8
    _check_usable_train(task)
    again = protocol.sample(corpus, setting, seed=3)
    assert list(again.train.ids) == list(task.train.ids)


def test_reserve_keeps_a_text_per_author_for_the_test():
    corpus = Corpus.from_lists(
        [f"x{i}" for i in range(14)], ["a"] * 1 + ["b"] * 2 + ["c"] * 3 + ["d"] * 8
    )
    mask = OneToOne()._reserve(corpus, seed=0)
    per_author = pd.Series(mask).groupby(corpus.authors).sum().to_dict()
    assert per_author == {"a": 0, "b": 1, "c": 2, "d": 2}


def test_reserve_falls_back_when_the_smaller_pool_cannot_supply_the_test():
    # 3 authors x 3 texts and all 9 positives asked: nothing can be reserved, nothing is left
    c = Corpus.from_lists([f"x{i}" for i in range(9)], [f"a{i // 3}" for i in range(9)])
    task = OneToOne().sample(c, {"mix": "9/27"}, seed=0)
    assert task.train is None and task.info["train_policy"] == "disjoint_texts"
    assert not task.info["train_usable"]
    with pytest.raises(ProtocolError, match="asked for 9"):
        OneToOne(train_policy="reserve").sample(c, {"mix": "9/27"}, seed=0)
    with pytest.raises(ProtocolError, match="train_policy must be"):
        OneToOne(train_policy="everything").sample(c, {"mix": "1/1"}, seed=0)


def test_one_to_two_draws_fewer_triplets_rather_than_train_on_nothing():
    # 6 authors x 4 texts: 200 triplets need every text, and the reserved pool holds 120
    c = Corpus.from_lists([f"x{i}" for i in range(24)], [f"a{i // 4}" for i in range(24)])
    task = OneToTwo().sample(c, {"cross_topic": False}, seed=0)
    assert task.setting == {"cross_topic": False}
    assert task.info["train_policy"] == "reserve" and task.info["train_usable"]
    assert len(task.train) == 12 and len(task.test.frame) == task.info["n_triplets"] == 120
    assert task.info["setting"] == {"cross_topic": False, "n_triplets": 120}
    assert task.info["setting_requested"] == {"cross_topic": False}
    assert not _test_ids(task) & set(task.train.ids)
    # a pool of the requested size keeps the requested number, without the note
    enough = OneToTwo(n_triplets=100).sample(c, {"cross_topic": False}, seed=0)
    assert enough.info["n_triplets"] == 100 and "setting_requested" not in enough.info
    # asked for by name, the reserve keeps the number asked for or says it cannot
    with pytest.raises(ProtocolError, match="asked for 200 one-to-two triplets"):
        OneToTwo(train_policy="reserve").sample(c, {"cross_topic": False}, seed=0)


def test_guardian_every_aidbench_task_has_usable_training_data(dataset):
    corpus = dataset("guardian")
    protocols = [
        PROTOCOLS["aidbench_one_to_one"],
        PROTOCOLS["aidbench_one_to_two"],
        OneToMany(n_groups=2, n_repeats=1),
    ]
    for p in protocols:
        for setting in p.settings(corpus):
            task = p.sample(corpus, setting, seed=0)
            assert task.train is not None and not _test_ids(task) & set(task.train.ids)
            assert task.info["train_policy"] in ("disjoint_texts", "reserve")
            assert len(training_pairs(task.train, n_pairs=20)) == 20
            # the training pairs follow the test pairs' cross-topic rule
            cross = setting.get("cross_topic", False)
            assert task.train.pair_rule == ("cross_topic" if cross else "any")
            if not cross:
                continue
            pairs = training_pairs(task.train, n_pairs=40)
            f = task.train.frame
            author, topic = dict(zip(f["text"], f["author"])), dict(zip(f["text"], f["topic"]))
            for a, b, same in zip(pairs.known_joined, pairs.unknown, pairs.labels):
                assert (author[a] == author[b]) == same and (topic[a] == topic[b]) != same


def test_imdb62_one_to_one_has_usable_training_data(dataset):
    corpus = dataset("imdb62")
    task = PROTOCOLS["aidbench_one_to_one"].sample(corpus, {"mix": "100/100"}, seed=0)
    assert task.info["train_policy"] == "disjoint_texts"  # 200 pairs touch all 62 authors
    _check_usable_train(task)
    # the default cap: 1,000 of the ~18,000 texts left, spread over all 62 authors
    assert task.info["n_train_texts"] == len(task.train) == 1000
    assert task.info["n_train_texts_available"] > 17000
    assert task.train.frame["author"].nunique() == 62


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 9), min_size=1, max_size=12),
    cap=st.integers(1, 60),
    seed=st.integers(0, 100),
)
def test_capped_corpus_takes_two_texts_per_author_per_round(sizes, cap, seed):
    authors = [f"a{i}" for i, n in enumerate(sizes) for _ in range(n)]
    corpus = Corpus.from_lists([f"text {k}" for k in range(len(authors))], authors)
    capped = capped_corpus(corpus, cap, seed)
    assert len(capped) == min(cap, len(corpus))
    assert set(capped.ids) <= set(corpus.ids)
    kept = (
        pd.Series(capped.authors)
        .value_counts()
        .reindex([f"a{i}" for i in range(len(sizes))], fill_value=0)
    )
    # an author is more than one round (two texts) ahead of another only if that one ran out
    for a in kept.index:
        for b, n_b in zip(kept.index, sizes):
            if kept[a] - kept[b] > 2:
                assert kept[b] == n_b, (a, b, kept.to_dict())
    again = capped_corpus(corpus, cap, seed)
    assert list(again.ids) == list(capped.ids)
    assert capped_corpus(corpus, None, seed) is corpus


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 9), min_size=1, max_size=12),
    max_chars=st.integers(1, 400),
    seed=st.integers(0, 100),
)
def test_capped_corpus_character_cap_stops_the_same_order_early(sizes, max_chars, seed):
    authors = [f"a{i}" for i, n in enumerate(sizes) for _ in range(n)]
    texts = [f"text {k} " + "x" * (k % 17) for k in range(len(authors))]
    corpus = Corpus.from_lists(texts, authors)
    capped = capped_corpus(corpus, None, seed, max_chars)
    chars = sum(map(len, capped.texts))
    if sum(map(len, texts)) <= max_chars or len(corpus) <= 2:
        assert capped is corpus
        return
    # the texts the character cap keeps are the ones a text cap of as many would keep
    assert list(capped.ids) == list(capped_corpus(corpus, len(capped), seed).ids)
    assert chars <= max_chars or len(capped) == 2
    assert len(capped) >= min(2, len(corpus))
    with pytest.raises(ProtocolError, match="max_chars must be an int >= 1"):
        capped_corpus(corpus, None, seed, 0)
