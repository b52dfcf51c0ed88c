"""General Impostors' trials, batched: Numba kernels and the plain versions the tests compare
them with (:mod:`baselines.impostors` is the estimator).

For a batch of problems (query row, target row, candidate rows) and ``n_iter`` random feature
masks with a random pick of candidates each, a trial compares sim(query, target) with the largest
sim(query, picked impostor), the similarity being min-max (Ruzicka) over the kept features.
``impostor_wins`` counts the iterations the target wins, ``impostor_margins`` sums the
differences. All problems of a call share the masks and picks, so the kernels score them
together, and the problems of one query (attribution: one unknown against every candidate, one
candidate's profile against every unknown; one-to-two: a query against both candidates) find the
query's shared features once and compute each impostor similarity once between them; the
``*_reference`` functions are the plain versions.
"""

from __future__ import annotations

import numba
import numpy as np

from stylo._threads import map_blocks, map_parallel

__all__ = [
    "impostor_margins",
    "impostor_margins_reference",
    "impostor_wins",
    "impostor_wins_reference",
    "masked_sums",
    "masked_sums_reference",
]


@numba.njit(cache=True, nogil=True)
def _masked_sums_into(indptr, indices, data, mask_t, r0, r1, out):
    for r in range(r0, r1):
        for j in range(indptr[r], indptr[r + 1]):
            v = data[j]
            f = indices[j]
            for it in range(mask_t.shape[1]):
                out[r, it] += v * mask_t[f, it]


def masked_sums(indptr, indices, data, mask_t, n_threads: int = 1):
    """Sum of each CSR row over each iteration's kept features: (n_rows, n_iter), blocks of
    rows on ``n_threads`` threads."""
    out = np.zeros((indptr.shape[0] - 1, mask_t.shape[1]))
    map_blocks(
        lambda lo, hi: _masked_sums_into(indptr, indices, data, mask_t, lo, hi, out),
        out.shape[0],
        n_threads,
    )
    return out


def masked_sums_reference(indptr, indices, data, mask_t):
    n_rows, n_iter = indptr.shape[0] - 1, mask_t.shape[1]
    out = np.zeros((n_rows, n_iter))
    for r in range(n_rows):
        for j in range(indptr[r], indptr[r + 1]):
            for it in range(n_iter):
                out[r, it] += data[j] * mask_t[indices[j], it]
    return out


@numba.njit(cache=True)
def _dense_row(indptr, indices, data, n_features, q):
    dense = np.zeros(n_features)
    for j in range(indptr[q], indptr[q + 1]):
        dense[indices[j]] = data[j]
    return dense


@numba.njit(cache=True, inline="always")
def _shared_into(indptr, indices, data, dense, x, feats, mins, pos):
    """Append the query's (``dense``) shared features with row ``x`` and min(q, x) there to
    ``feats``/``mins`` from ``pos``; returns the new end. Every entry is written and the end
    moves on only where the query holds the feature, which follows no pattern a branch
    predictor could learn: this copy without a branch took a quarter of the time of one with
    it (the room is the rows' non-zeros, ``_row_room``, so the write past the end fits)."""
    for j in range(indptr[x], indptr[x + 1]):
        f = indices[j]
        w = dense[f]
        v = data[j]
        feats[pos] = f
        mins[pos] = v if v < w else w
        pos += w > 0.0
    return pos


@numba.njit(cache=True)
def _row_room(indptr, slots):
    """Entries ``_shared_into`` may append for all of ``slots``: their rows' nonzeros."""
    size = 0
    for c in range(slots.shape[0]):
        size += indptr[slots[c] + 1] - indptr[slots[c]]
    return size


@numba.njit(cache=True)
def _shared_mins(indptr, indices, data, dense, slots):
    """The query's (``dense``) shared features with each row of ``slots``, with min(q, x)
    there, so that each iteration only walks the slots it uses: feature numbers, minima, and
    each slot's first and end entry (len(slots),) each."""
    size = _row_room(indptr, slots)
    feats = np.empty(size, dtype=np.int32)
    mins = np.empty(size)
    lo = np.zeros(slots.shape[0], dtype=np.int64)
    hi = np.zeros(slots.shape[0], dtype=np.int64)
    pos = 0
    for c in range(slots.shape[0]):
        lo[c] = pos
        pos = _shared_into(indptr, indices, data, dense, slots[c], feats, mins, pos)
        hi[c] = pos
    return feats, mins, lo, hi


@numba.njit(cache=True)
def _similarity(shared, sum_q, sum_x):
    den = sum_q + sum_x - shared
    return shared / den if den > 0.0 else 0.0


@numba.njit(cache=True)
def _slot_sim(feats, mins, lo, hi, slot, keep, sum_q, sum_x):
    """Masked min-max similarity of the query to the row of one slot of ``_shared_mins``."""
    # multiplying by the 0/1 mask instead of branching on it: the mask is random, so a
    # branch mispredicts half the time (3-5x slower); x * 1 and + 0 keep the sum exact
    shared = 0.0
    for j in range(lo[slot], hi[slot]):
        shared += mins[j] * keep[feats[j]]
    return _similarity(shared, sum_q, sum_x)


