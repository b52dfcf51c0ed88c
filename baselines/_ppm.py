"""Order-k PPM-style cross-entropy kernels (Numba) and their plain Python reference.

The model is the one of PAN's compressor baseline (Teahan & Harper 2003, as re-implemented by
Potthast et al. 2016, pan-code ``clef22/.../pan22-verif-baseline-compressor.py``): a static
model of text X counts, for every position i of X and every k <= min(i, order), how often the
character X[i] follows the context X[i-k:i]. The probability of character c after context u
(the last min(i, order) characters before it) is count(u, c) / count(u) for the longest suffix
u' of u (u itself first) that was followed by c in X, and 1 / alphabet_size if none was. There
are no escape probabilities: this is back-off, not full PPM blending. The cross-entropy of Y
under the model of X is the mean of -log2 p over the characters of Y, in bits per character.

The fast kernel gives every substring of length 1..order+1 of one text of a pair (its
*anchor*) an exact integer id (a hash table on exact keys, so no collision can merge two
substrings) and looks the other text's substrings up among them. Both directions need the
counts of the substrings the two texts share, and nothing else: in either model, a
substring of the other text that the anchor lacks only ever needs a count of zero, so all
of them share one id per length, and a substring that extends one of them is not looked up
at all. Pairs that share a text (an attribution problem's candidates and unknown texts)
share its ids and counts; batches of pairs run in threads.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numba
import numpy as np
from joblib import effective_n_jobs

from stylo._threads import map_parallel

__all__ = ["ppm_cross_entropy_reference", "ppm_cross_entropies", "encode_texts"]


def ppm_cross_entropy_reference(
    model_text: str, text: str, order: int = 5, alphabet_size: int = 256
) -> float:
    """Bits per character of ``text`` under the order-``order`` model of ``model_text``.

    Plain Python, one dict of context -> {char: count} per order. ``text`` must be non-empty.
    """
    counts = [defaultdict(lambda: defaultdict(int)) for _ in range(order + 1)]
    totals = [defaultdict(int) for _ in range(order + 1)]
    for i, c in enumerate(model_text):
        for k in range(min(i, order) + 1):
            ctx = model_text[i - k : i]
            counts[k][ctx][c] += 1
            totals[k][ctx] += 1
    bits = 0.0
    for i, c in enumerate(text):
        p = 1.0 / alphabet_size
        for k in range(min(i, order), -1, -1):
            ctx = text[i - k : i]
            seen = counts[k].get(ctx)
            if seen is not None and seen.get(c, 0) > 0:
                p = seen[c] / totals[k][ctx]
                break
        bits -= math.log2(p)
    return bits / len(text)


def encode_texts(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Code points of all texts concatenated (uint32, a read-only view of their UTF-32
    encoding: no copy) and offsets (n + 1,) into that array."""
    lengths = np.array([len(t) for t in texts], dtype=np.int64)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    joined = "".join(texts)
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    return codes, offsets


#: bits of a code point in a key (Unicode's last code point, U+10FFFF, needs 21)
_CHAR_BITS = 21
#: counts below this have their log2 ratios tabulated (a 32 KB table)
_SMALL = 64


@numba.njit(cache=True)
def _log_table() -> np.ndarray:
    """``logs[t * _SMALL + h] = log2(h / t)`` for 1 <= h <= t < _SMALL, computed by the same
    expression as the kernel's so that a lookup gives the very same bits. Two thirds of a
    cross-entropy's positions back off to a context seen fewer than 64 times, and one
    ``log2`` costs more than the rest of such a position's work."""
    logs = np.zeros(_SMALL * _SMALL)
    for t in range(1, _SMALL):
        for h in range(1, t + 1):
            logs[t * _SMALL + h] = math.log2(h / t)
    return logs


@numba.njit(cache=True, inline="always")
def _slots(size: int):
    """Mask and shift of Fibonacci hashing into a table of ``size`` slots (a power of two)."""
    bits = 0
    while (1 << bits) < size:
        bits += 1
    return size - 1, np.uint64(64 - bits)


@numba.njit(cache=True, inline="always")
def _home(key, shift):
    """First slot probed for ``key`` (Fibonacci hashing: the top bits of key x 2^64/phi)."""
    return np.int64((np.uint64(key) * np.uint64(11400714819323198485)) >> shift)


