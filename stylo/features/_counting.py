"""Exact n-gram counting kernels: every (document, distinct n-gram) with its count.

A document arrives as int32 symbols (dense ids >= 1 of code points or of tokens; 0 marks a
symbol outside the fitted alphabet). An n-gram of length n <= L is packed *left-aligned* into
one int64 key: symbol k occupies bits ``bits * (L - 1 - k)``, shorter n-grams leave the low
bits zero. Because ids are >= 1 this packing is injective (exact, no collisions), and because
ids are assigned in code-point (or string) order, integer order of keys equals Python's
string order of the n-grams, i.e. the column order of scikit-learn. Plain Python references
of the same computations live in ``_reference.py``; all kernels are ``nogil``, so that Python
threads count chunks of documents in parallel.

How. A document is counted in pieces (one, unless it is long), its counts summed in ``cnt``:
``count_segments`` takes ``piece`` start positions of its segments at a time (``doc_windows``
reads past them); ``count_text`` decodes ``piece`` symbols at a time, and when a piece ends
inside a segment, the n-grams starting there with all ``max_n`` symbols in sight are counted
and the rest of the segment goes on in the next piece (its last ``max_n`` symbols, the first
of them counted already, so that a carried segment is never mistaken for a short word), or,
if the open segment holds no more than ``max_n`` symbols (it may be a short word), all of it.
Every n-gram is thus counted once, in the piece where it starts.

Each n-gram gets a chunk-local id (in order of first occurrence). Unigrams and bigrams, when
``n * bits <= 22`` for length n, find it in a direct table indexed by their symbols (holding
``id + 1``). Longer ones use an open-addressing table (``_hash_tables``: linear probing, exact
key comparison), but only for the longest n-gram at each position: every hashed id stores the
id of its one-shorter prefix (``parent``), so the shorter n-grams at that position follow the
chain. The slot of the key ``PREFETCH_AHEAD`` positions ahead is prefetched, and half as far
ahead (the slot now cached) its key, count and parent, so that cache misses of the large
arrays overlap. Counts go to a dense array indexed by id, whose busy part (frequent n-grams,
seen early, have small ids) stays in cache.
"""

from __future__ import annotations

import numba
import numpy as np

from stylo.features._hash_tables import grow, probe, rehash, slot_id, tag
from stylo.features._prefetch import PREFETCH_AHEAD, prefetch
from stylo.features._segments import doc_windows, text_segments


@numba.njit(cache=True, nogil=True, inline="always")
def _prefix(key, n, bits, max_n):
    return key & ~((np.int64(1) << (bits * (max_n - n))) - 1)


@numba.njit(cache=True, nogil=True, inline="always")
def _bump(cnt, i, touched, n_t):
    """Count one more of id ``i``; the first time in this document, list it in ``touched``.
    Returns the new length of ``touched``."""
    c = cnt[i]
    cnt[i] = c + 1
    touched[n_t] = i  # branch-free: kept only when the count was 0
    return n_t + (c == 0)


