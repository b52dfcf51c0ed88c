"""Numba kernels for exact n-gram counting over integer symbol sequences.

A document arrives as an int32 array of symbols (dense ids >= 1 of code points or of tokens;
0 marks a symbol outside the fitted alphabet). An n-gram of length n <= L is packed
*left-aligned* into one int64 key: symbol k occupies bits ``bits * (L - 1 - k)``, shorter
n-grams leave the low bits zero. Because ids are >= 1 this packing is injective (exact, no
collisions), and because ids are assigned in code-point (or string) order, integer order of keys
equals Python's string order of the n-grams, i.e. the column order of scikit-learn.

All kernels are ``nogil`` so that Python threads run chunks of documents in parallel. Plain
Python references of the same computations live in ``_reference.py``.
"""

from __future__ import annotations

import numba
import numpy as np

_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: spreads packed keys


@numba.njit(cache=True, nogil=True, inline="always")
def _slot(key, mask):
    h = np.uint64(key)
    h ^= h >> np.uint64(31)
    h *= _HASH_MUL
    h ^= h >> np.uint64(29)
    return np.int64(h & np.uint64(mask))


@numba.njit(cache=True, nogil=True)
def mark_present(cps, present):
    """Set ``present[c] = 1`` for every code point ``c`` in ``cps``."""
    for i in range(cps.shape[0]):
        present[cps[i]] = 1


@numba.njit(cache=True, nogil=True)
def char_segments(cps, doc_off, idmap, is_space, space_id, word_bounded):
    """Map code points to symbols and cut each document into n-gram segments.

    ``analyzer="char"`` (``word_bounded=False``): one segment per document, whitespace runs of
    two or more characters replaced by one space (scikit-learn's ``\\s\\s+`` -> ``" "``).
    ``analyzer="char_wb"``: one segment per whitespace-separated word, padded with a space on
    both sides. Returns ``(sym, seg_off, doc_seg)``: symbols, segment boundaries into ``sym``
    and, per document, the first segment index (length n_docs + 1).
    """
    n_docs = doc_off.shape[0] - 1
    n = cps.shape[0]
    # a document of length l has at most (l + 1) // 2 words, each padded by 2 symbols
    max_words = (n + n_docs) // 2 + 1
    sym = np.empty(n + 2 * max_words, dtype=np.int32)
    seg_off = np.empty(max_words + n_docs + 2, dtype=np.int64)
    doc_seg = np.empty(n_docs + 1, dtype=np.int64)
    m = 0
    s = 0
    seg_off[0] = 0
    for d in range(n_docs):
        doc_seg[d] = s
        a = doc_off[d]
        b = doc_off[d + 1]
        if not word_bounded:
            i = a
            while i < b:
                c = cps[i]
                if is_space[c]:
                    j = i + 1
                    while j < b and is_space[cps[j]]:
                        j += 1
                    sym[m] = space_id if j - i > 1 else idmap[c]
                    m += 1
                    i = j
                else:
                    sym[m] = idmap[c]
                    m += 1
                    i += 1
            s += 1
            seg_off[s] = m
        else:
            i = a
            while i < b:
                if is_space[cps[i]]:
                    i += 1
                    continue
                sym[m] = space_id
                m += 1
                while i < b and not is_space[cps[i]]:
                    sym[m] = idmap[cps[i]]
                    m += 1
                    i += 1
                sym[m] = space_id
                m += 1
                s += 1
                seg_off[s] = m
    doc_seg[n_docs] = s
    return sym[:m], seg_off[: s + 1], doc_seg


