"""General Impostors (GI): is the unknown text closer to the known author than to impostors?

Sources: M. Koppel & Y. Winter, "Determining if two documents are written by the same author",
JASIST 65(1), 2014; M. Kestemont, J. Stover, M. Koppel, F. Karsdorp & W. Daelemans,
"Authenticating the writings of Julius Caesar", Expert Systems with Applications 63, 2016
(their PAN14 set-up: profile-based, min-max similarity, impostors from the same corpus,
score shifting fitted on the training problems).

Algorithm, for one problem (known profile K, unknown text U) and a pool of impostor texts:

1. Represent every text by relative frequencies of its ``max_features`` most frequent
   character ``n``-grams (vocabulary learnt at ``fit``); a problem with several known texts
   uses the mean of their vectors (the author's profile).
2. Candidates: the ``n_candidates`` pool texts most similar to U (min-max similarity on all
   features, ``stylo.features.pairwise_minmax``), excluding any pool text identical to one
   of the problem's own texts.
3. For ``n_iter`` iterations, keep a random ``feature_fraction`` of the features and a random
   ``n_impostors`` of the candidates; the iteration is a win if sim(K, U) beats the similarity
   of U to every sampled impostor.
4. Repeat with the roles swapped (query K, target U, candidates most similar to K); the raw
   score is the mean win rate of the two directions.
5. Score shifting (``baselines.calibration.ScoreCalibrator`` without Platt scaling): a grey
   zone [p1, p2] of raw scores becomes 0.5, scores below ``p1`` are mapped linearly below 0.5
   and above ``p2`` above 0.5; p1/p2 maximise ``objective`` on the training problems
   (default AUC x c@1, Kestemont et al.'s criterion for PAN13-15).

Impostor pool: the texts ``fit`` saw (a Corpus's texts or a PairSet's known/unknown texts)
plus, with ``transductive=True`` (default, as Kestemont et al. did on PAN14), the texts of the
other problems scored in the same call. The pool cannot exclude other texts by the same author
when authors are unknown (PAN pair sets): that lowers same-author scores a little.

Batching: all problems of a call share the same random feature masks and impostor picks, so
one Numba kernel scores them together; ``_impostor_wins_reference`` is the plain version the
tests compare it with.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
import scipy.sparse as sp

from baselines._features import make_counter, relative_frequencies
from baselines.calibration import ScoreCalibrator
from stylo.corpus import Corpus, PairSet
from stylo.features import pairwise_minmax
from stylo.progress import advance
from stylo.text_input import has_text
from stylo.verifier import NO_ANSWER, Verifier, training_pairs

__all__ = ["GeneralImpostors"]


# -- kernels ---------------------------------------------------------------------------------
#: problems per kernel call between two progress reports
_PROGRESS_CHUNK = 2048


@numba.njit(cache=True, parallel=True)
def _masked_sums(indptr, indices, data, mask_t):
    """Sum of each CSR row over each iteration's kept features: (n_rows, n_iter)."""
    n_rows = indptr.shape[0] - 1
    n_iter = mask_t.shape[1]
    out = np.zeros((n_rows, n_iter))
    for r in numba.prange(n_rows):
        for j in range(indptr[r], indptr[r + 1]):
            v = data[j]
            f = indices[j]
            for it in range(n_iter):
                out[r, it] += v * mask_t[f, it]
    return out


def _masked_sums_reference(indptr, indices, data, mask_t):
    n_rows, n_iter = indptr.shape[0] - 1, mask_t.shape[1]
    out = np.zeros((n_rows, n_iter))
    for r in range(n_rows):
        for j in range(indptr[r], indptr[r + 1]):
            for it in range(n_iter):
                out[r, it] += data[j] * mask_t[indices[j], it]
    return out


