"""UTF-8 coding and code-point tables: documents as one byte array, decoded in the kernels.

The kernels read text as UTF-8 bytes (a quarter of the memory of code points for mostly
ASCII text) and classify code points through tables over all of them, built here from
Python's own regex classes and ``str.lower``, so that the kernels agree with ``re`` and
``str.lower()`` by construction.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

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


def _class_of(points: list[int]) -> str:
    """A regex character class body (no brackets) holding exactly ``points`` (sorted)."""
    parts, first = [], 0
    for i in range(1, len(points) + 1):
        if i == len(points) or points[i] != points[i - 1] + 1:
            a, b = re.escape(chr(points[first])), re.escape(chr(points[i - 1]))
            parts.append(a if first == i - 1 else f"{a}-{b}")
            first = i
    return "".join(parts)


def _marks() -> list[int]:
    """Combining marks (Unicode categories Mn, Mc, Me) outside ``_HAN_KANA``, in order. Every
    mark lies in planes 0, 1 and 14 (the tests check all code points)."""
    in_han_kana = re.compile(f"[{_HAN_KANA}]")
    planes = (range(0x20000), range(0xE0000, 0xF0000))
    return [
        c
        for plane in planes
        for c in plane
        if unicodedata.category(chr(c))[0] == "M" and not in_han_kana.match(chr(c))
    ]


# Combining marks belong to the word they are written in: Devanagari, Bengali or Tamil vowel
# signs and viramas, Arabic harakat, Hebrew points, accents of decomposed (NFD) Latin. Python's
# ``\w`` holds none of them, so "हिन्दी" would be the words "ह", "न", "द", its vowel signs
# dropped. A mark is a word character (and a letter) here. ``re`` tests a class holding
# characters beyond the BMP range by range, so a cheap lookahead first keeps the other
# characters (all of ASCII) off the list
_MARK_POINTS = _marks()
_MARK = (
    f"(?:(?=[{re.escape(chr(_MARK_POINTS[0]))}-{re.escape(chr(_MARK_POINTS[-1]))}])"
    f"[{_class_of(_MARK_POINTS)}])"
)


def _runs_with_marks(char: str) -> str:
    """A maximal run of ``char`` characters (a class holding no mark) and combining marks,
    as a pattern: the runs of either kind alternate, so ``re`` tests a mark only where a
    ``char`` run ends. Nothing after a run can fail, so an atomic group (Python 3.11) matches
    the same, without the backtracking records (its speed against the pattern without marks
    was too noisy to call beside the grid: benchmarks/README.md)."""
    body = f"{char}+(?:{_MARK}+{char}*)*|{_MARK}+(?:{char}+{_MARK}*)*"
    return f"(?>{body})" if sys.version_info >= (3, 11) else f"(?:{body})"


_WORD_CHAR = f"[^\\W{_HAN_KANA}]"
_LETTER = f"[^\\W\\d_{_HAN_KANA}]"
#: a word character of ``_HAN_KANA``: a word by itself
ALONE = f"(?=\\w)[{_HAN_KANA}]"
_WORD_RUN = _runs_with_marks(_WORD_CHAR)
#: ``WordNgrams``' tokens: an ``ALONE`` character, or a maximal run of the other word characters
#: (Python's Unicode ``\\w``) and combining marks, where an apostrophe (``'`` or ``’``) between
#: two of them keeps them in one token ("don't", "o'clock"); written with negated classes, which
#: ``re`` matches faster than lookaheads (0.27 s against 0.48 s on 5,000 blog posts)
TOKEN_PATTERN = f"(?u){ALONE}|{_WORD_RUN}(?:['\u2019]{_WORD_RUN})*"
#: a maximal run of letters (but ``ALONE`` ones) and combining marks
LETTER_RUN = _runs_with_marks(_LETTER)
#: TextDistortion's words: an ``ALONE`` character or a ``LETTER_RUN``
WORD_PATTERN = f"{ALONE}|{LETTER_RUN}"
#: a maximal run of letters (Han and kana too) and combining marks: the EntityMasker's words,
#: whose rules read case, which Han and kana lack
CASED_RUN = _runs_with_marks("[^\\W\\d_]")

#: sentence ends that whitespace follows: . ! ? and the danda and double danda (Hindi, Marathi,
#: Nepali, Bengali, Punjabi), the Arabic question mark, the Urdu full stop, the Armenian,
#: Ethiopic and Myanmar full stops
STOPS = ".!?\u0964\u0965\u061f\u06d4\u0589\u1362\u104b"

_PATTERNS = {
    "space": r"\s",
    "word": f"{_WORD_CHAR}|{_MARK}",
    "apos": "['\u2019]",
    "lower_special": f"[{LOWER_SPECIAL}]",
    "letter": f"{_LETTER}|{_MARK}",
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
    ``\\w`` but ``ALONE``, and combining marks, "apos" ``'`` or ``’``, "lower_special"
    ``LOWER_SPECIAL``, "letter" ``[^\\W\\d_]`` but ``ALONE``, and combining marks, "alone"
    ``ALONE``, "digit" ``\\d``) holds."""
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
