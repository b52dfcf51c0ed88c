import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from baselines.masked import MaskedVerifier
from experiments.methods import MASKINGS
from stylo.corpus import Corpus, PairSet
from stylo.features import CharNgrams, EntityMasker, TextDistortion
from stylo.features.shared_counts import active as active_counts
from stylo.features.shared_counts import shared_counts
from stylo.verifier import Verifier


class _Recorder(Verifier):
    """Scores 1 when both texts are identical; remembers every text it was shown."""

    def __init__(self, tag: str = ""):
        self.tag = tag

    def _fit_impl(self, X, y):
        self.seen_fit_ = X.texts if isinstance(X, Corpus) else X.unknown

    def _score_impl(self, a, b):
        self.seen_ = list(a) + list(b)
        return np.array([float(x == y) for x, y in zip(a, b)])


def test_masking_applies_to_training_and_test_texts():
    train = Corpus.from_lists(["Alice met Bob in Paris.", "Then Carol went home."], ["x", "y"])
    v = MaskedVerifier(_Recorder(), EntityMasker()).fit(train)
    assert v.verifier_.seen_fit_ == ["Alice met @ in @.", "Then @ went home."]
    # two texts that differ only in their named entities become identical
    s = v.score_pairs(["We saw Dave in Rome."], ["We saw Erin in Oslo."])
    assert s.tolist() == [1.0]
    assert v.verifier_.seen_ == ["We saw @ in @.", "We saw @ in @."]


def test_distortion_vocabulary_comes_from_training_texts_only():
    train = PairSet.from_lists(["the cat and the dog"], ["the end and more"], same=[True])
    v = MaskedVerifier(_Recorder(), TextDistortion(k=2)).fit(train)
    assert v.masker_.transform(["the zebra and"])[0] == "the ***** and"
    assert v.score_pairs(["the owl"], ["the elk"]).tolist() == [1.0]


def test_wrapper_keeps_the_contract():
    v = MaskedVerifier(_Recorder(), EntityMasker())
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        v.score_pairs(["a"], ["b"])
    with pytest.raises(TypeError, match="must be a Verifier"):
        MaskedVerifier("nope", EntityMasker()).fit(Corpus.from_lists(["a b"], ["x"]))


def test_registered_maskings_wrap_any_method():
    for name, wrap in MASKINGS.items():
        wrapped = wrap(_Recorder(tag=name))
        assert isinstance(wrapped, MaskedVerifier) and wrapped.verifier.tag == name


class _CountingMasker(TextDistortion):
    """TextDistortion that counts the texts it masks (class-level, clones share it)."""

    masked: list = []

    def transform(self, X):
        _CountingMasker.masked.extend(X)
        return super().transform(X)


def test_each_distinct_text_is_masked_once_per_fitted_masker():
    _CountingMasker.masked.clear()
    train = Corpus.from_lists(["the cat and the dog", "a dog and a cat"], ["x", "y"])
    a = ["the owl and", "a zebra", "the owl and"]
    b = ["a zebra", "the cat", "a zebra"]
    first = MaskedVerifier(_Recorder(), _CountingMasker(k=3)).fit(train)
    scores = first.score_pairs(a, b)
    assert first.verifier_.seen_ == list(first.masker_.transform(a)) + list(
        first.masker_.transform(b)
    )
    assert scores.tolist() == [0.0, 0.0, 0.0]
    _CountingMasker.masked.clear()
    # a second method behind an equal masker fitted on the same texts reuses every masked text
    second = MaskedVerifier(_Recorder("other"), _CountingMasker(k=3)).fit(train)
    second.score_pairs(a, b)
    assert _CountingMasker.masked == []
    # another vocabulary is another masker: nothing is reused from the first
    third = MaskedVerifier(_Recorder(), _CountingMasker(k=1)).fit(train)
    third.score_pairs(a, b)
    assert sorted(_CountingMasker.masked) == sorted(set(a + b) | set(train.texts))
    assert third.verifier_.seen_[0] != first.verifier_.seen_[0]


class _FitCountingMasker(TextDistortion):
    """TextDistortion that counts its fits (class-level, clones share it)."""

    fits = 0

    def fit(self, X, y=None):
        _FitCountingMasker.fits += 1
        return super().fit(X, y)


def test_a_masker_is_fitted_once_per_parameters_and_training_texts():
    _FitCountingMasker.fits = 0
    train = Corpus.from_lists(["the cat and the dog", "a dog and a cat"], ["x", "y"])
    first = MaskedVerifier(_Recorder(), _FitCountingMasker(k=3)).fit(train)
    second = MaskedVerifier(_Recorder("other"), _FitCountingMasker(k=3)).fit(train)
    assert _FitCountingMasker.fits == 1
    # each wrapper holds its own copy, equal to a masker fitted afresh
    assert second.masker_ is not first.masker_
    fresh = TextDistortion(k=3).fit(train.texts)
    assert second.masker_.vocabulary_.tolist() == fresh.vocabulary_.tolist()
    # other parameters or other texts fit anew
    MaskedVerifier(_Recorder(), _FitCountingMasker(k=2)).fit(train)
    other = Corpus.from_lists(["the owl and the elk", "an elk"], ["x", "y"])
    MaskedVerifier(_Recorder(), _FitCountingMasker(k=3)).fit(other)
    assert _FitCountingMasker.fits == 3


class _Counting(_Recorder):
    """A _Recorder that also counts char n-grams and notes the active shared counts."""

    def _fit_impl(self, X, y):
        super()._fit_impl(X, y)
        self.fit_counts_ = active_counts()
        self.rows_ = CharNgrams((1, 3)).fit_transform(self.seen_fit_)

    def _score_impl(self, a, b):
        self.score_counts_ = active_counts()
        return super()._score_impl(a, b)


def test_inside_shared_counts_the_inner_verifier_counts_the_masked_texts_once():
    # a grid task's masked cells: one count of the masked forms of the task's texts
    train = ["Alice met Bob in Paris.", "Then Carol went home.", "We saw Dave in Rome."]
    corpus = Corpus.from_lists(train, ["x", "y", "x"])
    test = ["We saw Erin in Oslo."]
    with shared_counts(train + test) as outer:
        inside = MaskedVerifier(_Counting(), EntityMasker()).fit(corpus)
        inside.score_pairs(train[:1], test)
        again = MaskedVerifier(_Counting(), EntityMasker()).fit(corpus)
    derived = inside.verifier_.fit_counts_
    assert derived is not outer and derived is again.verifier_.fit_counts_
    assert derived is inside.verifier_.score_counts_ and derived.holds(inside.verifier_.seen_)
    assert inside.verifier_.rows_.shape[0] == 3
    fresh = MaskedVerifier(_Counting(), EntityMasker()).fit(corpus)
    assert fresh.verifier_.fit_counts_ is None
    assert (inside.verifier_.rows_ != fresh.verifier_.rows_).nnz == 0
