"""One author label per person: labels that share an identical text are one author."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stylo.corpus import Corpus
from stylo.datasets._authors import merge_authors_by_text
from stylo.protocols import PROTOCOLS
from stylo.protocols.base import distinct_texts


def _corpus(rows: list[tuple[str, str]]) -> Corpus:
    return Corpus.from_lists([t for _, t in rows], [a for a, _ in rows], name="toy")


def _reference(rows: list[tuple[str, str]]) -> list[str]:
    """Plain union-find over labels joined by a shared text; each set named by its smallest
    label; a placeholder row takes the author of an identical labelled text, if any."""
    parent: dict[str, str] = {}

    def find(a: str) -> str:
        while parent[a] != a:
            a = parent[a]
        return a

    first_label_of_text: dict[str, str] = {}
    for a, t in rows:
        if a == "<UNK>":
            continue
        parent.setdefault(a, a)
        if t in first_label_of_text:
            x, y = sorted((find(a), find(first_label_of_text[t])))
            parent[y] = x
        else:
            first_label_of_text[t] = a
    out = []
    for a, t in rows:
        if a != "<UNK>":
            out.append(find(a))
        else:
            out.append(find(first_label_of_text[t]) if t in first_label_of_text else a)
    return out


def test_labels_sharing_a_text_become_one_author_through_chains():
    rows = [("p2-c1", "x"), ("p1-c4", "x"), ("p1-c4", "y"), ("p3-c2", "y"), ("p3-c9", "z")]
    merged = merge_authors_by_text(_corpus(rows))
    assert merged.authors.tolist() == ["p1-c4", "p1-c4", "p1-c4", "p1-c4", "p3-c9"]
    assert merged.texts == [t for _, t in rows] and len(merged) == len(rows)
    step = merged.history[-1]
    assert "4 author labels -> 2 authors" in step.detail


def test_a_placeholder_text_takes_the_author_of_its_copy_and_stays_otherwise():
    rows = [("a", "x"), ("<UNK>", "x"), ("<UNK>", "w"), ("b", "v")]
    merged = merge_authors_by_text(_corpus(rows))
    assert merged.authors.tolist() == ["a", "a", "<UNK>", "b"]
    assert "1 texts by ['<UNK>'] given the author" in merged.history[-1].detail


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["<UNK>", "a", "b", "c", "d", "e"]), st.sampled_from("uvwxyz")),
        min_size=1,
        max_size=25,
    )
)
def test_merge_equals_a_plain_union_find(rows):
    assert merge_authors_by_text(_corpus(rows)).authors.tolist() == _reference(rows)


def test_distinct_texts_keeps_the_first_copy_by_each_author():
    corpus = _corpus([("a", "x"), ("a", "x"), ("b", "x"), ("a", "y")])
    out = distinct_texts(corpus)
    assert out.ids.tolist() == ["0", "2", "3"]
    assert out.history[-1].before == 4 and out.history[-1].after == 3
    assert distinct_texts(out) is out


def test_pan18_and_pan19_name_each_person_once(dataset):
    for name, labels, people, resolved in (
        ("pan18_cdaa", 375, 200, 0),
        ("pan19_cdaa", 181, 158, 27),
    ):
        corpus = dataset(name)
        step = corpus.history[0]
        assert step.name == "authors merged by identical texts"
        assert f"{labels} author labels -> {people} authors; {resolved} texts" in step.detail
        frame = corpus.frame[corpus.frame["author"] != "<UNK>"]
        # a text now has one author; a person's texts stay in one language
        assert frame.groupby("text")["author"].nunique().max() == 1
        assert frame.groupby("author")["language"].nunique().max() == 1
        # PAN's own problems are untouched: still one candidate label per problem's texts
        known = corpus.frame[corpus.frame["role"] == "known"]
        assert known.groupby(["problem", "author"])["candidate"].nunique().max() == 1


def test_pooling_protocols_never_put_a_copy_of_a_text_on_both_sides(dataset):
    pan18, pan19 = dataset("pan18_cdaa"), dataset("pan19_cdaa")
    closed = PROTOCOLS["closed_attribution"]
    for corpus in (pan18, pan19):
        for setting in closed.settings(corpus):
            task = closed.sample(corpus, setting, seed=0)
            known = set(task.train.texts)
            assert not known & set(task.test.unknown["text"])
            assert len(known) == len(task.train)
            # no two candidates of a problem are one person
            for cands in task.test.known.values():
                texts = [t for ts in cands.values() for t in ts]
                assert len(texts) == len(set(texts))
    rethinking = PROTOCOLS["rethinking_av"]
    task = rethinking.sample(pan19, {"split": "open_unseen_authors"}, seed=0)
    train = set(task.train.texts_a()) | set(task.train.texts_b())
    assert not train & (set(task.test.texts_a()) | set(task.test.texts_b()))
    assert task.info["repeated_texts_excluded"] > 0
    cdaa = PROTOCOLS["cdaa_attribution"].sample(pan18, {"split": "test"}, seed=0)
    assert len(cdaa.train) == len(set(cdaa.train.texts)) == 699
    assert cdaa.train.frame["author"].nunique() == 100
