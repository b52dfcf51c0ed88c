"""Order-k PPM-style cross-entropy kernels (Numba) and their plain Python reference.

The model is the one of PAN's compressor baseline (Teahan & Harper 2003, as re-implemented by
Potthast et al. 2016, pan-code ``clef22/.../pan22-verif-baseline-compressor.py``): a static
model of text X counts, for every position i of X and every k <= min(i, order), how often the
character X[i] follows the context X[i-k:i]. The probability of character c after context u
(the last min(i, order) characters before it) is count(u, c) / count(u) for the longest suffix
u' of u (u itself first) that was followed by c in X, and 1 / alphabet_size if none was. There
are no escape probabilities: this is back-off, not full PPM blending. The cross-entropy of Y
under the model of X is the mean of -log2 p over the characters of Y, in bits per character.

The fast kernel gives every substring of length 1..order+1 of X and Y an exact integer id (a
hash table on exact keys, so no collision can merge two substrings), counts ids over X and
looks them up for Y, both directions in one pass over a pair; batches of pairs run in threads.
"""

from __future__ import annotations

import math
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from joblib import effective_n_jobs

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


@numba.njit(cache=True)
def _dense_ids(keys: np.ndarray, table: np.ndarray, out: np.ndarray, stamp: int) -> None:
    """``out[i]``: id of each non-negative key of ``keys`` in order of first occurrence (0, 1,
    ...); -1 stays -1.

    Open addressing on the full 64-bit key (Fibonacci hashing, linear probing): keys are
    compared exactly, so distinct keys never share an id. ``table`` (2^b >= 2 len(keys), 3)
    holds each slot's key, id and stamp side by side (one cache line a probe); a slot counts
    as filled only under this call's ``stamp``, so the table is reused from call to call
    without being cleared.
    """
    n = keys.shape[0]
    size = table.shape[0]
    bits = 0
    while (1 << bits) < size:
        bits += 1
    mask = size - 1
    shift = np.uint64(64 - bits)
    next_id = 0
    for i in range(n):
        key = keys[i]
        if key < 0:
            out[i] = -1
            continue
        h = np.int64((np.uint64(key) * np.uint64(11400714819323198485)) >> shift)
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


@numba.njit(cache=True)
def _gram_ids(seq: np.ndarray, split: int, order: int, ids, keys, table, stamp: int) -> int:
    """Fill ``ids[k, :n]`` (n = len(seq)): exact id of the substring of length k ending at (and
    including) position i of ``seq`` (the two texts seq[:split] and seq[split:] back to back,
    no substring crossing the boundary); -1 where it would start before its text. Row 0 is
    unused. Returns the next unused stamp of ``table``."""
    n = seq.shape[0]
    _dense_ids(seq, table, ids[1, :n], stamp)
    stamp += 1
    n_chars = 0
    for i in range(n):
        n_chars = max(n_chars, ids[1, i] + 1)
    for k in range(2, order + 2):
        for i in range(n):
            start = 0 if i < split else split
            if i - k + 1 >= start:
                keys[i] = ids[k - 1, i - 1] * n_chars + ids[1, i]
            else:
                keys[i] = -1
        _dense_ids(keys[:n], table, ids[k, :n], stamp)
        stamp += 1
    return stamp


@numba.njit(cache=True)
def _cross_entropy(ids, joint, m0: int, m1: int, q0: int, q1: int, order: int, alphabet_size):
    """Bits per character of seq[q0:q1] under the model counted on seq[m0:m1]; ``joint`` is
    all zeros on entry and on return.

    ``joint[k, id]`` counts the (context_k + char) substrings of the model text. A context of
    length k >= 1 occurs followed by a character exactly where it occurs as a length-k
    substring, except at the model text's last position: its count is ``joint[k - 1]`` of the
    same id, less one if it ends the text. The context of length 0 occurs m1 - m0 times."""
    for i in range(m0, m1):
        for k in range(min(i - m0, order) + 1):
            joint[k, ids[k + 1, i]] += 1
    bits = 0.0
    for i in range(q0, q1):
        p = 1.0 / alphabet_size
        for k in range(min(i - q0, order), -1, -1):
            hits = joint[k, ids[k + 1, i]]
            if hits > 0:
                if k == 0:
                    total = m1 - m0
                else:
                    ctx = ids[k, i - 1]
                    total = joint[k - 1, ctx] - (1 if ids[k, m1 - 1] == ctx else 0)
                p = hits / total
                break
        bits -= math.log2(p)
    for i in range(m0, m1):
        for k in range(min(i - m0, order) + 1):
            joint[k, ids[k + 1, i]] = 0
    return bits / (q1 - q0)


@numba.njit(cache=True, nogil=True)
def _pairs_kernel(codes_a, off_a, codes_b, off_b, pairs, order, alphabet_size):
    """Both cross-entropies of each pair p of ``pairs`` (texts a[p] and b[p]): (len(pairs), 2)."""
    n = pairs.shape[0]
    out = np.empty((n, 2), dtype=np.float64)
    # work space sized for the batch's longest pair, reused by every pair
    longest = 1
    for j in range(n):
        p = pairs[j]
        longest = max(longest, off_a[p + 1] - off_a[p] + off_b[p + 1] - off_b[p])
    size = 1
    while size < 2 * longest:
        size *= 2
    table = np.zeros((size, 3), dtype=np.int64)
    ids = np.empty((order + 2, longest), dtype=np.int64)
    keys = np.empty(longest, dtype=np.int64)
    joint = np.zeros((order + 1, longest), dtype=np.int64)
    seq = np.empty(longest, dtype=np.int64)
    stamp = 1
    for j in range(n):
        p = pairs[j]
        a = codes_a[off_a[p] : off_a[p + 1]]
        b = codes_b[off_b[p] : off_b[p + 1]]
        la, lb = a.shape[0], b.shape[0]
        if la == 0 or lb == 0:
            out[j, 0] = np.nan
            out[j, 1] = np.nan
            continue
        seq[:la] = a
        seq[la : la + lb] = b
        stamp = _gram_ids(seq[: la + lb], la, order, ids, keys, table, stamp)
        out[j, 0] = _cross_entropy(ids, joint, 0, la, la, la + lb, order, alphabet_size)
        out[j, 1] = _cross_entropy(ids, joint, la, la + lb, 0, la, order, alphabet_size)
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
    # encoded once, here: encoding holds the GIL, so inside the threads it would serialise them
    codes_a, off_a = encode_texts(list(texts_a))
    codes_b, off_b = encode_texts(list(texts_b))
    n_threads = effective_n_jobs(n_jobs)
    k = max(1, min(n, 4 * n_threads)) if n_threads > 1 else 1
    # round-robin batches balance long and short pairs across threads
    batches = [np.arange(i, n, k, dtype=np.int64) for i in range(k)]

    def run(pairs):
        return _pairs_kernel(codes_a, off_a, codes_b, off_b, pairs, int(order), int(alphabet_size))

    if k == 1:
        return run(batches[0])
    # a plain thread pool: joblib's per-call set-up cost ~25 ms here, a tenth of a PAN15 run
    with ThreadPoolExecutor(min(n_threads, k)) as pool:
        parts = list(pool.map(run, batches))
    out = np.empty((n, 2), dtype=np.float64)
    for pairs, part in zip(batches, parts, strict=True):
        out[pairs] = part
    return out