@numba.njit(cache=True, parallel=True)
def _impostor_wins(indptr, indices, data, n_features, q_rows, t_rows, cand, mask, picks,
                   sums):
    """Iterations in which each query is closer to its target than to every sampled impostor.

    ``q_rows``/``t_rows`` (n_prob,) and ``cand`` (n_prob, k) are CSR row numbers; ``mask``
    (n_iter, n_features) holds float32 0/1 feature masks; ``picks`` (n_iter, m) are positions
    in ``cand``; ``sums`` (n_rows, n_iter) are the masked row sums. Returns int64 (n_prob,).
    """
    n_prob, k = cand.shape
    n_iter, m = picks.shape
    wins = np.zeros(n_prob, dtype=np.int64)
    for p in numba.prange(n_prob):
        q = q_rows[p]
        dense = np.zeros(n_features)
        for j in range(indptr[q], indptr[q + 1]):
            dense[indices[j]] = data[j]
        # shared features of the query with the target (slot 0) and each candidate, with
        # min(q, x) there: each iteration then only walks the slots it uses
        size = indptr[t_rows[p] + 1] - indptr[t_rows[p]]
        for c in range(k):
            size += indptr[cand[p, c] + 1] - indptr[cand[p, c]]
        feats = np.empty(size, dtype=np.int32)
        mins = np.empty(size)
        start = np.zeros(k + 2, dtype=np.int64)
        pos = 0
        for c in range(k + 1):
            x = t_rows[p] if c == 0 else cand[p, c - 1]
            for j in range(indptr[x], indptr[x + 1]):
                w = dense[indices[j]]
                if w > 0.0:
                    v = data[j]
                    feats[pos] = indices[j]
                    mins[pos] = v if v < w else w
                    pos += 1
            start[c + 1] = pos
        for it in range(n_iter):
            # multiplying by the 0/1 mask instead of branching on it: the mask is random, so a
            # branch mispredicts half the time (3-5x slower); x * 1 and + 0 keep the sum exact
            keep = mask[it]
            t = t_rows[p]
            shared = 0.0
            for j in range(start[0], start[1]):
                shared += mins[j] * keep[feats[j]]
            den = sums[q, it] + sums[t, it] - shared
            target = shared / den if den > 0.0 else 0.0
            won = True
            for s in range(m):
                c = picks[it, s]
                shared = 0.0
                for j in range(start[c + 1], start[c + 2]):
                    shared += mins[j] * keep[feats[j]]
                den = sums[q, it] + sums[cand[p, c], it] - shared
                sim = shared / den if den > 0.0 else 0.0
                if sim >= target:  # one impostor at least as close loses the iteration
                    won = False
                    break
            if won:
                wins[p] += 1
    return wins


def _impostor_wins_reference(indptr, indices, data, n_features, q_rows, t_rows, cand, mask,
                             picks, sums):
    def masked_min_sum(q, x, it):
        qd = {int(f): v for f, v in zip(indices[indptr[q]:indptr[q + 1]],
                                        data[indptr[q]:indptr[q + 1]])}
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

    wins = np.zeros(len(q_rows), dtype=np.int64)
    for p, (q, t) in enumerate(zip(q_rows, t_rows)):
        for it in range(picks.shape[0]):
            best = max(sim(q, cand[p, c], it) for c in picks[it])
            wins[p] += sim(q, t, it) > best
    return wins


