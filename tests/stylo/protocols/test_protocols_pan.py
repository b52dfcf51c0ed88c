"""pan_verification: the official train -> test split of a PairSet, used as it is."""

from __future__ import annotations

import pytest

from stylo.corpus import Corpus, PairSet
from stylo.protocols import PROTOCOLS, ProtocolError
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
