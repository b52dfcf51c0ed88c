"""Background score normalisation, the cross-score kernel and the stacked ``ensemble``."""

from contextlib import nullcontext

import numpy as np
import pytest
from baselines_synth import synthetic_corpus, synthetic_pairs
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from baselines.ensemble import StackedVerifier, _logits, pair_groups
from baselines.masked import MaskedVerifier
from baselines.naive import CharNgramCosine
from baselines.nonnegative_logistic import NonNegativeLogisticRegression
from baselines.normalization import (
    BackgroundNormalized,
    _kept,
    _side_stats,
    author_groups,
    iterated_snorm_reference,
    snorm_reference,
)
from baselines.registry import make
from stylo.corpus import PairSet
from stylo.features import TextDistortion
from stylo.protocols import PROTOCOLS
from stylo.protocols.base import Task
from stylo.training_draws import training_triplets


@pytest.fixture(scope="module")
def corpus():
    return synthetic_corpus(n_authors=12, per_author=5, n_words=120, seed=3)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.floats(0, 1), min_size=4, max_size=4), min_size=1, max_size=5), st.data()
)
def test_side_stats_match_the_plain_mean_and_std(rows, data):
    scores = np.array(rows)
    keep = np.array([data.draw(st.lists(st.booleans(), min_size=4, max_size=4)) for _ in rows])
    keep[:, 0] = True  # every row keeps a score
    mean, std = _side_stats(scores, keep)
    for i, row in enumerate(scores):
        kept = row[keep[i]]
        assert mean[i] == pytest.approx(kept.mean(), abs=1e-12)
        assert std[i] == pytest.approx(max(kept.std(), 1e-6), abs=1e-12)


def test_cosine_cross_kernel_agrees_with_the_pair_kernel(corpus):
    cos = CharNgramCosine(ngram_size=4, min_n=1, max_features=2000, sublinear_tf=True)
    cos.fit(corpus)
    a, b = corpus.texts[:7], corpus.texts[20:31]
    fast = cos.score_cross(a, b)
    plain = cos.score_pairs([x for x in a for _ in b], [y for _ in a for y in b])
    assert fast.shape == (7, 11)
    np.testing.assert_allclose(fast.ravel(), plain, atol=1e-12)


def test_snorm_kernel_agrees_with_the_reference(corpus):
    inner = CharNgramCosine(max_features=2000)
    est = BackgroundNormalized(inner, n_background=15).fit(corpus)
    known, unknown = corpus.texts[:5], corpus.texts[30:35]
    raw = est.verifier_.score_pairs(known, unknown)
    z = est.normalise(raw, [[k] for k in known], unknown)
    pool, author = est.background_, dict(zip(corpus.texts, corpus.authors))
    # the texts are training texts: their own author's pool texts are left out
    assert any(author[p] == author[k] for k in known for p in pool if p != k)
    for i, (k, u) in enumerate(zip(known, unknown)):
        k_pool = [est.verifier_.score_pairs([k], [p])[0] for p in pool if author[p] != author[k]]
        u_pool = [est.verifier_.score_pairs([p], [u])[0] for p in pool if author[p] != author[u]]
        assert z[i] == pytest.approx(snorm_reference(raw[i], k_pool, u_pool), abs=1e-9)
    # a text the training data does not hold keeps every pool text but itself
    fresh = synthetic_corpus(n_authors=2, per_author=1, n_words=120, seed=9).texts
    raw = est.verifier_.score_pairs(fresh[:1], fresh[1:])
    z = est.normalise(raw, [fresh[:1]], fresh[1:])
    k_pool = [est.verifier_.score_pairs(fresh[:1], [p])[0] for p in pool]
    u_pool = [est.verifier_.score_pairs([p], fresh[1:])[0] for p in pool]
    assert z[0] == pytest.approx(snorm_reference(raw[0], k_pool, u_pool), abs=1e-9)


