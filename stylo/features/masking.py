"""Text-to-text transformers that hide topic, for use in a Pipeline before any extractor.

* :class:`TextDistortion` - Stamatatos (2017), "Authorship attribution using text distortion"
  (EACL): keep the k most frequent words of the training texts, mask everything else.
* :class:`EntityMasker` - rule-based named-entity and number masking (no model download).

Both take and return ``list[str]``.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections import Counter

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from stylo.features import _reference as reference
from stylo.features._distortion import distorted, lowered_words
from stylo.features._tokens import intern_tokens, token_positions, token_strings
from stylo.features._utf8 import CASED_RUN, STOPS, char_table, encode_utf8, lower_table
from stylo.features._validation import TextInputMixin
from stylo.features.function_words import function_words
from stylo.text_input import check_texts

__all__ = ["TextDistortion", "EntityMasker"]


class TextDistortion(TextInputMixin, TransformerMixin, BaseEstimator):
    """Mask all but the ``k`` most frequent words (Stamatatos 2017).

    Words are maximal runs of letters, each Han ideograph or kana a word by itself (their
    scripts put no space between words); frequencies are counted case-insensitively on the
    texts given to ``fit`` (ties broken alphabetically) and matching is case-insensitive, the
    kept words keeping their original case. Punctuation and whitespace are untouched.

    ``method="dv_ma"`` (multiple asterisks): every letter of a masked word becomes ``*`` and
    every digit ``#`` (length is preserved). ``method="dv_sa"`` (single asterisk): a masked
    word becomes one ``*`` and a run of digits one ``#``.

    Attributes: ``vocabulary_`` (sorted array of the kept lower-case words).
    """

    def __init__(self, k=300, method="dv_ma"):
        self.k = k
        self.method = method

    def fit(self, X, y=None):
        """Learn the ``k`` most frequent words of the texts ``X``."""
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 0:
            raise ValueError(f"k must be an int >= 0, got {self.k!r}")
        if self.method not in ("dv_ma", "dv_sa"):
            raise ValueError(f"method must be 'dv_ma' or 'dv_sa', got {self.method!r}")
        # k = 0 keeps no word: nothing to count
        counts = _word_counts(check_texts(X)) if self.k else {}
        items = counts.items()
        if len(counts) > self.k:  # only words as frequent as the k-th can be among the top k
            floor = heapq.nlargest(self.k, counts.values())[-1]
            items = [kv for kv in items if kv[1] >= floor]
        top = sorted(items, key=lambda kv: (-kv[1], kv[0]))[: self.k]
        self.vocabulary_ = np.array(sorted(w for w, _ in top), dtype=object)
        return self

    def transform(self, X):
        """The distorted texts, a list of str of the same length as ``X``."""
        check_is_fitted(self, "vocabulary_")
        return _distort(check_texts(X), list(self.vocabulary_), self.method == "dv_sa")


def _words(docs: list[str]):
    """``(text, doc_off)`` of ``encode_utf8`` and ``(buf, tok_off, special)`` of
    ``lowered_words``: the documents' lowered words."""
    text, doc_off = encode_utf8(docs)
    tables = (char_table("letter"), char_table("alone"), lower_table(), char_table("lower_special"))
    words = lowered_words(text, doc_off, *tables)
    return text, doc_off, *words


def _word_counts(docs: list[str]) -> Counter:
    """Each lowered word's count over the documents (``_reference.distortion_counts``),
    the words interned in a kernel."""
    _, _, buf, tok_off, special = _words(docs)
    ids, pool, _ = intern_tokens(buf, tok_off)
    counts = Counter(dict(zip(token_strings(pool), np.bincount(ids).tolist(), strict=True)))
    counts.update(reference.distortion_counts([docs[i] for i in np.flatnonzero(special)]))
    return counts


def _distort(docs: list[str], keep: list[str], single: bool) -> list[str]:
    """``_reference.distort(docs, set(keep), single)``: the words found and looked up among the
    kept ones (``token_positions``), the texts rewritten in kernels."""
    text, doc_off, buf, tok_off, special = _words(docs)
    kept = token_positions(keep, buf, tok_off) >= 0
    tables = (char_table("letter"), char_table("alone"), char_table("digit"))
    out, out_off = distorted(text, doc_off, *tables, special, kept, single)
    raw = out.tobytes()
    got = [raw[a:b].decode("utf-8", "surrogatepass") for a, b in itertools.pairwise(out_off)]
    for i in np.flatnonzero(special):
        got[i] = reference.distort([docs[i]], set(keep), single)[0]
    return got


