"""FunctionWords, masking transformers and the scikit-learn estimator contract."""

import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import estimator_checks as ec

from stylo.features import (
    CharNgrams,
    EntityMasker,
    FunctionWords,
    TextDistortion,
    WordNgrams,
    function_words,
)
from stylo.features import _reference as reference
from stylo.features._reference import tokenize
from stylo.features.function_words import CHAR_CLASSES, PUNCTUATION

ESTIMATORS = [CharNgrams(), WordNgrams(), FunctionWords(), TextDistortion(), EntityMasker()]

# The checks of parametrize_with_checks that do not feed data. The data checks are not
# applicable to text: they generate numeric 2-D arrays (make_blobs), and scikit-learn itself
# skips them for estimators tagged input_tags.two_d_array=False (as CountVectorizer's inputs
# are). test_text_contract below checks the same properties on text.
API_CHECKS = [
    ec.check_estimator_cloneable,
    ec.check_estimator_repr,
    ec.check_no_attributes_set_in_init,
    ec.check_do_not_raise_errors_in_init_or_set_params,
    ec.check_mixin_order,
    ec.check_valid_tag_types,
    ec.check_estimator_tags_renamed,
    ec.check_get_params_invariance,
    ec.check_set_params,
]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("check", API_CHECKS, ids=lambda c: c.__name__)
def test_sklearn_api_checks(est, check):
    check(type(est).__name__, est)


DOCS = [
    "The cat sat on the mat, didn't it?",
    "",
    "Alice met Bob in Paris in 1999.",
    "I think that THE END is near... upon my word!",
]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_text_contract(est):
    before = est.get_params()
    assert est.fit(DOCS) is est  # fit returns self and does not touch parameters
    assert est.get_params() == before
    out1, out2 = est.transform(DOCS), est.fit_transform(DOCS)
    if isinstance(out1, list):
        assert out1 == out2 and len(out1) == len(DOCS)
    elif sp.issparse(out1):
        assert out1.shape[0] == len(DOCS) and (out1 != out2).nnz == 0
    else:
        assert out1.shape[0] == len(DOCS) and np.array_equal(out1, out2)
    with pytest.raises(TypeError, match="index 1"):
        est.fit(["ok", 5])


def test_function_words_list_is_documented_and_complete():
    words = function_words("en")
    assert len(words) == len(set(words)) and all(w == w.lower() for w in words)
    mosteller_wallace = (
        "a all also an and any are as at be been but by can do down even every "
        "for from had has have her his if in into is it its may more must my "
        "no not now of on one only or our shall should so some such than that "
        "the their then there things this to up upon was were what when which "
        "who will with would your"
    ).split()
    assert len(mosteller_wallace) == 70 and set(mosteller_wallace) <= set(words)
    with pytest.raises(ValueError, match="language"):
        FunctionWords(language="xx").fit(DOCS)


def test_function_word_frequencies_match_reference():
    fw = FunctionWords(punctuation=True, char_classes=True).fit(DOCS)
    X = fw.transform(DOCS)
    names = list(fw.get_feature_names_out())
    assert X.shape == (4, len(function_words()) + len(PUNCTUATION) + len(CHAR_CLASSES))
    for r, doc in enumerate(DOCS):
        toks = [t.lower() for t in tokenize(doc)]
        for w in ("the", "in", "didn't", "upon", "i"):
            expected = toks.count(w) / len(toks) if toks else 0.0
            assert X[r, names.index(w)] == pytest.approx(expected)
        n = len(doc)
        assert X[r, names.index("punct:,")] == pytest.approx(doc.count(",") / n if n else 0)
        assert X[r, names.index("class:digit")] == pytest.approx(
            sum(c.isdigit() for c in doc) / n if n else 0
        )
        if n:
            assert X[r, -len(CHAR_CLASSES) :].sum() == pytest.approx(1.0)
    assert not X[1].any()


def test_function_words_pandas_output_and_column_transformer():
    """set_output(transform="pandas"): a DataFrame of the dense array, columns named by
    get_feature_names_out; the sparse option gives the same numbers; in a ColumnTransformer
    over a text column the names get the transformer's prefix."""
    fw = FunctionWords(punctuation=True, char_classes=True)
    dense = fw.fit_transform(DOCS)
    assert isinstance(dense, np.ndarray) and dense.dtype == np.float64
    frame = (
        FunctionWords(punctuation=True, char_classes=True)
        .set_output(transform="pandas")
        .fit_transform(DOCS)
    )
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == list(fw.get_feature_names_out())
    assert frame.columns[0] == function_words()[0] and frame.columns[-1] == "class:other"
    assert np.array_equal(frame.to_numpy(), dense)
    sparse = FunctionWords(punctuation=True, char_classes=True, sparse_output=True)
    assert np.array_equal(sparse.fit_transform(DOCS).toarray(), dense)
    table = pd.DataFrame({"text": DOCS, "n": np.arange(len(DOCS))})
    ct = ColumnTransformer([("fw", FunctionWords(), "text"), ("keep", "passthrough", ["n"])])
    out = ct.set_output(transform="pandas").fit_transform(table)
    assert list(out.columns) == [f"fw__{w}" for w in function_words()] + ["keep__n"]
    assert np.array_equal(out.iloc[:, :-1].to_numpy(), FunctionWords().fit_transform(DOCS))
    pipe = Pipeline([("fw", FunctionWords()), ("z", StandardScaler())])
    z = pipe.set_output(transform="pandas").fit_transform(DOCS)
    assert list(z.columns) == list(function_words())