@settings(max_examples=12, deadline=None)
@given(rounds=st.integers(1, 4), n_background=st.integers(3, 9), seed=st.integers(0, 5))
def test_iterated_snorm_kernel_agrees_with_the_reference(corpus, rounds, n_background, seed):
    train, test = corpus.subset(np.arange(40)), corpus.subset(np.arange(40, 60))
    est = BackgroundNormalized(
        CharNgramCosine(max_features=2000),
        n_background=n_background,
        transductive=True,
        rounds=rounds,
        random_state=seed,
    ).fit(train)
    known, unknown = [[t] for t in test.texts[:6]], list(test.texts[10:16])
    pool = est.call_pool(known, unknown)  # the call's texts: no author the training ties
    raw = est.verifier_.score_pairs([k[0] for k in known], unknown)
    z = est.normalise(raw, known, unknown, pool)
    cross = est.verifier_.score_cross
    pool_pool = cross(pool, pool).tolist()
    for i, ([k], u) in enumerate(zip(known, unknown)):
        ref = iterated_snorm_reference(
            raw[i],
            cross([k], pool)[0].tolist(),
            cross(pool, [u])[:, 0].tolist(),
            pool_pool,
            rounds,
            kept=[p not in (k, u) for p in pool],
        )
        assert z[i] == pytest.approx(ref, rel=1e-9, abs=1e-9)


def test_iterated_snorm_leaves_out_the_pools_own_authors_at_fit(corpus):
    # training texts in the pool: a pool text's statistics skip its own author's texts, so
    # moving a pool text of neither side's author to an author of its own changes the
    # second round and not the first
    est = BackgroundNormalized(CharNgramCosine(max_features=2000), n_background=20, rounds=2)
    est.fit(corpus)
    known, unknown = [[corpus.texts[0]]], [corpus.texts[31]]
    raw = est.verifier_.score_pairs(known[0], unknown)
    once = est.set_params(rounds=1).normalise(raw, known, unknown)
    twice = est.set_params(rounds=2).normalise(raw, known, unknown)
    moved = dict(est.authors_)
    pool_authors = [moved[p] for p in est.background_]
    sides = {moved[corpus.texts[0]], moved[corpus.texts[31]]}
    # a pool text with another of its author's in the pool, that author neither side's
    target = next(
        p for p in est.background_ if moved[p] not in sides and pool_authors.count(moved[p]) > 1
    )
    est.authors_ = {**moved, target: max(moved.values()) + 1}
    assert est.set_params(rounds=1).normalise(raw, known, unknown) == pytest.approx(once)
    assert est.set_params(rounds=2).normalise(raw, known, unknown) != pytest.approx(twice)


@pytest.mark.parametrize("rounds", [0, 1.5, "2"])
def test_rounds_must_be_a_positive_integer(corpus, rounds):
    with pytest.raises(ValueError, match="rounds must be an integer >= 1"):
        BackgroundNormalized(CharNgramCosine(max_features=2000), rounds=rounds).fit(corpus)


def test_author_groups_tie_what_the_training_data_ties():
    pairs = PairSet.from_lists(
        [["a", "b"], ["b"], ["d"], ["f"]], ["c", "e", "c", "g"], same=[True, False, False, True]
    )
    g = author_groups(pairs)
    # a-b share problem 0's known side and c is its same-author unknown; problem 1's unknown
    # e is not tied to b; d's problem says d and c differ; f-g are same-author
    assert g["a"] == g["b"] == g["c"] and g["f"] == g["g"]
    assert len({g["a"], g["e"], g["d"], g["f"]}) == 4


def test_a_row_with_no_other_author_in_the_pool_falls_back_to_every_other_text():
    other_text = [[True, False, True], [True, True, True]]
    other_author = [[False, False, True], [False, False, False]]
    keep = _kept(other_text, other_author)
    np.testing.assert_array_equal(keep, [[False, False, True], [True, True, True]])


def test_background_pool_is_drawn_from_training_texts_only(corpus):
    train, test = corpus.subset(np.arange(40)), corpus.subset(np.arange(40, 60))
    est = BackgroundNormalized(
        CharNgramCosine(max_features=2000), n_background=25, random_state=1
    ).fit(train)
    assert len(est.background_) == 25 and set(est.background_) <= set(train.texts)
    assert not set(est.background_) & set(test.texts)
    again = BackgroundNormalized(
        CharNgramCosine(max_features=2000), n_background=25, random_state=1
    ).fit(train)
    assert again.background_ == est.background_
    pairs = synthetic_pairs(20)
    from_pairs = BackgroundNormalized(CharNgramCosine(max_features=2000)).fit(pairs)
    assert set(from_pairs.background_) <= set(pairs.unknown) | {t for k in pairs.known for t in k}


