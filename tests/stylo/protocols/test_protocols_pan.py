"""pan_verification: the official train -> test split of a PairSet, used as it is up to the
training cap (``capped_pairs``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stylo.corpus import Corpus, PairSet
from stylo.protocols import PROTOCOLS, ProtocolError
from stylo.protocols.base import MAX_TRAIN_CHARS, MAX_TRAIN_PROBLEMS, capped_pairs
from stylo.protocols.pan import PanVerification


def pairs(split_labels=("train", "train", "test", "test", "test"), same=(1, 0, 1, 0, 1)):
    n = len(split_labels)
    return PairSet.from_lists(
        [f"k{i}" for i in range(n)],
        [f"u{i % 3}" for i in range(n)],
        same=[bool(s) for s in same],
        split=list(split_labels),
    )


def test_split_is_used_as_is_and_shared_texts_are_counted():
    p = PanVerification()
    data = pairs()
    assert p.settings(data) == [{"train": "train", "test": "test"}]
    task = p.sample(data, p.settings(data)[0], seed=0)
    assert list(task.train.ids) == ["0", "1"] and list(task.test.ids) == ["2", "3", "4"]
    assert task.info["test_positive"] == 2
    # unknown texts are reused: u0 and u1 (pairs 3, 4) also occur in train pairs 0 and 1
    assert task.info["shared_texts"] == 2
    again = p.sample(data, p.settings(data)[0], seed=5)
    assert list(again.test.ids) == list(task.test.ids)


def test_not_applicable_and_errors():
    p = PROTOCOLS["pan_verification"]
    assert p.settings(Corpus.from_lists(["a", "b"], ["x", "y"])) == []
    assert p.settings(PairSet.from_lists(["a"], ["b"], same=[True])) == []
    assert p.settings(pairs(split_labels=("train",) * 5)) == []
    with pytest.raises(ProtocolError, match="no split 'dev'"):
        p.sample(pairs(), {"train": "train", "test": "dev"}, 0)
    unlabelled = PairSet.from_lists(["a", "b"], ["c", "d"], split=["train", "test"])
    with pytest.raises(ProtocolError, match="without a `same` label"):
        p.sample(unlabelled, {"train": "train", "test": "test"}, 0)
    with pytest.raises(ProtocolError, match="needs a PairSet"):
        p.sample(Corpus.from_lists(["a"], ["x"]), {}, 0)


def test_pan13_real_split(dataset):
    data = dataset("pan13_av_en")
    task = PROTOCOLS["pan_verification"].sample(data, {"train": "train", "test": "test"}, 0)
    assert (len(task.train), len(task.test), task.info["test_positive"]) == (10, 30, 14)
    assert task.info["shared_texts"] == 7  # PAN13 reuses some texts across its splits


@settings(max_examples=80, deadline=None)
@given(
    labels=st.lists(st.booleans(), min_size=1, max_size=40),
    lengths=st.lists(st.integers(1, 30), min_size=40, max_size=40),
    cap=st.one_of(st.none(), st.integers(2, 45)),
    max_chars=st.one_of(st.none(), st.integers(1, 600)),
    seed=st.integers(0, 100),
)
def test_capped_pairs_keeps_label_shares_order_and_budgets(labels, lengths, cap, max_chars, seed):
    n = len(labels)
    data = PairSet.from_lists(
        ["k" * lengths[i] for i in range(n)],
        [f"u{i}" for i in range(n)],
        same=labels,
    )
    sizes = [lengths[i] + len(f"u{i}") for i in range(n)]
    within = (cap is None or n <= cap) and (max_chars is None or sum(sizes) <= max_chars)
    capped = capped_pairs(data, cap, seed, max_chars)
    if within or capped is data:
        # over a cap, the whole set is kept only when the smallest trainable part is all of it
        assert within or n <= 2 or min(sum(labels), n - sum(labels)) == 1
        assert capped is data
        return
    ids = list(capped.ids)
    assert ids == sorted(ids, key=int) and set(ids) <= set(data.ids)
    kept, n_same = capped.labels, sum(labels)
    # the kept problems are a prefix of an order whose every prefix holds each label in its
    # share within one problem, and both labels where both occur
    assert abs(kept.sum() - len(kept) * n_same / n) < 1
    assert (kept.sum() > 0) == (n_same > 0) and (kept.sum() < len(kept)) == (n_same < n)
    smallest = len(kept) == 2 or min(kept.sum(), len(kept) - kept.sum()) == 1
    assert cap is None or len(kept) <= cap or smallest
    chars = sum(sizes[int(i)] for i in ids)
    assert max_chars is None or chars <= max_chars or smallest
    step = capped.history[-1]
    assert (step.before, step.after) == (n, len(kept)) and f"{chars} characters" in step.detail
    assert list(capped_pairs(data, cap, seed, max_chars).ids) == ids


def test_capped_pairs_refuses_a_bad_cap():
    data = pairs()
    for bad in (1, 0, 2.5, True):
        with pytest.raises(ProtocolError, match="max_problems must be an int >= 2"):
            capped_pairs(data, bad, 0)
    with pytest.raises(ProtocolError, match="max_chars must be an int >= 1"):
        capped_pairs(data, None, 0, 0)


def test_training_split_is_capped_in_the_seed_and_test_left_whole():
    n = 30
    data = PairSet.from_lists(
        [f"k{i}" for i in range(n)],
        [f"u{i}" for i in range(n)],
        same=[i % 3 == 0 for i in range(n)],
        split=["train"] * 24 + ["test"] * 6,
    )
    setting = {"train": "train", "test": "test"}
    whole = PanVerification().sample(data, setting, 0)
    assert len(whole.train) == whole.info["n_train_available"] == 24
    capped = PanVerification(max_train_problems=9)
    a, b = capped.sample(data, setting, 0), capped.sample(data, setting, 1)
    assert len(a.train) == len(b.train) == 9 and a.info["n_train_available"] == 24
    assert int(a.train.labels.sum()) == 3  # 8 of 24 training problems are same-author
    assert list(a.train.ids) != list(b.train.ids)
    assert list(a.train.ids) == list(capped.sample(data, setting, 0).train.ids)
    assert list(a.test.ids) == list(whole.test.ids)


@pytest.mark.parametrize(
    "name",
    ["pan13_av_en", "pan15_av_en", *(f"pan14_av/{s}" for s in ("en_novels", "sp_articles"))],
)
def test_the_grids_pan_training_splits_stay_whole_under_the_caps(dataset, name):
    # the reference grid's figures were made without caps; the largest training split
    # (PAN14 Spanish articles, 4.2 million characters) is far inside both
    data = dataset(name)
    task = PROTOCOLS["pan_verification"].sample(data, {"train": "train", "test": "test"}, 0)
    assert len(task.train) == task.info["n_train_available"] == len(data.split("train"))
    chars = sum(sum(map(len, k)) + len(u) for k, u in zip(task.train.known, task.train.unknown))
    assert chars < MAX_TRAIN_CHARS / 4 and len(task.train) < MAX_TRAIN_PROBLEMS / 10