@numba.njit(cache=True)
def _slot_sims(feats, mins, lo, hi, slot, mask, its, n_its, sum_q, sum_x, out):
    """``out[it] = _slot_sim(..., mask[it], sum_q[it], sum_x[it])`` for ``it`` in
    ``its[:n_its]``, four iterations per pass over the slot's features: each sum still adds its
    terms in feature order (the same float64 result), but four independent sums keep the core
    busy where one waits on the previous addition."""
    a, b = lo[slot], hi[slot]
    i = 0
    while i + 4 <= n_its:
        k0, k1, k2, k3 = its[i], its[i + 1], its[i + 2], its[i + 3]
        s0 = s1 = s2 = s3 = 0.0
        for j in range(a, b):
            f = feats[j]
            v = mins[j]
            s0 += v * mask[k0, f]
            s1 += v * mask[k1, f]
            s2 += v * mask[k2, f]
            s3 += v * mask[k3, f]
        out[k0] = _similarity(s0, sum_q[k0], sum_x[k0])
        out[k1] = _similarity(s1, sum_q[k1], sum_x[k1])
        out[k2] = _similarity(s2, sum_q[k2], sum_x[k2])
        out[k3] = _similarity(s3, sum_q[k3], sum_x[k3])
        i += 4
    for k in its[i:n_its]:
        out[k] = _slot_sim(feats, mins, lo, hi, slot, mask[k], sum_q[k], sum_x[k])


@numba.njit(cache=True, nogil=True)
def _grouped_trials(
    indptr,
    indices,
    data,
    n_features,
    q_rows,
    t_rows,
    cand,
    mask,
    picks,
    sums,
    order,
    starts,
    margin,
    g0,
    g1,
    out,
):
    """Wins (``margin`` False, as float64) or summed margins of the problems of query groups
    ``g0:g1``, added to ``out``; the problems of group g (``order[starts[g]:starts[g + 1]]``)
    share one query, so its shared features with a row and each (iteration, impostor)
    similarity are computed once for them all: with
    ``margin``, where every draw is needed, all rows' features and all of a row's similarities
    at once (``_slot_sims``); else each when a problem first needs it, since a win stops at the
    first impostor at least as close as the target, so that a different-author problem never
    reaches most of its candidates."""
    n_iter, m = picks.shape
    every = np.arange(n_iter)
    # typed, not a literal 0, which Numba would compile _slot_sims for besides int64
    first = np.int64(0)
    for g in range(g0, g1):
        members = order[starts[g] : starts[g + 1]]
        q = q_rows[members[0]]
        dense = _dense_row(indptr, indices, data, n_features, q)
        rows = np.unique(cand[members].ravel())
        sims = np.full((rows.shape[0], n_iter), -1.0)  # -1: not computed yet
        end = 0
        if margin:
            feats, mins, lo, hi = _shared_mins(indptr, indices, data, dense, rows)
            drawn = np.zeros((rows.shape[0], n_iter), dtype=np.bool_)
            for p in members:
                slot = np.searchsorted(rows, cand[p])
                for it in range(n_iter):
                    for s in range(m):
                        drawn[slot[picks[it, s]], it] = True
            its = np.empty(n_iter, dtype=np.int64)
            for c in range(rows.shape[0]):
                n_its = first
                for it in range(n_iter):
                    if drawn[c, it]:
                        its[n_its] = it
                        n_its += 1
                _slot_sims(
                    feats, mins, lo, hi, c, mask, its, n_its, sums[q], sums[rows[c]], sims[c]
                )
        else:  # each row's shared features appended when first needed; lo[c] < 0: not yet
            size = _row_room(indptr, rows)
            feats = np.empty(size, dtype=np.int32)
            mins = np.empty(size)
            lo = np.full(rows.shape[0], -1, dtype=np.int64)
            hi = np.zeros(rows.shape[0], dtype=np.int64)
        target = np.empty(n_iter)
        for p in members:
            t = t_rows[p]
            slot = np.searchsorted(rows, cand[p])
            t_feats, t_mins, t_lo, t_hi = _shared_mins(
                indptr, indices, data, dense, t_rows[p : p + 1]
            )
            _slot_sims(
                t_feats, t_mins, t_lo, t_hi, first, mask, every, n_iter, sums[q], sums[t], target
            )
            for it in range(n_iter):
                best = 0.0
                for s in range(m):
                    c = slot[picks[it, s]]
                    sim = sims[c, it]
                    if sim < 0.0:
                        if lo[c] < 0:
                            lo[c] = end
                            end = _shared_into(
                                indptr, indices, data, dense, rows[c], feats, mins, end
                            )
                            hi[c] = end
                        sim = _slot_sim(
                            feats, mins, lo, hi, c, mask[it], sums[q, it], sums[rows[c], it]
                        )
                        sims[c, it] = sim
                    best = sim if sim > best else best
                    if not margin and sim >= target[it]:  # one impostor at least as close loses
                        break
                if margin:
                    out[p] += target[it] - best
                elif best < target[it]:
                    out[p] += 1.0