def test_a_transductive_pool_is_the_calls_own_texts_topped_up_from_training(corpus):
    train, test = corpus.subset(np.arange(40)), corpus.subset(np.arange(40, 60))
    est = BackgroundNormalized(
        CharNgramCosine(max_features=2000), n_background=12, transductive=True, random_state=1
    ).fit(train)
    known, unknown = [[t] for t in test.texts[:10]], list(test.texts[10:])
    pool = est.call_pool(known, unknown)
    assert len(pool) == 12 and set(pool) <= set(test.texts)
    assert pool == est.call_pool(known, unknown)  # seeded
    # a call with fewer texts than the pool keeps them all and adds training texts
    small = est.call_pool(known[:2], unknown[:3])
    assert small[:5] == [*test.texts[:2], *test.texts[10:13]]
    assert len(small) == 12 == len(set(small)) and set(small[5:]) <= set(est.background_)
    assert est.set_params(transductive=False).call_pool(known, unknown) is est.background_
    # each pair's z is the s-norm against that pool without the pair's own texts
    est.set_params(transductive=True)
    raw = est.verifier_.score_problems(PairSet.from_lists(known, unknown))
    z = est.normalise(raw, known, unknown, pool)
    for i, ([k], u) in enumerate(zip(known, unknown)):
        k_pool = [est.verifier_.score_pairs([k], [p])[0] for p in pool if p not in (k, u)]
        u_pool = [est.verifier_.score_pairs([p], [u])[0] for p in pool if p not in (k, u)]
        assert z[i] == pytest.approx(snorm_reference(raw[i], k_pool, u_pool), abs=1e-9)
    # what the wrapper answers is that z calibrated: the call's texts, never its labels
    pairs = PairSet.from_lists(known, unknown, same=[i % 2 == 0 for i in range(10)])
    flipped = PairSet.from_lists(known, unknown, same=[i % 2 == 1 for i in range(10)])
    got = est.score_problems(pairs)
    np.testing.assert_allclose(got, est.calibrator_.transform(z), atol=1e-12)
    np.testing.assert_array_equal(got, est.score_problems(flipped))


def test_normalised_verifier_separates_authors_and_ranks_like_it_scores(corpus):
    train, test = corpus.subset(np.arange(40)), corpus.subset(np.arange(40, 60))
    est = BackgroundNormalized(CharNgramCosine(max_features=2000), grey_zone=False).fit(train)
    texts, authors = test.texts, test.authors
    same = est.score_pairs(texts[:-1], texts[1:])
    truth = authors[:-1] == authors[1:]
    assert same[truth].mean() > same[~truth].mean() + 0.2
    ranked = est.rank(texts[0], texts[1:6])
    np.testing.assert_allclose(ranked, est.score_pairs(texts[1:6], [texts[0]] * 5), atol=1e-12)


def test_pair_groups_join_problems_that_share_a_text():
    pairs = PairSet.from_lists([["a"], ["b"], ["c", "d"], ["e"]], ["x", "y", "x", "d"])
    g = pair_groups(pairs)
    assert g[0] == g[2] == g[3] and g[1] != g[0]


def test_stacked_folds_never_score_their_training_authors(corpus):
    est = StackedVerifier((CharNgramCosine(max_features=2000),), n_pairs=90)
    for train, held in est._folds(corpus):
        held_texts = set(held.unknown) | {t for k in held.known for t in k}
        assert not held_texts & set(train.texts)
        held_authors = set(corpus.authors[np.isin(corpus.texts, list(held_texts))])
        assert not held_authors & set(train.authors)
    pairs = synthetic_pairs(30)
    for train, held in est._folds(pairs):
        assert not set(held.ids) & set(train.ids)


def test_ensemble_runs_every_protocol_call(corpus):
    est = make("ensemble", seed=0).fit(corpus.subset(np.arange(40)))
    n_bases = len(est.bases)
    assert n_bases == 6 and est.oof_auc_.shape == (n_bases,)
    assert est.oof_scores_.shape[1] == n_bases
    texts = corpus.texts[40:]
    s = est.score_pairs(texts[:5], texts[5:10])
    p = est.score_problems(PairSet.from_lists([texts[:2], texts[2:4]], texts[4:6]))
    r = est.rank_many([texts[0], texts[1]], [texts[2:5], texts[5:7]])
    c = est.choose(texts[0], texts[1], texts[2])
    a = est.attribute([texts[:2], texts[5:7]], texts[10:13])
    assert s.shape == (5,) and p.shape == (2,) and [len(x) for x in r] == [3, 2]
    assert c in (0, 1) and a.shape == (3, 2)
    for x in (s, p, a, *r):
        assert np.all((x >= 0) & (x <= 1))


