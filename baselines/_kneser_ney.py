"""Interpolated Kneser-Ney n-gram models over token-id sentences (Numba), exactly as NLTK has them.

The model is ``nltk.lm.KneserNeyInterpolated(order, discount=d)`` fitted on sentences prepared by
``nltk.lm.preprocessing.padded_everygram_pipeline``: each sentence is padded with ``order - 1``
start symbols (id :data:`BOS`) and ``order - 1`` end symbols (id :data:`EOS`), and every k-gram
(k = 1..order) of the padded sentence is counted. With ``N1+(. g)`` the number of distinct tokens
seen before g, ``N1+(c .)`` the number of distinct tokens seen after c and ``N1+(. c .)`` the
number of distinct (x, w) with x c w seen, the probability of w after context c is

* highest order (|c| = order - 1): ``max(c(cw) - d, 0) / n(c) + d N1+(c .) / n(c) P(w | c')``
  with ``n(c)`` the count of all order-grams starting with c and c' = c without its first token;
* lower orders: ``max(N1+(. cw) - d, 0) / N1+(. c .) + d N1+(c .) / N1+(. c .) P(w | c')``;
* no context: ``N1+(. w) / N1+(. .)`` (0 for a token never seen: NLTK's ``<UNK>``);
* a context never followed by anything in training is skipped (P(w | c) = P(w | c')).

A sentence's log-probability sums the natural log of P(w | previous order-1 tokens) over every
token of the padded sentence after the start symbols (its real tokens and the end symbols).
``eps > 0`` mixes each probability with a uniform distribution over ``n_sym`` symbols,
``(1 - eps) P + eps / n_sym``, so that tokens a model never saw get a finite log-probability;
``eps = 0`` is NLTK's model as it is.

Fast form: every k-gram seen gets an exact node id in an open-addressing table keyed by (id of
the gram without its first token, that first token), so grams are built right to left and a
node's parent is its back-off gram. All statistics above are kept per node and updated as
sentences are added, so a model can grow sentence by sentence and be queried in between (the
reference models of :mod:`baselines.lambdag` grow to each known text's size). The plain
reference is NLTK itself (:func:`kneser_ney_logprobs_reference`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from stylo._threads import map_blocks

__all__ = [
    "BOS",
    "EOS",
    "kneser_ney_logprobs",
    "kneser_ney_logprobs_reference",
    "known_model_totals",
    "reference_model_totals",
    "sentence_store",
]

BOS, EOS = 0, 1  # token ids of the padding symbols; real tokens are >= 2

_MUL = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing of the packed keys
# columns of a model's per-node row: its key, then its statistics (64 bytes: one cache line)
_KEY, _COUNT, _CTX, _CONT, _NTYPES, _FSUM, _MID = 0, 1, 2, 3, 4, 5, 6
_N_STATS = 8


# -- one model -------------------------------------------------------------------------------
# A model is (table, stats, meta, unigrams): ``table`` (2**bits,) int32 node ids, 0 = empty
# slot (node 0, the empty gram, has no key); ``stats`` (capacity, _N_STATS) int64, one row per
# node holding its key and statistics, so that a probe that finds a node has loaded what
# scoring reads next, and the table stays small enough for the cache; ``meta`` int64 [number of
# nodes, bits]; ``unigrams`` (n_sym,) int32 the node of each token's unigram (0: unseen), so
# that the first gram of every scored position is read, not probed for.
# The key of the gram (x, rest...) is id(rest) * n_sym + x, so a unigram's key is its token id.
@numba.njit(cache=True, nogil=True)
def _new_model(capacity, n_sym):
    bits = 4
    while (1 << bits) < 2 * capacity:
        bits += 1
    table = np.zeros(1 << bits, dtype=np.int32)
    stats = np.zeros((capacity, _N_STATS), dtype=np.int64)
    stats[0, _KEY] = -1
    meta = np.array([1, bits], dtype=np.int64)
    return table, stats, meta, np.zeros(n_sym, dtype=np.int32)


@numba.njit(cache=True, nogil=True, inline="always")
def _home(key, bits):
    return np.int64((np.uint64(key) * _MUL) >> np.uint64(64 - bits))


@numba.njit(cache=True, nogil=True, inline="always")
def _find(table, stats, bits, key):
    mask = (1 << bits) - 1
    h = _home(key, bits)
    while True:
        node = np.int64(table[h])
        if node == 0:
            return np.int64(-1)
        if stats[node, _KEY] == key:
            return node
        h = (h + 1) & mask


@numba.njit(cache=True, nogil=True)
def _reserve(model, extra):
    """``model`` with room for ``extra`` more nodes at a table load of at most 1/2."""
    table, stats, meta, unigrams = model
    need = meta[0] + extra
    if need > stats.shape[0]:
        grown = np.zeros((max(need, 2 * stats.shape[0]), _N_STATS), dtype=np.int64)
        grown[: meta[0]] = stats[: meta[0]]
        stats = grown
    bits = meta[1]
    if 2 * need > (1 << bits):
        while 2 * need > (1 << bits):
            bits += 1
        table = np.zeros(1 << bits, dtype=np.int32)
        mask = (1 << bits) - 1
        for node in range(1, meta[0]):
            j = _home(stats[node, _KEY], bits)
            while table[j] != 0:
                j = (j + 1) & mask
            table[j] = node
        meta[1] = bits
    return table, stats, meta, unigrams


@numba.njit(cache=True, nogil=True, inline="always")
def _padded(tok, a, b, order, j):
    """Token j of sentence tok[a:b] padded with order-1 BOS before and order-1 EOS after."""
    if j < order - 1:
        return BOS
    j -= order - 1
    return tok[a + j] if j < b - a else EOS


@numba.njit(cache=True, nogil=True)
def _add_sentence(model, tok, a, b, order, n_sym, prev, cur):
    """``model`` (grown if needed) with every 1..order-gram of the padded sentence tok[a:b]
    counted.

    ``prev``/``cur`` (order + 1,) hold the node ids of the grams ending at the previous/current
    position, by length: the context of a k-gram ending at i is the (k-1)-gram ending at i-1."""
    length = (b - a) + 2 * (order - 1)
    table, stats, meta, unigrams = _reserve(model, length * order)
    bits = meta[1]
    mask = (1 << bits) - 1
    prev[0] = 0
    cur[0] = 0
    for i in range(length):
        g = np.int64(0)
        for k in range(1, min(order, i + 1) + 1):
            key = g * n_sym + _padded(tok, a, b, order, i - k + 1)
            h = _home(key, bits)
            while table[h] != 0 and stats[table[h], _KEY] != key:
                h = (h + 1) & mask
            ctx = prev[k - 1]
            if table[h] == 0:
                node = meta[0]
                meta[0] += 1
                table[h] = node
                stats[node, _KEY] = key
                stats[node, _CTX] = ctx
                stats[ctx, _NTYPES] += 1
                if k == 1:
                    unigrams[key] = node
                if k >= 2:
                    stats[g, _CONT] += 1
                    stats[stats[g, _CTX], _MID] += 1
            else:
                node = np.int64(table[h])
            stats[node, _COUNT] += 1
            stats[ctx, _FSUM] += 1
            g = node
            cur[k] = node
        prev, cur = cur, prev
    return table, stats, meta, unigrams


@numba.njit(cache=True, nogil=True)
def _build(tok, starts, sent_ids, lo, hi, order, n_sym):
    model = _new_model(1024, n_sym)
    prev = np.zeros(order + 1, dtype=np.int64)
    cur = np.zeros(order + 1, dtype=np.int64)
    for j in range(lo, hi):
        s = sent_ids[j]
        model = _add_sentence(model, tok, starts[s], starts[s + 1], order, n_sym, prev, cur)
    return model


@numba.njit(cache=True, nogil=True)
def _sentence_logprob(model, tok, a, b, order, n_sym, discount, eps, prev, cur):
    """Log-probability of the padded sentence tok[a:b]; ``prev``/``cur`` (order + 1,) are
    scratch space for the chains of seen grams ending at the previous/current position (the
    context of length k at i is the gram of length k ending at i-1, so one chain serves both)."""
    table, stats, meta, unigrams = model
    bits = meta[1]
    total = 0.0
    uniform = eps / n_sym
    depth_prev = 0
    for i in range((b - a) + 2 * (order - 1)):
        g = np.int64(unigrams[_padded(tok, a, b, order, i)])
        g = g if g > 0 else np.int64(-1)  # node 0 is the empty gram: 0 marks an unseen token
        depth = 0
        while g >= 0:
            depth += 1
            cur[depth] = g
            if depth == order or i - depth < 0:
                break
            g = _find(table, stats, bits, g * n_sym + _padded(tok, a, b, order, i - depth))
        if i >= order - 1:
            p = stats[cur[1], _CONT] / stats[0, _MID] if depth >= 1 else 0.0
            for k in range(1, min(order, depth_prev + 1)):
                c = prev[k]
                if stats[c, _NTYPES] == 0:
                    break  # longer contexts end the same way: never followed either
                if k == order - 1:
                    num = stats[cur[k + 1], _COUNT] if k < depth else 0
                    den = stats[c, _FSUM]
                else:
                    num = stats[cur[k + 1], _CONT] if k < depth else 0
                    den = stats[c, _MID]
                p = max(num - discount, 0.0) / den + discount * stats[c, _NTYPES] / den * p
            q = (1.0 - eps) * p + uniform
            total += math.log(q) if q > 0.0 else -np.inf
        prev, cur = cur, prev
        depth_prev = depth
    return total


# -- batches ---------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _known_totals(
    tok, starts, model_ids, model_ptr, query_ptr, query_lo, query_hi, lm, m0, m1, out
):
    """Models ``m0:m1``: fitted, their queries' totals written to ``out``; ``lm`` is the
    models' (order, n_sym, discount, eps)."""
    order, n_sym, discount, eps = lm
    for m in range(m0, m1):
        model = _build(tok, starts, model_ids, model_ptr[m], model_ptr[m + 1], order, n_sym)
        prev = np.zeros(order + 1, dtype=np.int64)
        cur = np.zeros(order + 1, dtype=np.int64)
        for q in range(query_ptr[m], query_ptr[m + 1]):
            s = 0.0
            for j in range(query_lo[q], query_hi[q]):
                s += _sentence_logprob(
                    model, tok, starts[j], starts[j + 1], order, n_sym, discount, eps, prev, cur
                )
            out[q] = s