# -- estimator -------------------------------------------------------------------------------
class GeneralImpostors(Verifier):
    """General Impostors verifier (see the module docstring for the algorithm and sources).

    Parameters
    ----------
    n_iter : iterations (random feature/impostor draws), default 100.
    feature_fraction : share of features kept per iteration, default 0.5.
    n_candidates : k, the most similar pool texts a problem's impostors are drawn from.
    n_impostors : m, impostors sampled from the k candidates per iteration. k=100, m=10 were
        chosen on training data only (raw AUC on the PAN14 and PAN15 training problems, m in
        {5, 10, 30}: m=30 left half the PAN15 problems at a raw score of 0).
    unit, n, max_features : features, default character 4-grams, 10,000 most frequent.
    transductive : add the other problems' texts of a call to the impostor pool.
    shift : fit the score-shifting grey zone on the training problems.
    objective : what the grey zone maximises: ``"auc_c1"``, ``"pan21"`` or
        ``"pan20-baseline"`` (see ``baselines.calibration``).
    random_state : seed of the feature masks and impostor picks.
    n_jobs : Numba threads (None = Numba's default).
    """

    def __init__(self, n_iter: int = 100, feature_fraction: float = 0.5,
                 n_candidates: int = 100, n_impostors: int = 10, unit: str = "char", n: int = 4,
                 max_features: int | None = 10_000, transductive: bool = True,
                 shift: bool = True, objective: str = "auc_c1", random_state: int = 0,
                 n_jobs: int | None = None):
        self.n_iter = n_iter
        self.feature_fraction = feature_fraction
        self.n_candidates = n_candidates
        self.n_impostors = n_impostors
        self.unit = unit
        self.n = n
        self.max_features = max_features
        self.transductive = transductive
        self.shift = shift
        self.objective = objective
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _validate(self) -> None:
        if int(self.n_iter) < 1:
            raise ValueError(f"n_iter must be >= 1, got {self.n_iter}")
        if not 0.0 < float(self.feature_fraction) <= 1.0:
            raise ValueError(f"feature_fraction must be in (0, 1], got {self.feature_fraction}")
        if int(self.n_impostors) < 1 or int(self.n_candidates) < int(self.n_impostors):
            raise ValueError(f"need 1 <= n_impostors <= n_candidates, got "
                             f"n_impostors={self.n_impostors}, n_candidates={self.n_candidates}")

    def _fit_impl(self, X, y) -> None:
        self._validate()
        if isinstance(X, Corpus):
            texts = [t for t in X.texts if has_text(t)]
        else:
            texts = [t for ks in X.known for t in ks if has_text(t)]
            texts += [t for t in X.unknown if has_text(t)]
        if not texts:
            raise ValueError("fit needs at least one non-empty text")
        self.counter_ = make_counter(self.unit, self.n, self.max_features).fit(texts)
        pool = list(dict.fromkeys(texts))
        self.pool_index_ = {t: i for i, t in enumerate(pool)}
        self.pool_x_ = self._frequencies(pool)
        self.calibrator_ = None
        if self.shift:
            pairs = training_pairs(X, seed=self.random_state)
            raw = self._raw_scores(pairs.known, pairs.unknown)
            self.calibrator_ = ScoreCalibrator(platt=False, objective=self.objective)
            self.calibrator_.fit(raw, pairs.labels)

    def _score_impl(self, texts_a, texts_b):
        return self._shifted(self._raw_scores([[a] for a in texts_a], texts_b))

    def _problem_impl(self, known_lists, unknowns):
        return self._shifted(self._raw_scores(known_lists, unknowns))

    def _shifted(self, raw: np.ndarray) -> np.ndarray:
        return raw if self.calibrator_ is None else self.calibrator_.transform(raw)

    def raw_scores(self, pairs: PairSet) -> np.ndarray:
        """Unshifted GI scores (mean win rate of both directions) for a PairSet, (n_problems,)."""
        self._check_fitted()
        return self._raw_scores(pairs.known, pairs.unknown)

    def _raw_scores(self, known_lists: list[list[str]], unknowns: list[str]) -> np.ndarray:
        n_prob = len(unknowns)
        batch = list(dict.fromkeys([t for ks in known_lists for t in ks] + unknowns))
        new = [t for t in batch if t not in self.pool_index_]
        where = dict(self.pool_index_)
        where.update({t: len(where) + i for i, t in enumerate(new)})
        texts_x = sp.vstack([self.pool_x_, self._frequencies(new)]).tocsr()
        n_pool = texts_x.shape[0] if self.transductive else self.pool_x_.shape[0]
        # rows: every distinct text, then one profile (mean known vector) per problem
        owner = np.repeat(np.arange(n_prob), [len(ks) for ks in known_lists])
        known_rows = np.array([where[t] for ks in known_lists for t in ks], dtype=np.int64)
        averaging = sp.csr_matrix((1.0 / np.bincount(owner, minlength=n_prob)[owner],
                                   (owner, known_rows)), shape=(n_prob, texts_x.shape[0]))
        rows = sp.vstack([texts_x, averaging @ texts_x]).tocsr()
        rows.sort_indices()
        profile_rows = texts_x.shape[0] + np.arange(n_prob, dtype=np.int64)
        unknown_rows = np.array([where[u] for u in unknowns], dtype=np.int64)
        # a problem's own texts never serve as its impostors
        own = [{r for r in (where[t] for t in (*ks, unknowns[p])) if r < n_pool}
               for p, ks in enumerate(known_lists)]
        k = min(int(self.n_candidates), n_pool - max(map(len, own), default=n_pool))
        if k < 1:
            warnings.warn(f"{type(self).__name__}: no impostors available (pool of {n_pool} "
                          f"texts); all {n_prob} problem(s) scored {NO_ANSWER}", stacklevel=4)
            return np.full(n_prob, NO_ANSWER)
        m = min(int(self.n_impostors), k)
        mask_t, picks = self._draws(rows.shape[1], k, m)
        csr = (rows.indptr.astype(np.int64), rows.indices.astype(np.int64), rows.data,
               rows.shape[1])
        pool_x = rows[:n_pool]
        wins = np.zeros(n_prob)
        # float32 rows: a 10,000-feature mask row stays in L1 cache
        mask = np.ascontiguousarray(mask_t.T, dtype=np.float32)
        done = 0
        with _threads(self.n_jobs):
            sums = _masked_sums(csr[0], csr[1], csr[2], mask_t)
            for q_rows, t_rows in ((unknown_rows, profile_rows), (profile_rows, unknown_rows)):
                cand = self._candidates(rows, q_rows, pool_x, own, k)
                # problems are independent: the kernel runs on slices so that progress can be
                # told between them (PAN19 attribution is 36,459 problems)
                for at in range(0, n_prob, _PROGRESS_CHUNK):
                    part = slice(at, at + _PROGRESS_CHUNK)
                    wins[part] += _impostor_wins(*csr, q_rows[part], t_rows[part], cand[part],
                                                 mask, picks, sums)
                    done += len(q_rows[part])
                    advance("impostor problems (both directions)", done, 2 * n_prob)
        return wins / (2.0 * self.n_iter)

    def _candidates(self, rows: sp.csr_matrix, q_rows: np.ndarray, pool_x: sp.csr_matrix,
                    own: list[set[int]], k: int) -> np.ndarray:
        """(n_prob, k) pool rows most similar to each problem's query row, most similar first
        (ties: lower row), leaving out the problem's own texts.

        Similarities are computed once per distinct query row: attribution problems repeat one
        candidate's profile for every unknown text, and one unknown for every candidate."""
        distinct, inverse = np.unique(q_rows, return_inverse=True)
        sim = pairwise_minmax(rows[distinct], pool_x, n_jobs=self.n_jobs)
        # k + the most own texts of any problem always leaves k others
        width = min(sim.shape[1], k + max(map(len, own)))
        top = np.argsort(-sim, axis=1, kind="stable")[:, :width]
        cand = np.empty((len(q_rows), k), dtype=np.int64)
        for p, d in enumerate(inverse):
            cand[p] = [r for r in top[d] if r not in own[p]][:k]
        return cand

    def _frequencies(self, texts: list[str]) -> sp.csr_matrix:
        if not texts:
            return sp.csr_matrix((0, len(self.counter_.get_feature_names_out())))
        return relative_frequencies(self.counter_.transform(texts))

    def _draws(self, n_features: int, k: int, m: int) -> tuple[np.ndarray, np.ndarray]:
        """Feature masks (n_features, n_iter) as 0/1 floats and picks (n_iter, m) in [0, k)."""
        rng = np.random.default_rng(self.random_state)
        n_keep = max(1, int(round(self.feature_fraction * n_features)))
        mask_t = np.zeros((n_features, int(self.n_iter)))
        picks = np.empty((int(self.n_iter), m), dtype=np.int64)
        for it in range(int(self.n_iter)):
            mask_t[rng.choice(n_features, size=n_keep, replace=False), it] = 1.0
            picks[it] = rng.choice(k, size=m, replace=False)
        # most similar candidates first: an iteration is lost at the first impostor at least
        # as close as the target, and those are likelier to be so (the order changes no win)
        picks.sort(axis=1)
        return mask_t, picks


class _threads:
    """Temporarily set Numba's thread count (``None`` leaves it unchanged)."""

    def __init__(self, n_jobs: int | None):
        self.n_jobs = n_jobs

    def __enter__(self):
        self.before = numba.get_num_threads()
        if self.n_jobs is not None:
            limit = numba.config.NUMBA_NUM_THREADS
            numba.set_num_threads(max(1, min(limit, int(self.n_jobs)
                                             if self.n_jobs > 0 else limit)))

    def __exit__(self, *exc):
        numba.set_num_threads(self.before)
