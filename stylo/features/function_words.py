"""Relative frequencies of function words, optionally punctuation and character classes."""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache
from importlib import resources

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from stylo.features._tokens import tokenize
from stylo.features._utf8 import N_CODEPOINTS, char_table, class_counts, encode_utf8
from stylo.features._validation import TextInputMixin
from stylo.features.ngrams import CharNgrams, WordNgrams
from stylo.text_input import check_texts

__all__ = ["FunctionWords", "function_words", "PUNCTUATION", "CHAR_CLASSES"]

#: Punctuation marks counted by ``FunctionWords(punctuation=True)``.
PUNCTUATION = (
    ".",
    ",",
    ";",
    ":",
    "!",
    "?",
    "'",
    '"',
    "-",
    "(",
    ")",
    "\u2026",
    "\u2014",
    "\u2013",
    "\u2018",
    "\u2019",
    "\u201c",
    "\u201d",
    "/",
    "*",
    "&",
)
#: Character classes of ``FunctionWords(char_classes=True)``: by ``str.islower`` /
#: ``isupper``, ``\d`` digits, ``\s`` whitespace, Unicode category P* punctuation, the rest.
CHAR_CLASSES = ("lower", "upper", "digit", "space", "punct", "other")
_LANGUAGES = ("en",)


@cache
def function_words(language: str = "en") -> tuple[str, ...]:
    """The shipped function-word list (``stylo/resources/function_words_<language>.txt``)."""
    if language not in _LANGUAGES:
        raise ValueError(f"no function-word list for language {language!r}; have {_LANGUAGES}")
    text = resources.files("stylo").joinpath("resources", f"function_words_{language}.txt")
    words = [w.strip() for w in text.read_text(encoding="utf-8").splitlines()]
    return tuple(w for w in words if w and not w.startswith("#"))


@lru_cache(maxsize=1)
def _class_table() -> np.ndarray:
    every = "".join(map(chr, range(N_CODEPOINTS)))
    table = np.full(N_CODEPOINTS, CHAR_CLASSES.index("other"), dtype=np.int64)
    for name, test in (
        ("punct", lambda c: unicodedata.category(c).startswith("P")),
        ("lower", str.islower),
        ("upper", str.isupper),
    ):
        table[[i for i, c in enumerate(every) if test(c)]] = CHAR_CLASSES.index(name)
    table[char_table("space") == 1] = CHAR_CLASSES.index("space")
    table[[i for i, c in enumerate(every) if c.isdecimal()]] = CHAR_CLASSES.index("digit")
    return table


class FunctionWords(TextInputMixin, TransformerMixin, BaseEstimator):
    """Relative frequencies of function words in each text.

    Feature ``w`` = occurrences of token ``w`` / number of tokens in the text (0 for a text
    without tokens); tokens are those of ``WordNgrams`` (``TOKEN_PATTERN``, lower-cased).
    With ``punctuation=True``, columns ``punct:<mark>`` = occurrences of each mark in
    ``PUNCTUATION`` / number of characters; with ``char_classes=True``, columns
    ``class:<name>`` = share of characters in each class of ``CHAR_CLASSES``.

    Parameters
    ----------
    language : "en"
        Which shipped list to use (see ``function_words``).
    words : sequence of str, optional
        A custom list instead of the shipped one (lower-case tokens).
    punctuation, char_classes : bool, default False
    sparse_output : bool, default False
        A CSR matrix instead of a dense array (less memory for short texts, which use few
        of the words). Dense output works with ``set_output(transform="pandas")``: a
        DataFrame whose columns are ``get_feature_names_out()``.

    Output: float64 array of shape (n_samples, n_features_out_), or CSR with
    ``sparse_output=True``.
    """

    def __init__(
        self,
        language="en",
        *,
        words=None,
        punctuation=False,
        char_classes=False,
        sparse_output=False,
    ):
        self.language = language
        self.words = words
        self.punctuation = punctuation
        self.char_classes = char_classes
        self.sparse_output = sparse_output

    def fit(self, X, y=None):
        """Validate parameters and input; nothing is learned from ``X``."""
        check_texts(X)
        words = list(function_words(self.language) if self.words is None else self.words)
        if not words or not all(isinstance(w, str) and w for w in words):
            raise ValueError("words must be a non-empty sequence of non-empty str")
        if len(set(words)) != len(words):
            raise ValueError("words contains repeated entries")
        self.words_ = np.array(words, dtype=object)
        self.n_features_out_ = (
            len(words)
            + len(PUNCTUATION) * bool(self.punctuation)
            + len(CHAR_CLASSES) * bool(self.char_classes)
        )
        return self

    def transform(self, X):
        """Relative frequencies, float64 of shape (n_samples, n_features_out_): an array, or
        CSR with ``sparse_output``."""
        check_is_fitted(self, "words_")
        docs = check_texts(X)
        counter = WordNgrams((1, 1), vocabulary=list(self.words_))
        parts = [counter.fit_transform(docs).astype(np.float64)]
        parts[0] = _divide_rows(parts[0], np.diff(tokenize(docs, lowercase=True)[2]))
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        if self.punctuation:
            marks = CharNgrams((1, 1), vocabulary=list(PUNCTUATION), lowercase=False)
            parts.append(_divide_rows(marks.fit_transform(docs).astype(np.float64), lengths))
        if self.char_classes:
            shares = class_counts(*encode_utf8(docs), _class_table(), len(CHAR_CLASSES))
            parts.append(_divide_rows(sp.csr_matrix(shares.astype(np.float64)), lengths))
        X = sp.hstack(parts, format="csr")
        return X if self.sparse_output else X.toarray()

    def get_feature_names_out(self, input_features=None):
        """The column names (object array of str): the words in their order, then
        ``punct:<mark>`` and ``class:<name>`` columns if enabled. ``input_features`` is
        ignored (the input is raw text)."""
        check_is_fitted(self, "words_")
        names = list(self.words_)
        if self.punctuation:
            names += [f"punct:{m}" for m in PUNCTUATION]
        if self.char_classes:
            names += [f"class:{c}" for c in CHAR_CLASSES]
        return np.array(names, dtype=object)


def _divide_rows(X, totals):
    scale = np.divide(1.0, totals, out=np.zeros(len(totals)), where=np.asarray(totals) > 0)
    return sp.csr_matrix(sp.diags(scale) @ X)
