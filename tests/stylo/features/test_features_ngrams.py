"""CharNgrams / WordNgrams: Numba kernels == plain Python reference == scikit-learn."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ngram_alphabet import ALPHABET
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.pipeline import FeatureUnion, Pipeline

from stylo.features import TOKEN_PATTERN, CharNgrams, WordNgrams, ngrams
from stylo.features._reference import count_matrix, tokenize

texts = st.lists(st.text(alphabet=ALPHABET, max_size=40), min_size=1, max_size=6)
ranges = st.tuples(st.integers(1, 5), st.integers(0, 3)).map(lambda t: (t[0], t[0] + t[1]))
FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_same(ours, ours_names, theirs, their_names):
    assert list(ours_names) == list(their_names)
    assert ours.shape == theirs.shape
    assert isinstance(ours, sp.csr_matrix) and ours.has_sorted_indices
    assert (ours != theirs).nnz == 0


def sklearn_or_error(vec, docs):
    try:
        return vec.fit_transform(docs), None
    except ValueError as exc:
        return None, exc


@FAST
@given(
    docs=texts, rng=ranges, analyzer=st.sampled_from(["char", "char_wb"]), lowercase=st.booleans()
)
def test_char_ngrams_equal_countvectorizer_and_reference(docs, rng, analyzer, lowercase):
    cv = CountVectorizer(analyzer=analyzer, ngram_range=rng, lowercase=lowercase)
    expected, err = sklearn_or_error(cv, docs)
    ours = CharNgrams(rng, analyzer=analyzer, lowercase=lowercase)
    if err is not None:
        with pytest.raises(ValueError, match="empty vocabulary"):
            ours.fit_transform(docs)
        return
    X = ours.fit_transform(docs)
    assert_same(X, ours.get_feature_names_out(), expected, cv.get_feature_names_out())
    dense, names = count_matrix([d.lower() if lowercase else d for d in docs], analyzer, *rng)
    assert names == list(ours.get_feature_names_out())
    assert np.array_equal(X.toarray(), dense)
    # transform of unseen text ignores unknown n-grams exactly like scikit-learn
    new = [d[::-1] + "zq😀" for d in docs]
    assert (ours.transform(new) != cv.transform(new)).nnz == 0


@FAST
@given(docs=texts, rng=st.sampled_from([(1, 1), (1, 2), (2, 3), (1, 3)]), lowercase=st.booleans())
def test_word_ngrams_equal_countvectorizer_and_reference(docs, rng, lowercase):
    cv = CountVectorizer(
        analyzer="word", token_pattern=TOKEN_PATTERN, ngram_range=rng, lowercase=lowercase
    )
    expected, err = sklearn_or_error(cv, docs)
    ours = WordNgrams(rng, lowercase=lowercase)
    if err is not None:
        with pytest.raises(ValueError, match="empty vocabulary"):
            ours.fit_transform(docs)
        return
    X = ours.fit_transform(docs)
    assert_same(X, ours.get_feature_names_out(), expected, cv.get_feature_names_out())
    dense, names = count_matrix([d.lower() if lowercase else d for d in docs], "word", *rng)
    assert names == list(ours.get_feature_names_out()) and np.array_equal(X.toarray(), dense)
    new = [" ".join(reversed(d.split())) + " unseen" for d in docs]
    assert (ours.transform(new) != cv.transform(new)).nnz == 0


long_texts = st.lists(st.text(alphabet=ALPHABET, max_size=150), min_size=1, max_size=4)


@FAST
@given(
    docs=long_texts,
    rng=ranges,
    analyzer=st.sampled_from(["char", "char_wb", "word"]),
    lowercase=st.booleans(),
    piece=st.integers(1, 9),
    n_jobs=st.sampled_from([1, 2]),
)
def test_documents_counted_in_pieces_equal_countvectorizer_and_reference(
    docs, rng, analyzer, lowercase, piece, n_jobs
):
    """Documents counted a few symbols at a time (ngrams._DOC_PIECE; from text at least
    2 * max_n + 2 symbols): n-grams across piece boundaries, whitespace runs and words cut by
    them are counted once, as by CountVectorizer and the reference; also in transform."""
    from unittest import mock

    if analyzer == "word":
        rng = (min(rng[0], 3), min(rng[1], 3))
        cv = CountVectorizer(token_pattern=TOKEN_PATTERN, ngram_range=rng, lowercase=lowercase)
        ours = WordNgrams(rng, lowercase=lowercase, n_jobs=n_jobs)
    else:
        cv = CountVectorizer(analyzer=analyzer, ngram_range=rng, lowercase=lowercase)
        ours = CharNgrams(rng, analyzer=analyzer, lowercase=lowercase, n_jobs=n_jobs)
    expected, err = sklearn_or_error(cv, docs)
    with mock.patch.object(ngrams, "_DOC_PIECE", piece):
        if err is not None:
            with pytest.raises(ValueError, match="empty vocabulary"):
                ours.fit_transform(docs)
            return
        X = ours.fit_transform(docs)
        new = [d[::-1] + " zq😀 unseen" for d in docs]
        assert (ours.transform(new) != cv.transform(new)).nnz == 0
    assert_same(X, ours.get_feature_names_out(), expected, cv.get_feature_names_out())
    dense, names = count_matrix([d.lower() if lowercase else d for d in docs], analyzer, *rng)
    assert names == list(ours.get_feature_names_out()) and np.array_equal(X.toarray(), dense)


def test_tokeniser_is_documented_pattern():
    assert tokenize("I don't  know o'clock 'tis x' _a1 é́") == [
        "I",
        "don't",
        "know",
        "o'clock",
        "tis",
        "x",
        "_a1",
        "é\u0301",
    ]  # a combining mark is part of its word


def test_combining_marks_stay_in_their_words():
    # vowel signs (Devanagari), harakat (Arabic), accents of decomposed Latin, a Brahmi sign
    # beyond the BMP: Python's \w holds no mark, so "हिन्दी" used to be "ह", "न", "द"
    text = "हिन्दी भाषा كَتَبَ cafe\u0301 \U00011003\U00011038 \u0301x"
    want = ["हिन्दी", "भाषा", "كَتَبَ", "cafe\u0301", "\U00011003\U00011038", "\u0301x"]
    assert tokenize(text) == want
    got = WordNgrams(ngram_range=(1, 1)).fit([text])
    assert sorted(got.get_feature_names_out()) == sorted(want)
    vec = CountVectorizer(token_pattern=TOKEN_PATTERN, ngram_range=(2, 2)).fit([text])
    assert "हिन्दी भाषा" in vec.vocabulary_


def test_han_and_kana_are_one_token_each():
    # scripts without spaces between words: a run of them is a clause, not a word
    text = "我是中国人，Tokyo東京ですdon't々"
    want = ["我", "是", "中", "国", "人", "tokyo", "東", "京", "で", "す", "don't", "々"]
    got = WordNgrams(ngram_range=(1, 1)).fit([text])
    assert sorted(got.get_feature_names_out()) == sorted(set(want))
    assert tokenize(text.lower()) == want
    vec = CountVectorizer(token_pattern=TOKEN_PATTERN, ngram_range=(2, 2)).fit([text])
    assert "人 tokyo" in vec.vocabulary_ and "す don't" in vec.vocabulary_


def corpus(n=200, seed=0):
    rng = np.random.default_rng(seed)
    words = ["the", "a", "of", "Über", "naïve", "😀", "don't", "I", "x", "and", "to", "中文"]
    return [
        " ".join(rng.choice(words, size=rng.integers(0, 60))) + rng.choice([".", "!", ""])
        for _ in range(n)
    ]


@pytest.mark.parametrize("analyzer", ["char", "char_wb"])
def test_n_jobs_gives_identical_matrix(analyzer):
    docs = corpus()
    one = CharNgrams((1, 4), analyzer=analyzer, n_jobs=1).fit(docs)
    two = CharNgrams((1, 4), analyzer=analyzer, n_jobs=2).fit(docs)
    assert (one.transform(docs) != two.transform(docs)).nnz == 0
    assert list(one.get_feature_names_out()) == list(two.get_feature_names_out())
    w1, w2 = WordNgrams((1, 2), n_jobs=1), WordNgrams((1, 2), n_jobs=-1)
    assert (w1.fit_transform(docs) != w2.fit_transform(docs)).nnz == 0


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_very_long_document_and_empty_rows(n_jobs):
    """Long documents counted whole and in pieces of ngrams._DOC_PIECE = 4096 symbols."""
    from unittest import mock

    rng = np.random.default_rng(1)
    long_doc = "".join(rng.choice(ALPHABET, size=30_000))
    words = " ".join(rng.choice(["the", "a", "Über", "😀", "x", "don't"], size=20_000))
    cases = [
        (
            CharNgrams((2, 5), analyzer=a, n_jobs=n_jobs),
            CountVectorizer(analyzer=a, ngram_range=(2, 5)),
            ["", long_doc, "", "ab"],
        )
        for a in ("char", "char_wb")
    ]
    cases.append(
        (
            WordNgrams((1, 3), n_jobs=n_jobs),
            CountVectorizer(token_pattern=TOKEN_PATTERN, ngram_range=(1, 3)),
            ["", words, "a b"],
        )
    )
    for ours, cv, docs in cases:
        expected = cv.fit_transform(docs)
        for piece in (ngrams._DOC_PIECE, 4096):
            with mock.patch.object(ngrams, "_DOC_PIECE", piece):
                X = ours.fit_transform(docs)
            assert_same(X, ours.get_feature_names_out(), expected, cv.get_feature_names_out())
            assert X[0].nnz == 0


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_hash_table_grows_across_documents(n_jobs):
    """Hundreds of documents of random text: the n-gram table is rehashed several times while
    it holds entries (char 3-5-grams, word 1-2-grams over thousands of distinct tokens)."""
    rng = np.random.default_rng(2)
    docs = ["".join(rng.choice(list("abcdefghij éü😀"), size=500)) for _ in range(400)]
    cv = CountVectorizer(analyzer="char", ngram_range=(3, 5))
    ours = CharNgrams((3, 5), n_jobs=n_jobs)
    assert_same(
        ours.fit_transform(docs),
        ours.get_feature_names_out(),
        cv.fit_transform(docs),
        cv.get_feature_names_out(),
    )
    assert len(cv.vocabulary_) > 1 << 16
    cv = CountVectorizer(token_pattern=TOKEN_PATTERN, ngram_range=(1, 2))
    ours = WordNgrams((1, 2), n_jobs=n_jobs)
    assert_same(
        ours.fit_transform(docs),
        ours.get_feature_names_out(),
        cv.fit_transform(docs),
        cv.get_feature_names_out(),
    )


@pytest.mark.parametrize(
    "params",
    [
        dict(min_df=2),
        dict(max_df=0.5),
        dict(min_df=0.1, max_df=30),
        dict(max_features=50),
        dict(max_features=7, binary=True),
        dict(binary=True),
    ],
)
@pytest.mark.parametrize("n_jobs", [1, 3])  # pruned entries leave gaps between chunks
def test_pruning_matches_countvectorizer(params, n_jobs):
    docs = corpus(150, seed=3)
    cv = CountVectorizer(analyzer="char", ngram_range=(1, 3), **_without_max_features(params))
    ours = CharNgrams((1, 3), n_jobs=n_jobs, **params)
    assert_same(
        ours.fit_transform(docs),
        ours.get_feature_names_out(),
        *_top_features(cv.fit_transform(docs), cv.get_feature_names_out(), params),
    )
    cvw = CountVectorizer(
        token_pattern=TOKEN_PATTERN, ngram_range=(1, 2), **_without_max_features(params)
    )
    ow = WordNgrams((1, 2), n_jobs=n_jobs, **params)
    assert_same(
        ow.fit_transform(docs),
        ow.get_feature_names_out(),
        *_top_features(cvw.fit_transform(docs), cvw.get_feature_names_out(), params),
    )


def _without_max_features(params: dict) -> dict:
    return {k: v for k, v in params.items() if k != "max_features"}


def _top_features(X, names, params: dict):
    """CountVectorizer's max_features cut with ties at the cut going to the n-gram first in
    name order: CountVectorizer's own cut sorts unstably, so which of equal counts it keeps
    depends on the CPU's SIMD sort; the extractors break ties by name on every machine."""
    k = params.get("max_features")
    if k is None or X.shape[1] <= k:
        return X, names
    counts = np.asarray(X.sum(axis=0)).ravel()
    keep = np.sort(np.argsort(-counts, kind="stable")[:k])
    return X[:, keep], np.asarray(names)[keep]


