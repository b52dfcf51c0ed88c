"""LambdaG: the Kneser-Ney kernel against NLTK and its plain composition, and the verifier."""

import copy
import itertools
import re
import unicodedata
import warnings

import numpy as np
import pytest
from baselines_synth import synthetic_corpus, synthetic_pairs
from hypothesis import given, settings
from hypothesis import strategies as st

from baselines._kneser_ney import (
    kneser_ney_logprobs,
    kneser_ney_logprobs_reference,
    known_model_totals,
    reference_model_totals,
    sentence_store,
)
from baselines._sentence_tokens import BREAK, SentenceTokens, reference_tokens
from baselines.lambdag import LambdaG
from baselines.registry import make
from stylo.corpus import PairSet
from stylo.metrics.pan import auc
from stylo.verifier import training_pairs

N_SYM = 9  # ids 2..7 appear in training, 8 only in test sentences (never seen)


def sentences(max_id, min_size=1, max_size=8):
    return st.lists(
        st.lists(st.integers(2, max_id), min_size=1, max_size=10).map(
            lambda s: np.array(s, dtype=np.int64)
        ),
        min_size=min_size,
        max_size=max_size,
    )


@settings(max_examples=60, deadline=None)
@given(
    train=sentences(7),
    test=sentences(N_SYM - 1),
    order=st.integers(2, 6),
    discount=st.sampled_from([0.1, 0.5, 0.75]),
    eps=st.sampled_from([0.0, 0.01]),
)
def test_kneser_ney_agrees_with_nltk(train, test, order, discount, eps):
    fast = kneser_ney_logprobs(train, test, order, N_SYM, discount, eps)
    slow = kneser_ney_logprobs_reference(train, test, order, N_SYM, discount, eps)
    # a token the model never saw has probability 0 in NLTK's model: -inf in both
    assert np.array_equal(np.isneginf(fast), np.isneginf(slow))
    assert not np.isneginf(fast).any() or eps == 0.0
    finite = np.isfinite(slow)
    np.testing.assert_allclose(fast[finite], slow[finite], rtol=0, atol=1e-9)


def test_kneser_ney_refuses_order_one():
    with pytest.raises(ValueError, match="order"):
        kneser_ney_logprobs([np.array([2, 3])], [np.array([2])], 1, N_SYM)


@settings(max_examples=30, deadline=None)
@given(
    pool=sentences(7, min_size=2, max_size=12),
    queries=sentences(N_SYM - 1, max_size=4),
    order=st.integers(2, 5),
    n_refs=st.integers(1, 3),
    seed=st.integers(0, 2**16),
    data=st.data(),
    n_threads=st.sampled_from([1, 2]),
)
def test_reference_totals_equal_models_fitted_per_query(
    pool, queries, order, n_refs, seed, data, n_threads
):
    """Growing one model per reference across queries = fitting each query's prefix anew, on
    one thread or with the references in blocks on several."""
    rng = np.random.default_rng(seed)
    orders = np.stack([rng.permutation(len(pool)) for _ in range(n_refs)])
    sizes = np.array(
        data.draw(st.lists(st.integers(0, 40), min_size=len(queries), max_size=len(queries)))
    )
    pool_tok, pool_starts = sentence_store(pool)
    tok, starts = sentence_store(queries)
    got = reference_model_totals(
        pool_tok,
        pool_starts,
        orders,
        sizes,
        tok,
        starts,
        [(q, q + 1) for q in range(len(queries))],
        order,
        N_SYM,
        0.75,
        0.01,
        n_threads,
    )
    for q, size in enumerate(sizes):
        for r in range(n_refs):
            n, have = 0, 0
            while n < len(pool) and (have < size or n == 0):
                have += len(pool[orders[r, n]])
                n += 1
            prefix = [pool[i] for i in orders[r, :n]]
            want = kneser_ney_logprobs(prefix, [queries[q]], order, N_SYM, 0.75, 0.01)[0]
            assert got[q, r] == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_known_totals_sum_sentences_of_each_query(n_threads):
    rng = np.random.default_rng(0)
    sents = [rng.integers(2, 8, size=rng.integers(1, 9)) for _ in range(12)]
    tok, starts = sentence_store(sents)
    got = known_model_totals(
        tok,
        starts,
        [np.arange(0, 5), np.array([5, 7])],
        [[(8, 10), (10, 12)], [(8, 12)]],
        3,
        N_SYM,
        0.75,
        0.01,
        n_threads,
    )
    first = kneser_ney_logprobs(sents[:5], sents[8:], 3, N_SYM, 0.75, 0.01)
    second = kneser_ney_logprobs([sents[5], sents[7]], sents[8:], 3, N_SYM, 0.75, 0.01)
    np.testing.assert_allclose(got[0], [first[:2].sum(), first[2:].sum()], atol=1e-9)
    np.testing.assert_allclose(got[1], [second.sum()], atol=1e-9)