def _impostor_trials(
    csr, q_rows, t_rows, cand, mask, picks, sums, margin: bool, n_threads: int
) -> np.ndarray:
    """``_grouped_trials`` with the problems grouped by query (in attribution one unknown
    meets every candidate and one candidate's profile every unknown, in one-to-two a query
    both candidates), blocks of about equally many problems on ``n_threads`` threads."""
    out = np.zeros(len(q_rows))
    if len(q_rows) == 0:
        return out if margin else out.astype(np.int64)
    group = np.unique(q_rows, return_inverse=True)[1].ravel()
    order = np.argsort(group, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(group))]).astype(np.int64)
    n_groups = len(starts) - 1
    cuts = np.searchsorted(starts, np.linspace(0, len(q_rows), 4 * n_threads + 1)[1:-1])
    bounds = np.unique(np.concatenate([[0], np.minimum(cuts, n_groups), [n_groups]]))
    args = (*csr, q_rows, t_rows, cand, mask, picks, sums, order, starts, margin)
    map_parallel(
        lambda i: _grouped_trials(*args, bounds[i], bounds[i + 1], out),
        range(len(bounds) - 1),
        n_threads,
    )
    return out if margin else out.astype(np.int64)


def impostor_wins(
    indptr, indices, data, n_features, q_rows, t_rows, cand, mask, picks, sums, n_threads=1
):
    """Iterations in which each query is closer to its target than to every sampled impostor.

    ``q_rows``/``t_rows`` (n_prob,) and ``cand`` (n_prob, k) are CSR row numbers; ``mask``
    (n_iter, n_features) holds 0/1 feature masks (uint8); ``picks`` (n_iter, m) are positions
    in ``cand``; ``sums`` (n_rows, n_iter) are the masked row sums. Returns int64 (n_prob,).
    """
    csr = (indptr, indices, data, n_features)
    return _impostor_trials(csr, q_rows, t_rows, cand, mask, picks, sums, False, n_threads)


def impostor_margins(
    indptr, indices, data, n_features, q_rows, t_rows, cand, mask, picks, sums, n_threads=1
):
    """Sum over iterations of sim(query, target) minus the largest sim(query, impostor): the
    continuous counterpart of ``impostor_wins`` (same arguments), float64 (n_prob,). A win
    rate saturates at 0 whenever some impostor is always closer (another text by the query's
    author in the pool), which ties every candidate; the margin still orders them."""
    csr = (indptr, indices, data, n_features)
    return _impostor_trials(csr, q_rows, t_rows, cand, mask, picks, sums, True, n_threads)


def _trial_sims_reference(indptr, indices, data, q_rows, t_rows, cand, mask, picks, sums):
    """Plain version of the kernels' similarities: per problem and iteration, sim(query,
    target) and the largest sim(query, sampled impostor)."""

    def masked_min_sum(q, x, it):
        qd = {
            int(f): v
            for f, v in zip(indices[indptr[q] : indptr[q + 1]], data[indptr[q] : indptr[q + 1]])
        }
        total = 0.0
        for j in range(indptr[x], indptr[x + 1]):
            w = qd.get(int(indices[j]), 0.0)
            if w > 0.0:
                total += min(data[j], w) * mask[it, indices[j]]
        return total

    def sim(q, x, it):
        mins = masked_min_sum(q, x, it)
        den = sums[q, it] + sums[x, it] - mins
        return mins / den if den > 0.0 else 0.0

    target = np.zeros((len(q_rows), picks.shape[0]))
    best = np.zeros_like(target)
    for p, (q, t) in enumerate(zip(q_rows, t_rows)):
        for it in range(picks.shape[0]):
            target[p, it] = sim(q, t, it)
            best[p, it] = max(sim(q, cand[p, c], it) for c in picks[it])
    return target, best


def impostor_wins_reference(
    indptr, indices, data, n_features, q_rows, t_rows, cand, mask, picks, sums
):
    target, best = _trial_sims_reference(
        indptr, indices, data, q_rows, t_rows, cand, mask, picks, sums
    )
    return (target > best).sum(axis=1)


def impostor_margins_reference(
    indptr, indices, data, n_features, q_rows, t_rows, cand, mask, picks, sums
):
    target, best = _trial_sims_reference(
        indptr, indices, data, q_rows, t_rows, cand, mask, picks, sums
    )
    out = np.zeros(len(q_rows))
    for p in range(len(q_rows)):
        for it in range(picks.shape[0]):  # summed in the kernel's order, for exact agreement
            out[p] += target[p, it] - best[p, it]
    return out