@numba.njit(cache=True, nogil=True)
def _grow(arr, need):
    if need <= arr.shape[0]:
        return arr
    cap = max(need, 2 * arr.shape[0])
    out = np.empty(cap, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


@numba.njit(cache=True, nogil=True)
def _rehash(tab, new_cap):
    out = np.zeros((new_cap, 2), dtype=np.int64)
    mask = new_cap - 1
    for i in range(tab.shape[0]):
        k = tab[i, 0]
        if k != 0:
            h = _slot(k, mask)
            while out[h, 0] != 0:
                h = (h + 1) & mask
            out[h, 0] = k
            out[h, 1] = tab[i, 1]
    return out


@numba.njit(cache=True, nogil=True)
def count_segments(sym, seg_off, doc_seg, min_n, max_n, bits, word_bounded):
    """Count the n-grams of every document exactly.

    N-grams never cross segment boundaries and skip any containing symbol 0. With
    ``word_bounded`` (char_wb) a segment no longer than ``max_n`` also yields itself once,
    whatever ``min_n`` (scikit-learn counts a short padded word exactly once).

    Returns ``(row_nnz, ids, counts, keys)``: per document the number of distinct n-grams;
    for each (document, distinct n-gram) its chunk-local id and count, documents in order;
    and per local id its packed key.

    One open-addressing table (linear probing, exact key comparison) holds per slot the key
    and ``local_id << 32 | count in the current document``, so an n-gram costs one cache line.
    Unigrams and bigrams, when ``2 * bits <= 22``, skip hashing: their symbols index a direct
    table (a unigram ``s0`` at ``s0 < 2**bits``, a bigram at ``s0 << bits | s1 >= 2**bits``)
    holding ``(local_id + 1) << 32 | count``.
    """
    n_docs = doc_seg.shape[0] - 1
    direct_n = 2 if 2 * bits <= 22 else 0
    direct = np.zeros(1 << (2 * bits) if direct_n else 1, dtype=np.int64)
    cap = 1 << 16
    tab = np.zeros((cap, 2), dtype=np.int64)
    n_local = 0
    keys = np.empty(cap // 2, dtype=np.int64)
    touched = np.empty(16, dtype=np.int64)
    low32 = np.int64(0xFFFFFFFF)

    row_nnz = np.zeros(n_docs, dtype=np.int64)
    ids = np.empty(max(16, sym.shape[0]), dtype=np.int32)
    counts = np.empty(max(16, sym.shape[0]), dtype=np.int32)
    nnz = 0
    for d in range(n_docs):
        # room for every n-gram of this document being new, at load <= 1/2
        ln = seg_off[doc_seg[d + 1]] - seg_off[doc_seg[d]]
        most = ln * (max_n - min_n + 1) + (doc_seg[d + 1] - doc_seg[d])
        if 2 * (n_local + most) > cap:
            while 2 * (n_local + most) > cap:
                cap *= 2
            tab = _rehash(tab, cap)
            keys = _grow(keys, cap // 2)
        touched = _grow(touched, most)
        mask = cap - 1
        n_t = 0
        for s in range(doc_seg[d], doc_seg[d + 1]):
            a = seg_off[s]
            b = seg_off[s + 1]
            w_len = b - a
            top = max_n
            if word_bounded and w_len - 1 < top:
                top = w_len - 1  # the whole padded word is counted below
            whole = word_bounded and w_len <= max_n
            for i in range(a, b + 1 if whole else b):
                key = np.int64(0)
                if i == b:  # the whole padded word of char_wb
                    for n in range(1, w_len + 1):
                        c = sym[a + n - 1]
                        if c == 0:
                            key = np.int64(0)
                            break
                        key |= np.int64(c) << (bits * (max_n - n))
                    lo = w_len
                    hi = w_len if key != 0 else 0
                else:
                    lo = min_n
                    hi = min(top, b - i)
                for n in range(1, hi + 1):
                    if i < b:
                        c = sym[i + n - 1]
                        if c == 0:
                            break
                        key |= np.int64(c) << (bits * (max_n - n))
                    if n < lo:
                        continue
                    if n <= direct_n:
                        idx = key >> (bits * (max_n - n))
                        v = direct[idx]
                        if v == 0:
                            v = np.int64(n_local + 1) << 32
                            keys[n_local] = key
                            n_local += 1
                        if v & low32 == 0:
                            touched[n_t] = -1 - idx
                            n_t += 1
                        direct[idx] = v + 1
                        continue
                    g = _slot(key, mask)
                    while tab[g, 0] != key and tab[g, 0] != 0:
                        g = (g + 1) & mask
                    if tab[g, 0] == 0:
                        tab[g, 0] = key
                        tab[g, 1] = np.int64(n_local) << 32
                        keys[n_local] = key
                        n_local += 1
                    v = tab[g, 1]
                    if v & low32 == 0:
                        touched[n_t] = g
                        n_t += 1
                    tab[g, 1] = v + 1
        ids = _grow(ids, nnz + n_t)
        counts = _grow(counts, nnz + n_t)
        for u in range(n_t):
            g = touched[u]
            if g < 0:
                v = direct[-1 - g]
                direct[-1 - g] = v & ~low32
                ids[nnz] = np.int32((v >> 32) - 1)
            else:
                v = tab[g, 1]
                tab[g, 1] = v & ~low32
                ids[nnz] = np.int32(v >> 32)
            counts[nnz] = np.int32(v & low32)
            nnz += 1
        row_nnz[d] = n_t
    return row_nnz, ids[:nnz].copy(), counts[:nnz].copy(), keys[:n_local].copy()


_RADIX_BITS = 11


@numba.njit(cache=True, nogil=True)
def _sort_run(ids, counts, start, stop, tmp_ids, tmp_counts, hist, n_passes):
    """Sort ``ids[start:stop]`` ascending, carrying ``counts`` along (ids are distinct).

    Insertion sort for short runs, else an LSD radix sort in ``_RADIX_BITS``-bit digits, so a
    row costs a few linear passes over data that stays in cache.
    """
    m = stop - start
    if m <= 48:
        for i in range(start + 1, stop):
            v = ids[i]
            c = counts[i]
            j = i - 1
            while j >= start and ids[j] > v:
                ids[j + 1] = ids[j]
                counts[j + 1] = counts[j]
                j -= 1
            ids[j + 1] = v
            counts[j + 1] = c
        return
    src_i = ids[start:stop]
    src_c = counts[start:stop]
    dst_i = tmp_ids[:m]
    dst_c = tmp_counts[:m]
    radix_mask = (1 << _RADIX_BITS) - 1
    for p in range(n_passes):
        shift = _RADIX_BITS * p
        hist[:] = 0
        for k in range(m):
            hist[((src_i[k] >> shift) & radix_mask) + 1] += 1
        for h in range(radix_mask + 1):
            hist[h + 1] += hist[h]
        for k in range(m):
            digit = (src_i[k] >> shift) & radix_mask
            at = hist[digit]
            hist[digit] = at + 1
            dst_i[at] = src_i[k]
            dst_c[at] = src_c[k]
        src_i, dst_i = dst_i, src_i
        src_c, dst_c = dst_c, src_c
    if n_passes % 2 == 1:
        ids[start:stop] = src_i
        counts[start:stop] = src_c


@numba.njit(cache=True, nogil=True)
def remap_rows(row_nnz, ids, counts, local_to_col, n_cols):
    """In place: replace chunk-local ids by output columns, drop unmapped (-1) ones and sort
    each row by column.

    Returns ``(new_row_nnz, nnz)``; the rows are then ``ids[:nnz]``, ``counts[:nnz]``.
    Compaction in place is safe: we write at ``q <= k`` after reading at ``k``.
    """
    n_docs = row_nnz.shape[0]
    out_nnz = np.zeros(n_docs, dtype=np.int64)
    n_passes = 1
    while (1 << (_RADIX_BITS * n_passes)) < n_cols:
        n_passes += 1
    longest = 1
    for d in range(n_docs):
        longest = max(longest, row_nnz[d])
    tmp_ids = np.empty(longest, dtype=ids.dtype)
    tmp_counts = np.empty(longest, dtype=counts.dtype)
    hist = np.zeros((1 << _RADIX_BITS) + 1, dtype=np.int64)
    p = 0
    q = 0
    for d in range(n_docs):
        start = q
        for k in range(p, p + row_nnz[d]):
            col = local_to_col[ids[k]]
            if col >= 0:
                ids[q] = col
                counts[q] = counts[k]
                q += 1
        p += row_nnz[d]
        _sort_run(ids, counts, start, q, tmp_ids, tmp_counts, hist, n_passes)
        out_nnz[d] = q - start
    return out_nnz, q


@numba.njit(cache=True, nogil=True)
def tokenize_spans(cps, doc_off, is_word, is_apos):
    """Token spans of each document: maximal runs of word characters, an apostrophe between
    two word characters joining them (the regex ``\\w+(?:['\u2019]\\w+)*``).

    Returns ``(starts, ends, doc_tok)``: positions into ``cps`` and, per document, the first
    token index (length n_docs + 1).
    """
    n_docs = doc_off.shape[0] - 1
    most = (cps.shape[0] + n_docs) // 2 + 1  # a document of length l has <= (l + 1) // 2
    starts = np.empty(most, dtype=np.int64)
    ends = np.empty(most, dtype=np.int64)
    doc_tok = np.empty(n_docs + 1, dtype=np.int64)
    t = 0
    for d in range(n_docs):
        doc_tok[d] = t
        i = doc_off[d]
        b = doc_off[d + 1]
        while i < b:
            if not is_word[cps[i]]:
                i += 1
                continue
            st = i
            while i < b and is_word[cps[i]]:
                i += 1
            while i + 1 < b and is_apos[cps[i]] and is_word[cps[i + 1]]:
                i += 1
                while i < b and is_word[cps[i]]:
                    i += 1
            starts[t] = st
            ends[t] = i
            t += 1
    doc_tok[n_docs] = t
    return starts[:t].copy(), ends[:t].copy(), doc_tok


@numba.njit(cache=True, nogil=True)
def intern_tokens(cps, starts, ends):
    """Give equal tokens equal ids (exact: a hash table that compares code points).

    Returns ``(tok_ids, first)``: per token its id (0-based, in order of first occurrence)
    and, per id, the index of its first occurrence.
    """
    n_tok = starts.shape[0]
    cap = 1 << 12
    while cap < 2 * n_tok + 2:
        cap *= 2
    mask = cap - 1
    table = np.full(cap, -1, dtype=np.int64)
    tok_ids = np.empty(n_tok, dtype=np.int32)
    first = np.empty(n_tok, dtype=np.int64)
    n_ids = 0
    for t in range(n_tok):
        a = starts[t]
        b = ends[t]
        h = np.uint64(1469598103934665603)
        for i in range(a, b):
            h = (h ^ np.uint64(cps[i])) * np.uint64(1099511628211)
        g = np.int64(h >> np.uint64(20)) & mask
        while True:
            r = table[g]
            if r < 0:
                table[g] = t
                tok_ids[t] = n_ids
                first[n_ids] = t
                n_ids += 1
                break
            ra = starts[r]
            rb = ends[r]
            same = rb - ra == b - a
            if same:
                for k in range(b - a):
                    if cps[ra + k] != cps[a + k]:
                        same = False
                        break
            if same:
                tok_ids[t] = tok_ids[r]
                break
            g = (g + 1) & mask
    return tok_ids, first[:n_ids].copy()


@numba.njit(cache=True, nogil=True)
def decode_keys(keys, bits, max_n):
    """Unpack keys into an (n_keys, max_n) int32 array of symbols, 0-padded on the right."""
    out = np.zeros((keys.shape[0], max_n), dtype=np.int32)
    mask = (np.int64(1) << bits) - 1
    for r in range(keys.shape[0]):
        for k in range(max_n):
            out[r, k] = np.int32((keys[r] >> (bits * (max_n - 1 - k))) & mask)
    return out


@numba.njit(cache=True, nogil=True)
def class_counts(cps, doc_off, classes, n_classes):
    """(n_docs, n_classes) counts of the code-point classes ``classes[c]`` in each document."""
    n_docs = doc_off.shape[0] - 1
    out = np.zeros((n_docs, n_classes), dtype=np.int64)
    for d in range(n_docs):
        for i in range(doc_off[d], doc_off[d + 1]):
            out[d, classes[cps[i]]] += 1
    return out