def test_max_features_ties_go_to_the_first_name():
    # "a", "b", "c", "d" occur twice each: two of the four tie for the last two places
    docs = ["d c b a x", "a b c d y"]
    names = WordNgrams((1, 1), max_features=3).fit(docs).get_feature_names_out()
    assert list(names) == ["a", "b", "c"]
    # the same on a shuffled name order: the cut does not depend on where a term was seen
    names = WordNgrams((1, 1), max_features=2).fit(["c a d b", "b d a c"]).get_feature_names_out()
    assert list(names) == ["a", "b"]


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_fixed_vocabulary_matches_countvectorizer(n_jobs):
    docs = corpus(50)
    vocab = {"th": 2, "e ": 0, "😀": 1, "zzzzzzz": 3, "a": 4}
    cv = CountVectorizer(analyzer="char", ngram_range=(1, 3), vocabulary=vocab)
    ours = CharNgrams((1, 3), vocabulary=vocab, n_jobs=n_jobs)
    assert_same(
        ours.fit_transform(docs),
        ours.get_feature_names_out(),
        cv.fit_transform(docs),
        cv.get_feature_names_out(),
    )
    wv = ["the", "of the", "i", "don't", "never seen"]
    cvw = CountVectorizer(token_pattern=TOKEN_PATTERN, ngram_range=(1, 2), vocabulary=wv)
    ow = WordNgrams((1, 2), vocabulary=wv, n_jobs=n_jobs)
    assert_same(
        ow.fit_transform(docs),
        ow.get_feature_names_out(),
        cvw.fit_transform(docs),
        cvw.get_feature_names_out(),
    )