@pytest.mark.parametrize("data", ["corpus", "pairs"])
def test_shared_counting_changes_no_score(corpus, data, monkeypatch):
    # the fit counts every text once (stylo.features.shared_counts); counting afresh in every
    # fold and base must give the same scores to the bit
    train = corpus.subset(np.arange(40)) if data == "corpus" else synthetic_pairs(40)
    texts = corpus.texts[40:]
    shared = make("ensemble", seed=0).fit(train)
    monkeypatch.setattr("baselines.ensemble.shared_counts", lambda texts: nullcontext())
    fresh = make("ensemble", seed=0).fit(train)
    np.testing.assert_array_equal(shared.oof_scores_, fresh.oof_scores_)
    np.testing.assert_array_equal(
        shared.score_pairs(texts[:8], texts[8:16]), fresh.score_pairs(texts[:8], texts[8:16])
    )


def _shuffled(task: Task, seed: int) -> Task:
    """``task`` with its test labels permuted (the texts untouched)."""
    frame = task.test.frame.copy()
    frame["same"] = np.random.default_rng(seed).permutation(frame["same"].to_numpy())
    return Task(task.protocol, task.setting, task.seed, task.train, PairSet(frame), task.info)


@pytest.mark.parametrize("name", ["ensemble", "cosine-norm"])
def test_no_score_depends_on_test_labels(name):
    # enough texts that the 200 test pairs leave authors to train on
    corpus = synthetic_corpus(n_authors=60, per_author=8, n_words=60, seed=5)
    proto = PROTOCOLS["aidbench_one_to_one"]
    task = proto.sample(corpus, {"mix": "50/150", "cross_topic": False}, seed=0)
    assert task.train is not None
    before = proto.evaluate(make(name, seed=0), task).attrs["scores"]
    after = proto.evaluate(make(name, seed=0), _shuffled(task, 1)).attrs["scores"]
    assert (before["y_true"] != after["y_true"]).any()
    np.testing.assert_array_equal(before["y_score"].to_numpy(), after["y_score"].to_numpy())


def test_pair_folds_fall_back_to_problems_when_one_text_joins_them_all():
    base = synthetic_pairs(24)
    shared = base.unknown[0]
    pairs = PairSet.from_lists(base.known, [shared] * len(base), same=base.labels)
    folds = list(StackedVerifier((CharNgramCosine(),), n_folds=2)._folds(pairs))
    assert len(folds) == 2
    for train, held in folds:
        assert len(set(held.labels)) == 2 and len(set(train.labels)) == 2
        assert not set(held.ids) & set(train.ids)


def test_corpus_with_too_few_authors_for_author_folds_is_split_by_text():
    # three authors in three folds: an author fold has no different-author pair (the
    # Federalist papers' one-to-two cells failed so)
    corpus = synthetic_corpus(n_authors=3, per_author=8, seed=2)
    est = StackedVerifier((CharNgramCosine(max_features=2000),), n_folds=3, n_pairs=60)
    for train, held in est._folds(corpus):
        held_texts = set(held.unknown) | {t for k in held.known for t in k}
        assert held_texts and not held_texts & set(train.texts)
        assert held.labels.any() and not held.labels.all()
    scores = est.fit(corpus).score_pairs(corpus.texts[:3], corpus.texts[3:6])
    assert np.all((scores >= 0) & (scores <= 1))


def test_a_corpus_too_small_for_any_fold_says_so_in_one_line():
    # three authors with two texts each: neither author nor text folds hold a same-author pair
    corpus = synthetic_corpus(n_authors=3, per_author=2, seed=2)
    est = StackedVerifier((CharNgramCosine(max_features=2000),), n_folds=3, n_pairs=60)
    with pytest.raises(
        ValueError,
        match=r"^StackedVerifier: corpus .* too small to stack in 3 folds.*3 authors.* 2 texts\)$",
    ):
        est.fit(corpus)