@numba.njit(cache=True, nogil=True)
def _new_counter(min_n, max_n, bits, word_bounded):
    """An empty counter, the tuple the other helpers take and return:

    ``(layout, direct, tab, shift, keys, parent, cnt, n_local, kb, spans, touched)``: the
    n-gram lengths and table layout ``(min_n, max_n, bits, word_bounded, direct_n, chain_lo,
    low_shift)``; the direct table; the hash table of ``2**(31 - shift)`` slots; per local id
    its key, parent id and count in this document; how many ids; and per piece the windows of
    ``doc_windows`` (``kb``, ``spans``) and the ids this document touched.
    """
    direct_n = 0  # n-grams up to this length use the direct table (at most 2**22 entries)
    for n in range(1, min(max_n, 2) + 1):
        if n * bits <= 22:
            direct_n = n
    low_shift = bits * (max_n - direct_n)  # a direct n-gram's key has these bits zero
    chain_lo = max(min_n, direct_n + 1)  # shortest hashed n-gram
    layout = (min_n, max_n, bits, word_bounded, direct_n, chain_lo, low_shift)
    cap = 1 << 16
    shift = np.int64(31 - 16)  # a home slot is the top 16 bits of a 31-bit tag
    return (
        layout,
        np.zeros(1 << (bits * direct_n), dtype=np.int32),
        np.zeros(cap, dtype=np.int64),
        shift,
        np.empty(cap // 2, dtype=np.int64),
        np.empty(cap // 2, dtype=np.int32),
        np.zeros(cap // 2, dtype=np.int32),
        np.int64(0),
        np.empty(16, dtype=np.int64),
        np.empty(16, dtype=np.int32),
        np.empty(16, dtype=np.int32),
    )


@numba.njit(cache=True, nogil=True)
def _with_room(tab, shift, keys, parent, cnt, n_local, most):
    """``(tab, shift, keys, parent, cnt)`` with room for ``most`` new ids: the table at
    load <= 1/2, the per-id arrays as long."""
    cap = tab.shape[0]
    if 2 * (n_local + most) > cap:
        while 2 * (n_local + most) > cap:
            cap *= 2
            shift -= 1
        if shift < 0:
            raise ValueError(
                "more than 2**30 distinct n-grams in one chunk: use more "
                "n_jobs or fewer documents at a time"
            )
        tab = rehash(tab, cap, shift)
    if n_local + most > keys.shape[0]:
        keys = grow(keys, n_local + most)
        parent = grow(parent, keys.shape[0])
        grown = np.zeros(keys.shape[0], dtype=np.int32)
        grown[:n_local] = cnt[:n_local]
        cnt = grown
    return tab, shift, keys, parent, cnt


@numba.njit(cache=True, nogil=True, inline="always")
def _insert_chain(tab, shift, keys, parent, n_local, key, n, chain_lo, bits, max_n):
    """Insert ``key`` (length ``n``, not in ``tab``) and its prefixes missing from it, down to
    length ``chain_lo``, shortest first, so that each hashed id can record its parent.
    Returns the new ``n_local``."""
    mask = tab.shape[0] - 1
    m = n
    while m > chain_lo:
        pk = _prefix(key, m - 1, bits, max_n)
        if tab[probe(tab, keys, pk, tag(pk), shift, mask)] != 0:
            break
        m -= 1
    for ln in range(m, n + 1):
        pk = _prefix(key, ln, bits, max_n)
        if ln > chain_lo:
            qk = _prefix(key, ln - 1, bits, max_n)
            par = slot_id(tab[probe(tab, keys, qk, tag(qk), shift, mask)])
        else:
            par = -1
        pk_tag = tag(pk)
        tab[probe(tab, keys, pk, pk_tag, shift, mask)] = pk_tag << 32 | n_local + 1
        keys[n_local] = pk
        parent[n_local] = par
        n_local += 1
    return n_local


@numba.njit(cache=True, nogil=True)
def _count_piece(counter, n_t, sym, seg_off, s0, s1, start, stop):
    """Count the n-grams starting at positions ``start:stop`` of segments ``s0:s1`` of
    ``sym`` (see ``doc_windows``) into ``counter``, whose document has touched ``n_t`` ids.
    Returns the counter and the new ``n_t``."""
    layout, direct, tab, shift, keys, parent, cnt, n_local, kb, spans, touched = counter
    min_n, max_n, bits, word_bounded, direct_n, chain_lo, low_shift = layout
    most = (stop - start) * (max_n - min_n + 1) + (s1 - s0)  # n-grams of this piece, at most
    kb = grow(kb, most)
    spans = grow(spans, most)
    touched = grow(touched, n_t + most)
    nk = doc_windows(sym, seg_off, s0, s1, start, stop, min_n, max_n, bits, word_bounded, kb, spans)
    tab, shift, keys, parent, cnt = _with_room(tab, shift, keys, parent, cnt, n_local, most)
    mask = tab.shape[0] - 1
    for u in range(nk):
        if u + PREFETCH_AHEAD < nk:
            prefetch(tab, tag(kb[u + PREFETCH_AHEAD]) >> shift)
        ahead = u + PREFETCH_AHEAD // 2
        if ahead < nk and spans[ahead] & 0xFF > direct_n:
            # its slot should be in cache by now: fetch the key, count and parent of the
            # first slot with its tag (almost always its own)
            ahead_tag = tag(kb[ahead])
            g = ahead_tag >> shift
            while tab[g] != 0:
                if (tab[g] >> 32) == ahead_tag:
                    prefetch(keys, slot_id(tab[g]))
                    prefetch(cnt, slot_id(tab[g]))
                    prefetch(parent, slot_id(tab[g]))
                    break
                g = (g + 1) & mask
        key = kb[u]
        lo = spans[u] >> 8
        n = spans[u] & 0xFF
        if n > direct_n:
            g = probe(tab, keys, key, tag(key), shift, mask)
            if tab[g] == 0:
                n_local = _insert_chain(
                    tab, shift, keys, parent, n_local, key, n, chain_lo, bits, max_n
                )
                # a prefix may have taken the slot found first
                g = probe(tab, keys, key, tag(key), shift, mask)
            i = slot_id(tab[g])
            while True:
                n_t = _bump(cnt, i, touched, n_t)
                n -= 1
                if n < lo or n <= direct_n:
                    break
                i = parent[i]
        while n >= lo:
            pk = _prefix(key, n, bits, max_n)
            idx = pk >> low_shift
            i = direct[idx] - 1
            if i < 0:
                i = n_local
                keys[i] = pk
                n_local += 1
                direct[idx] = n_local
            n_t = _bump(cnt, i, touched, n_t)
            n -= 1
    return (layout, direct, tab, shift, keys, parent, cnt, n_local, kb, spans, touched), n_t


@numba.njit(cache=True, nogil=True)
def _write_row(counter, n_t, ids, counts, nnz, at_end):
    """Write the ``n_t`` ids the document touched and their counts after the ``nnz`` entries
    written (before them, from the end, with ``at_end``) and clear their counts. Returns the
    new ``nnz``."""
    _, _, _, _, _, _, cnt, _, _, _, touched = counter
    room = min(ids.shape[0], counts.shape[0])
    if nnz + n_t > room:
        raise ValueError("output arrays too short for the n-grams")
    first = room - nnz - n_t if at_end else nnz
    for u in range(n_t):
        i = touched[u]
        ids[first + u] = i
        counts[first + u] = cnt[i]
        cnt[i] = 0
    return nnz + n_t


@numba.njit(cache=True, nogil=True)
def _distinct_keys(counter):
    """The packed key of each local id."""
    _, _, _, _, keys, _, _, n_local, _, _, _ = counter
    return keys[:n_local].copy()


@numba.njit(cache=True, nogil=True)
def count_segments(
    sym, seg_off, doc_seg, min_n, max_n, bits, word_bounded, piece, ids, counts, at_end
):
    """Count the n-grams of every document exactly (which n-grams: see ``doc_windows``);
    document ``d`` is the segments ``doc_seg[d]:doc_seg[d + 1]`` of ``sym``.

    For each (document, distinct n-gram), documents in order, writes its chunk-local id to
    ``ids`` (int32) and its count to ``counts`` (int64); both need ``ngram_bound`` entries.
    The entries are ``ids[:nnz]``, or with ``at_end`` the last ``nnz`` (documents are then
    read last first, each row written below the next one). Returns ``(row_nnz, nnz, keys)``:
    per document the number of distinct n-grams, their total, and per local id its packed
    key. A document's n-grams are taken ``piece`` start positions at a time, so that the
    working memory of a long document is that of its distinct n-grams.
    """
    counter = _new_counter(min_n, max_n, bits, word_bounded)
    n_docs = doc_seg.shape[0] - 1
    row_nnz = np.zeros(n_docs, dtype=np.int64)
    # np.int64(0), not 0, wherever a value goes on to another kernel: Numba types a literal 0
    # as Literal[int](0) first and compiled each callee once for it and again for int64 (a
    # third of the counting kernels' first-run compile time)
    nnz = np.int64(0)
    for step in range(n_docs):
        d = n_docs - 1 - step if at_end else step
        n_t = np.int64(0)
        s0 = doc_seg[d]
        s_end = doc_seg[d + 1]
        p = seg_off[s0]
        end = seg_off[s_end]
        last = False
        while not last:
            q = min(p + max(piece, 1), end)
            while s0 < s_end and seg_off[s0 + 1] <= p:
                s0 += 1
            s1 = s0
            while s1 < s_end and seg_off[s1] < q:
                s1 += 1
            last = q == end
            counter, n_t = _count_piece(counter, n_t, sym, seg_off, s0, s1, p, q)
            p = q
        nnz = _write_row(counter, n_t, ids, counts, nnz, at_end)
        row_nnz[d] = n_t
    return row_nnz, nnz, _distinct_keys(counter)


@numba.njit(cache=True, nogil=True)
def count_text(
    text,
    doc_off,
    idmap,
    is_space,
    space_id,
    word_bounded,
    min_n,
    max_n,
    bits,
    piece,
    ids,
    counts,
    at_end,
):
    """``count_segments`` of UTF-8 documents (``text[doc_off[d]:doc_off[d + 1]]``), each
    decoded and segmented by ``text_segments`` when its turn comes, about ``piece`` symbols
    at a time (at least ``2 * max_n + 2``), so that only that many symbols are ever held.
    ``ids`` and ``counts`` need ``scan_text`` entries."""
    counter = _new_counter(min_n, max_n, bits, word_bounded)
    doc_sym = np.empty(16, dtype=np.int32)
    doc_seg_off = np.empty(16, dtype=np.int64)
    limit = max(piece, 2 * max_n + 2)  # symbols decoded at a time: more than are carried
    n_docs = doc_off.shape[0] - 1
    row_nnz = np.zeros(n_docs, dtype=np.int64)
    nnz = np.int64(0)  # typed, not literal: see count_segments
    for step in range(n_docs):
        d = n_docs - 1 - step if at_end else step
        n_t = np.int64(0)
        at = doc_off[d]  # the next byte to decode
        b = doc_off[d + 1]
        held = np.int64(0)  # symbols carried over from the previous piece
        start = np.int64(0)  # the first of them not counted yet
        inside = np.bool_(False)
        last = False
        while not last:
            doc_sym = grow(doc_sym, min(limit, held + 2 * (b - at)) + 2)
            doc_seg_off = grow(doc_seg_off, min(b - at, limit) // 2 + 4)
            s1, held, at, inside = text_segments(
                text,
                at,
                b,
                idmap,
                is_space,
                space_id,
                word_bounded,
                inside,
                doc_sym,
                held,
                doc_seg_off,
                limit,
            )
            last = at == b
            stop = held  # start positions counted in this piece: start:stop
            keep = held  # symbols carried over to the next: keep:held
            if not last and (inside or not word_bounded):
                a_open = doc_seg_off[s1]
                doc_seg_off[s1 + 1] = held
                if held - a_open > max_n:
                    s1 += 1
                    stop = held - max_n + 1
                    keep = held - max_n
                else:
                    stop = a_open
                    keep = a_open
            counter, n_t = _count_piece(
                counter, n_t, doc_sym, doc_seg_off, np.int64(0), s1, start, stop
            )
            if not last:
                for k in range(held - keep):
                    doc_sym[k] = doc_sym[keep + k]
                held -= keep
                start = stop - keep  # the carried symbols before stop are counted
        nnz = _write_row(counter, n_t, ids, counts, nnz, at_end)
        row_nnz[d] = n_t
    return row_nnz, nnz, _distinct_keys(counter)
