"""The scaling benchmark's pair sets: right sizes, true labels, no post used twice, seeded."""

import pandas as pd

from benchmarks.bench_scaling import pair_set


def _frame(n_authors=30, per_author=10):
    rows = [
        {"author": f"a{a}", "text": f"post {p} of author {a}"}
        for a in range(n_authors)
        for p in range(per_author)
    ]
    # a shuffled, non-default index: positions, not labels, must pick the texts
    return pd.DataFrame(rows).sample(frac=1.0, random_state=1).set_index(pd.RangeIndex(1000, 1300))


def test_pairs_have_true_labels_and_use_each_post_once():
    frame = _frame()
    author = dict(zip(frame["text"], frame["author"], strict=True))
    train, test = pair_set(frame, 200, seed=0)
    assert len(train) + len(test) == 100 and abs(len(train) - len(test)) <= 1
    texts = []
    n_same = 0
    for pairs in (train, test):
        for known, unknown, same in zip(pairs.known, pairs.unknown, pairs.labels, strict=True):
            assert same == (author[known[0]] == author[unknown])
            texts += [known[0], unknown]
            n_same += bool(same)
    assert len(texts) == len(set(texts))
    # 50 same-author pairs drawn from 30 authors with replacement: an author drawn a sixth
    # time has no two posts left, so up to half
    assert 40 <= n_same <= 50


def test_half_same_author_when_authors_suffice():
    train, test = pair_set(_frame(n_authors=30, per_author=10).iloc[:300], 40, seed=0)
    assert sum(train.labels) + sum(test.labels) == 10


def test_pairs_are_seeded():
    a = pair_set(_frame(), 100, seed=3)[0].frame
    b = pair_set(_frame(), 100, seed=3)[0].frame
    c = pair_set(_frame(), 100, seed=4)[0].frame
    assert a["unknown"].tolist() == b["unknown"].tolist()
    assert a["unknown"].tolist() != c["unknown"].tolist()