def test_rank_bases_join_a_second_meta_model_fitted_at_the_first_ranking(corpus):
    train, texts = corpus.subset(np.arange(40)), corpus.texts[40:]
    base = CharNgramCosine(max_features=2000)
    extra = CharNgramCosine(ngram_size=3, max_features=500)
    plain = StackedVerifier((base,), n_pairs=90).fit(train)
    alone = StackedVerifier((extra,), n_pairs=90).fit(train)
    est = StackedVerifier((base,), n_pairs=90, rank_bases=(extra,)).fit(train)
    # verification never fits the rank bases, and scores as the plain stack does
    np.testing.assert_array_equal(
        est.score_pairs(texts[:5], texts[5:10]), plain.score_pairs(texts[:5], texts[5:10])
    )
    assert est.rank_bases_ is None and est.rank_meta_ is None
    ranked = est.rank_many([texts[0], texts[1]], [texts[2:6], texts[6:8]])
    # the ranking meta-model is fitted on both stacks' out-of-fold scores of the same pairs
    logits = _logits([plain.oof_scores_[:, 0], alone.oof_scores_[:, 0]])
    expected = NonNegativeLogisticRegression().fit(logits, plain.oof_labels_)
    np.testing.assert_allclose(est.rank_meta_.coef_, expected.coef_, rtol=1e-6)
    columns = [
        np.concatenate(b.rank_many([texts[0], texts[1]], [texts[2:6], texts[6:8]]))
        for b in (plain.bases_[0], alone.bases_[0])
    ]
    np.testing.assert_allclose(
        np.concatenate(ranked), expected.predict_proba(_logits(columns))[:, 1], rtol=1e-6
    )
    model = est.rank_meta_
    est.rank_many([texts[0]], [texts[2:6]])
    assert est.rank_meta_ is model  # fitted once


def test_rank_bases_must_be_verifiers(corpus):
    est = StackedVerifier((CharNgramCosine(),), rank_bases=("lambdag",))
    with pytest.raises(ValueError, match="rank_bases"):
        est.fit(corpus)


def test_pairwise_ranking_learns_from_out_of_fold_triplets_at_the_first_ranking(corpus):
    train, texts = corpus.subset(np.arange(40)), corpus.texts[40:]
    base = CharNgramCosine(max_features=2000)
    extra = CharNgramCosine(ngram_size=3, max_features=500)
    plain = StackedVerifier((base,), n_pairs=90).fit(train)
    est = StackedVerifier((base,), n_pairs=90, rank_bases=(extra,), ranking="pairwise")
    est.fit(train)
    np.testing.assert_array_equal(
        est.score_pairs(texts[:5], texts[5:10]), plain.score_pairs(texts[:5], texts[5:10])
    )
    assert est.rank_meta_ is None
    queries, cands = [texts[0], texts[1]], [texts[2:6], texts[6:8]]
    ranked = est.rank_many(queries, cands)
    # the same model by hand: each fold's bases score its held authors' triplets
    diffs = []
    for f, (fold_train, held) in enumerate(est._fold_parts(train)):
        q, same, other = training_triplets(held, 90 // 6, seed=f)
        pairs = PairSet.from_lists([[x] for x in q * 2], same + other)
        logits = _logits([b.fit(fold_train).score_problems(pairs) for b in (base, extra)])
        diffs.append(logits[: len(q)] - logits[len(q) :])
    d = np.vstack(diffs)
    model = LogisticRegression(fit_intercept=False).fit(
        np.vstack([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))]
    )
    np.testing.assert_allclose(est.rank_meta_.coef_, model.coef_, rtol=1e-6)
    assert est.rank_meta_.intercept_ == 0.0 and (model.coef_ > 0).all()
    columns = [
        np.concatenate(b.rank_many(queries, cands)) for b in (plain.bases_[0], extra.fit(train))
    ]
    np.testing.assert_allclose(
        np.concatenate(ranked), model.predict_proba(_logits(columns))[:, 1], rtol=1e-6
    )
    with pytest.raises(ValueError, match="ranking must be one of"):
        StackedVerifier((base,), ranking="pairs").fit(train)


class _NeedsManyTexts(CharNgramCosine):
    """A rank base that, as LambdaG on a small corpus, cannot be fitted on a fold's part."""

    def _fit_impl(self, X, y):
        if len(X) < 40:
            raise ValueError("too few texts for my folds")
        super()._fit_impl(X, y)