def test_text_distortion_dv_ma_and_dv_sa():
    train = ["the cat and the dog and the bird", "a the"]
    ma = TextDistortion(k=2).fit(train)
    assert list(ma.vocabulary_) == ["and", "the"]
    assert ma.transform(["The Cow, and 42 pigs."]) == ["The ***, and ## ****."]
    sa = TextDistortion(k=2, method="dv_sa").fit(train)
    assert sa.transform(["The Cow, and 42 pigs."]) == ["The *, and # *."]
    assert TextDistortion(k=0).fit(train).transform(["ab c"]) == ["** *"]
    # each Han ideograph or kana is a word: the frequent ones are kept, the others masked
    cjk = TextDistortion(k=2, method="dv_sa").fit(["我的书的我的", "她的"])
    assert list(cjk.vocabulary_) == ["我", "的"]
    assert cjk.transform(["我的新书，ab的"]) == ["我的**，*的"]
    # vowel signs and viramas are part of their word: masked with it, kept with it
    hindi = TextDistortion(k=1, method="dv_sa").fit(["यह है और यह", "यह"])
    assert list(hindi.vocabulary_) == ["यह"]
    assert hindi.transform(["यह हिन्दी है, 42"]) == ["यह * *, #"]
    with pytest.raises(ValueError, match="method must be 'dv_ma' or 'dv_sa', got 'dv_xx'"):
        TextDistortion(method="dv_xx").fit(train)


# letters of several scripts and cases, digits (Nd) and numerals that are letters here ("²"),
# the two context-lowered letters, a lone surrogate, marks, apostrophes, "_", spaces and NUL
_PIECES = [
    "a",
    "B",
    "é",
    "ß",
    "ǅ",
    "ﬁ",
    "Ж",
    "ς",
    "Σ",
    "İ",
    "日",
    "の本",
    "٣",
    "7",
    "²",
    "½",
    "\u0301",
    "हि",
    "\u093f",
    "\U00011001",
    "\ud800",
    "'",
    "_",
    " ",
    "\n",
    "\x00",
    ".",
    "😀",
    "the",
    "The",
    "THE",
]
_TEXTS = st.lists(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join), max_size=6)


@settings(max_examples=200, deadline=None)
@given(train=_TEXTS, test=_TEXTS, k=st.integers(0, 6), single=st.booleans())
def test_text_distortion_kernels_equal_the_python_reference(train, test, k, single):
    got = TextDistortion(k=k, method="dv_sa" if single else "dv_ma").fit(train)
    counts = reference.distortion_counts(train)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    assert list(got.vocabulary_) == sorted(w for w, _ in top)
    keep = set(got.vocabulary_)
    assert got.transform(test + train) == reference.distort(test + train, keep, single)


def test_entity_masker_rules():
    out = EntityMasker().fit_transform(
        [
            "Yesterday I met John in New York. He paid 1,200.50 to NASA, see www.x.org or a@b.com",
            "Paris is big.\nLondon too, said the BBC.",
        ]
    )
    assert out[0] == "Yesterday I met @ in @ @. He paid # to @, see @ or @"
    assert out[1] == "Paris is big.\nLondon too, said the @."
    # a decomposed accent stays in its word, and the Armenian full stop ends a sentence
    nfd = EntityMasker().fit_transform(["Then E\u0301mile met Ève. Ան։ Բան"])
    assert nfd == ["Then @ met @. Ան։ Բան"]


def test_masking_in_pipeline_before_extractor():
    pipe = Pipeline(
        [("mask", EntityMasker()), ("dist", TextDistortion(k=5)), ("ngrams", CharNgrams((1, 2)))]
    )
    X = pipe.fit_transform(DOCS)
    names = set(pipe[-1].get_feature_names_out())
    assert "@" in names and not any(re.search(r"[0-9]", n) for n in names)
    assert X.shape[0] == len(DOCS) and np.isfinite(X.data).all()
