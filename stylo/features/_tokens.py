"""The word pipeline: UTF-8 documents tokenised, tokens interned, sorted and merged as bytes.

Tokens travel in *token buffers*: their UTF-8 bytes, each ended by ``SEP``, with the offset of
each (``off``, n_tokens + 1). Byte order of UTF-8 is code-point order and ``SEP`` sorts a
prefix first, so that sorting and merging buffers by their bytes is Python's order of the
strings, and the chunks' vocabularies merge without Python strings.
"""

from __future__ import annotations

import numba
import numpy as np

from stylo.features._hash_tables import HASH_MUL, grow
from stylo.features._prefetch import PREFETCH_AHEAD, prefetch
from stylo.features._utf8 import char_table, decode, encode, encode_utf8, lower_table

SEP = 10  # "\n" ends each token in a token buffer: no word character is a byte <= 10


def tokenize(docs: list[str], lowercase: bool):
    """``tokenize_text`` of the documents: ``(buf, tok_off, doc_tok)``."""
    tables = (
        lower_table(),
        char_table("word"),
        char_table("alone"),
        char_table("apos"),
        char_table("lower_special"),
    )
    *tokens, special = tokenize_text(*encode_utf8(docs), tables[0], lowercase, *tables[1:])
    if special:  # context-dependent lowering: Python lowers, the kernel does not
        *tokens, _ = tokenize_text(
            *encode_utf8([d.lower() for d in docs]), tables[0], False, *tables[1:]
        )
    return tokens


class TokenChunk:
    """A run of consecutive documents as interned tokens (``tokenize``): ``ids`` per token
    occurrence, ``doc_tok`` the first token of each document, and the distinct tokens sorted
    (``buf``/``off``, a token buffer, and ``order``, see ``sort_tokens``)."""

    __slots__ = ("ids", "doc_tok", "buf", "off", "order")

    def __init__(self, docs: list[str], lowercase: bool):
        buf, tok_off, self.doc_tok = tokenize(docs, lowercase)
        self.ids, pool, pool_off = intern_tokens(buf, tok_off)
        del buf, tok_off  # every token's bytes: freed before the sort
        self.buf, self.off, self.order = sort_tokens(pool, pool_off)


