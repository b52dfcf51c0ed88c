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
   features, ``stylo.features.nearest_minmax``), excluding any pool text identical to one
   of the problem's own texts.
3. For ``n_iter`` iterations, keep a random ``feature_fraction`` of the features and a random
   ``n_impostors`` of the candidates; the iteration is a win if sim(K, U) beats the similarity
   of U to every sampled impostor.
4. Repeat with the roles swapped (query K, target U, candidates most similar to K). The raw
   score (``score="margin"``, default) is the mean over iterations and directions of
   sim(query, target) minus the largest sim(query, sampled impostor), mapped from [-1, 1]
   onto [0, 1]; with ``score="wins"`` the mean win rate of the two directions (Koppel &
   Winter's score).
5. Score shifting (``baselines.calibration.ScoreCalibrator`` without Platt scaling): a grey
   zone [p1, p2] of raw scores becomes 0.5, scores below ``p1`` are mapped linearly below 0.5
   and above ``p2`` above 0.5; p1/p2 maximise ``objective`` on the training problems
   (default AUC x c@1, Kestemont et al.'s criterion for PAN13-15). Margins crowd around 0.5,
   where the 0.01 grid of p1/p2 would leave few cuts: they are first replaced by their
   mid-rank quantile among the training problems' margins (interpolated; a monotone map;
   ``ScoreCalibrator(quantiles=True)``). The training problems are scored against the
   training texts, while a transductive call's problems are scored against a pool that holds
   the call's texts too (often far more of them, and with repeated authors the query author's
   own): margins shift with the pool. ``shift_pool="call"`` fits the grey zone in each call
   instead, on the training problems scored beside the call's problems against the same pool.
   That is right when the call's texts come from the training texts' domain and wrong when they
   do not: fitted on PAN13's 10 training problems and scored on another genre, it answered
   every problem "different". ``shift_pool="auto"`` (default) reads, without labels, whether
   they do: the call's new texts' median min-max similarity to their nearest training text,
   over the training texts' median similarity to their nearest other training text (at least
   ``domain_ratio``, 0.8: the call zone; below it: the fit-time zone). On held-out halves of
   eight training sets the ratio was 0.81-1.10, across the English PAN genres 0.42-1.01;
   ``benchmarks/choose_impostors.py`` chose it on training data (AUC x c@1 / overall across
   genres .480 / .661, halves .598 / .765, against .463 / .649 and .595 / .752 for the
   fit-time zone and .475 / .625 and .598 / .765 for the call zone).