@numba.njit(cache=True)
def _dense_ids(keys, table, out, stamp: int) -> int:
    """``out[i]``: id of each non-negative key of ``keys`` (0, 1, ... in order of first
    occurrence); -1 stays -1. Returns the number of distinct keys.

    Open addressing on the full 64-bit key (Fibonacci hashing, linear probing): keys are
    compared exactly, so distinct keys never share an id. ``table`` (2^b >= 2 len(keys), 3)
    holds each slot's key, id and stamp side by side (one cache line a probe); a slot counts
    as filled only under ``stamp``, so the table is reused without being cleared.
    """
    n = keys.shape[0]
    mask, shift = _slots(table.shape[0])
    next_id = 0
    for i in range(n):
        key = keys[i]
        if key < 0:
            out[i] = -1
            continue
        h = _home(key, shift)
        while True:
            if table[h, 2] != stamp:
                table[h, 0] = key
                table[h, 1] = next_id
                table[h, 2] = stamp
                out[i] = next_id
                next_id += 1
                break
            if table[h, 0] == key:
                out[i] = table[h, 1]
                break
            h = (h + 1) & mask
    return next_id


@numba.njit(cache=True)
def _order_ids(seq, k: int, ids, keys, table, stamp: int) -> int:
    """Fill ``ids[k, :n]`` (n = len(seq)) from ``ids[k - 1]``: id of the substring of length k
    ending at (and including) position i of ``seq``; -1 where it would start before the
    text. The substrings are entered in ``table`` under ``stamp``. Returns how many distinct
    substrings there are."""
    n = seq.shape[0]
    for i in range(n):
        if k == 1:
            keys[i] = seq[i]
        elif i - k + 1 >= 0:
            keys[i] = (ids[k - 1, i - 1] << _CHAR_BITS) | seq[i]
        else:
            keys[i] = -1
    return _dense_ids(keys[:n], table, ids[k, :n], stamp)


@numba.njit(cache=True)
def _lookup_ids(seq, k: int, ids, table, stamp: int, novel: int, novel_prev: int) -> None:
    """Fill ``ids[k, :n]`` (n = len(seq)) from ``ids[k - 1]``: the id the substring of length
    k ending at position i of ``seq`` has among the entries of ``table`` under ``stamp``
    (``_order_ids``), ``novel`` if it is not among them, -1 where it would start before the
    text. Looks up, never enters: a substring whose prefix got ``novel_prev`` gets ``novel``
    without a probe (at the longest orders most of them)."""
    n = seq.shape[0]
    mask, shift = _slots(table.shape[0])
    for i in range(n):
        if i - k + 1 < 0:
            ids[k, i] = -1
            continue
        if k == 1:
            key = np.int64(seq[i])
        else:
            prev = ids[k - 1, i - 1]
            if prev == novel_prev:
                ids[k, i] = novel
                continue
            key = (prev << _CHAR_BITS) | np.int64(seq[i])
        h = _home(key, shift)
        while True:
            if table[h, 2] != stamp:
                ids[k, i] = novel
                break
            if table[h, 0] == key:
                ids[k, i] = table[h, 1]
                break
            h = (h + 1) & mask


@numba.njit(cache=True)
def _count(ids, n: int, order: int, joint) -> None:
    """Count in ``joint[k, id]`` every (context_k + char) substring of the text of
    ``ids[:, :n]``."""
    for i in range(n):
        for k in range(min(i, order) + 1):
            joint[k, ids[k + 1, i]] += 1


@numba.njit(cache=True)
def _clear(ids, n: int, order: int, joint) -> None:
    """Set back to zero what ``_count`` counted."""
    for i in range(n):
        for k in range(min(i, order) + 1):
            joint[k, ids[k + 1, i]] = 0