# -- the verifier ----------------------------------------------------------------------------
SMALL = dict(order=4, n_references=5)
# one draw, so that training and test pairs share the pseudo-words (authors differ per pair)
PAIRS = synthetic_pairs(n_pairs=100, seed=0)
TRAIN, TEST = PAIRS.subset(np.arange(60)), PAIRS.subset(np.arange(60, 100))


@pytest.fixture(scope="module")
def fitted():
    return LambdaG(**SMALL).fit(TRAIN)


def test_fit_returns_self_with_fitted_attributes():
    est = LambdaG(**SMALL)
    assert est.fit(TRAIN) is est
    assert est.reference_orders_.shape[0] == 5
    assert len(est.train_lambdas_) == len(TRAIN)


def test_separates_same_from_different_authors(fitted):
    scores = fitted.score_problems(TEST)
    assert ((scores >= 0) & (scores <= 1)).all()
    assert auc(TEST.labels, scores) > 0.9
    raw = fitted.raw_scores(TEST)
    assert raw[TEST.labels].mean() > raw[~TEST.labels].mean()


def test_fits_on_a_corpus_with_author_folds():
    corpus = synthetic_corpus(n_authors=12, per_author=4, seed=0)
    train = corpus.subset(np.flatnonzero(np.isin(corpus.authors, [f"author{a}" for a in range(8)])))
    est = LambdaG(**SMALL, n_pairs=40).fit(train)
    held_out = corpus.subset(np.flatnonzero(~np.isin(corpus.authors, train.authors)))
    test = training_pairs(held_out, n_pairs=30, seed=1)
    assert auc(test.labels, est.score_problems(test)) > 0.8


def test_empty_text_is_no_answer(fitted):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = fitted.score_pairs([TEST.known[0][0], "  "], ["", TEST.unknown[1]])
    assert scores.tolist() == [0.5, 0.5]


def test_rank_prefers_the_query_author(fitted):
    same = np.flatnonzero(TEST.labels)
    hits = 0
    for i in same:
        others = [TEST.unknown[j] for j in same if j != i][:3]
        s = fitted.rank(TEST.known[i][0], [TEST.unknown[i], *others])
        hits += int(np.argmax(s) == 0)
        assert ((s >= 0) & (s <= 1)).all()
    assert hits >= 0.8 * len(same)


def test_attribution_orders_candidates_as_their_lambdas(fitted):
    # no grey zone: candidates inside it would tie at 0.5 and the first would win; a zone
    # over nearly all of [0, 1] would tie every candidate here
    wide = copy.deepcopy(fitted)
    wide.calibrator_.p1_, wide.calibrator_.p2_ = 1e-300, 1 - 1e-16
    cands = [TEST.known[i] for i in range(6)]
    texts = list(TEST.unknown[:10])
    pairs = PairSet.from_lists([c for _ in texts for c in cands], [t for t in texts for _ in cands])
    assert (wide.score_problems(pairs) == 0.5).mean() > 0.9
    got = wide.attribute(cands, texts)
    raw = wide.raw_scores(pairs).reshape(got.shape)
    for g, r in zip(got, raw):
        assert np.all(np.diff(g[np.argsort(r)]) >= 0) and g.argmax() == r.argmax()