@numba.njit(cache=True, nogil=True)
def _reference_totals(
    pool_tok,
    pool_starts,
    orders,
    sizes,
    tok,
    starts,
    query_lo,
    query_hi,
    lm,
    r0,
    r1,
    out,
):
    """References ``r0:r1``: their columns of ``out`` (n_queries, n_refs); ``lm`` as in
    ``_known_totals``."""
    order, n_sym, discount, eps = lm
    n_pool = orders.shape[1]
    n_q = sizes.shape[0]
    for r in range(r0, r1):
        perm = orders[r]
        model = _new_model(1024, n_sym)
        prev = np.zeros(order + 1, dtype=np.int64)
        cur = np.zeros(order + 1, dtype=np.int64)
        added, have = 0, 0
        for q in range(n_q):
            while added < n_pool and (have < sizes[q] or added == 0):
                s = perm[added]
                model = _add_sentence(
                    model, pool_tok, pool_starts[s], pool_starts[s + 1], order, n_sym, prev, cur
                )
                have += pool_starts[s + 1] - pool_starts[s]
                added += 1
            total = 0.0
            for j in range(query_lo[q], query_hi[q]):
                total += _sentence_logprob(
                    model, tok, starts[j], starts[j + 1], order, n_sym, discount, eps, prev, cur
                )
            out[q, r] = total


