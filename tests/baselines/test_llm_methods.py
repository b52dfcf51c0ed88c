"""Prompts, answer parsing and the prompted methods on a scripted backend (no model needed)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_fakes import ScriptedBackend
from sklearn.base import clone

from baselines.llm import PromptedLLM, ranking_scores
from baselines.rag import RAGRanker
from baselines.random_guess import RandomGuess
from stylo.llm import ResponseCache
from stylo.llm.parse import extract_json, parse_choice, parse_ranking, parse_verdict
from stylo.llm.prompts import FAMILIES, choose_prompt, rank_prompt, verify_prompt

# -- prompts -------------------------------------------------------------------------------------


def test_families_differ_in_the_evidence_they_name():
    texts = {f: verify_prompt("AAA", "BBB", f).messages[-1]["content"] for f in FAMILIES}
    assert len(set(texts.values())) == len(FAMILIES)
    assert all("AAA" in t and "BBB" in t for t in texts.values())
    assert "topic and content:" in texts["general"]
    assert "topic and content:" not in texts["topic_ignored"]
    assert "ignore any difference in topic" in texts["topic_ignored"]
    assert "ignore" not in texts["no_topic"]
    assert "linguistic features:" not in texts["no_linguistic"]
    assert "writing style:" not in texts["no_style"]
    with pytest.raises(ValueError, match="unknown prompt family"):
        verify_prompt("a", "b", "nope")


def test_schemas_match_the_tasks():
    assert verify_prompt("a", "b").schema["properties"]["same"] == {"type": "boolean"}
    assert choose_prompt("q", "a", "b").schema["properties"]["answer"]["enum"] == [1, 2]
    rs = rank_prompt("q", ["a", "b", "c", "d"], explain=True).schema
    assert rs["required"] == ["analysis", "ranking"]
    assert rs["properties"]["ranking"]["items"]["enum"] == [1, 2, 3, 4]
    body = rank_prompt("q", ["a", "b", "c", "d"]).messages[-1]["content"]
    assert [int(x) for x in re.findall(r"Candidate (\d+):", body)] == [1, 2, 3, 4]


# -- parsing -------------------------------------------------------------------------------------


@settings(deadline=None)
@given(st.permutations(list(range(1, 9))), st.integers(1, 8))
def test_ranking_round_trip(perm, m):
    got = parse_ranking(json.dumps({"ranking": perm[:m]}), 8)
    assert got.ok and got.value == [k - 1 for k in perm[:m]]


@settings(deadline=None, max_examples=60)
@given(st.text(max_size=200))
def test_parsers_never_raise(text):
    for p in (parse_verdict(text), parse_choice(text, 2), parse_ranking(text, 5)):
        assert p.status in ("ok", "unparseable", "invalid")
        assert (p.value is not None) == p.ok


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"same": true}', True),
        ('```json\n{"same": false}\n```', False),
        ('Sure! {"analysis": "x", "same": "yes"} done', True),
        ("No, they differ.", False),
        ('{"same": tru', None),
        ('{"same": 3}', "invalid"),
        ("Maybe.", None),
    ],
)
def test_parse_verdict(text, expected):
    got = parse_verdict(text)
    if expected is None:
        assert got.status == "unparseable"
    elif expected == "invalid":
        assert got.status == "invalid"
    else:
        assert got.ok and got.value is expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"answer": 2}', 1),
        ('{"answer": "Candidate 1"}', 0),
        ('{"answer": 3}', "invalid"),
        ('{"answer": true}', "invalid"),
        ('"answer": 1,', 0),
        ("2", 1),
        ("none", None),
    ],
)
def test_parse_choice(text, expected):
    got = parse_choice(text, 2)
    if expected is None:
        assert got.status == "unparseable"
    elif expected == "invalid":
        assert got.status == "invalid"
    else:
        assert got.ok and got.value == expected


def test_parse_ranking_rejects_unknown_and_repeated_candidates():
    assert parse_ranking('{"ranking": [1, 4]}', 3).status == "invalid"
    assert parse_ranking('{"ranking": [2, 2]}', 3).status == "invalid"
    assert parse_ranking('{"ranking": []}', 3).status == "invalid"
    assert parse_ranking('{"ranking": ["text 2", "candidate 1"]}', 3).value == [1, 0]
    assert parse_ranking('{"ranking": [3, 1, 2', 3).value == [2, 0]  # cut off after 2
    assert extract_json('x {"a": 1} {"ranking": [1]}', "ranking") == {"ranking": [1]}


def test_ranking_scores():
    np.testing.assert_array_equal(ranking_scores(None, 3), [0.5, 0.5, 0.5])
    s = ranking_scores([2, 0], 4)
    assert s[2] == 1.0 and 0.5 < s[0] < 1.0 and s[1] == s[3] == 0.5


# -- methods on a scripted backend -----------------------------------------------------------------


def _oracle(messages):
    """Answers by looking for the marker word 'alpha' that the test puts in same-author texts."""
    user = messages[-1]["content"]
    parts = re.split(r"(?:Candidate \d+|Text \d+|Query text):\n", user)[1:]
    if "Decide whether" in user:
        return json.dumps({"same": all("alpha" in p for p in parts)})
    hits = [i + 1 for i, p in enumerate(parts[1:]) if "alpha" in p]
    if "Exactly one" in user:
        return json.dumps({"answer": hits[0]})
    rest = [i for i in range(1, len(parts)) if i not in hits]
    return json.dumps({"ranking": hits + rest})


def test_prompted_llm_answers_all_three_tasks():
    m = PromptedLLM(backend=ScriptedBackend(_oracle), prompt="topic_ignored").fit()
    np.testing.assert_array_equal(
        m.score_pairs(["alpha a", "alpha b"], ["alpha c", "d"]), [1.0, 0.0]
    )
    assert m.choose("alpha q", "x", "alpha y") == 1
    s = m.rank("alpha q", ["x", "y", "alpha z", "w"])
    assert np.argmax(s) == 2
    ans = m.answers_frame()
    assert list(ans["task"]) == ["verify", "verify", "choose", "rank"]
    assert (ans["status"] == "ok").all() and (ans["prompt"] == "topic_ignored").all()
    assert (ans["prompt_tokens"] > 0).all()


def test_over_window_is_an_abstention_without_a_call():
    backend = ScriptedBackend(_oracle, context_window=100)
    m = PromptedLLM(backend=backend).fit()
    s = m.rank("alpha " + "word " * 300, ["x", "alpha y", "z"])
    np.testing.assert_array_equal(s, [0.5, 0.5, 0.5])
    assert m.answers_frame()["status"].tolist() == ["over_window"]
    assert backend.n_backend_calls == 0


def test_clone_shares_the_backend_and_cache(tmp_path):
    backend = ScriptedBackend(_oracle, cache=ResponseCache(tmp_path / "c.sqlite"))
    m = PromptedLLM(backend=backend, prompt="no_style")
    c = clone(m)
    assert c.backend is backend and c.prompt == "no_style"
    c.fit().score_pairs(["alpha"], ["alpha"])
    PromptedLLM(backend=backend, prompt="no_style").fit().score_pairs(["alpha"], ["alpha"])
    assert backend.n_backend_calls == 1 and len(backend.cache) == 1


def test_max_text_chars_cuts_every_text_at_a_word_boundary():
    seen = []

    def record(messages):
        seen.append(messages[-1]["content"])
        return _oracle(messages)

    long_text = "alpha " + "wordy " * 200
    m = PromptedLLM(backend=ScriptedBackend(record), max_text_chars=20).fit()
    # the marker sits in the first 20 characters, so the answers survive the cut
    assert m.choose(long_text, "x " * 50, long_text) == 1
    assert np.argmax(m.rank(long_text, ["y " * 50, long_text, "z"])) == 1
    for prompt in seen:
        texts = re.findall(r'"""\n(.*?)\n"""', prompt, flags=re.S)
        assert len(texts) in (3, 4) and all(len(t) <= 20 for t in texts)
        assert "alpha wordy wordy" in texts  # cut after a whole word, not inside one
    uncut = PromptedLLM(backend=ScriptedBackend(record)).fit()
    uncut.choose(long_text, "x", long_text)
    assert long_text.rstrip() in seen[-1]


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "20"])
def test_max_text_chars_must_be_a_positive_integer(bad):
    with pytest.raises(
        ValueError,
        match=f"max_text_chars must be None or a positive integer, got {re.escape(repr(bad))}",
    ):
        PromptedLLM(backend=ScriptedBackend(_oracle), max_text_chars=bad).fit()


def test_unknown_family_rejected_at_fit():
    with pytest.raises(ValueError, match="prompt family"):
        PromptedLLM(backend=ScriptedBackend(_oracle), prompt="fancy").fit()


def _first_slot(messages):
    """A position-only judge: always the first candidate / first-listed text wins."""
    user = messages[-1]["content"]
    n = len(re.findall(r"Candidate \d+:", user))
    if "Decide whether" in user:
        return json.dumps(
            {"same": user.index("Text 1") < user.index("alpha") < user.index("Text 2")}
        )
    if "Exactly one" in user:
        return json.dumps({"answer": 1})
    return json.dumps({"ranking": list(range(1, n + 1))})


def test_both_orders_turns_position_answers_into_abstentions():
    plain = PromptedLLM(backend=ScriptedBackend(_first_slot)).fit()
    both = PromptedLLM(backend=ScriptedBackend(_first_slot), both_orders=True).fit()
    np.testing.assert_array_equal(plain.rank("q", ["x", "alpha y"]), [1.0, 0.75])
    np.testing.assert_array_equal(both.rank("q", ["x", "alpha y"]), [0.875, 0.875])
    # a ranking by position averages to a flat one; a verdict that flips with the order is 0.5
    s = both.rank("q", ["x", "y", "z"])
    np.testing.assert_allclose(s, s[0])
    np.testing.assert_array_equal(both.score_pairs(["alpha a"], ["b"]), [0.5])
    ans = both.answers_frame()
    assert ans["task"].tolist() == ["choose", "choose", "rank", "rank", "verify", "verify"]


def test_both_orders_keeps_consistent_answers():
    m = PromptedLLM(backend=ScriptedBackend(_oracle), both_orders=True).fit()
    assert m.choose("alpha q", "x", "alpha y") == 1 and m.choose("alpha q", "alpha x", "y") == 0
    np.testing.assert_array_equal(m.rank("alpha q", ["x", "alpha y"]), [0.75, 1.0])
    s = m.rank("alpha q", ["x", "y", "alpha z", "w"])
    assert np.argmax(s) == 2
    np.testing.assert_array_equal(
        m.score_pairs(["alpha a", "alpha b"], ["alpha c", "d"]), [1.0, 0.0]
    )
    # one order abstains: the other order's answer still decides, at half the margin
    half = PromptedLLM(
        backend=ScriptedBackend(
            lambda msgs: _oracle(msgs) if '1:\n"""\nx' in msgs[-1]["content"] else "??"
        ),
        both_orders=True,
    ).fit()
    np.testing.assert_array_equal(half.rank("alpha q", ["x", "alpha y"]), [0.625, 0.75])