def test_deterministic_by_seed():
    a = LambdaG(**SMALL, random_state=3).fit(TRAIN).raw_scores(TEST)
    b = LambdaG(**SMALL, random_state=3).fit(TRAIN).raw_scores(TEST)
    c = LambdaG(**SMALL, random_state=4).fit(TRAIN).raw_scores(TEST)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(
    "bad", [dict(order=1), dict(discount=1.0), dict(n_references=0), dict(eps=0.0), dict(n_folds=1)]
)
def test_rejects_bad_parameters(bad):
    with pytest.raises(ValueError):
        LambdaG(**bad).fit(TRAIN)


def test_registered():
    assert isinstance(make("lambdag", seed=2), LambdaG)
    assert make("lambdag", seed=2).random_state == 2


def test_corpus_with_too_few_authors_for_author_folds():
    corpus = synthetic_corpus(n_authors=3, per_author=4, seed=0)
    est = LambdaG(**SMALL, n_pairs=20).fit(corpus)
    assert len(est.train_lambdas_) == 20


def test_corpus_with_one_author_per_author_fold_uses_text_folds():
    # 3 authors x 5 texts and 3 folds: an author fold holds one author (no different-author
    # pair), and 200 pairs drawn over the whole corpus would hold out every text of the pool
    corpus = synthetic_corpus(n_authors=3, per_author=5, seed=1)
    est = LambdaG(**SMALL, n_folds=3).fit(corpus)
    assert np.isfinite(est.train_lambdas_).all()
    assert set(est.train_labels_) == {True, False}


def test_dense_training_pairs_over_few_texts_use_text_folds():
    # 200 problems over 24 texts: each third of the problems touches every text, which left
    # the references of every fold empty (Guardian's Rethinking-AV training pairs did this)
    corpus = synthetic_corpus(n_authors=6, per_author=4, seed=2)
    dense = training_pairs(corpus, n_pairs=200, seed=0)
    est = LambdaG(**SMALL, n_folds=3).fit(dense)
    assert np.isfinite(est.train_lambdas_).all()
    assert set(est.train_labels_) == {True, False}
    # fewer problems than that keep the problem folds: every training problem is scored
    sparse = PAIRS.subset(np.arange(60))
    assert len(LambdaG(**SMALL, n_folds=3).fit(sparse).train_lambdas_) == 60


def test_han_and_kana_are_tokens_and_cjk_stops_end_sentences():
    # no space follows 。！？ and none parts the words: without these rules a Chinese text is
    # one sentence of one token per clause
    want = ["你", "好", "。", BREAK, "我", "們", "！", BREAK, "x", ".", BREAK, "の", "？", BREAK]
    assert reference_tokens("你好。我們！ x. の？") == want
    got = SentenceTokens(["你好。我們！ x. の？"])
    assert sorted(got.distinct()) == sorted(set(want) - {BREAK})
    ids, lengths = got.ids({w: i for i, w in enumerate(sorted(set(want) - {BREAK}))}, 99)[0]
    assert lengths.tolist() == [3, 3, 2, 2]


def test_marks_stay_in_words_and_dandas_end_sentences():
    # Devanagari vowel signs and viramas are combining marks, not word characters of \w:
    # without the marks a Hindi word falls apart into its consonants
    text = "हिन्दी भाषा। बहुत सुंदर है॥ كَتَبَ؟ x"
    want = ["हिन्दी", "भाषा", "।", BREAK, "बहुत", "सुंदर", "है", "॥", BREAK, "كَتَبَ", "؟", BREAK, "x"]
    assert reference_tokens(text) == want
    assert sorted(SentenceTokens([text]).distinct()) == sorted(set(want) - {BREAK})


