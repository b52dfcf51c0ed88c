"""LambdaG's tokens: texts lower-cased, split into sentences after ``.``, ``!``, ``?`` (and the
full stops of other scripts, ``stylo.features._utf8.STOPS``; the CJK full stop, exclamation and
question marks, which no space follows) and at line breaks, and into tokens (letter runs with
their combining marks, ``*`` runs, ``#`` runs, single other characters, a Han ideograph or kana
being one: ``stylo.features._utf8.ALONE``), in one Numba pass over their UTF-8
(:class:`SentenceTokens`), with ``reference_tokens`` the plain Python it equals.

The kernel classifies code points through ``stylo.features._utf8``'s tables, built from
Python's ``re`` and ``str.lower``, so it agrees with the regular expressions by construction;
a text holding a code point whose ``str.lower()`` depends on context (``LOWER_SPECIAL``) is
tokenised by the Python instead.
"""

from __future__ import annotations

import re

import numba
import numpy as np

from stylo.features._tokens import end_token, intern_tokens, token_positions, token_strings
from stylo.features._utf8 import (
    LETTER_RUN,
    STOPS,
    char_table,
    decode,
    encode,
    encode_utf8,
    lower_table,
)

__all__ = ["BREAK", "SentenceTokens", "reference_tokens"]

#: 。！？: a sentence ends after them, with or without space
_WIDE_STOPS = "\u3002\uff01\uff1f"
_SENTENCE_BREAK = re.compile(f"(?<=[{re.escape(STOPS)}])\\s+|(?<=[{_WIDE_STOPS}])\\s*|\\s*\\n\\s*")
#: a token (letter run, ``*`` run, ``#`` run, any other single character) or a sentence break,
#: once every break is one "\n": a break is whitespace and no token is, so one pass over a
#: text finds the tokens that splitting it into sentences and each sentence into tokens would
_TOKEN_OR_BREAK = re.compile(f"\\n|{LETTER_RUN}|\\*+|#+|\\S")
BREAK = "\n"

_LINE_FEED, _STAR, _HASH = 10, 42, 35
_WIDE_END = tuple(map(ord, _WIDE_STOPS))
_SENTENCE_END = (*map(ord, STOPS), *_WIDE_END)


def reference_tokens(text: str) -> list[str]:
    """The text's tokens and sentence breaks (``BREAK``), in order."""
    return _TOKEN_OR_BREAK.findall(_SENTENCE_BREAK.sub(BREAK, text.lower()))


@numba.njit(cache=True, nogil=True)
def _sentence_tokens(text, doc_off, lower, is_special, is_space, is_letter):
    """``reference_tokens`` of each UTF-8 document as one token buffer, a sentence break
    being an empty token: ``(buf, tok_off, doc_tok, special)``, ``doc_tok`` each document's
    first token (n_docs + 1); a document with ``special`` set has no token here.

    The regex substitution, read off: a maximal whitespace run becomes a break when it
    follows a sentence end or holds a line feed, and is skipped otherwise; a CJK sentence end
    that no whitespace follows is followed by a break. ``is_letter`` leaves out ``ALONE``, so
    that each of those is a token of its own."""
    n_docs = doc_off.shape[0] - 1
    # every token or break takes at least one byte of the text; a lowered code point at most
    # twice its bytes (both arrays are backed only where written)
    most = text.shape[0] + 1
    buf = np.empty(2 * text.shape[0] + most, dtype=np.uint8)
    tok_off = np.empty(most + 1, dtype=np.int64)
    tok_off[0] = 0
    doc_tok = np.zeros(n_docs + 1, dtype=np.int64)
    special = np.zeros(n_docs, dtype=np.bool_)
    t = 0
    at = 0
    for d in range(n_docs):
        doc_tok[d] = t
        t0, at0 = t, at
        end = doc_off[d + 1]
        i = doc_off[d]
        prev = -1  # the code point before i
        run = 0  # kind of the open token: 0 none, 1 letters, 2 stars, 3 hashes
        while i < end:
            c, j = decode(text, i)
            if is_special[c]:
                special[d] = True
                t, at = t0, at0
                run = 0
                break
            c = lower[c]
            kind = 1 if is_letter[c] else 2 if c == _STAR else 3 if c == _HASH else 0
            if run and kind != run:
                at, t = end_token(buf, at, tok_off, t)
                run = 0
            if is_space[c]:
                brk = c == _LINE_FEED or prev in _SENTENCE_END
                while j < end:
                    c2, k = decode(text, j)
                    c2 = lower[c2]
                    if not is_space[c2]:
                        break
                    brk = brk or c2 == _LINE_FEED
                    j = k
                if brk:
                    at, t = end_token(buf, at, tok_off, t)
                prev = c
                i = j
                continue
            at = encode(buf, at, c)
            if kind:
                run = kind
            else:
                at, t = end_token(buf, at, tok_off, t)
                if c in _WIDE_END and (j == end or not is_space[lower[decode(text, j)[0]]]):
                    at, t = end_token(buf, at, tok_off, t)
            prev = c
            i = j
        if run:
            at, t = end_token(buf, at, tok_off, t)
    doc_tok[n_docs] = t
    return buf[:at], tok_off[: t + 1], doc_tok, special


class SentenceTokens:
    """The tokens of ``texts`` (``reference_tokens`` of each), found in one kernel pass."""

    def __init__(self, texts: list[str]):
        tables = (lower_table(), char_table("lower_special"), char_table("space"))
        found = _sentence_tokens(*encode_utf8(texts), *tables, char_table("letter"))
        self.buf, self.tok_off, self.doc_tok, special = found
        self.python = {int(i): reference_tokens(texts[i]) for i in np.flatnonzero(special)}

    def distinct(self) -> set[str]:
        """Every token of the texts, sentence breaks not."""
        _, pool, _ = intern_tokens(self.buf, self.tok_off)
        out = set(token_strings(pool))
        for tokens in self.python.values():
            out.update(tokens)
        out.discard("")  # the kernel's break
        out.discard(BREAK)
        return out

    def ids(self, vocabulary: dict[str, int], other: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text, its tokens' ids (``vocabulary``'s, ``other`` for the rest), sentence
        after sentence, and the lengths of its sentences that have a token (both int64)."""
        position = token_positions(list(vocabulary), self.buf, self.tok_off)
        n = len(vocabulary)
        id_of = np.append(np.fromiter(vocabulary.values(), dtype=np.int64, count=n), other)
        ids = id_of[np.where(position >= 0, position, n)]  # n: no word, the other token
        ids[np.diff(self.tok_off) == 1] = -1  # a break: its SEP alone
        get = {**vocabulary, BREAK: -1}.get
        out = []
        for d in range(self.doc_tok.shape[0] - 1):
            if d in self.python:
                doc = np.array([get(w, other) for w in self.python[d]], dtype=np.int64)
            else:
                doc = ids[self.doc_tok[d] : self.doc_tok[d + 1]]
            breaks = np.flatnonzero(doc < 0)
            lengths = np.diff(np.concatenate(([-1], breaks, [len(doc)]))) - 1
            out.append((doc[doc >= 0], lengths[lengths > 0]))
        return out