@numba.njit(cache=True)
def _cross_entropy(model_ids, n_model: int, joint, ids, n: int, order: int, alphabet_size, logs):
    """Bits per character of the text of ``ids[:, :n]`` under the model text of
    ``model_ids[:, :n_model]``, whose substrings ``joint`` counts (``_count``); ``logs`` is
    ``_log_table()``.

    A context of length k >= 1 occurs followed by a character exactly where it occurs as a
    length-k substring, except at the model text's last position: its count is
    ``joint[k - 1]`` of the same id, less one if it ends the text. The context of length 0
    occurs n_model times. If the model has the substring of length k + 1 ending at i, it has
    its prefix ending at i - 1, so the back-off at i starts at most one order above where the
    one at i - 1 stopped: the orders it skips would all have found nothing."""
    bits = 0.0
    unseen = math.log2(1.0 / alphabet_size)
    last = order
    for i in range(n):
        lp = unseen
        top = min(i, order, last + 1)
        last = -1
        for k in range(top, -1, -1):
            hits = joint[k, ids[k + 1, i]]
            if hits > 0:
                last = k
                if k == 0:
                    total = n_model
                else:
                    ctx = ids[k, i - 1]
                    total = joint[k - 1, ctx] - (1 if model_ids[k, n_model - 1] == ctx else 0)
                if total < _SMALL:
                    lp = logs[total * _SMALL + hits]
                else:
                    lp = math.log2(hits / total)
                break
        bits -= lp
    return bits / n


@numba.njit(cache=True)
def _table_size(n: int) -> int:
    """Slots of a hash table for ``n`` keys: a power of two, at most half full."""
    size = 1
    while size < 2 * n:
        size *= 2
    return size


@numba.njit(cache=True, nogil=True)
def _groups_kernel(codes, offsets, anchors, others, starts, order, alphabet_size):
    """Both cross-entropies of each pair j: column 0 is text ``others[j]`` under the model of
    text ``anchors[j]``, column 1 the reverse. Pairs ``starts[g]:starts[g + 1]`` share their
    anchor, whose ids and counts are computed once for the group."""
    n = anchors.shape[0]
    out = np.empty((n, 2), dtype=np.float64)
    # work space sized for the batch's longest texts, reused by every pair; a group of one
    # pair needs no substring kept past its order, so one table serves every order there.
    # Tables sized for the batch's longest anchor, not for each: the probes a fuller table
    # costs outweigh the cache a smaller one saves (10 % of the kernel on short blog pairs)
    la_max, lb_max, la_single, la_shared = 1, 1, 0, 0
    for g in range(starts.shape[0] - 1):
        la = offsets[anchors[starts[g]] + 1] - offsets[anchors[starts[g]]]
        la_max = max(la_max, la)
        if starts[g + 1] - starts[g] == 1:
            la_single = max(la_single, la)
        else:
            la_shared = max(la_shared, la)
        for j in range(starts[g], starts[g + 1]):
            lb_max = max(lb_max, offsets[others[j] + 1] - offsets[others[j]])
    single_table = np.zeros((_table_size(la_single), 3), dtype=np.int64)
    tables = np.zeros((order + 2, _table_size(la_shared), 3), dtype=np.int64)
    ids_a = np.empty((order + 2, la_max), dtype=np.int64)
    ids_b = np.empty((order + 2, lb_max), dtype=np.int64)
    keys = np.empty(la_max, dtype=np.int64)
    # the other text's substrings that the anchor lacks all share the id n_a[k], one past
    # the anchor's, so that every count either model reads has an id <= la_max
    joint_a = np.zeros((order + 1, la_max + 1), dtype=np.int64)
    joint_shared = np.zeros((order + 1, la_max + 1 if la_shared else 1), dtype=np.int64)
    n_a = np.zeros(order + 2, dtype=np.int64)
    stamps = np.zeros(order + 2, dtype=np.int64)
    logs = _log_table()
    stamp = 0
    for g in range(starts.shape[0] - 1):
        t = anchors[starts[g]]
        a = codes[offsets[t] : offsets[t + 1]]
        la = a.shape[0]
        single = starts[g + 1] - starts[g] == 1
        u = others[starts[g]]
        b = codes[offsets[u] : offsets[u + 1]]
        for k in range(1, order + 2):
            table = single_table if single else tables[k]
            stamp += 1
            stamps[k] = stamp
            n_a[k] = _order_ids(a, k, ids_a, keys, table, stamp)
            if single:
                _lookup_ids(b, k, ids_b, table, stamp, n_a[k], n_a[k - 1])
        # a shared anchor's counts stay for its group; a pair alone counts its two texts in
        # turn in one array, half the memory to keep in cache
        if not single:
            _count(ids_a, la, order, joint_a)
        joint_b = joint_a if single else joint_shared
        for j in range(starts[g], starts[g + 1]):
            u = others[j]
            b = codes[offsets[u] : offsets[u + 1]]
            lb = b.shape[0]
            if la == 0 or lb == 0:
                out[j, 0] = np.nan
                out[j, 1] = np.nan
                continue
            if single:
                _count(ids_a, la, order, joint_a)
            else:
                for k in range(1, order + 2):
                    _lookup_ids(b, k, ids_b, tables[k], stamps[k], n_a[k], n_a[k - 1])
            out[j, 0] = _cross_entropy(ids_a, la, joint_a, ids_b, lb, order, alphabet_size, logs)
            if single:
                _clear(ids_a, la, order, joint_a)
            _count(ids_b, lb, order, joint_b)
            out[j, 1] = _cross_entropy(ids_b, lb, joint_b, ids_a, la, order, alphabet_size, logs)
            # every id of the other text is <= n_a[k]: one contiguous run to clear per order,
            # cheaper than following its ids
            for k in range(order + 1):
                joint_b[k, : n_a[k + 1] + 1] = 0
        if not single:
            _clear(ids_a, la, order, joint_a)
    return out