# URL, e-mail, number (with thousands separators / decimals), and word tokens, in that
# priority order; a word may contain inner apostrophes or hyphens ("O'Brien", "Jean-Luc") and
# combining marks (decomposed "E\u0301cole" is one word, not the capital "E").
_TOKENS = re.compile(
    r"(?P<url>(?:https?://|www\.)\S+)"
    r"|(?P<email>[\w.+-]+@[\w-]+\.[\w.-]+)"
    r"|(?P<number>\d+(?:[.,:]\d+)*)"
    f"|(?P<word>{CASED_RUN}(?:['\u2019-]{CASED_RUN})*)"
)
_SENTENCE_END = re.compile(f"[{re.escape(STOPS)}\u2026\n]")


class EntityMasker(TextInputMixin, TransformerMixin, BaseEstimator):
    """Replace probable named entities and numbers by placeholders, with fixed rules.

    Rules, applied left to right over tokens (no model, no download):

    1. URLs (``http(s)://...``, ``www....``) and e-mail addresses -> ``entity_token``.
    2. Numbers (digit runs, with ``.``/``,``/``:`` between digit groups) -> ``number_token``.
    3. A word written in capitals throughout (2+ letters, e.g. "NASA") -> ``entity_token``,
       wherever it stands, unless it is a function word ("I", "OK" is not one).
    4. A capitalised word (first letter upper case) that is not sentence-initial and whose
       lower-case form is not a function word -> ``entity_token``. Sentence-initial means
       first in the text, or preceded only by whitespace/closing quotes after ``.``, ``!``,
       ``?``, another script's full stop (``stylo.features._utf8.STOPS``: the danda, the
       Armenian full stop, ...), ``…`` or a line break: the text between it and the previous
       token contains one of these (so "Mr. Smith" keeps "Smith").

    Known limits: sentence-initial names are kept; lower-case entities are kept; each word of a
    multi-word name becomes its own placeholder. Nothing is learned in ``fit``.
    """

    def __init__(self, entity_token="@", number_token="#", language="en"):
        self.entity_token = entity_token
        self.number_token = number_token
        self.language = language

    def fit(self, X, y=None):
        """Validate parameters and input (nothing is learned)."""
        for name in ("entity_token", "number_token"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a str")
        self.function_words_ = frozenset(function_words(self.language))
        check_texts(X)
        return self

    def transform(self, X):
        """The masked texts, a list of str of the same length as ``X``."""
        check_is_fitted(self, "function_words_")
        return [self._mask(doc) for doc in check_texts(X)]

    def replaced_spans(self, X):
        """The character spans ``transform`` replaces, per text of ``X``: a list of
        ``(start, end, kind)`` lists in text order, ``kind`` being ``"entity"`` (replaced by
        ``entity_token``) or ``"number"`` (by ``number_token``); ``doc[start:end]`` is the
        replaced text and the spans do not overlap."""
        check_is_fitted(self, "function_words_")
        return [self._spans(doc) for doc in check_texts(X)]

    def _spans(self, doc: str) -> list[tuple[int, int, str]]:
        fw = self.function_words_
        spans = []
        first = True
        last = 0
        for m in _TOKENS.finditer(doc):
            kind = m.lastgroup
            tok = m.group()
            if kind in ("url", "email"):
                spans.append((m.start(), m.end(), "entity"))
            elif kind == "number":
                spans.append((m.start(), m.end(), "number"))
            elif tok.lower() not in fw and tok[0].isupper():
                shouting = len(tok) > 1 and tok.isupper()
                initial = first or _SENTENCE_END.search(doc, last, m.start()) is not None
                if shouting or not initial:
                    spans.append((m.start(), m.end(), "entity"))
            first = False
            last = m.end()
        return spans

    def _mask(self, doc: str) -> str:
        placeholder = {"entity": self.entity_token, "number": self.number_token}
        out = []
        last = 0
        for start, end, kind in self._spans(doc):
            out.append(doc[last:start])
            out.append(placeholder[kind])
            last = end
        out.append(doc[last:])
        return "".join(out)