@pytest.mark.parametrize(
    "name",
    ["embedding", "llm-prompt", "llm-prompt-both-orders", "llm-likelihood", "rag-embedding-llm"],
)
def test_registered_model_methods_build_cheaply_and_pickle(name):
    """run_all's cells make these with no arguments, clone and pickle them into workers; no
    model may load before fit."""
    import pickle

    from baselines import registry

    m = registry.make(name, seed=7)
    assert registry.kind(name) in ("embedding", "llm")
    back = pickle.loads(pickle.dumps(m))
    assert type(back) is type(m) and repr(back) == repr(m) == repr(clone(m))
    assert not any(k.endswith("_") for k in vars(back))  # nothing fitted, nothing loaded
    if "random_state" in m.get_params():
        assert m.random_state == 7
    assert registry.make("llm-prompt-both-orders").both_orders
    rag = registry.make("rag-embedding-llm")
    assert rag.keep == 10 and rag.reranker is not registry.make("rag-embedding-llm").reranker


# -- RAG ------------------------------------------------------------------------------------------


class _Lengths(RandomGuess):
    """A first stage that prefers longer candidates (deterministic, needs no fit)."""

    def _rank_query(self, query, candidates):
        return np.array([len(c) for c in candidates], dtype=float)


def test_rag_reranks_kept_candidates_and_appends_the_rest():
    cands = ["aaaaaaaa", "b", "alpha cc", "ddddddddddd", "eeeee", "alpha"]
    rag = RAGRanker(_Lengths(), PromptedLLM(backend=ScriptedBackend(_oracle)), keep=3).fit()
    # first stage by length: 3 (11), 0 (8), 2 (8), 4 (5), 5 (5), 1 (1); keeps 3, 0, 2
    # the LLM puts the 'alpha' candidate 2 first; the rest keep first-stage order
    order = rag.order("alpha query", cands)
    np.testing.assert_array_equal(order, [2, 3, 0, 4, 5, 1])
    s = rag.rank("alpha query", cands)
    np.testing.assert_array_equal(np.argsort(-s, kind="stable"), order)
    assert rag.reranker_.answers_frame()["n_candidates"].tolist() == [3, 3]


