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
from llvmlite import ir
from llvmlite.binding import llvm_version_info
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: spreads packed keys


@numba.njit(cache=True, nogil=True, inline="always")
def _tag(key):
    """The high 31 bits of ``key``'s mixed hash. In a table of ``2**k`` slots the key's home
    slot is ``tag >> (31 - k)``; a slot holds ``tag << 32 | id + 1`` (0 = empty), so that
    rehashing needs no keys and probes of other keys mostly fail without reading ``keys``."""
    h = np.uint64(key)
    h ^= h >> np.uint64(31)
    h *= _HASH_MUL
    h ^= h >> np.uint64(29)
    return np.int64(h >> np.uint64(33))


# the intrinsic's name carries the pointer type: opaque ``ptr`` from LLVM 15 (llvmlite 0.44+)
_PREFETCH_INTRINSIC = ("llvm.prefetch.p0" if llvm_version_info >= (15,)
                       else "llvm.prefetch.p0i8")


@intrinsic
def prefetch(typingctx, arr, idx):
    """``prefetch(arr, i)``: hint the CPU to load the cache line of ``arr[i]`` (of ``arr[i, 0]``
    if 2-D). No effect on results; LLVM's ``llvm.prefetch`` (read, high locality)."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        first = context.cast(builder, args[1], idxty, types.intp)
        rest = [context.get_constant(types.intp, 0)] * (aryty.ndim - 1)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [first, *rest],
                                       wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _PREFETCH_INTRINSIC)
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@numba.njit(cache=True, nogil=True, inline="always")
def _decode(text, i):
    """The code point of the UTF-8 sequence at byte ``i`` of ``text`` and the next byte index.
    ``text`` comes from Python's encoder (with "surrogatepass"), so it is well formed."""
    b = np.int32(text[i])
    if b < 0x80:
        return b, i + 1
    if b < 0xE0:
        return (b & 0x1F) << 6 | (np.int32(text[i + 1]) & 0x3F), i + 2
    if b < 0xF0:
        return ((b & 0x0F) << 12 | (np.int32(text[i + 1]) & 0x3F) << 6
                | (np.int32(text[i + 2]) & 0x3F)), i + 3
    return ((b & 0x07) << 18 | (np.int32(text[i + 1]) & 0x3F) << 12
            | (np.int32(text[i + 2]) & 0x3F) << 6 | (np.int32(text[i + 3]) & 0x3F)), i + 4


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
            c, i = _decode(text, i)
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
def text_segments(text, i, b, idmap, is_space, space_id, word_bounded, inside, sym, m, seg_off,
                  limit):
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
            c, i = _decode(text, i)
            if is_space[c]:
                run = 1
                while i < b:
                    c2, j = _decode(text, i)
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
        c, i = _decode(text, i)
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
def _grow(arr, need):
    if need <= arr.shape[0]:
        return arr
    cap = max(need, 2 * arr.shape[0])
    out = np.empty(cap, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


@numba.njit(cache=True, nogil=True)
def _rehash(tab, new_cap, shift):
    """``tab``'s slots in a table of ``new_cap`` slots whose homes are ``tag >> shift``."""
    out = np.zeros(new_cap, dtype=np.int64)
    mask = new_cap - 1
    for i in range(tab.shape[0]):
        s = tab[i]
        if s != 0:
            h = (s >> 32) >> shift
            while out[h] != 0:
                h = (h + 1) & mask
            out[h] = s
    return out


@numba.njit(cache=True, nogil=True)
def doc_windows(sym, seg_off, s0, s1, start, stop, min_n, max_n, bits, word_bounded, keys,
                spans):
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
def _prefix(key, n, bits, max_n):
    return key & ~((np.int64(1) << (bits * (max_n - n))) - 1)


@numba.njit(cache=True, nogil=True, inline="always")
def _probe(tab, keys, key, tag, shift, mask):
    """The slot of ``key`` (tag ``tag``) in ``tab``, or the empty slot where it would go."""
    g = tag >> shift
    while True:
        s = tab[g]
        if s == 0 or (s >> 32) == tag and keys[(s & 0xFFFFFFFF) - 1] == key:
            return g
        g = (g + 1) & mask


@numba.njit(cache=True, nogil=True, inline="always")
def _slot_id(s):
    return (s & 0xFFFFFFFF) - 1


@numba.njit(cache=True, nogil=True, inline="always")
def _most_keys(seg_off, s0, s1, min_n, max_n):
    """An upper bound on the number of n-grams of segments ``s0:s1`` (see ``doc_windows``)."""
    return (seg_off[s1] - seg_off[s0]) * (max_n - min_n + 1) + (s1 - s0)


_PREFETCH_AHEAD = 16


@numba.njit(cache=True, nogil=True)
def ngram_bound(seg_off, doc_seg, min_n, max_n):
    """An upper bound on the number of n-grams of all documents (see ``doc_windows``)."""
    total = 0
    for d in range(doc_seg.shape[0] - 1):
        total += _most_keys(seg_off, doc_seg[d], doc_seg[d + 1], min_n, max_n)
    return total


@numba.njit(cache=True, nogil=True, inline="always")
def _bump(cnt, i, touched, n_t):
    """Count one more of id ``i``; the first time in this document, list it in ``touched``.
    Returns the new length of ``touched``."""
    c = cnt[i]
    cnt[i] = c + 1
    touched[n_t] = i  # branch-free: kept only when the count was 0
    return n_t + (c == 0)


@numba.njit(cache=True, nogil=True)
def count_segments(sym, seg_off, doc_seg, min_n, max_n, bits, word_bounded, piece, ids,
                   counts, at_end):
    """Count the n-grams of every document exactly (which n-grams: see ``doc_windows``);
    document ``d`` is the segments ``doc_seg[d]:doc_seg[d + 1]`` of ``sym``.

    For each (document, distinct n-gram), documents in order, writes its chunk-local id to
    ``ids`` (int32) and its count to ``counts`` (int64); both need ``ngram_bound`` entries.
    The entries are ``ids[:nnz]``, or with ``at_end`` the last ``nnz`` (documents are then
    read last first, each row written below the next one). Returns ``(row_nnz, nnz, keys)``:
    per document the number of distinct n-grams, their total, and per local id its packed
    key. A document's n-grams are taken ``piece`` start positions at a time, so that the
    working memory of a long document is that of its distinct n-grams. How: see ``_count``.
    """
    empty = np.zeros(0, dtype=np.uint8)
    return _count(empty, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), empty,
                  np.int32(0), sym, seg_off, doc_seg, False, min_n, max_n, bits, word_bounded,
                  piece, ids, counts, at_end)


