"""Segmentation: UTF-8 documents cut into n-gram segments, and the n-gram windows over them.

A segment is a run of symbols that n-grams do not cross: for ``analyzer="char"`` the whole
document (whitespace runs collapsed), for ``"char_wb"`` each space-padded word, for words the
document's tokens. ``doc_windows`` lists, per start position, the longest n-gram there, whose
prefixes are the shorter ones; the counting kernels count those.
"""

from __future__ import annotations

import numba
import numpy as np

from stylo.features._utf8 import N_CODEPOINTS, char_table, decode, encode_utf8


class TextChunk:
    """A run of consecutive documents as one UTF-8 byte array (no joined ``str``), with what
    ``scan_text`` found: the code points present (``present``, uint8 over all code points)
    and the ``(n_sym, n_seg)`` bound on its n-grams (``size``)."""

    __slots__ = ("text", "doc_off", "present", "size")

    def __init__(self, docs: list[str], word_bounded: bool):
        self.text, self.doc_off = encode_utf8(docs)
        self.present = np.zeros(N_CODEPOINTS, dtype=np.uint8)
        self.size = scan_text(
            self.text, self.doc_off, char_table("space"), word_bounded, self.present
        )


@numba.njit(cache=True, nogil=True)
def scan_text(text, doc_off, is_space, word_bounded, present):
    """One pass over UTF-8 documents (``doc_off``: byte offsets): set ``present[c] = 1`` for
    every code point ``c``, and bound what ``text_segments`` makes of them. Returns
    ``(n_sym, n_seg)`` such that the documents have at most ``n_sym * n_lengths + n_seg``
    n-grams of ``n_lengths`` lengths (as ``_most_keys`` counts them)."""
    n_sym = 0
    n_seg = 0
    for d in range(doc_off.shape[0] - 1):
        i = doc_off[d]
        b = doc_off[d + 1]
        n_cp = 0
        n_words = 0
        n_inside = 0
        after_space = True
        while i < b:
            c, i = decode(text, i)
            present[c] = 1
            n_cp += 1
            if is_space[c]:
                after_space = True
            else:
                n_inside += 1
                n_words += after_space
                after_space = False
        if word_bounded:
            n_sym += n_inside + 2 * n_words
            n_seg += n_words
        else:
            n_sym += n_cp  # whitespace runs only shorten the text
            n_seg += 1
    return n_sym, n_seg


@numba.njit(cache=True, nogil=True)
def text_segments(
    text, i, b, idmap, is_space, space_id, word_bounded, inside, sym, m, seg_off, limit
):
    """Decode the UTF-8 document ``text[i:b]`` (``b`` its end), map code points to symbols
    (``idmap``) and cut it into n-gram segments, written to ``sym`` from index ``m`` on and to
    ``seg_off`` (``seg_off[0] = 0``), until ``limit`` or more symbols are held or the document
    ends: one piece of a long document at a time.

    ``analyzer="char"`` (``word_bounded=False``): one segment, whitespace runs of two or more
    characters replaced by one space (scikit-learn's ``\\s\\s+`` -> ``" "``; a run is decoded
    whole). ``analyzer="char_wb"``: one segment per whitespace-separated word, padded with a
    space on both sides; ``inside`` says whether byte ``i`` is inside a word. ``sym[:m]`` are
    symbols carried over from the previous piece: the start of the first segment.

    Returns ``(n_seg, m, i, inside)``: the segments closed (``seg_off[:n_seg + 1]``), the
    symbols held, the next byte and whether it is inside a word. Unless the document ended
    (``i == b``), the symbols ``seg_off[n_seg]:m`` are an open segment that goes on in the
    next piece (for "char" always; for "char_wb" when ``inside``). ``sym`` needs room for
    ``min(limit, m + 2 * (b - i)) + 2`` symbols and ``seg_off`` for
    ``min(b - i, limit) // 2 + 4`` entries.
    """
    s = 0
    seg_off[0] = 0
    if not word_bounded:
        while i < b and m < limit:
            c, i = decode(text, i)
            if is_space[c]:
                run = 1
                while i < b:
                    c2, j = decode(text, i)
                    if not is_space[c2]:
                        break
                    run += 1
                    i = j
                sym[m] = space_id if run > 1 else idmap[c]
            else:
                sym[m] = idmap[c]
            m += 1
        if i < b:
            return 0, m, i, False
        seg_off[1] = m
        return 1, m, i, False
    while i < b and m < limit:
        c, i = decode(text, i)
        if is_space[c]:
            if inside:
                sym[m] = space_id
                m += 1
                s += 1
                seg_off[s] = m
                inside = False
            continue
        if not inside:
            sym[m] = space_id
            m += 1
            inside = True
        sym[m] = idmap[c]
        m += 1
    if inside and i == b:
        sym[m] = space_id
        m += 1
        s += 1
        seg_off[s] = m
        inside = False
    return s, m, i, inside