@pytest.mark.parametrize(
    "params",
    [
        dict(use_idf=True),
        dict(norm="l2"),
        dict(use_idf=True, smooth_idf=False, sublinear_tf=True, norm="l1"),
    ],
)
def test_tfidf_options_match_tfidfvectorizer(params):
    docs = corpus(80) + [""]
    full = dict(use_idf=False, norm=None, smooth_idf=True, sublinear_tf=False) | params
    ref = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 3), **full).fit(docs[:60])
    ours = CharNgrams((2, 3), analyzer="char_wb", **full).fit(docs[:60])
    np.testing.assert_allclose(
        ours.transform(docs).toarray(), ref.transform(docs).toarray(), rtol=1e-12, atol=1e-12
    )


def test_fallback_beyond_63_bits_stays_exact():
    # > 1023 distinct characters need 11 bits per symbol: 6-grams do not fit one int64 key
    rng = np.random.default_rng(0)
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)] + list("AbΣ")
    docs = ["".join(rng.choice(chars, size=100)) for _ in range(40)]
    cv = CountVectorizer(analyzer="char", ngram_range=(5, 7))
    ours = CharNgrams((5, 7))
    with pytest.warns(RuntimeWarning, match="63 bits"):
        X = ours.fit_transform(docs)
    assert_same(X, ours.get_feature_names_out(), cv.fit_transform(docs), cv.get_feature_names_out())
    assert (ours.transform(docs[::-1]) != cv.transform(docs[::-1])).nnz == 0