@numba.njit(cache=True, nogil=True)
def count_text(text, doc_off, idmap, is_space, space_id, word_bounded, min_n, max_n, bits,
               piece, ids, counts, at_end):
    """``count_segments`` of UTF-8 documents (``text[doc_off[d]:doc_off[d + 1]]``), each
    decoded and segmented by ``text_segments`` when its turn comes, about ``piece`` symbols
    at a time (at least ``2 * max_n + 2``), so that only that many symbols are ever held.
    ``ids`` and ``counts`` need ``scan_text`` entries."""
    return _count(text, doc_off, idmap, is_space, space_id, np.zeros(0, dtype=np.int32),
                  np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), True, min_n, max_n,
                  bits, word_bounded, piece, ids, counts, at_end)


@numba.njit(cache=True, nogil=True)
def _count(text, doc_off, idmap, is_space, space_id, sym, seg_off, doc_seg, from_text, min_n,
           max_n, bits, word_bounded, piece, ids, counts, at_end):
    """The counting of ``count_segments`` (``from_text=False``: documents are segments of
    ``sym``) and ``count_text`` (``from_text=True``: UTF-8 documents of ``text``).

    A document is counted in pieces (one, unless it is long), its counts summed in ``cnt``.
    From text, a piece is the symbols ``text_segments`` decodes next; when it ends inside a
    segment, the n-grams starting there with all ``max_n`` symbols in sight are counted and
    the rest of the segment goes on in the next piece (its last ``max_n`` symbols, the first
    of them counted already, so that a carried segment is never mistaken for a short word),
    or, if the open segment holds no more than ``max_n`` symbols (it may be a short word),
    all of it. From segments, a piece is ``piece`` start positions (``doc_windows`` reads past
    them). Every n-gram is thus counted once, in the piece where it starts.

    Each n-gram gets a chunk-local id (in order of first occurrence). Unigrams and bigrams,
    when ``n * bits <= 22`` for length n, find it in a direct table indexed by their symbols
    (holding ``id + 1``). Longer ones use an open-addressing table (linear probing, exact key
    comparison), but only for the longest n-gram at each position: every
    hashed id stores the id of its one-shorter prefix (``parent``), so the shorter n-grams at
    that position follow the chain. A slot holds a hash tag and the id (8 bytes, see
    ``_tag``); the key is compared in ``keys`` when the tags agree. The slot of the key
    ``_PREFETCH_AHEAD`` positions ahead is prefetched, and half as far ahead (the slot now
    cached) its key, count and parent, so that cache misses of the large arrays overlap.
    Counts go to a dense array indexed by id, whose busy part (frequent n-grams, seen early,
    have small ids) stays in cache.
    """
    n_docs = doc_off.shape[0] - 1 if from_text else doc_seg.shape[0] - 1
    direct_n = 0  # n-grams up to this length use the direct table (at most 2**22 entries)
    for n in range(1, min(max_n, 2) + 1):
        if n * bits <= 22:
            direct_n = n
    low_shift = bits * (max_n - direct_n)  # a direct n-gram's key has these bits zero
    chain_lo = max(min_n, direct_n + 1)  # shortest hashed n-gram
    direct = np.zeros(1 << (bits * direct_n), dtype=np.int32)
    cap = 1 << 16
    shift = 31 - 16  # a home slot is the top 16 bits of a 31-bit tag
    tab = np.zeros(cap, dtype=np.int64)
    n_local = 0
    keys = np.empty(cap // 2, dtype=np.int64)
    parent = np.empty(cap // 2, dtype=np.int32)
    cnt = np.zeros(cap // 2, dtype=np.int32)
    kb = np.empty(16, dtype=np.int64)
    spans = np.empty(16, dtype=np.int32)
    touched = np.empty(16, dtype=np.int32)
    doc_sym = np.empty(16, dtype=np.int32)
    doc_seg_off = np.empty(16, dtype=np.int64)

    limit = max(piece, 2 * max_n + 2)  # symbols decoded at a time: more than are carried
    n_len = max_n - min_n + 1
    row_nnz = np.zeros(n_docs, dtype=np.int64)
    nnz = 0
    room = min(ids.shape[0], counts.shape[0])
    for step in range(n_docs):
        d = n_docs - 1 - step if at_end else step
        n_t = 0
        if from_text:
            at = doc_off[d]  # the next byte to decode
            b = doc_off[d + 1]
            held = 0  # symbols carried over from the previous piece
            start = 0  # the first of them not counted yet
            inside = False
        else:
            s0 = doc_seg[d]
            s_end = doc_seg[d + 1]
            p = seg_off[s0]
            end = seg_off[s_end]
        last = False
        while not last:
            if from_text:
                doc_sym = _grow(doc_sym, min(limit, held + 2 * (b - at)) + 2)
                doc_seg_off = _grow(doc_seg_off, min(b - at, limit) // 2 + 4)
                s1, held, at, inside = text_segments(text, at, b, idmap, is_space, space_id,
                                                     word_bounded, inside, doc_sym, held,
                                                     doc_seg_off, limit)
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
                d_sym, d_seg_off, s0, lo_pos, hi_pos = doc_sym, doc_seg_off, 0, start, stop
            else:
                q = min(p + max(piece, 1), end)
                while s0 < s_end and seg_off[s0 + 1] <= p:
                    s0 += 1
                s1 = s0
                while s1 < s_end and seg_off[s1] < q:
                    s1 += 1
                last = q == end
                d_sym, d_seg_off, lo_pos, hi_pos = sym, seg_off, p, q
            most = (hi_pos - lo_pos) * n_len + (s1 - s0)  # n-grams of this piece, at most
            kb = _grow(kb, most)
            spans = _grow(spans, most)
            touched = _grow(touched, n_t + most)
            nk = doc_windows(d_sym, d_seg_off, s0, s1, lo_pos, hi_pos, min_n, max_n, bits,
                             word_bounded, kb, spans)
            # room for every n-gram of this piece being new, at load <= 1/2
            if 2 * (n_local + most) > cap:
                while 2 * (n_local + most) > cap:
                    cap *= 2
                    shift -= 1
                if shift < 0:
                    raise ValueError("more than 2**30 distinct n-grams in one chunk: use more "
                                     "n_jobs or fewer documents at a time")
                tab = _rehash(tab, cap, shift)
            if n_local + most > keys.shape[0]:
                keys = _grow(keys, n_local + most)
                parent = _grow(parent, keys.shape[0])
                grown = np.zeros(keys.shape[0], dtype=np.int32)
                grown[:n_local] = cnt[:n_local]
                cnt = grown
            mask = cap - 1
            for u in range(nk):
                if u + _PREFETCH_AHEAD < nk:
                    prefetch(tab, _tag(kb[u + _PREFETCH_AHEAD]) >> shift)
                ahead = u + _PREFETCH_AHEAD // 2
                if ahead < nk and spans[ahead] & 0xFF > direct_n:
                    # its slot should be in cache by now: fetch the key, count and parent of
                    # the first slot with its tag (almost always its own)
                    tag = _tag(kb[ahead])
                    g = tag >> shift
                    while tab[g] != 0:
                        if (tab[g] >> 32) == tag:
                            prefetch(keys, _slot_id(tab[g]))
                            prefetch(cnt, _slot_id(tab[g]))
                            prefetch(parent, _slot_id(tab[g]))
                            break
                        g = (g + 1) & mask
                key = kb[u]
                lo = spans[u] >> 8
                n = spans[u] & 0xFF
                if n > direct_n:
                    g = _probe(tab, keys, key, _tag(key), shift, mask)
                    if tab[g] == 0:
                        # new: insert the missing prefixes (down to chain_lo) shortest first,
                        # so that each hashed id can record its parent
                        m = n
                        while m > chain_lo:
                            pk = _prefix(key, m - 1, bits, max_n)
                            if tab[_probe(tab, keys, pk, _tag(pk), shift, mask)] != 0:
                                break
                            m -= 1
                        for ln in range(m, n + 1):
                            pk = _prefix(key, ln, bits, max_n)
                            if ln > chain_lo:
                                qk = _prefix(key, ln - 1, bits, max_n)
                                qg = _probe(tab, keys, qk, _tag(qk), shift, mask)
                                par = _slot_id(tab[qg])
                            else:
                                par = -1
                            tag = _tag(pk)
                            pg = _probe(tab, keys, pk, tag, shift, mask)
                            tab[pg] = tag << 32 | n_local + 1
                            keys[n_local] = pk
                            parent[n_local] = par
                            n_local += 1
                        # a prefix may have taken the slot found first
                        g = _probe(tab, keys, key, _tag(key), shift, mask)
                    i = _slot_id(tab[g])
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
            if not last:
                if from_text:
                    for k in range(held - keep):
                        doc_sym[k] = doc_sym[keep + k]
                    held -= keep
                    start = stop - keep  # the carried symbols before stop are counted
                else:
                    p = q
        if nnz + n_t > room:
            raise ValueError("output arrays too short for the n-grams")
        first = room - nnz - n_t if at_end else nnz
        for u in range(n_t):
            i = touched[u]
            ids[first + u] = i
            counts[first + u] = cnt[i]
            cnt[i] = 0
        nnz += n_t
        row_nnz[d] = n_t
    return row_nnz, nnz, keys[:n_local].copy()


@numba.njit(cache=True, nogil=True)
def merge_sorted(a, b):
    """Union of two ascending int64 arrays without repeats: ``(union, pos_a, pos_b)`` with
    ``union[pos_a] == a`` and ``union[pos_b] == b``. One linear pass; it replaces
    ``np.unique(np.concatenate(...), return_inverse=True)`` (a sort of both) on the serial
    path between the parallel counting and remapping of chunks."""
    union = np.empty(a.shape[0] + b.shape[0], dtype=np.int64)
    pos_a = np.empty(a.shape[0], dtype=np.int64)
    pos_b = np.empty(b.shape[0], dtype=np.int64)
    i = 0
    j = 0
    n = 0
    while i < a.shape[0] and j < b.shape[0]:
        if a[i] <= b[j]:
            if a[i] == b[j]:
                pos_b[j] = n
                j += 1
            union[n] = a[i]
            pos_a[i] = n
            i += 1
        else:
            union[n] = b[j]
            pos_b[j] = n
            j += 1
        n += 1
    while i < a.shape[0]:
        union[n] = a[i]
        pos_a[i] = n
        i += 1
        n += 1
    while j < b.shape[0]:
        union[n] = b[j]
        pos_b[j] = n
        j += 1
        n += 1
    return union[:n].copy(), pos_a, pos_b


@numba.njit(cache=True, nogil=True)
def local_columns(order, pos, col):
    """Per chunk-local id, its column: ``out[order[j]] = col[pos[j]]`` for the chunk's j-th
    key in sorted order (local id ``order[j]``, position ``pos[j]`` among all keys), or
    ``pos[j]`` itself if ``col`` is empty. int32; -1 = no column."""
    out = np.empty(order.shape[0], dtype=np.int32)
    identity = col.shape[0] == 0
    for j in range(order.shape[0]):
        out[order[j]] = pos[j] if identity else col[pos[j]]
    return out


@numba.njit(cache=True, nogil=True)
def move_left(arr, src, dst, n):
    """``arr[dst:dst + n] = arr[src:src + n]`` for ``dst <= src``, in place (a forward copy
    never overwrites a value before reading it)."""
    for k in range(n):
        arr[dst + k] = arr[src + k]


_RADIX_BITS = 11


@numba.njit(cache=True, nogil=True)
def _sort_run(ids, counts, start, stop, tmp_ids, tmp_counts, hist, digit_bits, n_passes):
    """Sort ``ids[start:stop]`` ascending, carrying ``counts`` along (ids are distinct).

    Insertion sort for short runs, else an LSD radix sort in ``n_passes`` digits of
    ``digit_bits`` bits, so a row costs a few linear passes over data that stays in cache.
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
    radix_mask = (1 << digit_bits) - 1
    for p in range(n_passes):
        shift = digit_bits * p
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
    col_bits = 1
    while (1 << col_bits) < n_cols:
        col_bits += 1
    n_passes = (col_bits + _RADIX_BITS - 1) // _RADIX_BITS
    digit_bits = (col_bits + n_passes - 1) // n_passes  # the narrowest digits that do
    longest = 1
    for d in range(n_docs):
        longest = max(longest, row_nnz[d])
    tmp_ids = np.empty(longest, dtype=ids.dtype)
    tmp_counts = np.empty(longest, dtype=counts.dtype)
    hist = np.zeros((1 << digit_bits) + 1, dtype=np.int64)
    p = 0
    q = 0
    end = ids.shape[0]
    for d in range(n_docs):
        start = q
        for k in range(p, p + row_nnz[d]):
            if k + _PREFETCH_AHEAD < end:
                prefetch(local_to_col, ids[k + _PREFETCH_AHEAD])
            col = local_to_col[ids[k]]
            if col >= 0:
                ids[q] = col
                counts[q] = counts[k]
                q += 1
        p += row_nnz[d]
        _sort_run(ids, counts, start, q, tmp_ids, tmp_counts, hist, digit_bits, n_passes)
        out_nnz[d] = q - start
    return out_nnz, q


_SEP = 10  # "\n" ends each token in a token buffer: no word character is a byte <= 10


@numba.njit(cache=True, nogil=True, inline="always")
def _encode(buf, at, c):
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


@numba.njit(cache=True, nogil=True, inline="always")
def _token_hash(buf, a, b):
    h = np.uint64(1469598103934665603)  # FNV-1a over the bytes
    for i in range(a, b):
        h = (h ^ np.uint64(buf[i])) * np.uint64(1099511628211)
    # the low bits of a product depend only on low input bits: mix the high ones down
    h ^= h >> np.uint64(29)
    h *= _HASH_MUL
    h ^= h >> np.uint64(32)
    return np.int64(h >> np.uint64(1))


@numba.njit(cache=True, nogil=True, inline="always")
def _end_token(buf, at, tok_off, t):
    """End token ``t`` at ``buf[at]`` with ``_SEP``; return the next ``(at, t)``."""
    buf[at] = _SEP
    tok_off[t + 1] = at + 1
    return at + 1, t + 1


@numba.njit(cache=True, nogil=True)
def tokenize_text(text, doc_off, lower, lowercase, is_word, is_apos, is_special):
    """Tokenise UTF-8 documents (``doc_off``: byte offsets).

    A token is a maximal run of word characters, an apostrophe between two word characters
    joining them (the regex ``\\w+(?:['\u2019]\\w+)*``); with ``lowercase``, code points
    are mapped through ``lower`` first, so that this tokenises ``str.lower()`` of the text,
    unless a code point with ``is_special`` (one whose ``str.lower()`` depends on context)
    occurs: then nothing is returned but ``special=True``.

    Returns ``(buf, tok_off, doc_tok, special)``: the tokens as UTF-8, each ended by
    ``_SEP`` (token t is ``buf[tok_off[t]:tok_off[t + 1] - 1]``), and per document its first
    token (n_docs + 1).
    """
    n_docs = doc_off.shape[0] - 1
    # a token takes at least one byte and tokens are apart by at least one; a lowered code
    # point takes at most twice its bytes. Both arrays are backed only where written
    most = (text.shape[0] + n_docs) // 2 + 1
    buf = np.empty(2 * text.shape[0] + most, dtype=np.uint8)
    tok_off = np.empty(most + 1, dtype=np.int64)
    tok_off[0] = 0
    doc_tok = np.zeros(n_docs + 1, dtype=np.int64)
    t = 0
    at = 0
    for d in range(n_docs):
        doc_tok[d] = t
        i = doc_off[d]
        b = doc_off[d + 1]
        inside = False  # in a token, whose last code point ends at byte i
        while i < b:
            # decoding and lowering are written out here and after an apostrophe: as one
            # helper returning (code point or -1, next byte), this loop ran 5x slower (0.54 s
            # against 0.11 s on 15,000 blog posts)
            c, j = _decode(text, i)
            if lowercase:
                if is_special[c]:
                    return buf[:0], tok_off[:1], doc_tok, True
                c = lower[c]
            if is_word[c]:
                at = _encode(buf, at, c)
                inside = True
                i = j
                continue
            if inside and is_apos[c] and j < b:
                c2, k = _decode(text, j)
                if lowercase:
                    if is_special[c2]:
                        return buf[:0], tok_off[:1], doc_tok, True
                    c2 = lower[c2]
                if is_word[c2]:
                    at = _encode(buf, at, c)
                    at = _encode(buf, at, c2)
                    i = k
                    continue
            if inside:
                at, t = _end_token(buf, at, tok_off, t)
                inside = False
            i = j
        if inside:
            at, t = _end_token(buf, at, tok_off, t)
    doc_tok[n_docs] = t
    return buf[:at], tok_off[:t + 1], doc_tok, False


@numba.njit(cache=True, nogil=True)
def intern_tokens(buf, tok_off):
    """Give equal tokens of a token buffer equal ids (exact: a hash table that compares
    bytes).

    Returns ``(tok_ids, pool, pool_off)``: per token its id (int32, 0-based, in order of
    first occurrence), and the distinct tokens in id order as a token buffer. The table holds
    ``(hash, id)`` per distinct token at load <= 1/2; the pool keeps the tokens it compares
    with together, so that lookups of frequent tokens stay in cache. Token hashes are computed
    first, so that the slot ``_PREFETCH_AHEAD`` tokens ahead can be prefetched.
    """
    n_tok = tok_off.shape[0] - 1
    hashes = np.empty(n_tok, dtype=np.int64)
    for t in range(n_tok):
        hashes[t] = _token_hash(buf, tok_off[t], tok_off[t + 1])
    cap = 1 << 12
    table = np.full((cap, 2), -1, dtype=np.int64)
    tok_ids = np.empty(n_tok, dtype=np.int32)
    first = np.empty(16, dtype=np.int64)
    pool = np.empty(64, dtype=np.uint8)
    pool_off = np.zeros(17, dtype=np.int64)
    n_ids = 0
    for t in range(n_tok):
        mask = cap - 1
        if t + _PREFETCH_AHEAD < n_tok:
            prefetch(table, hashes[t + _PREFETCH_AHEAD] & mask)
        h = hashes[t]
        a = tok_off[t]
        n = tok_off[t + 1] - a
        g = h & mask
        while True:
            i = table[g, 1]
            if i < 0:
                table[g, 0] = h
                table[g, 1] = n_ids
                tok_ids[t] = n_ids
                first = _grow(first, n_ids + 1)
                first[n_ids] = t
                pool_off = _grow(pool_off, n_ids + 2)
                pool = _grow(pool, pool_off[n_ids] + n)
                pool[pool_off[n_ids]: pool_off[n_ids] + n] = buf[a: a + n]
                pool_off[n_ids + 1] = pool_off[n_ids] + n
                n_ids += 1
                break
            if table[g, 0] == h and pool_off[i + 1] - pool_off[i] == n:
                same = True
                o = pool_off[i]
                for k in range(n):
                    if pool[o + k] != buf[a + k]:
                        same = False
                        break
                if same:
                    tok_ids[t] = i
                    break
            g = (g + 1) & mask
        if 2 * n_ids > cap:
            cap *= 2
            mask = cap - 1
            table = np.full((cap, 2), -1, dtype=np.int64)
            for i in range(n_ids):
                g = hashes[first[i]] & mask
                while table[g, 1] >= 0:
                    g = (g + 1) & mask
                table[g, 0] = hashes[first[i]]
                table[g, 1] = i
    return tok_ids, pool[:pool_off[n_ids]], pool_off[:n_ids + 1].copy()


@numba.njit(cache=True, nogil=True, inline="always")
def _prefix8(buf, a, end):
    """Bytes ``buf[a:min(a + 8, end)]`` as a big-endian uint64, zero-padded: integer order
    is byte order."""
    p = np.uint64(0)
    for k in range(8):
        p <<= np.uint64(8)
        if a + k < end:
            p |= np.uint64(buf[a + k])
    return p


@numba.njit(cache=True, nogil=True)
def sort_tokens(pool, pool_off):
    """Sort the tokens of a token buffer (as ``tokenize_text`` makes) by their bytes, which
    is Python's order of the strings (UTF-8 keeps code-point order; ``_SEP`` sorts a prefix
    first).

    Returns ``(buf, off, order)``: the tokens in sorted order as a token buffer and, per sorted
    position, the token's index in ``pool``. A most-significant-digit radix sort with
    8-byte digits: tokens tied on their first 8k bytes are sorted again on the next 8.
    """
    n = pool_off.shape[0] - 1
    order = np.arange(n)
    keys = np.empty(n, dtype=np.uint64)
    stack = [(0, n, 0)]
    while len(stack) > 0:
        lo, hi, depth = stack.pop()
        for r in range(lo, hi):
            keys[r] = _prefix8(pool, pool_off[order[r]] + depth, pool_off[order[r] + 1])
        sub = np.argsort(keys[lo:hi], kind="mergesort")
        order[lo:hi] = order[lo:hi][sub]
        keys[lo:hi] = keys[lo:hi][sub]
        # tokens tied on these 8 bytes hold no _SEP in them (they differ), so are longer
        r = lo
        while r < hi:
            e = r + 1
            while e < hi and keys[e] == keys[r]:
                e += 1
            if e - r > 1:
                stack.append((r, e, depth + 8))
            r = e
    off = np.zeros(n + 1, dtype=np.int64)
    for r in range(n):
        off[r + 1] = off[r] + pool_off[order[r] + 1] - pool_off[order[r]]
    buf = np.empty(off[n], dtype=np.uint8)
    for r in range(n):
        a = pool_off[order[r]]
        buf[off[r]:off[r + 1]] = pool[a:a + off[r + 1] - off[r]]
    return buf, off, order


@numba.njit(cache=True, nogil=True, inline="always")
def _compare_tokens(a_buf, a, b_buf, b):
    """-1, 0 or 1 as the token at ``a_buf[a]`` sorts before, equal to or after the one at
    ``b_buf[b]`` (both ended by ``_SEP``)."""
    while True:
        x = a_buf[a]
        y = b_buf[b]
        if x != y:
            return -1 if x < y else 1
        if x == _SEP:
            return 0
        a += 1
        b += 1


@numba.njit(cache=True, nogil=True)
def merge_tokens(a_buf, a_off, b_buf, b_off):
    """Union of two sorted token buffers: ``(buf, off, pos_a, pos_b)``, the union as a sorted
    token buffer and where each token of ``a`` and ``b`` is in it (the twin of
    ``merge_sorted`` for tokens)."""
    na = a_off.shape[0] - 1
    nb = b_off.shape[0] - 1
    buf = np.empty(a_buf.shape[0] + b_buf.shape[0], dtype=np.uint8)
    off = np.zeros(na + nb + 1, dtype=np.int64)
    pos_a = np.empty(na, dtype=np.int64)
    pos_b = np.empty(nb, dtype=np.int64)
    i = 0
    j = 0
    n = 0
    while i < na or j < nb:
        if j == nb:
            c = -1
        elif i == na:
            c = 1
        else:
            c = _compare_tokens(a_buf, a_off[i], b_buf, b_off[j])
        if c <= 0:
            a = a_off[i]
            size = a_off[i + 1] - a
            buf[off[n]:off[n] + size] = a_buf[a:a + size]
            pos_a[i] = n
            i += 1
            if c == 0:
                pos_b[j] = n
                j += 1
        else:
            a = b_off[j]
            size = b_off[j + 1] - a
            buf[off[n]:off[n] + size] = b_buf[a:a + size]
            pos_b[j] = n
            j += 1
        off[n + 1] = off[n] + size
        n += 1
    return buf[:off[n]], off[:n + 1].copy(), pos_a, pos_b


@numba.njit(cache=True, nogil=True)
def token_symbols(vocab_buf, vocab_off, buf, off, order, tok_ids):
    """Symbols of a chunk's tokens: for each token occurrence (``tok_ids``, ids into a pool
    whose sorted token buffer is ``buf``/``off`` with ``order`` as ``sort_tokens`` returns
    them), 1 + its index in the sorted token buffer ``vocab_buf``/``vocab_off``, or 0 if it
    is not there. One merge-like pass over both sorted buffers."""
    n_v = vocab_off.shape[0] - 1
    n = off.shape[0] - 1
    of_id = np.zeros(n, dtype=np.int32)
    v = 0
    for r in range(n):
        c = 1
        while v < n_v:
            c = _compare_tokens(vocab_buf, vocab_off[v], buf, off[r])
            if c >= 0:
                break
            v += 1
        if v < n_v and c == 0:
            of_id[order[r]] = v + 1
    sym = np.empty(tok_ids.shape[0], dtype=np.int32)
    for t in range(tok_ids.shape[0]):
        sym[t] = of_id[tok_ids[t]]
    return sym


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
def class_counts(text, doc_off, classes, n_classes):
    """(n_docs, n_classes) counts of the code-point classes ``classes[c]`` in each UTF-8
    document (``doc_off``: byte offsets)."""
    n_docs = doc_off.shape[0] - 1
    out = np.zeros((n_docs, n_classes), dtype=np.int64)
    for d in range(n_docs):
        i = doc_off[d]
        while i < doc_off[d + 1]:
            c, i = _decode(text, i)
            out[d, classes[c]] += 1
    return out