def test_rag_with_abstaining_llm_keeps_first_stage_order():
    rag = RAGRanker(
        _Lengths(), PromptedLLM(backend=ScriptedBackend(lambda m: "no idea")), keep=2
    ).fit()
    np.testing.assert_array_equal(rag.order("q", ["a", "bbb", "cc"]), [1, 2, 0])
    with pytest.raises(ValueError, match="keep"):
        RAGRanker(_Lengths(), RandomGuess(), keep=0).fit()


# -- likelihood verifier on a stand-in language model ----------------------------------------------


class _OverlapLM:
    """nll_after stand-in: a second text gets cheaper the more words it shares with the first
    (what a real model does with repeated vocabulary)."""

    scores_likelihoods = True

    def __init__(self):
        self.seen = []

    def nll_after(self, first, seconds, max_text_tokens, score_first=True):
        self.seen.append(max_text_tokens)
        a = set(first.split())
        return self.nll(first, max_text_tokens) if score_first else np.nan, np.array(
            [3.0 - len(a & set(s.split())) / max(len(s.split()), 1) for s in seconds]
        )

    def nll(self, text, max_text_tokens):
        return 3.0 + 0.01 * len(text.split())


def test_likelihood_verifier_uses_both_directions_and_learns():
    from baselines.llm import LikelihoodVerifier
    from stylo.corpus import Corpus

    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(60)]
    texts, authors = [], []
    for a in range(6):  # each author draws from their own 10-word slice
        words = vocab[10 * a : 10 * a + 10]
        for _ in range(4):
            texts.append(" ".join(rng.choice(words, size=12)))
            authors.append(f"a{a}")
    lm = _OverlapLM()
    m = LikelihoodVerifier(backend=lm, max_text_tokens=32, n_train_pairs=40).fit(
        Corpus.from_lists(texts, authors)
    )
    assert set(lm.seen) == {32}
    d = m.drops([texts[0], texts[0]], [texts[1], texts[20]])
    assert d.shape == (2, 2) and d[0].min() > d[1].max()
    s = m.score_pairs([texts[0], texts[0]], [texts[1], texts[20]])
    assert s[0] > 0.5 > s[1]
    with pytest.raises(TypeError, match="likelihood"):
        LikelihoodVerifier(backend=ScriptedBackend(_oracle)).fit(Corpus.from_lists(texts, authors))