def test_a_rank_base_that_cannot_fit_on_a_fold_is_left_out_with_a_warning(corpus):
    train, texts = corpus.subset(np.arange(40)), corpus.texts[40:]
    base = CharNgramCosine(max_features=2000)
    kw = dict(n_pairs=90, ranking="pairwise")
    est = StackedVerifier((base,), rank_bases=(_NeedsManyTexts(max_features=500),), **kw)
    without = StackedVerifier((base,), **kw)
    queries, cands = [texts[0], texts[1]], [texts[2:6], texts[6:8]]
    with pytest.warns(UserWarning, match="base _NeedsManyTexts left out of the ranking: too"):
        ranked = est.fit(train).rank_many(queries, cands)
    assert est.rank_bases_ == []
    for a, b in zip(ranked, without.fit(train).rank_many(queries, cands), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_base_that_cannot_fit_is_left_out_of_the_stack_with_a_warning(corpus):
    train, texts = corpus.subset(np.arange(40)), corpus.texts[40:]
    base = CharNgramCosine(max_features=2000)
    est = StackedVerifier((_NeedsManyTexts(max_features=500), base), n_pairs=90)
    with pytest.warns(UserWarning, match="base _NeedsManyTexts left out of the stack: too"):
        est.fit(train)
    alone = StackedVerifier((base,), n_pairs=90).fit(train)
    assert len(est.bases_) == 1 and est.oof_scores_.shape == alone.oof_scores_.shape
    np.testing.assert_array_equal(est.oof_scores_, alone.oof_scores_)
    a, b = texts[:6], texts[6:12]
    np.testing.assert_array_equal(est.score_pairs(a, b), alone.score_pairs(a, b))
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="none of its bases"):
        StackedVerifier((_NeedsManyTexts(max_features=500),), n_pairs=90).fit(train)


def test_pairwise_ranking_on_training_pairs_without_authors_ranks_with_the_meta_model():
    pairs = synthetic_pairs(n_pairs=60, seed=4)
    base = CharNgramCosine(max_features=1000)
    est = StackedVerifier((base,), ranking="pairwise").fit(pairs)
    meta = StackedVerifier((base,)).fit(pairs)
    q, c = pairs.unknown[:2], [pairs.unknown[2:5], pairs.unknown[5:7]]
    for a, b in zip(est.rank_many(q, c), meta.rank_many(q, c)):
        np.testing.assert_array_equal(a, b)


def test_bases_score_without_their_grey_zones_own_or_wrapped(corpus):
    train, texts = corpus.subset(np.arange(40)), corpus.texts[40:]
    zoned = BackgroundNormalized(CharNgramCosine(max_features=2000), grey_zone=True)
    wrapped = MaskedVerifier(clone(zoned), TextDistortion(k=50))
    est = StackedVerifier((zoned, wrapped), n_pairs=90, ranking="pairwise").fit(train)
    assert zoned.grey_zone and wrapped.verifier.grey_zone  # the caller's bases are untouched
    fitted = [*est.bases_, *(b for fold in est.fold_bases_ for b in fold)]
    assert len(fitted) == 8
    assert [b.grey_zone for b in fitted[::2]] == [False] * 4
    assert [b.verifier.grey_zone for b in fitted[1::2]] == [False] * 4
    # so a base's scores are its probabilities, no band of them flattened to 0.5
    plain = BackgroundNormalized(CharNgramCosine(max_features=2000), grey_zone=False)
    a, b = texts[:8], texts[8:16]
    np.testing.assert_array_equal(
        est.bases_[0].score_pairs(a, b), plain.fit(train).score_pairs(a, b)
    )
    assert not np.any(est.oof_scores_ == 0.5)


class _Upside(CharNgramCosine):
    """A base whose scores mean "other author" when high: the cosine turned upside down."""

    def _score_impl(self, texts_a, texts_b):
        return 1.0 - super()._score_impl(texts_a, texts_b)


def test_the_meta_model_reads_no_base_upside_down_unless_asked(corpus):
    train = corpus.subset(np.arange(40))
    bases = (CharNgramCosine(max_features=2000), _Upside(max_features=2000))
    held = StackedVerifier(bases, n_pairs=90).fit(train)
    free = StackedVerifier(bases, n_pairs=90, positive=False).fit(train)
    np.testing.assert_array_equal(held.oof_scores_, free.oof_scores_)
    assert held.oof_auc_[1] < 0.5  # the upside-down base ranks the pairs the wrong way
    assert held.meta_.coef_[0, 1] == 0.0 and held.meta_.coef_[0, 0] > 0
    assert isinstance(free.meta_, LogisticRegression) and free.meta_.coef_[0, 1] < 0