def test_bad_input_errors():
    m = CharNgrams()
    with pytest.raises(TypeError, match="index 2"):
        m.fit(["a", "b", 3])
    with pytest.raises(TypeError, match="index 1 is missing"):
        m.fit(["a", None])
    with pytest.raises(TypeError, match="index 0 is missing"):
        m.fit([float("nan"), "a"])
    with pytest.raises(TypeError, match="single str"):
        m.fit("just one string")
    m.fit(["abc", "de"])
    with pytest.raises(TypeError, match="index 0"):
        m.transform([b"bytes"])
    X = m.transform(["", "abc"])
    assert X.shape == (2, m.n_features_out_) and X[0].nnz == 0


RANGE = r"ngram_range must be \(min_n, max_n\) with 1 <= min_n <= max_n, got "
FRACTION = r"must be an int >= 0 or a float in \[0, 1\], got "


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (dict(ngram_range=(0, 2)), RANGE + r"\(0, 2\)"),
        (dict(ngram_range=(3, 2)), RANGE + r"\(3, 2\)"),
        (dict(ngram_range=(1.0, 2)), RANGE + r"\(1\.0, 2\)"),
        (dict(ngram_range=3), RANGE + "3"),
        (dict(analyzer="word"), r"analyzer must be one of \('char', 'char_wb'\), got 'word'"),
        (dict(min_df=-1), "min_df " + FRACTION + "-1"),
        (dict(max_df=1.5), "max_df " + FRACTION + r"1\.5"),
        (dict(max_features=0), "max_features must be a positive int or None, got 0"),
        (dict(norm="l3"), "norm must be None, 'l1' or 'l2', got 'l3'"),
        (dict(use_idf=True, dtype=np.int64), "dtype must be a float dtype, got int64"),
        (dict(n_jobs=0), "n_jobs must be a non-zero int or None, got 0"),
        (dict(vocabulary=[]), "empty vocabulary passed to fit"),
        (dict(vocabulary=["a", "a"]), "vocabulary contains repeated terms"),
        (
            dict(vocabulary={"a": 0, "b": 2}),
            r"vocabulary indices must be 0 \.\. len\(vocabulary\) - 1",
        ),
        (dict(min_df=5, max_df=2), "max_df corresponds to < documents than min_df"),
    ],
)
def test_invalid_parameters_raise_at_fit_not_init(params, message):
    m = CharNgrams(**params)  # storing never fails
    with pytest.raises(ValueError, match=message):
        m.fit(["some text", "more text", "and more"])


def test_sklearn_composition_pickle_and_unfitted():
    docs = corpus(40)
    pipe = Pipeline([("u", FeatureUnion([("c", CharNgrams((1, 2))), ("w", WordNgrams())]))])
    X = pipe.fit_transform(docs)
    assert X.shape[0] == 40
    assert (pickle.loads(pickle.dumps(pipe)).transform(docs) != X).nnz == 0
    c = clone(CharNgrams((2, 3), min_df=2))
    assert c.get_params()["ngram_range"] == (2, 3)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="is not fitted yet"):
        CharNgrams().transform(docs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert CharNgrams().fit(docs).vocabulary_["t"] >= 0