Impostor pool: the texts ``fit`` saw (a Corpus's texts or a PairSet's known/unknown texts)
plus, with ``transductive=True`` (default, as Kestemont et al. did on PAN14), the texts of the
other problems scored in the same call. Where authors repeat across problems (AIDBench on
IMDb62: 200 triplets of 62 authors, train texts by the same authors) the pool holds the query
author's other texts: 8 % of a query's 100 candidates and 23-25 % of its 10 nearest. Those beat
every target, so the win rate saturates at 0: both candidates of a triplet tie (40 % of
IMDb62's triplets, 70 % of Enron's), and on IMDb62's one-to-one 150/50 task 49 % of the
same-author test problems win no iteration, as most different-author ones do. The margin
keeps ordering them: a same-author impostor lowers every candidate alike and leaves their
order to how close each is. Ranking (``rank``, ``rank_many``, hence one-to-two and
one-to-many) and ``attribute`` read the margin without the grey zone (they need an order,
not an answer; ``attribute``'s 0.5 is a zero mean margin). Verification reads it through the
grey zone since ``benchmarks/choose_impostors.py`` chose it on training data only (mean AUC x
c@1 / overall across PAN genres .430 / .637 with the win rate, .463 / .649 with the margin;
on held-out halves of eight training sets .532 / .693 and .598 / .755).

Batching: all problems of a call share the same random feature masks and impostor picks, so
the Numba kernels of :mod:`baselines._impostor_trials` score them together.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from baselines._features import make_counter, relative_frequencies, word_span
from baselines._impostor_trials import impostor_margins, impostor_wins, masked_sums
from baselines.calibration import ScoreCalibrator
from stylo._threads import kernel_threads
from stylo.corpus import Corpus, PairSet
from stylo.features import nearest_minmax, paired_minmax
from stylo.progress import advance
from stylo.text_input import has_text
from stylo.verifier import NO_ANSWER, Verifier, attribution_problems, training_pairs

__all__ = ["GeneralImpostors"]

_SCORES = ("margin", "wins")
_SHIFT_POOLS = ("auto", "call", "training")


#: problems per kernel call between two progress reports
_PROGRESS_CHUNK = 2048


class GeneralImpostors(Verifier):
    """General Impostors verifier (see the module docstring for the algorithm and sources).

    Parameters
    ----------
    n_iter : iterations (random feature/impostor draws), default 50 (100 until
        ``benchmarks/choose_impostors.py``'s fourth study: half the trials, figures within 0.002
        on training data).
    feature_fraction : share of features kept per iteration, default 0.5.
    n_candidates : k, the most similar pool texts a problem's impostors are drawn from.
    n_impostors : m, impostors sampled from the k candidates per iteration. k=100, m=10 were
        chosen on training data only (raw AUC on the PAN14 and PAN15 training problems, m in
        {5, 10, 30}: m=30 left half the PAN15 problems at a raw score of 0).
    unit, n, max_features : features, default character n-grams, 10,000 most frequent; ``n``
        an int or ``"auto"`` (default): for characters, the order that spans about one word
        of the training texts (:func:`baselines._features.word_span`: 4 on every corpus of
        the reference grid, 1 on Chinese, whose characters are words), for words 1.
    transductive : add the other problems' texts of a call to the impostor pool.
    max_call_pool : with ``transductive``, the most texts of one call that join the pool (a
        draw with ``random_state`` when a call has more; None: all). The candidate search is
        quadratic in the pool, and PAN 2021's 20,000 test pairs are one call: one call of
        12,000 Blog pairs took 30.9 s with every text in the pool and 19.0 s with 5,000, for a
        held-out AUC of .761 and .760 (``benchmarks/bench_impostor_pool.py``). No call of the
        reference grid reaches 5,000: its 256 cells gave every row unchanged.
    score : what verification reads: ``"margin"`` (default) or ``"wins"``, the win rate (see
        the module docstring).
    shift : fit the score-shifting grey zone on the training problems.
    shift_pool : the impostor pool the training problems are scored against for that fit:
        ``"training"`` once at ``fit``, against the training texts; ``"call"`` again in each
        verification call, beside the call's problems and against the same pool (with
        ``transductive``, the call's texts too); ``"auto"`` (default) the call's where its
        texts are from the training texts' domain (``domain_ratio``), else the training pool's
        (see the module docstring).
    domain_ratio : with ``shift_pool="auto"``, the least :meth:`domain_ratio_of` a call's texts
        need for the grey zone to be fitted in the call.
    objective : what the grey zone maximises: ``"auc_c1"``, ``"pan21"`` or
        ``"pan20-baseline"`` (see ``baselines.calibration``).
    random_state : seed of the feature masks and impostor picks.
    n_jobs : threads of the candidate search and the impostor kernels (None: every core,
        ``NUMBA_NUM_THREADS``; negative: joblib's convention).

    Attributes: ``n_`` (the n-gram order used), ``counter_``, ``pool_x_`` (the training
    pool's relative frequencies),
    ``calibrator_`` (the fit-time grey zone: fitted at ``fit`` with ``shift_pool="training"``,
    with ``"auto"`` at the first call below ``domain_ratio`` (None until then), never with
    ``"call"`` or without ``shift``; with ``score="margin"`` it maps margins through their
    training quantiles first),
    ``shift_pairs_`` (the training problems a call's grey zone is fitted on, else None) and
    ``pool_nearness_`` (with ``shift_pool="auto"``: the training texts' median min-max
    similarity to their nearest other training text; None with fewer than two).
    """

    def __init__(
        self,
        n_iter: int = 50,
        feature_fraction: float = 0.5,
        n_candidates: int = 100,
        n_impostors: int = 10,
        unit: str = "char",
        n: int | str = "auto",
        max_features: int | None = 10_000,
        transductive: bool = True,
        max_call_pool: int | None = 5000,
        score: str = "margin",
        shift: bool = True,
        shift_pool: str = "auto",
        domain_ratio: float = 0.8,
        objective: str = "auc_c1",
        random_state: int = 0,
        n_jobs: int | None = None,
    ):
        self.n_iter = n_iter
        self.feature_fraction = feature_fraction
        self.n_candidates = n_candidates
        self.n_impostors = n_impostors
        self.unit = unit
        self.n = n
        self.max_features = max_features
        self.transductive = transductive
        self.max_call_pool = max_call_pool
        self.score = score
        self.shift = shift
        self.shift_pool = shift_pool
        self.domain_ratio = domain_ratio
        self.objective = objective
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _validate(self) -> None:
        kernel_threads(self.n_jobs)  # a bad n_jobs is refused at fit, in one line
        if self.score not in _SCORES:
            raise ValueError(f"score must be one of {_SCORES}, got {self.score!r}")
        if self.shift_pool not in _SHIFT_POOLS:
            raise ValueError(f"shift_pool must be one of {_SHIFT_POOLS}, got {self.shift_pool!r}")
        if not isinstance(self.domain_ratio, (int, float)) or not self.domain_ratio > 0.0:
            raise ValueError(f"domain_ratio must be a number > 0, got {self.domain_ratio!r}")
        n_ok = isinstance(self.n, (int, np.integer)) and not isinstance(self.n, bool)
        if self.n != "auto" and not (n_ok and self.n >= 1):
            raise ValueError(f"n must be an int >= 1 or 'auto', got {self.n!r}")
        cap = self.max_call_pool
        cap_ok = isinstance(cap, (int, np.integer)) and not isinstance(cap, bool) and cap >= 0
        if cap is not None and not cap_ok:
            raise ValueError(f"max_call_pool must be an int >= 0 or None, got {cap!r}")
        if int(self.n_iter) < 1:
            raise ValueError(f"n_iter must be >= 1, got {self.n_iter}")
        if not 0.0 < float(self.feature_fraction) <= 1.0:
            raise ValueError(f"feature_fraction must be in (0, 1], got {self.feature_fraction}")
        if int(self.n_impostors) < 1 or int(self.n_candidates) < int(self.n_impostors):
            raise ValueError(
                f"need 1 <= n_impostors <= n_candidates, got "
                f"n_impostors={self.n_impostors}, n_candidates={self.n_candidates}"
            )

    def _fit_impl(self, X, y) -> None:
        self._validate()
        if isinstance(X, Corpus):
            texts = [t for t in X.texts if has_text(t)]
        else:
            texts = [t for ks in X.known for t in ks if has_text(t)]
            texts += [t for t in X.unknown if has_text(t)]
        if not texts:
            raise ValueError("fit needs at least one non-empty text")
        if self.n != "auto":
            self.n_ = int(self.n)
        else:
            self.n_ = word_span(texts) if self.unit == "char" else 1
        self.counter_ = make_counter(self.unit, self.n_, self.max_features)
        counts = self.counter_.fit_transform(texts)  # the pool's rows from the one count
        row_of = {t: i for i, t in enumerate(texts)}  # a repeated text's rows are equal
        pool = list(row_of)
        self.pool_index_ = {t: i for i, t in enumerate(pool)}
        self.pool_x_ = relative_frequencies(counts[list(row_of.values())])
        self.calibrator_ = self.shift_pairs_ = self.pool_nearness_ = None
        if self.shift:
            pairs = training_pairs(X, seed=self.random_state)
            if self.shift_pool == "training":
                self.calibrator_ = self._fit_time_zone(pairs)
            else:
                self.shift_pairs_ = pairs
            if self.shift_pool == "auto" and self.pool_x_.shape[0] > 1:
                # each training text's nearest other: the first is the text itself
                near = _nearest_similarity(self.pool_x_, self.pool_x_, 1, self.n_jobs)
                self.pool_nearness_ = float(np.median(near))

    def _new_calibrator(self) -> ScoreCalibrator:
        return ScoreCalibrator(
            platt=False, quantiles=self.score == "margin", objective=self.objective
        )

    def _score_impl(self, texts_a, texts_b):
        return self._verified([[a] for a in texts_a], texts_b)

    def _problem_impl(self, known_lists, unknowns):
        return self._verified(known_lists, unknowns)

    def domain_ratio_of(self, texts: list[str]) -> float:
        """How near ``texts`` are to the training texts, as near as those are to each other:
        the median over the texts not among the training texts of the min-max similarity to
        their nearest training text, over ``pool_nearness_`` (the training texts' median
        similarity to their nearest other training text); NaN where no text is new, or where
        ``pool_nearness_`` is None or 0 (``shift_pool`` other than ``"auto"``, no ``shift``,
        fewer than two training texts, or none sharing a feature with another)."""
        self._check_fitted()
        new = list(dict.fromkeys(t for t in texts if t not in self.pool_index_))
        if not new or not self.pool_nearness_:
            return float("nan")
        near = _nearest_similarity(self._frequencies(new), self.pool_x_, 0, self.n_jobs)
        return float(np.median(near)) / self.pool_nearness_

    def _verified(self, known_lists, unknowns) -> np.ndarray:
        """Verification answers: raw scores through the grey zone, fitted at ``fit`` or, with
        ``shift_pool="call"`` (``"auto"``: where the call's texts reach ``domain_ratio``), on
        the training problems scored in this call beside ``known_lists``/``unknowns`` (same
        feature masks and impostor picks, same pool)."""
        fit_time = self.shift_pairs_ is None
        if self.shift_pool == "auto" and not fit_time:
            texts = [t for ks in known_lists for t in ks] + list(unknowns)
            # NaN (no new text, or no nearness to compare with) stays below any ratio
            fit_time = not self.domain_ratio_of(texts) >= float(self.domain_ratio)
        if fit_time:
            if self.calibrator_ is None and self.shift_pairs_ is not None:
                # "auto" fits the fit-time zone at the first call that needs it: where every
                # call reaches the ratio (the training domain's), it is never needed
                self.calibrator_ = self._fit_time_zone(self.shift_pairs_)
            return self._shifted(self._verification_scores(known_lists, unknowns))
        pairs = self.shift_pairs_
        n = len(pairs.unknown)
        raw = self._verification_scores([*pairs.known, *known_lists], [*pairs.unknown, *unknowns])
        return self._new_calibrator().fit(raw[:n], pairs.labels).transform(raw[n:])

    def _rank_many_impl(self, queries, candidate_lists):
        # ranking needs an order, not an answer: the continuous margin, without the grey zone
        # that would tie every candidate inside it
        flat = self._raw_scores(
            [[q] for q, c in zip(queries, candidate_lists) for _ in c],
            [x for c in candidate_lists for x in c],
            margin=True,
        )
        return np.split(flat, np.cumsum([len(c) for c in candidate_lists])[:-1])

    def _attribute_impl(self, candidates, texts):
        # candidates are ordered as rank_many orders them, by the margin: the grey zone would
        # tie those inside it at 0.5 and the first would win; 0.5 is a zero mean margin
        flat = self._raw_scores(*attribution_problems(candidates, texts), margin=True)
        return flat.reshape(len(texts), len(candidates))

    def _fit_time_zone(self, pairs: PairSet) -> ScoreCalibrator:
        """The grey zone of the training problems scored against the training texts alone."""
        raw = self._verification_scores(pairs.known, pairs.unknown)
        return self._new_calibrator().fit(raw, pairs.labels)

    def _shifted(self, raw: np.ndarray) -> np.ndarray:
        return raw if self.calibrator_ is None else self.calibrator_.transform(raw)

    def _verification_scores(self, known_lists, unknowns) -> np.ndarray:
        return self._raw_scores(known_lists, unknowns, margin=self.score == "margin")

    def raw_scores(self, pairs: PairSet) -> np.ndarray:
        """Unshifted verification scores (``score``: the mean margin mapped onto [0, 1], or the
        mean win rate of both directions) for a PairSet, (n_problems,)."""
        self._check_fitted()
        return self._verification_scores(pairs.known, pairs.unknown)

    def _raw_scores(
        self, known_lists: list[list[str]], unknowns: list[str], margin: bool = False
    ) -> np.ndarray:
        """Mean win rate of both directions, or with ``margin`` the mean margin mapped from
        [-1, 1] onto [0, 1] (``impostor_margins``)."""
        n_prob = len(unknowns)
        batch = list(dict.fromkeys([t for ks in known_lists for t in ks] + unknowns))
        new = [t for t in batch if t not in self.pool_index_]
        joining = len(new) if self.transductive else 0
        if self.max_call_pool is not None and joining > self.max_call_pool:
            # the pool is a prefix of the rows: the drawn texts first, the rest after it
            draw = np.random.default_rng([self.random_state, 5])
            chosen = np.zeros(len(new), dtype=bool)
            chosen[draw.choice(len(new), size=self.max_call_pool, replace=False)] = True
            new = [t for t, c in zip(new, chosen) if c] + [t for t, c in zip(new, chosen) if not c]
            joining = self.max_call_pool
        where = dict(self.pool_index_)
        where.update({t: len(where) + i for i, t in enumerate(new)})
        texts_x = sp.vstack([self.pool_x_, self._frequencies(new)]).tocsr()
        n_pool = self.pool_x_.shape[0] + joining
        # rows: every distinct text, then one profile (mean known vector) per distinct known
        # list: attribution asks about one candidate's profile once per text to attribute
        profile_of = {ks: i for i, ks in enumerate(dict.fromkeys(map(tuple, known_lists)))}
        n_prof = len(profile_of)
        owner = np.repeat(np.arange(n_prof), [len(ks) for ks in profile_of])
        known_rows = np.array([where[t] for ks in profile_of for t in ks], dtype=np.int64)
        averaging = sp.csr_matrix(
            (1.0 / np.bincount(owner, minlength=n_prof)[owner], (owner, known_rows)),
            shape=(n_prof, texts_x.shape[0]),
        )
        rows = sp.vstack([texts_x, averaging @ texts_x]).tocsr()
        rows.sort_indices()
        profile_rows = texts_x.shape[0] + np.array(
            [profile_of[tuple(ks)] for ks in known_lists], dtype=np.int64
        )
        unknown_rows = np.array([where[u] for u in unknowns], dtype=np.int64)
        # a problem's own texts never serve as its impostors
        own = [
            {r for r in (where[t] for t in (*ks, unknowns[p])) if r < n_pool}
            for p, ks in enumerate(known_lists)
        ]
        k = min(int(self.n_candidates), n_pool - max(map(len, own), default=n_pool))
        if k < 1:
            warnings.warn(
                f"{type(self).__name__}: no impostors available (pool of {n_pool} "
                f"texts); all {n_prob} problem(s) scored {NO_ANSWER}",
                stacklevel=4,
            )
            return np.full(n_prob, NO_ANSWER)
        m = min(int(self.n_impostors), k)
        mask_t, picks = self._draws(rows.shape[1], k, m)
        csr = (
            rows.indptr.astype(np.int64),
            rows.indices.astype(np.int64),
            rows.data,
            rows.shape[1],
        )
        pool_x = rows[:n_pool]
        kernel = impostor_margins if margin else impostor_wins
        total = np.zeros(n_prob)
        # one byte a feature: the masks of all iterations (1 MB at 100 x 10,000) stay in L2
        # cache and a row in L1 (float32: the impostor trials took a quarter longer)
        mask = np.ascontiguousarray(mask_t.T, dtype=np.uint8)
        done = 0
        directions = ((unknown_rows, profile_rows), (profile_rows, unknown_rows))
        n_threads = kernel_threads(self.n_jobs)
        sums = masked_sums(csr[0], csr[1], csr[2], mask_t, n_threads)
        candidates = self._candidates(rows, [q for q, _ in directions], pool_x, own, k)
        for (q_rows, t_rows), cand in zip(directions, candidates, strict=True):
            # problems are independent: the kernel runs on slices so that progress can be
            # told between them (PAN19 attribution is 36,459 problems)
            for at in range(0, n_prob, _PROGRESS_CHUNK):
                part = slice(at, at + _PROGRESS_CHUNK)
                total[part] += kernel(
                    *csr, q_rows[part], t_rows[part], cand[part], mask, picks, sums, n_threads
                )
                done += len(q_rows[part])
                advance("impostor problems (both directions)", done, 2 * n_prob)
        mean = total / (2.0 * self.n_iter)
        return (1.0 + mean) / 2.0 if margin else mean

    def _candidates(
        self,
        rows: sp.csr_matrix,
        q_rows_of: list[np.ndarray],
        pool_x: sp.csr_matrix,
        own: list[set[int]],
        k: int,
    ) -> list[np.ndarray]:
        """For each array of query rows (one per direction), (n_prob, k) pool rows most
        similar to each problem's query row, most similar first (ties: lower row), leaving out
        the problem's own texts.

        Similarities are computed once per distinct query row, for both directions in one call
        (the pool's inverted index is built once): attribution problems repeat one candidate's
        profile for every unknown text, and one unknown for every candidate."""
        distinct, inverse = np.unique(np.concatenate(q_rows_of), return_inverse=True)
        # k + the most own texts of any problem always leaves k others
        width = min(pool_x.shape[0], k + max(map(len, own)))
        top = nearest_minmax(rows[distinct], pool_x, width, n_jobs=kernel_threads(self.n_jobs))
        out = []
        for q_rows, at in zip(q_rows_of, np.cumsum([0] + [len(q) for q in q_rows_of])):
            cand = np.empty((len(q_rows), k), dtype=np.int64)
            for p, d in enumerate(inverse[at : at + len(q_rows)]):
                cand[p] = [r for r in top[d] if r not in own[p]][:k]
            out.append(cand)
        return out

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


def _nearest_similarity(
    x: sp.csr_matrix, pool: sp.csr_matrix, rank: int, n_jobs: int | None
) -> np.ndarray:
    """Min-max similarity of each row of ``x`` to its ``rank``-th most similar row of ``pool``
    (0: the most similar), (n_rows,): the domain ratio's two medians measure the same thing."""
    nearest = nearest_minmax(x, pool, rank + 1, n_jobs=kernel_threads(n_jobs))[:, rank]
    return paired_minmax(x, pool, rows=(np.arange(x.shape[0]), nearest))