def _ids_per_sentence(est, texts):
    """The plain reference of ``_token_ids``: split each distorted, lower-cased text
    into sentences, each sentence into tokens, and look every token up."""
    stops = ".!?\u0964\u0965\u061f\u06d4\u0589\u1362\u104b"
    sentence_break = re.compile(f"(?<=[{re.escape(stops)}])\\s+|(?<=[。！？])\\s*|\\s*\\n\\s*")
    han_kana = re.compile(
        "[\u3005\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
        "\uff66-\uff9f\U00020000-\U0003134f]"
    )

    def kind(c):
        # a letter (\w but digits and "_") or a combining mark, but Han and kana; "*"; "#"
        letter = (c.isalnum() and not c.isdecimal()) or unicodedata.category(c)[0] == "M"
        if letter and not han_kana.match(c):
            return "letter"
        return "space" if c.isspace() else c if c in "*#" else None

    def tokens(sentence):
        out = []
        for k, group in itertools.groupby(sentence, kind):
            chars = list(group)
            if k != "space":
                out.extend(["".join(chars)] if k else chars)
        return out

    get = est.vocabulary_.get
    out = []
    for text in est.distortion_.transform(texts):
        sentences = [tokens(s) for s in sentence_break.split(text.lower())]
        out.append([np.array([get(w, 2) for w in s], dtype=np.int64) for s in sentences if s])
    return out


_PIECES = st.sampled_from(
    ["the", "The", "of", "x", "Zoë", "İs", "42", "3.5", ".", "!", "?", "*", "#", "**", "...",
     " ", "  ", "\n", " \n ", "\t", "\r", "\u00a0", "\u2028", "é", "_", "—", "\x00",
     "ΣΑ", "ǅ", "\ud800", "²", "\u0301", "😀", "\x1c", "中文", "の", "ア", "。", "！", "？",
     "हिन्दी", "\u093f", "।", "كَتَبَ", "\U00011001"]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=40).map("".join), min_size=1, max_size=4))
def test_token_ids_in_one_pass_equal_sentence_by_sentence(fitted, texts):
    want = _ids_per_sentence(fitted, texts)
    for (ids, lengths), sentences in zip(fitted._token_ids(texts), want, strict=True):
        assert ids.dtype == np.int64 and lengths.dtype == np.int64
        assert list(lengths) == [len(s) for s in sentences]
        assert ids.tolist() == [i for s in sentences for i in s.tolist()]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=40).map("".join), max_size=4))
def test_sentence_tokens_equal_the_python_reference(texts):
    # the kernel's tokens and a vocabulary of them, against reference_tokens' (texts with a
    # context-lowered letter go to the Python; the others are the kernel's own)
    got = SentenceTokens(texts)
    want = [reference_tokens(t) for t in texts]
    words = sorted({w for ts in want for w in ts} - {BREAK})
    assert sorted(got.distinct()) == words
    vocabulary = {w: i for i, w in enumerate(words[::2], start=3)}
    for (ids, lengths), tokens in zip(got.ids(vocabulary, 2), want, strict=True):
        sizes, size = [], 0
        for w in [*tokens, BREAK]:
            if w != BREAK:
                size += 1
            elif size:
                sizes.append(size)
                size = 0
        assert lengths.tolist() == sizes
        assert ids.tolist() == [vocabulary.get(w, 2) for w in tokens if w != BREAK]


def test_token_ids_of_training_texts_equal_sentence_by_sentence(fitted):
    texts = list(dict.fromkeys([t for ks in PAIRS.known for t in ks] + list(PAIRS.unknown)))
    texts += ["Mr. Smith went.\n\nTo Washington!  Did he?\tYes... 12,500 words: *really*"]
    got = fitted._token_ids(texts)
    for (ids, lengths), sentences in zip(got, _ids_per_sentence(fitted, texts), strict=True):
        assert list(lengths) == [len(s) for s in sentences]
        np.testing.assert_array_equal(ids, np.concatenate(sentences))