class _CountingLM(_OverlapLM):
    """_OverlapLM that records which texts were read as scored prefixes and alone."""

    def __init__(self):
        super().__init__()
        self.scored_prefixes, self.alone = [], []

    def nll_after(self, first, seconds, max_text_tokens, score_first=True):
        if score_first:
            self.scored_prefixes.append(first)
        return super().nll_after(first, seconds, max_text_tokens, score_first)

    def nll(self, text, max_text_tokens):
        self.alone.append(text)
        return super().nll(text, max_text_tokens)


def test_one_direction_reads_the_unknown_given_the_known_and_ranks_queries():
    from baselines.llm import LikelihoodVerifier
    from stylo.corpus import Corpus

    rng = np.random.default_rng(1)
    texts, authors = [], []
    for a in range(6):
        words = [f"w{i}" for i in range(10 * a, 10 * a + 10)]
        for _ in range(4):
            texts.append(" ".join(rng.choice(words, size=12)))
            authors.append(f"a{a}")
    lm = _CountingLM()
    m = LikelihoodVerifier(backend=lm, max_text_tokens=32, n_train_pairs=40, symmetric=False)
    m.fit(Corpus.from_lists(texts, authors))
    assert m.features_.shape == (40, 1) and lm.scored_prefixes == []
    lm.alone.clear()
    d = m.drops([texts[1], texts[20]], [texts[0], texts[0]])
    expected = [
        lm.nll(texts[0], 32) - lm.nll_after(k, [texts[0]], 32)[1][0] for k in texts[1:21:19]
    ]
    np.testing.assert_allclose(d[:, 0], expected)
    lm.alone.clear(), lm.scored_prefixes.clear()
    # ranking: the query is the unknown text, read alone once for all its candidates
    scores = m.rank_many([texts[0], texts[4]], [[texts[20], texts[1]], [texts[5], texts[9]]])
    assert scores[0][1] > scores[0][0] and scores[1][0] > scores[1][1]
    assert sorted(lm.alone) == sorted([texts[0], texts[4]]) and lm.scored_prefixes == []
    symmetric = LikelihoodVerifier(backend=lm, max_text_tokens=32, n_train_pairs=40)
    assert symmetric.fit(Corpus.from_lists(texts, authors)).features_.shape == (40, 2)
    with pytest.raises(ValueError, match="symmetric"):
        LikelihoodVerifier(backend=lm, symmetric="no").fit(Corpus.from_lists(texts, authors))