@numba.njit(cache=True, nogil=True)
def doc_windows(sym, seg_off, s0, s1, start, stop, min_n, max_n, bits, word_bounded, keys, spans):
    """The n-grams starting at positions ``start:stop`` of segments ``s0:s1`` (one document,
    or one piece of it), grouped by start position.

    Writes, per start position with at least one n-gram, the packed key of its longest n-gram
    (length ``hi``) to ``keys`` and ``lo << 8 | hi`` to ``spans``: the n-grams there are that
    key's prefixes of lengths ``lo .. hi``. Returns how many positions.

    N-grams never cross segment boundaries and skip any containing symbol 0. With
    ``word_bounded`` (char_wb) a segment no longer than ``max_n`` also yields itself once,
    whatever ``min_n`` (scikit-learn counts a short padded word exactly once: ``lo = hi``),
    at its first position. A window of ``max_n`` symbols rolls over each segment; symbols up
    to ``max_n - 1`` past ``stop`` are read, so that pieces of a document cut at any
    positions count each n-gram once, in the piece where it starts.
    """
    full = (np.int64(1) << (bits * max_n)) - 1
    m = 0
    for s in range(s0, s1):
        a = seg_off[s]
        b = seg_off[s + 1]
        i0 = max(a, start)
        i1 = min(b, stop)
        if i0 >= i1:
            continue
        w_len = b - a
        top = max_n
        if word_bounded and w_len - 1 < top:
            top = w_len - 1  # the whole padded word is counted below
        win = np.int64(0)
        for k in range(min(max_n, b - i0)):
            win |= np.int64(sym[i0 + k]) << (bits * (max_n - 1 - k))
        # symbol 0 matters only within max_n of a start: no need to look further
        reach = min(b, i1 - 1 + max_n)
        zero = i0  # the first position >= i holding symbol 0, or reach
        while zero < reach and sym[zero] != 0:
            zero += 1
        if word_bounded and w_len <= max_n and i0 == a and zero == b:
            keys[m] = win
            spans[m] = w_len << 8 | w_len
            m += 1
        for i in range(i0, i1):
            if zero < i:
                zero = i
                while zero < reach and sym[zero] != 0:
                    zero += 1
            hi = min(top, zero - i)
            if hi >= min_n:
                keys[m] = win & ~((np.int64(1) << (bits * (max_n - hi))) - 1)
                spans[m] = min_n << 8 | hi
                m += 1
            win = (win << bits) & full
            if i + max_n < b:
                win |= np.int64(sym[i + max_n])
    return m


@numba.njit(cache=True, nogil=True, inline="always")
def _most_keys(seg_off, s0, s1, min_n, max_n):
    """An upper bound on the number of n-grams of segments ``s0:s1`` (see ``doc_windows``)."""
    return (seg_off[s1] - seg_off[s0]) * (max_n - min_n + 1) + (s1 - s0)


@numba.njit(cache=True, nogil=True)
def ngram_bound(seg_off, doc_seg, min_n, max_n):
    """An upper bound on the number of n-grams of all documents (see ``doc_windows``)."""
    total = 0
    for d in range(doc_seg.shape[0] - 1):
        total += _most_keys(seg_off, doc_seg[d], doc_seg[d + 1], min_n, max_n)
    return total