def sentence_store(sentences: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Token-id sentences as one int64 array and their starts (n + 1,): sentence j is
    tok[starts[j]:starts[j + 1]], the layout every function here reads."""
    starts = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in sentences], out=starts[1:])
    tok = np.concatenate(sentences).astype(np.int64) if sentences else np.zeros(0, np.int64)
    return tok, starts


def known_model_totals(
    tok: np.ndarray,
    starts: np.ndarray,
    model_sentences: list[np.ndarray],
    query_ranges: list[list[tuple[int, int]]],
    order: int,
    n_sym: int,
    discount: float,
    eps: float,
    n_threads: int = 1,
) -> list[np.ndarray]:
    """Log-probability totals of queries under one model per group, models fitted once.

    ``tok``/``starts`` hold all sentences (sentence j is tok[starts[j]:starts[j + 1]]);
    ``model_sentences[m]`` are the sentence ids model m is fitted on and ``query_ranges[m]``
    the (first, end) sentence ranges of the queries it scores. Returns, per model, the sum of
    sentence log-probabilities of each of its queries. Blocks of models run on ``n_threads``
    threads.
    """
    model_ptr = np.zeros(len(model_sentences) + 1, dtype=np.int64)
    np.cumsum([len(m) for m in model_sentences], out=model_ptr[1:])
    model_ids = (
        np.concatenate(model_sentences).astype(np.int64)
        if model_sentences
        else np.zeros(0, np.int64)
    )
    query_ptr = np.zeros(len(query_ranges) + 1, dtype=np.int64)
    np.cumsum([len(q) for q in query_ranges], out=query_ptr[1:])
    flat = [r for q in query_ranges for r in q]
    lo = np.array([r[0] for r in flat], dtype=np.int64)
    hi = np.array([r[1] for r in flat], dtype=np.int64)
    out = np.empty(len(flat))
    lm = (int(order), int(n_sym), float(discount), float(eps))
    args = (tok, starts, model_ids, model_ptr, query_ptr, lo, hi, lm)
    map_blocks(lambda m0, m1: _known_totals(*args, m0, m1, out), len(model_sentences), n_threads)
    return np.split(out, query_ptr[1:-1])


def reference_model_totals(
    pool_tok: np.ndarray,
    pool_starts: np.ndarray,
    orders: np.ndarray,
    sizes: np.ndarray,
    tok: np.ndarray,
    starts: np.ndarray,
    query_ranges: list[tuple[int, int]],
    order: int,
    n_sym: int,
    discount: float,
    eps: float,
    n_threads: int = 1,
) -> np.ndarray:
    """(n_queries, n_refs) log-probability totals of queries under growing reference models.

    Reference model r is fitted on the pool sentences ``orders[r, 0], orders[r, 1], ...``
    (ids into ``pool_tok``/``pool_starts``), as many as it takes to reach ``sizes[q]`` tokens
    (at least one sentence, at most all of ``orders[r]``), and scores query q's sentences
    (a (first, end) range into ``tok``/``starts``). The models of one r are nested, so each is
    grown from the previous one instead of being refitted; blocks of references run on
    ``n_threads`` threads.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    rank = np.argsort(sizes, kind="stable")
    lo = np.array([query_ranges[q][0] for q in rank], dtype=np.int64)
    hi = np.array([query_ranges[q][1] for q in rank], dtype=np.int64)
    out = np.empty((len(sizes), orders.shape[0]))
    if len(sizes):
        ranked = np.empty((len(sizes), orders.shape[0]))
        lm = (int(order), int(n_sym), float(discount), float(eps))
        args = (pool_tok, pool_starts, np.ascontiguousarray(orders), sizes[rank], tok, starts)
        args += (lo, hi, lm)
        map_blocks(
            lambda r0, r1: _reference_totals(*args, r0, r1, ranked), orders.shape[0], n_threads
        )
        out[rank] = ranked
    return out


def kneser_ney_logprobs(
    train: list[np.ndarray],
    test: list[np.ndarray],
    order: int,
    n_sym: int,
    discount: float = 0.1,
    eps: float = 0.0,
) -> np.ndarray:
    """Natural-log probability of each test sentence under the model of the train sentences
    (token-id arrays, ids >= 2 and < ``n_sym``)."""
    if order < 2:
        raise ValueError(f"order must be >= 2 (NLTK's unigram case divides by zero), got {order}")
    tok, starts = sentence_store(list(train) + list(test))
    n_train = len(train)
    sums = known_model_totals(
        tok,
        starts,
        [np.arange(n_train)],
        [[(n_train + i, n_train + i + 1) for i in range(len(test))]],
        order,
        n_sym,
        discount,
        eps,
    )
    return sums[0]


def kneser_ney_logprobs_reference(
    train: list, test: list, order: int, n_sym: int, discount: float = 0.1, eps: float = 0.0
) -> np.ndarray:
    """:func:`kneser_ney_logprobs` computed by NLTK: ``KneserNeyInterpolated`` fitted through
    ``padded_everygram_pipeline`` (tokens compared as strings), sentences scored on their
    ``order``-grams after the same padding."""
    from nltk.lm import KneserNeyInterpolated
    from nltk.lm.preprocessing import pad_both_ends, padded_everygram_pipeline
    from nltk.util import ngrams

    def words(sentence):
        return [str(int(t)) for t in sentence]

    lm = KneserNeyInterpolated(order, discount=discount)
    grams, vocab = padded_everygram_pipeline(order, [words(s) for s in train])
    lm.fit(grams, vocab)
    out = []
    for sentence in test:
        total = 0.0
        for gram in ngrams(pad_both_ends(words(sentence), n=order), order):
            q = (1.0 - eps) * lm.score(gram[-1], gram[:-1]) + eps / n_sym
            total += math.log(q) if q > 0.0 else -math.inf
        out.append(total)
    return np.array(out)
