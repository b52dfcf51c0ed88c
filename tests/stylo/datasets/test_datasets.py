import gzip
import json

import numpy as np
import pandas as pd
import pytest

from stylo.corpus import Corpus, PairSet
from stylo.datasets import (
    DataError,
    DatasetNotAvailable,
    available,
    data_roots,
    load,
    load_pan20_format,
    registry,
)
from stylo.datasets._jsonl import read_jsonl


def _write_jsonl(path, lines):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line if isinstance(line, str) else json.dumps(line))
            fh.write("\n")


@pytest.fixture
def tiny_root(tmp_path, monkeypatch):
    """A $STYLO_DATA folder holding a fake `enron` with three authors, checksum ignored."""
    folder = tmp_path / "enron"
    folder.mkdir()
    rows = [
        {"id": f"t{i}", "author": "abc"[i % 3], "text": f"text {i}\r\nline two " * (i + 1)}
        for i in range(12)
    ]
    _write_jsonl(folder / "texts.jsonl", rows)
    monkeypatch.setenv("STYLO_DATA", str(tmp_path))
    return folder


def test_registry_lists_every_shared_folder():
    names = set(registry())
    for expected in [
        "blog",
        "enron",
        "federalist",
        "guardian",
        "imdb62",
        "mlpapers",
        "pan13_av_en",
        "pan14_av",
        "pan15_av_en",
        "pan18_cdaa",
        "pan19_cdaa",
        "pan20_av_test_labels",
    ]:
        assert expected in names
    assert registry()["guardian"].get("topic_field") == "topic"


def test_stylo_data_takes_precedence(tiny_root):
    assert data_roots()[0] == tiny_root.parent
    c = load("enron", verify=False)
    assert len(c) == 12 and set(c.authors) == {"a", "b", "c"}


def test_checksum_mismatch_names_the_file(tiny_root):
    with pytest.raises(DataError, match=r"texts\.jsonl: checksum mismatch"):
        load("enron")


def test_newlines_normalised_by_default_and_optional(tiny_root):
    assert all("\r" not in t for t in load("enron", verify=False).texts)
    assert any("\r\n" in t for t in load("enron", verify=False, normalize_newlines=False).texts)


@pytest.mark.parametrize(
    "bad, message",
    [
        ('{"id": "x", "author": "a", "text": "ok"', "malformed JSON"),
        ('["not", "an", "object"]', "expected a JSON object"),
        ('{"id": "x", "text": "no author"}', r"missing field\(s\) \['author'\]"),
        ('{"id": "x", "author": "a", "text": "   "}', "field 'text' is empty"),
        ('{"id": "x", "author": "a", "text": 3}', "field 'text' must be a string"),
    ],
)
def test_bad_lines_name_file_and_line(tiny_root, bad, message):
    path = tiny_root / "texts.jsonl"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(bad + "\n")
    with pytest.raises(DataError, match=rf"texts\.jsonl:13: {message}"):
        load("enron", verify=False)