def token_buffer(tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """A token buffer ``(buf, off)`` of the tokens (str without ``SEP``, lone surrogates as
    by "surrogatepass"), in their order."""
    joined = "".join(t + chr(SEP) for t in tokens).encode("utf-8", "surrogatepass")
    buf = np.frombuffer(joined, dtype=np.uint8)
    return buf, np.concatenate([[0], np.flatnonzero(buf == SEP) + 1])


def token_strings(buf: np.ndarray) -> list[str]:
    """The tokens of a token buffer as str."""
    return buf.tobytes().decode("utf-8", "surrogatepass").split(chr(SEP))[:-1]


def token_positions(words: list[str], buf: np.ndarray, tok_off: np.ndarray) -> np.ndarray:
    """For each token of the token buffer ``buf``/``tok_off``, the position in ``words`` of
    the first word equal to it, or -1 (int64, n_tokens): the words and tokens interned in one
    table, the words first, so that a token took a word's id exactly when it equals it."""
    words_buf, words_off = token_buffer(words)
    ids = intern_tokens(
        np.concatenate([words_buf, buf]), np.concatenate([words_off, tok_off[1:] + words_buf.size])
    )[0]
    n = len(words)
    position = np.full(int(ids.max()) + 1 if ids.size else 0, -1, dtype=np.int64)
    position[ids[:n][::-1]] = np.arange(n)[::-1]  # a repeated word: its first position
    return position[ids[n:]]


@numba.njit(cache=True, nogil=True, inline="always")
def _word(buf, i):
    """The 8 bytes ``buf[i:i + 8]`` as a little-endian uint64."""
    w = np.uint64(0)
    for k in range(8):
        w |= np.uint64(buf[i + k]) << np.uint64(8 * k)
    return w


@numba.njit(cache=True, nogil=True, inline="always")
def _token_hash(buf, a, b):
    """A 63-bit hash of the ``b - a >= 1`` bytes ``buf[a:b]``, a multiply per 8 bytes. A token
    of up to 8 bytes (most are) is read as one word with no loop, its bytes past ``b`` masked
    off, so that its length costs no mispredicted loop exit: 7.6 million blog tokens hashed in
    0.06 s, against 0.10 s byte by byte (FNV-1a, the hash before). Within 8 bytes of the
    buffer's end a token is shorter than 8 bytes and takes the loop, whose one zero-padded
    word is the masked word: equal tokens hash alike wherever they stand."""
    n = b - a
    h = np.uint64(n) * HASH_MUL
    if n <= 8 and a + 8 <= buf.shape[0]:
        h = (h ^ (_word(buf, a) & (~np.uint64(0) >> np.uint64(64 - 8 * n)))) * HASH_MUL
    else:
        i = a
        while i + 8 <= b:
            h = (h ^ _word(buf, i)) * HASH_MUL
            h ^= h >> np.uint64(32)
            i += 8
        w = np.uint64(0)
        for k in range(b - i):
            w |= np.uint64(buf[i + k]) << np.uint64(8 * k)
        h = (h ^ w) * HASH_MUL
    # the low bits of a product depend only on low input bits: mix the high ones down
    h ^= h >> np.uint64(29)
    h *= HASH_MUL
    h ^= h >> np.uint64(32)
    return np.int64(h >> np.uint64(1))


@numba.njit(cache=True, nogil=True, inline="always")
def end_token(buf, at, tok_off, t):
    """End token ``t`` at ``buf[at]`` with ``SEP``; return the next ``(at, t)``."""
    buf[at] = SEP
    tok_off[t + 1] = at + 1
    return at + 1, t + 1


@numba.njit(cache=True, nogil=True)
def tokenize_text(text, doc_off, lower, lowercase, is_word, is_alone, is_apos, is_special):
    """Tokenise UTF-8 documents (``doc_off``: byte offsets).

    A token is one ``is_alone`` code point (a Han ideograph or kana) or a maximal run of the
    other word characters, an apostrophe between two of them joining them (``TOKEN_PATTERN``,
    ``is_word`` being ``\\w`` without ``is_alone``); with ``lowercase``, code points
    are mapped through ``lower`` first, so that this tokenises ``str.lower()`` of the text,
    unless a code point with ``is_special`` (one whose ``str.lower()`` depends on context)
    occurs: then nothing is returned but ``special=True``.

    Returns ``(buf, tok_off, doc_tok, special)``: the tokens as UTF-8, each ended by
    ``SEP`` (token t is ``buf[tok_off[t]:tok_off[t + 1] - 1]``), and per document its first
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
            c, j = decode(text, i)
            if lowercase:
                if is_special[c]:
                    return buf[:0], tok_off[:1], doc_tok, True
                c = lower[c]
            if is_word[c]:
                at = encode(buf, at, c)
                inside = True
                i = j
                continue
            if is_alone[c]:
                if inside:
                    at, t = end_token(buf, at, tok_off, t)
                at = encode(buf, at, c)
                at, t = end_token(buf, at, tok_off, t)
                inside = False
                i = j
                continue
            if inside and is_apos[c] and j < b:
                c2, k = decode(text, j)
                if lowercase:
                    if is_special[c2]:
                        return buf[:0], tok_off[:1], doc_tok, True
                    c2 = lower[c2]
                if is_word[c2]:
                    at = encode(buf, at, c)
                    at = encode(buf, at, c2)
                    i = k
                    continue
            if inside:
                at, t = end_token(buf, at, tok_off, t)
                inside = False
            i = j
        if inside:
            at, t = end_token(buf, at, tok_off, t)
    doc_tok[n_docs] = t
    return buf[:at], tok_off[: t + 1], doc_tok, False


@numba.njit(cache=True, nogil=True)
def intern_tokens(buf, tok_off):
    """Give equal tokens of a token buffer equal ids (exact: a hash table that compares
    bytes).

    Returns ``(tok_ids, pool, pool_off)``: per token its id (int32, 0-based, in order of
    first occurrence), and the distinct tokens in id order as a token buffer. The table holds
    ``(hash, id)`` per distinct token at load <= 1/2; the pool keeps the tokens it compares
    with together, so that lookups of frequent tokens stay in cache. Token hashes are computed
    first, so that the slot ``PREFETCH_AHEAD`` tokens ahead can be prefetched.
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
        if t + PREFETCH_AHEAD < n_tok:
            prefetch(table, hashes[t + PREFETCH_AHEAD] & mask)
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
                first = grow(first, n_ids + 1)
                first[n_ids] = t
                pool_off = grow(pool_off, n_ids + 2)
                pool = grow(pool, pool_off[n_ids] + n)
                pool[pool_off[n_ids] : pool_off[n_ids] + n] = buf[a : a + n]
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
    return tok_ids, pool[: pool_off[n_ids]], pool_off[: n_ids + 1].copy()


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
    is Python's order of the strings (UTF-8 keeps code-point order; ``SEP`` sorts a prefix
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
        # tokens tied on these 8 bytes hold no SEP in them (they differ), so are longer
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
        buf[off[r] : off[r + 1]] = pool[a : a + off[r + 1] - off[r]]
    return buf, off, order


@numba.njit(cache=True, nogil=True, inline="always")
def _compare_tokens(a_buf, a, b_buf, b):
    """-1, 0 or 1 as the token at ``a_buf[a]`` sorts before, equal to or after the one at
    ``b_buf[b]`` (both ended by ``SEP``)."""
    while True:
        x = a_buf[a]
        y = b_buf[b]
        if x != y:
            return -1 if x < y else 1
        if x == SEP:
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
            buf[off[n] : off[n] + size] = a_buf[a : a + size]
            pos_a[i] = n
            i += 1
            if c == 0:
                pos_b[j] = n
                j += 1
        else:
            a = b_off[j]
            size = b_off[j + 1] - a
            buf[off[n] : off[n] + size] = b_buf[a : a + size]
            pos_b[j] = n
            j += 1
        off[n + 1] = off[n] + size
        n += 1
    return buf[: off[n]], off[: n + 1].copy(), pos_a, pos_b


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
