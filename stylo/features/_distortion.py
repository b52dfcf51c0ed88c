"""TextDistortion's kernels: words (``_utf8.WORD_PATTERN``: a Han ideograph or kana alone, or a
maximal run of the other letters) of UTF-8 documents, lowered, as a token buffer (see
``_tokens``), and the documents rewritten with the words not kept masked. Code-point classes
come from ``_utf8``'s tables, built from Python's ``re`` and ``str.lower``, so both agree with
:mod:`stylo.features._reference`'s plain Python by construction; a document holding a code point
whose ``str.lower()`` depends on context (``LOWER_SPECIAL``) is left to that Python, marked in
``special``."""

from __future__ import annotations

import numba
import numpy as np

from stylo.features._tokens import end_token
from stylo.features._utf8 import decode, encode

_STAR = 42  # "*"
_HASH = 35  # "#"


@numba.njit(cache=True, nogil=True)
def lowered_words(text, doc_off, is_letter, is_alone, lower, is_special):
    """The lowered words of the documents as a token buffer, in text order: ``(buf, tok_off,
    special)``, word t being ``buf[tok_off[t]:tok_off[t + 1] - 1]``; a document with ``special``
    set contributes no word. A word is an ``is_alone`` code point or a maximal run of
    ``is_letter`` ones."""
    n_docs = doc_off.shape[0] - 1
    # a word takes at least one byte and words are apart by at least one; a lowered code
    # point takes at most twice its bytes (both arrays are backed only where written)
    most = (text.shape[0] + n_docs) // 2 + 1
    buf = np.empty(2 * text.shape[0] + most, dtype=np.uint8)
    tok_off = np.empty(most + 1, dtype=np.int64)
    tok_off[0] = 0
    special = np.zeros(n_docs, dtype=np.bool_)
    t = 0
    at = 0
    for d in range(n_docs):
        t0, at0 = t, at
        inside = False
        i = doc_off[d]
        while i < doc_off[d + 1]:
            c, i = decode(text, i)
            if is_special[c]:
                special[d] = True
                t, at = t0, at0
                inside = False
                break
            if is_letter[c]:
                at = encode(buf, at, lower[c])
                inside = True
                continue
            if inside:
                at, t = end_token(buf, at, tok_off, t)
                inside = False
            if is_alone[c]:
                at = encode(buf, at, lower[c])
                at, t = end_token(buf, at, tok_off, t)
        if inside:
            at, t = end_token(buf, at, tok_off, t)
    return buf[:at], tok_off[: t + 1], special


@numba.njit(cache=True, nogil=True)
def distorted(text, doc_off, is_letter, is_alone, is_digit, special, kept, single):
    """The documents (but the ``special`` ones, left empty) with every word not ``kept``
    masked: ``kept[t]`` for the t-th word of ``lowered_words``' order. Masked words become
    one ``*`` a letter (``single``: one ``*``), digits one ``#`` each (``single``: one a run).
    Returns ``(out, out_off)``, UTF-8 and byte offsets (n_docs + 1); no output is longer than
    its input (every replaced code point takes at least the one byte written for it)."""
    n_docs = doc_off.shape[0] - 1
    out = np.empty(text.shape[0], dtype=np.uint8)
    out_off = np.zeros(n_docs + 1, dtype=np.int64)
    at = 0
    w = 0
    for d in range(n_docs):
        if not special[d]:
            i = doc_off[d]
            end = doc_off[d + 1]
            digits = False  # the previous code point was a digit
            while i < end:
                c, j = decode(text, i)
                if is_letter[c] or is_alone[c]:
                    e = j
                    letters = 1
                    while is_letter[c] and e < end:
                        c, k = decode(text, e)
                        if not is_letter[c]:
                            break
                        e = k
                        letters += 1
                    if kept[w]:
                        out[at : at + e - i] = text[i:e]
                        at += e - i
                    else:
                        for _ in range(1 if single else letters):
                            out[at] = _STAR
                            at += 1
                    w += 1
                    i = e
                    digits = False
                    continue
                if is_digit[c]:
                    if not (single and digits):
                        out[at] = _HASH
                        at += 1
                    digits = True
                else:
                    out[at : at + j - i] = text[i:j]
                    at += j - i
                    digits = False
                i = j
        out_off[d + 1] = at
    return out[:at], out_off