def test_unknown_and_missing_datasets_are_clear(tmp_path, monkeypatch):
    with pytest.raises(DatasetNotAvailable, match="unknown dataset 'nope'"):
        load("nope")
    with pytest.raises(DatasetNotAvailable, match="no sub-corpus 'xx'"):
        load("pan14_av/xx")
    monkeypatch.setenv("STYLO_DATA", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    from stylo.datasets import _registry

    monkeypatch.setattr(_registry, "_REPO_ROOT", tmp_path / "repo")
    with pytest.raises(DatasetNotAvailable, match="not available on this machine.*guardian"):
        load("guardian")
    assert not available()["available"].any()


def test_a_corpus_of_ones_own_loads_from_its_folder_or_file(tmp_path, monkeypatch):
    mine = tmp_path / "my corpus"
    mine.mkdir()
    rows = [{"id": f"t{i}", "author": "ab"[i % 2], "text": f"post {i} " * 3} for i in range(6)]
    _write_jsonl(mine / "texts.jsonl.gz", rows)
    monkeypatch.chdir(tmp_path)
    for name in (str(mine), "my corpus", str(mine / "texts.jsonl.gz")):
        c = load(name, min_per_author=3)
        assert isinstance(c, Corpus) and c.name == name and len(c) == 6
        assert c.texts == [r["text"] for r in rows] and set(c.authors) == {"a", "b"}
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    _write_jsonl(pairs / "pairs.jsonl", [{"id": "p", "pair": ["a b", "c d"], "same": True}])
    assert load(str(pairs)).labels.tolist() == [True]
    # a bad line is named as in a registered corpus; a folder without a corpus file says so
    _write_jsonl(mine / "texts.jsonl.gz", [*rows, {"id": "x", "text": "no author"}])
    with pytest.raises(DataError, match=r"texts\.jsonl\.gz:7: missing field"):
        load(str(mine))
    _write_jsonl(mine / "pairs.jsonl", [{"id": "p", "pair": ["a", "b"]}])
    with pytest.raises(DataError, match="found texts.jsonl.gz and pairs.jsonl$"):
        load(str(mine))
    with pytest.raises(DataError, match="found none$"):
        load(str(tmp_path))
    with pytest.raises(
        DataError, match="no such file or folder, and 'nowhere' is not a registered"
    ):
        load("nowhere/else")
    with pytest.raises(DataError, match="a corpus file is named one of texts.jsonl"):
        _write_jsonl(tmp_path / "mine.jsonl", rows)
        load(str(tmp_path / "mine.jsonl"))


def test_a_pan20_folder_of_ones_own_loads_with_its_truth(tmp_path, monkeypatch):
    folder = tmp_path / "pan20-train"
    folder.mkdir()
    pairs = [
        {"id": f"p{i}", "fandoms": [f"f{i % 3}", "f1"], "pair": [f"a{i} x", f"b{i} y"]}
        for i in range(4)
    ]
    truth = [
        {"id": f"p{i}", "same": i % 2 == 0, "authors": ["u1", "u1" if i % 2 == 0 else "u2"]}
        for i in range(4)
    ]
    _write_jsonl(folder / "pairs.jsonl", pairs)
    for name in (str(folder), str(folder / "pairs.jsonl")):
        # without truth.jsonl the pairs are read as they are: unlabelled
        assert not load(name).labelled
    _write_jsonl(folder / "truth.jsonl", truth)
    for name in (str(folder), str(folder / "pairs.jsonl")):
        got = load(name, min_tokens=2)
        assert (
            isinstance(got, PairSet)
            and got.name == name
            and got.labels.tolist()
            == [
                True,
                False,
                True,
                False,
            ]
        )
        assert got.frame["topics"].tolist()[1] == ["f1", "f1"]
        assert got.frame["authors"].tolist()[1] == ["u1", "u2"]
        assert [s.name for s in got.history] == ["min_tokens=2"]
    # a truth file that does not match its pairs is named in one line
    _write_jsonl(folder / "truth.jsonl", truth[:3])
    with pytest.raises(DataError, match=r"truth\.jsonl: ids do not match pairs\.jsonl"):
        load(str(folder))


def test_filters_are_explicit_and_counted(tiny_root):
    c = load("enron", verify=False, min_tokens=10, per_author=2, seed=3)
    steps = [(s.name, s.before, s.after) for s in c.history]
    assert steps[0] == ("min_tokens=10", 12, 10)  # 4 tokens per repeat, i + 1 repeats
    assert steps[1][0] == "per_author=2" and steps[1][2] == len(c) == 6
    again = load("enron", verify=False, min_tokens=10, per_author=2, seed=3)
    assert list(again.ids) == list(c.ids)
    other = [list(load("enron", verify=False, per_author=2, seed=s).ids) for s in range(6)]
    assert len({tuple(o) for o in other}) > 1


def test_filter_on_absent_value_is_an_error(tiny_root):
    with pytest.raises(ValueError, match="no rows with author='zz'"):
        load("enron", verify=False, author="zz")


def test_pan20_format_reader(tmp_path):
    _write_jsonl(
        tmp_path / "pairs.jsonl",
        [
            {"id": "p1", "fandoms": ["f1", "f2"], "pair": ["known one", "unknown one"]},
            {"id": "p2", "fandoms": ["f3", "f3"], "pair": ["known two", "unknown two"]},
        ],
    )
    unlabelled = load_pan20_format(tmp_path)
    assert not unlabelled.labelled and unlabelled.known == [["known one"], ["known two"]]
    _write_jsonl(
        tmp_path / "truth.jsonl",
        [
            {"id": "p1", "same": True, "authors": ["a", "a"]},
            {"id": "p2", "same": False, "authors": ["b", "c"]},
        ],
    )
    ps = load_pan20_format(tmp_path)
    assert list(ps.labels) == [True, False] and ps.frame["authors"][1] == ["b", "c"]
    _write_jsonl(tmp_path / "truth.jsonl", [{"id": "p1", "same": True}])
    with pytest.raises(DataError, match="ids do not match"):
        load_pan20_format(tmp_path)


def test_corpus_api():
    c = Corpus.from_lists(["a b", "c d", "e f"], ["x", "y", "x"], topics=["t1", "t2", "t2"])
    assert {k: list(v) for k, v in c.by_author().items()} == {"x": [0, 2], "y": [1]}
    sub = c.subset(["2", "0"])
    assert list(sub.texts) == ["e f", "a b"] and sub.has_topics
    assert list(c.subset(np.array([False, True, False])).authors) == ["y"]
    with pytest.raises(KeyError, match=r"unknown ids: \[\'9\'\]"):
        c.subset(["9"])
    with pytest.raises(ValueError, match="duplicate ids"):
        Corpus.from_lists(["a", "b"], ["x", "y"], ids=["1", "1"])
    assert "text" not in c.metadata.columns and len(c.to_frame()) == 3


# ---- real data --------------------------------------------------------------------------


def test_pan14_known_documents_are_kept_separate(dataset):
    ps = dataset("pan14_av/sp_articles", normalize_newlines=False)
    assert isinstance(ps, PairSet) and len(ps) == 200
    assert all(len(k) == 5 for k in ps.known)
    # joining the separate documents with the corpus's separator gives back pair[0] exactly
    path = [r for r in data_roots() if (r / "pan14_av").exists()][0] / "pan14_av/pairs.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
        raw = {json.loads(line)["id"]: json.loads(line)["pair"][0] for line in fh}
    for pid, known in zip(ps.ids, ps.known):
        assert "\n\n".join(known) == raw[pid]


def test_pan14_subcorpora_and_splits(dataset):
    en = dataset("pan14_av/en_novels", split="test")
    assert len(en) == 200 and en.labels.sum() == 100
    assert set(en.frame["corpus"]) == {"en_novels"}
    assert [(s.name, s.before, s.after) for s in en.history] == [
        ("split=test", 1442, 746),
        ("corpus=en_novels", 746, 200),
    ]


def test_real_corpora_counts_match_their_source_notes(dataset):
    assert dataset("blog", clean=False).summary()["texts"] == 30000
    assert dataset("imdb62").summary()["authors"] == 62
    fed = dataset("federalist")
    assert int(fed.frame["disputed"].sum()) == 12
    g = dataset("guardian")
    assert g.has_topics and set(g.topics) == {"books", "politics", "society", "uk", "world"}
    assert all("\r" not in t for t in dataset("pan13_av_en").unknown)


def test_repeated_loads_share_the_parse_but_not_the_table(tiny_root):
    first = load("enron", verify=False)
    first.frame.loc[0, "text"] = "changed"
    again = load("enron", verify=False)
    assert again.frame.loc[0, "text"] != "changed"
    # a file changed on disk is read again
    with open(tiny_root / "texts.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"id": "new", "author": "d", "text": "one more text"}\n')
    assert len(load("enron", verify=False)) == 13


def test_parsed_table_is_kept_on_disk_and_read_back(tiny_root, tmp_path, monkeypatch, caplog):
    from stylo.datasets import _readers

    cache = tmp_path / "parsed"
    monkeypatch.setenv("STYLO_PARSE_CACHE", str(cache))
    first = load("enron", verify=False)
    (kept,) = cache.glob("*.pkl")
    # a new process (no parse in memory) reads the kept table and never parses
    _readers.read_cached.cache_clear()
    with monkeypatch.context() as m:
        m.setattr(_readers, "_read_texts", lambda *a: pytest.fail("parsed again"))
        again = load("enron", verify=False)
    assert again.frame.equals(first.frame) and again.texts == first.texts
    # a changed file is parsed again and its new parse replaces the old one
    with open(tiny_root / "texts.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"id": "new", "author": "d", "text": "one more text"}\n')
    assert len(load("enron", verify=False)) == 13
    (newer,) = cache.glob("*.pkl")
    assert newer != kept
    # an unreadable entry is parsed afresh, with a warning naming it, and replaced
    newer.write_bytes(b"not a pickle")
    _readers.read_cached.cache_clear()
    with caplog.at_level("WARNING", logger="stylo.datasets"):
        assert len(load("enron", verify=False)) == 13
    assert str(newer) in caplog.text and "parsing" in caplog.text
    assert len(pd.read_pickle(newer)) == 13
    # a malformed file is never kept: it fails with its line every time
    _readers.read_cached.cache_clear()
    with open(tiny_root / "texts.jsonl", "a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    for _ in range(2):
        with pytest.raises(DataError, match=r"texts.jsonl:14"):
            load("enron", verify=False)
    # empty: nothing kept
    off = tmp_path / "off"
    monkeypatch.setenv("STYLO_PARSE_CACHE", "")
    monkeypatch.setattr(_readers, "DEFAULT_PARSE_CACHE", off)
    (tiny_root / "texts.jsonl").write_text('{"id": "a", "author": "x", "text": "t u"}\n')
    assert len(load("enron", verify=False)) == 1 and not off.exists()


def test_dataset_table_prints_counts_as_integers(capsys):
    # a texts row and a pairs row: each lacks the other's counts, which made them floats
    from stylo.datasets.__main__ import main

    for name in ["federalist", "pan13_av_en"]:
        try:
            load(name)
        except DatasetNotAvailable as exc:
            pytest.skip(f"dataset {name!r} not available: {exc}")
    assert main(["federalist", "pan13_av_en"]) == 0
    out = capsys.readouterr().out
    texts, problems = len(load("federalist")), len(load("pan13_av_en"))
    assert f" {texts} " in out and f" {problems} " in out
    assert f"{texts}.0" not in out and f"{problems}.0" not in out


# ---- duplicate ids, byte order marks, empty files ----------------------------------------


def test_duplicate_text_id_names_file_line_and_id(tiny_root):
    with open(tiny_root / "texts.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"id": "t3", "author": "a", "text": "again"}\n')
    with pytest.raises(DataError, match=r"texts\.jsonl:13: duplicate id 't3' \(first on line 4\)"):
        load("enron", verify=False)


def test_duplicate_pair_id_names_file_line_and_id(tmp_path, monkeypatch):
    (tmp_path / "pan15_av_en").mkdir()
    _write_jsonl(
        tmp_path / "pan15_av_en" / "pairs.jsonl",
        [{"id": f"p{i % 2}", "pair": ["known", "unknown"]} for i in range(3)],
    )
    monkeypatch.setenv("STYLO_DATA", str(tmp_path))
    with pytest.raises(DataError, match=r"pairs\.jsonl:3: duplicate id 'p0' \(first on line 1\)"):
        load("pan15_av_en", verify=False)


@pytest.mark.parametrize("name", ["pairs.jsonl", "truth.jsonl"])
def test_pan20_format_duplicate_id_names_file_line_and_id(tmp_path, name):
    _write_jsonl(tmp_path / "pairs.jsonl", [{"id": f"p{i}", "pair": ["k", "u"]} for i in range(2)])
    _write_jsonl(tmp_path / "truth.jsonl", [{"id": f"p{i}", "same": True} for i in range(2)])
    with open(tmp_path / name, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "p1", "pair": ["k", "u"], "same": False}) + "\n")
    with pytest.raises(DataError, match=rf"{name}:3: duplicate id 'p1' \(first on line 2\)"):
        load_pan20_format(tmp_path)


def test_pairset_duplicate_ids_are_named():
    with pytest.raises(ValueError, match=r"PairSet 'pairs' has duplicate ids: \['7'\]"):
        PairSet.from_lists(["a", "b"], ["c", "d"], ids=["7", "7"])


@pytest.mark.parametrize("keyword", ["label", "labels", "y"])
def test_pairset_labels_passed_under_another_name_point_at_same(keyword):
    # as a column the labels would leave the pairs unlabelled, to fail later at fit
    with pytest.raises(ValueError, match=rf"^PairSet.from_lists: {keyword}= .* go in same="):
        PairSet.from_lists(["a b"], ["c d"], **{keyword: [True]})
    assert PairSet.from_lists(["a b"], ["c d"], same=[True], topic=["x"]).labelled


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_byte_order_mark_at_start_of_jsonl_is_accepted(tmp_path, suffix):
    path = tmp_path / f"pairs.jsonl{suffix}"
    data = "\ufeff" + json.dumps({"id": "p1", "pair": ["known", "unknown"]}) + "\n"
    opener = gzip.open if suffix else open
    with opener(path, "wb") as fh:
        fh.write(data.encode("utf-8"))
    assert read_jsonl(path, required=("id",)) == [{"id": "p1", "pair": ["known", "unknown"]}]
    if not suffix:
        assert list(load_pan20_format(tmp_path).ids) == ["p1"]


def test_empty_pan20_pairs_file_is_a_data_error(tmp_path):
    (tmp_path / "pairs.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"pairs\.jsonl: no records"):
        load_pan20_format(tmp_path)


def test_registry_cleaning_drops_short_texts_then_repeats_and_says_so():
    from stylo.datasets._filters import registry_cleaning

    long_a, long_b = "word " * 25, "other words here " * 10
    corpus = Corpus(
        pd.DataFrame(
            {
                "id": list("abcdef"),
                "author": ["x", "y", "x", "z", "y", "z"],
                "text": [
                    "Abstract Unavailable",
                    long_a,
                    "Abstract Unavailable",
                    long_b,
                    long_a,
                    "Jane Doe, Some University",
                ],
            }
        ),
        name="papers",
    )
    entry = {"min_text_tokens": 20, "drop_repeated_texts": True}
    clean = registry_cleaning(corpus, entry)
    assert list(clean.frame["id"]) == ["b", "d"]  # the first copy of a repeated text stays
    assert [str(s) for s in clean.history] == [
        "registry min_text_tokens: 6 -> 3 (20)",
        "registry drop_repeated_texts: 3 -> 2 (first row of each text kept)",
    ]
    assert registry_cleaning(corpus, {}).frame.equals(corpus.frame)


@pytest.mark.real_data
def test_mlpapers_loads_without_placeholder_or_repeated_abstracts(dataset):
    papers = dataset("mlpapers")
    tokens = np.array([len(t.split()) for t in papers.texts])
    assert tokens.min() >= 20 and not papers.frame["text"].duplicated().any()
    assert "Abstract Unavailable" not in set(papers.texts)
    steps = {s.name: (s.before, s.after) for s in papers.history}
    raw = steps["registry min_text_tokens"][0]
    assert raw == len(dataset("mlpapers", clean=False)) > len(papers)
    assert steps["registry drop_repeated_texts"][1] == len(papers)


@pytest.mark.real_data
def test_blog_loads_each_post_once_and_no_post_under_two_bloggers(dataset):
    raw = dataset("blog", clean=False).frame
    shared = raw.groupby("text")["author"].nunique()
    assert (shared > 1).sum() == 168  # cross-posted by several bloggers in the file
    posts = dataset("blog").frame
    assert not posts["text"].duplicated().any()
    assert len(posts) == 29780 and posts["author"].nunique() == 2999
    assert [(s.name, s.before, s.after) for s in dataset("blog").history] == [
        ("registry drop_repeated_texts", 30000, 29780)
    ]