def ppm_cross_entropies(
    texts_a: list[str],
    texts_b: list[str],
    order: int = 5,
    alphabet_size: int = 256,
    n_jobs: int = 1,
) -> np.ndarray:
    """(n, 2) bits per character: column 0 is b[i] under the model of a[i], column 1 is a[i]
    under the model of b[i]. NaN where either text is empty. ``n_jobs`` threads (the kernel
    releases the GIL)."""
    if len(texts_a) != len(texts_b):
        raise ValueError(f"{len(texts_a)} texts_a but {len(texts_b)} texts_b")
    if order < 0 or alphabet_size < 1:
        raise ValueError(f"need order >= 0 and alphabet_size >= 1, got {order}, {alphabet_size}")
    n = len(texts_a)
    if n == 0:
        return np.empty((0, 2), dtype=np.float64)
    # each distinct text encoded once, here: encoding holds the GIL, so inside the threads it
    # would serialise them
    index: dict[str, int] = {}
    ia = np.array([index.setdefault(t, len(index)) for t in texts_a], dtype=np.int64)
    ib = np.array([index.setdefault(t, len(index)) for t in texts_b], dtype=np.int64)
    codes, offsets = encode_texts(list(index))
    lengths = np.diff(offsets)
    # a pair's anchor is whichever of its texts more pairs share, so that attribution (every
    # unknown text against every candidate's profile) computes each profile's ids once
    uses = np.bincount(np.concatenate((ia, ib)), minlength=len(index))
    swap = uses[ib] > uses[ia]
    anchors, others = np.where(swap, ib, ia), np.where(swap, ia, ib)
    n_threads = effective_n_jobs(n_jobs)
    k = max(1, min(n, 4 * n_threads)) if n_threads > 1 else 1
    # groups of pairs with one anchor, cut so that every thread gets a share, the dearest
    # first, dealt round-robin
    by_anchor = np.argsort(anchors, kind="stable")
    cuts = np.flatnonzero(np.diff(anchors[by_anchor])) + 1
    piece = -(-n // k)
    pieces = [p[i : i + piece] for p in np.split(by_anchor, cuts) for i in range(0, len(p), piece)]
    cost = [int(lengths[anchors[p]].sum() + lengths[others[p]].sum()) for p in pieces]
    pieces = [pieces[i] for i in np.argsort(cost, kind="stable")[::-1]]
    batches = [pieces[i::k] for i in range(k)]

    def run(batch):
        pairs = np.concatenate(batch)
        starts = np.cumsum([0] + [len(p) for p in batch])
        got = _groups_kernel(
            codes, offsets, anchors[pairs], others[pairs], starts, int(order), int(alphabet_size)
        )
        return pairs, got

    # a plain thread pool: joblib's per-call set-up costs ~25 ms, a tenth of a PAN15 run
    parts = map_parallel(run, [b for b in batches if b], min(n_threads, k))
    out = np.empty((n, 2), dtype=np.float64)
    for pairs, got in parts:
        out[pairs] = np.where(swap[pairs, None], got[:, ::-1], got)
    return out
