"""UTF-8 coding and code-point tables: documents as one byte array, decoded in the kernels.

The kernels read text as UTF-8 bytes (a quarter of the memory of code points for mostly
ASCII text) and classify code points through tables over all of them, built here from
Python's own regex classes and ``str.lower``, so that the kernels agree with ``re`` and
``str.lower()`` by construction.
"""

from __future__ import annotations

import functools
import re

import numba
import numpy as np

N_CODEPOINTS = 0x110000
SPACE = 32

# the two code points whose str.lower() is not one context-free code point: U+0130 lowers to
# two, U+03A3 to a final or a medial sigma depending on its neighbours
LOWER_SPECIAL = "\u0130\u03a3"

# the blocks of scripts written without spaces between words: Han ideographs (with the iteration
# and zero marks), kana, halfwidth katakana. Their word characters are letters, each a word by
# itself (``ALONE``), as R stylo's CJK tokeniser and BERT's basic tokeniser make them: a run of
# them is a clause, not a word (a Chinese text would be one "word" per comma)
_HAN_KANA = (
    "\u3005\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uff66-\uff9f\U00020000-\U0003134f"
)
#: a word character of ``_HAN_KANA``: a word by itself
ALONE = f"(?=\\w)[{_HAN_KANA}]"
#: ``WordNgrams``' tokens: an ``ALONE`` character, or a maximal run of the other word characters
#: (Python's Unicode ``\\w``) where an apostrophe (``'`` or ``’``) between two of them keeps them in
#: one token ("don't", "o'clock"); written with negated classes, which ``re`` matches faster than
#: lookaheads (0.27 s against 0.48 s on 5,000 blog posts; 0.20 s without ``ALONE``)
TOKEN_PATTERN = f"(?u){ALONE}|[^\\W{_HAN_KANA}]+(?:['\u2019][^\\W{_HAN_KANA}]+)*"
#: a maximal run of letters but ``ALONE`` ones
LETTER_RUN = f"[^\\W\\d_{_HAN_KANA}]+"
#: TextDistortion's words: an ``ALONE`` character or a ``LETTER_RUN``
WORD_PATTERN = f"{ALONE}|{LETTER_RUN}"

_PATTERNS = {
    "space": r"\s",
    "word": f"[^\\W{_HAN_KANA}]",
    "apos": "['\u2019]",
    "lower_special": f"[{LOWER_SPECIAL}]",
    "letter": f"[^\\W\\d_{_HAN_KANA}]",
    "alone": ALONE,
    "digit": r"\d",
}
_TABLES: dict[str, np.ndarray] = {}


@functools.cache
def _every() -> str:
    """Every code point in order, one str (0.12 s to build; the tables share it)."""
    return "".join(map(chr, range(N_CODEPOINTS)))


def char_table(name: str) -> np.ndarray:
    """uint8 table over all code points: 1 where the class ``name`` ("space" ``\\s``, "word"
    ``\\w`` but ``ALONE``, "apos" ``'`` or ``’``, "lower_special" ``LOWER_SPECIAL``, "letter"
    ``[^\\W\\d_]`` but ``ALONE``, "alone" ``ALONE``, "digit" ``\\d``) holds."""
    if name not in _TABLES:
        table = np.zeros(N_CODEPOINTS, dtype=np.uint8)
        table[[m.start() for m in re.finditer(_PATTERNS[name], _every())]] = 1
        _TABLES[name] = table
    return _TABLES[name]


def lower_table() -> np.ndarray:
    """int32 table code point -> ``str.lower()`` of it, for every code point but
    ``LOWER_SPECIAL`` (mapped to themselves; text containing them is lowered by Python)."""
    if "lower" not in _TABLES:
        every = _every()
        for c in LOWER_SPECIAL:
            every = every.replace(c, "a")
        table = np.frombuffer(
            every.lower().encode("utf-32-le", "surrogatepass"), dtype=np.int32
        ).copy()
        for c in LOWER_SPECIAL:
            table[ord(c)] = ord(c)
        _TABLES["lower"] = table
    return _TABLES["lower"]


def encode_utf8(docs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The documents as one UTF-8 byte array (lone surrogates as by "surrogatepass") and the
    byte offset of each (n_docs + 1)."""
    # room for 4 bytes a code point, backed only where written: each document goes straight
    # in, with no list of encoded documents and no joined copy
    text = np.empty(4 * sum(map(len, docs)), dtype=np.uint8)
    view = memoryview(text)
    doc_off = np.zeros(len(docs) + 1, dtype=np.int64)
    at = 0
    for i, d in enumerate(docs):
        encoded = d.encode("utf-8", "surrogatepass")
        view[at : at + len(encoded)] = encoded
        at += len(encoded)
        doc_off[i + 1] = at
    return text[:at], doc_off


@numba.njit(cache=True, nogil=True, inline="always")
def decode(text, i):
    """The code point of the UTF-8 sequence at byte ``i`` of ``text`` and the next byte index.
    ``text`` comes from Python's encoder (with "surrogatepass"), so it is well formed."""
    b = np.int32(text[i])
    if b < 0x80:
        return b, i + 1
    if b < 0xE0:
        return (b & 0x1F) << 6 | (np.int32(text[i + 1]) & 0x3F), i + 2
    if b < 0xF0:
        return (
            (b & 0x0F) << 12 | (np.int32(text[i + 1]) & 0x3F) << 6 | (np.int32(text[i + 2]) & 0x3F)
        ), i + 3
    return (
        (b & 0x07) << 18
        | (np.int32(text[i + 1]) & 0x3F) << 12
        | (np.int32(text[i + 2]) & 0x3F) << 6
        | (np.int32(text[i + 3]) & 0x3F)
    ), i + 4


@numba.njit(cache=True, nogil=True, inline="always")
def encode(buf, at, c):
    """Write code point ``c`` as UTF-8 (surrogates as by "surrogatepass") at ``buf[at]``;
    return the next free index."""
    if c < 0x80:
        buf[at] = c
        return at + 1
    if c < 0x800:
        buf[at] = 0xC0 | (c >> 6)
        buf[at + 1] = 0x80 | (c & 0x3F)
        return at + 2
    if c < 0x10000:
        buf[at] = 0xE0 | (c >> 12)
        buf[at + 1] = 0x80 | ((c >> 6) & 0x3F)
        buf[at + 2] = 0x80 | (c & 0x3F)
        return at + 3
    buf[at] = 0xF0 | (c >> 18)
    buf[at + 1] = 0x80 | ((c >> 12) & 0x3F)
    buf[at + 2] = 0x80 | ((c >> 6) & 0x3F)
    buf[at + 3] = 0x80 | (c & 0x3F)
    return at + 4


@numba.njit(cache=True, nogil=True)
def class_counts(text, doc_off, classes, n_classes):
    """(n_docs, n_classes) counts of the code-point classes ``classes[c]`` in each UTF-8
    document (``doc_off``: byte offsets)."""
    n_docs = doc_off.shape[0] - 1
    out = np.zeros((n_docs, n_classes), dtype=np.int64)
    for d in range(n_docs):
        i = doc_off[d]
        while i < doc_off[d + 1]:
            c, i = decode(text, i)
            out[d, classes[c]] += 1
    return out
