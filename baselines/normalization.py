"""Background score normalisation (s-norm) for any similarity verifier.

A raw similarity mixes "same author" with "how similar is this text to texts in general": a
generic, formulaic text is close to everything. Speaker verification's symmetric score
normalisation removes the second part (Auckenthaler, Carey & Lloyd-Thomas, "Score normalization
for text-independent speaker verification systems", Digital Signal Processing 10, 2000;
"s-norm" in Kenny, "Bayesian speaker verification with heavy-tailed priors", Odyssey 2010):
with a background pool B of other texts and the inner verifier's score s(a, b),

    z(a, b) = (s(a, b) - mean_B s(a, .)) / std_B s(a, .)
            + (s(a, b) - mean_B s(., b)) / std_B s(., b)

i.e. the raw score standardised against each side's scores with the pool, summed over both
sides. A logistic map (Platt) fitted on training pairs turns ``z`` into P(same author), and an
optional grey zone (as :class:`~baselines.calibration.Calibrated`) gives PAN answers.

At ``fit`` the pool is drawn from the training texts (a Corpus's texts, or the distinct known
and unknown texts of a PairSet): up to ``n_background`` of them, with ``random_state``; it is
the pool of every later call too unless ``transductive`` (below). A pool text
equal to the text being normalised is left out of that text's statistics, and so is every pool
text the training data ties to the same author (a Corpus's author; in a PairSet, a problem's
known texts, and its unknown text when the problem is same-author, joined across problems that
share texts). Otherwise a training text is normalised against its own author's other texts and
a test text, whose author's texts are not known to be in the pool, is not: training scores
then sit lower than test scores of the same kind, and the Platt map fitted on them says "same
author" too often on test pairs. Leaving them out lifted ``cosine-norm``'s PAN14 AUC x c@1 on
Greek articles from 0.706 to 0.764 and on English novels from 0.441 to 0.491 (c@1 0.800 to
0.851 and 0.548 to 0.610; the AUCs barely move).

``transductive=True`` normalises what is scored after ``fit`` against the texts of the call
instead: up to ``n_background`` of its distinct known and unknown texts, drawn with
``random_state``, topped up from the training pool when the call holds fewer. Each side's
statistics then leave out both texts of its pair, at ``fit`` too (such a pool holds them, and
a same-author partner would pull the mean up). The pool describes the domain of the texts
being scored, as General Impostors' transductive impostor pool does (Kestemont et al. 2016).
Training texts of one genre make a poor background for test texts of another: a cosine model
fitted on PAN13's training problems gives PAN15's training problems z-scores of 9-17 against a
training pool and of -2 to 2 against their own texts, where its training pairs had 0-6. No
label is read; the calibration stays the one fitted on training pairs. Measured on training
data only (``python -m benchmarks.choose_transductive``): fitted on one English PAN training
set and scored on another's, ``cosine-norm``'s AUC x c@1 rose in 11 of 12 pairs of sets (mean
0.386 to 0.429); on held-out halves of eight training sets, without a shift, 0.539 to 0.552.
``naive-norm``, ``cosine-norm`` and ``ensemble``'s s-normalised base are registered with it
(benchmarks/README.md: what it did to the reference grid).

``rounds`` repeats the normalisation on its own output. A text whose scores are all high (a
generic text, close to everything; a "hub" in a high-dimensional space) is tamed by its own
statistics, but its neighbours' statistics still carry it: a pool text that is near every
text raises the mean of every side it is compared with. Round 2 therefore s-norms each side's
s-normed scores with the pool, the pool texts' own scores s-normed against the pool (its
scores with itself, a pool text's statistics leaving out itself and, at ``fit``, its training
author's texts), and standardises the pair's s-norm by the statistics of both sides' s-normed
rows; round 3 does it again. Repeated, every row's scores tend to mean 0 and spread 1 whatever
text or pool text they involve, as a matrix balanced by rows and columns at once. Chosen on
training data only (``python -m benchmarks.choose_ensemble``, ``ensemble``'s normalised cosine
at 1-4 rounds): held-out-author AUC of the stack .824 / .829 / .835 / .833 for 1 / 2 / 3 / 4
rounds, and .768 / .784 / .793 fitted on one English PAN training set and scored on another's.

Cost: each distinct text (each distinct known list) of a call is scored against the pool once,
through the inner verifier's ``score_cross`` (one matrix product for a cosine), whatever the
number of pairs it appears in; with ``rounds`` > 1 the pool once against itself too.
"""

from __future__ import annotations

import numpy as np

from baselines.calibration import ScoreCalibrator
from stylo.corpus import Corpus, PairSet, join_known
from stylo.text_input import has_text
from stylo.verifier import NO_ANSWER, Verifier, training_pairs
from stylo.verifier_wrapper import VerifierWrapper

__all__ = [
    "BackgroundNormalized",
    "author_groups",
    "background_pool",
    "iterated_snorm_reference",
    "snorm_reference",
]

#: a side whose pool scores barely vary carries no scale: its std is floored here
_MIN_STD = 1e-6


def background_pool(X: Corpus | PairSet, size: int, seed: int) -> list[str]:
    """Up to ``size`` distinct training texts of ``X``, drawn with ``seed``, in their order."""
    if isinstance(X, Corpus):
        texts = list(dict.fromkeys(X.texts))
    else:
        texts = list(dict.fromkeys([t for k in X.known for t in k] + X.unknown))
    if len(texts) <= size:
        return texts
    pick = np.random.default_rng(seed).choice(len(texts), size=size, replace=False)
    return [texts[i] for i in np.sort(pick)]


def top_up(background: list[str], called, n: int) -> list[int]:
    """Indices of the first ``n`` texts of ``background`` not in ``called``: the training texts
    that fill a transductive reference up when a call holds too few texts of its own."""
    return [i for i, t in enumerate(background) if t not in called][: max(n, 0)]


def author_groups(X: Corpus | PairSet) -> dict[str, int]:
    """A group id per training text of ``X``: texts the data ties to one author share it (see
    the module docstring)."""
    if isinstance(X, Corpus):
        names = {a: i for i, a in enumerate(dict.fromkeys(X.authors))}
        return {t: names[a] for t, a in zip(X.texts, X.authors)}
    parent: dict[str, str] = {}

    def root(t: str) -> str:
        parent.setdefault(t, t)
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    labels = X.labels if X.labelled else np.zeros(len(X), dtype=bool)
    for known, unknown, same in zip(X.known, X.unknown, labels):
        tied = [*known, unknown] if same else list(known)
        for t in (*known, unknown):
            root(t)
        for t in tied[1:]:
            parent[root(t)] = root(tied[0])
    ids: dict[str, int] = {}
    return {t: ids.setdefault(root(t), len(ids)) for t in list(parent)}


def _kept(other_text, other_author) -> np.ndarray:
    """Which pool scores each row keeps: the other authors' texts, or, in a row where no pool
    text is by another author, every text but its own."""
    text, author = np.array(other_text, dtype=bool), np.array(other_author, dtype=bool)
    keep = text & author
    return np.where(keep.any(axis=1)[:, None], keep, text).reshape(len(other_text), -1)


def _side_stats(scores: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and floored std (ddof 0) of each row's kept pool scores; rows keep >= 1 score."""
    n = keep.sum(axis=1)
    mean = np.where(keep, scores, 0.0).sum(axis=1) / n
    var = np.where(keep, (scores - mean[:, None]) ** 2, 0.0).sum(axis=1) / n
    return mean, np.maximum(np.sqrt(var), _MIN_STD)


def snorm_reference(score: float, known_pool: list[float], unknown_pool: list[float]) -> float:
    """The s-norm of one raw score given each side's scores with the pool, as the formula in
    the module docstring reads (the vectorised kernel must agree with it)."""
    k, u = np.asarray(known_pool, dtype=float), np.asarray(unknown_pool, dtype=float)
    return float(
        (score - k.mean()) / max(k.std(), _MIN_STD) + (score - u.mean()) / max(u.std(), _MIN_STD)
    )


def _iterated_snorm(
    scores: np.ndarray,
    k_scores: np.ndarray,
    u_scores: np.ndarray,
    pool_scores: np.ndarray | None,
    keeps: tuple[np.ndarray, np.ndarray, np.ndarray | None],
    rounds: int,
) -> np.ndarray:
    """``rounds`` s-norms in a row (see ``rounds`` of :class:`BackgroundNormalized`).

    ``scores`` (n,): raw pair scores; ``k_scores`` / ``u_scores`` (n, m): each pair's known /
    unknown side against the m pool texts (pool texts in the unknown / known role);
    ``pool_scores`` (m, m): pool against pool (rows known, columns unknown; None for one
    round); ``keeps``: which of those scores each row's statistics read (a pool text's column
    statistics read the transposed mask). Each round standardises every score by the
    statistics, against the pool, of both texts it joins, on the previous round's scores."""
    k_keep, u_keep, pool_keep = keeps
    s, k, u, pp = scores, k_scores, u_scores, pool_scores
    for r in range(rounds):
        k_mean, k_std = _side_stats(k, k_keep)
        u_mean, u_std = _side_stats(u, u_keep)
        s = (s - k_mean) / k_std + (s - u_mean) / u_std
        if r + 1 < rounds:
            # a pool text's statistics as a known text (its row) and as an unknown (column)
            row_mean, row_std = _side_stats(pp, pool_keep)
            col_mean, col_std = _side_stats(pp.T, pool_keep.T)
            k = (k - k_mean[:, None]) / k_std[:, None] + (k - col_mean) / col_std
            u = (u - u_mean[:, None]) / u_std[:, None] + (u - row_mean) / row_std
            pp = (pp - row_mean[:, None]) / row_std[:, None] + (pp - col_mean) / col_std
    return s


def iterated_snorm_reference(
    score: float,
    known_pool: list[float],
    unknown_pool: list[float],
    pool_pool: list[list[float]],
    rounds: int,
    kept: list[bool] | None = None,
) -> float:
    """``rounds`` s-norms of one raw score, written out one text at a time (the vectorised
    kernel must agree with it): each side's scores with the m pool texts, of which a side's
    statistics read those ``kept`` (default all), and the pool's (m, m) scores with itself,
    a pool text's statistics reading every pool text but itself."""
    m = len(pool_pool)
    kept = [True] * m if kept is None else list(kept)
    s, k, u = float(score), list(known_pool), list(unknown_pool)
    pp = [list(row) for row in pool_pool]

    def stats(values):
        return float(np.mean(values)), max(float(np.std(values)), _MIN_STD)

    for r in range(rounds):
        km, ks = stats([k[p] for p in range(m) if kept[p]])
        um, us = stats([u[p] for p in range(m) if kept[p]])
        s = (s - km) / ks + (s - um) / us
        if r + 1 < rounds:
            rows = [stats([pp[p][q] for q in range(m) if q != p]) for p in range(m)]
            cols = [stats([pp[q][p] for q in range(m) if q != p]) for p in range(m)]
            k = [(k[p] - km) / ks + (k[p] - cols[p][0]) / cols[p][1] for p in range(m)]
            u = [(u[p] - um) / us + (u[p] - rows[p][0]) / rows[p][1] for p in range(m)]
            pp = [
                [
                    (pp[p][q] - rows[p][0]) / rows[p][1] + (pp[p][q] - cols[q][0]) / cols[q][1]
                    for q in range(m)
                ]
                for p in range(m)
            ]
    return s


class BackgroundNormalized(VerifierWrapper):
    """Any similarity verifier, s-normalised against a background pool of training texts.

    Parameters
    ----------
    verifier : the unfitted inner verifier (higher score = more similar).
    n_background : pool size (texts drawn from the training data).
    grey_zone, objective : as :class:`~baselines.calibration.ScoreCalibrator` (Platt scaling
        is always on: ``z`` is unbounded).
    n_pairs, random_state : training pairs drawn from a Corpus, and the seed of that draw and
        of the pools'.
    transductive : after ``fit``, normalise each call's scores against a pool of that call's
        own texts (see the module docstring); the training pool tops it up when the call
        holds fewer than ``n_background`` texts.
    rounds : how many s-norms in a row. Round 2 standardises the s-normed score again by the
        statistics of each side's s-normed scores with the pool, whose texts are s-normed
        against the pool as well (the pool's scores with itself: ``n_background**2`` more
        inner scores), and so on; see the module docstring.

    Attributes: ``verifier_``, ``background_`` (the pool), ``authors_`` (an author group per
    training text, :func:`author_groups`), ``calibrator_``.
    """

    requires_fit = True

    def __init__(
        self,
        verifier: Verifier,
        n_background: int = 100,
        grey_zone: bool = True,
        objective: str = "pan21",
        n_pairs: int = 200,
        transductive: bool = False,
        rounds: int = 1,
        random_state: int = 0,
    ):
        self.verifier = verifier
        self.n_background = n_background
        self.grey_zone = grey_zone
        self.objective = objective
        self.n_pairs = n_pairs
        self.transductive = transductive
        self.rounds = rounds
        self.random_state = random_state

    def _fit_impl(self, X, y) -> None:
        if int(self.n_background) < 2:
            raise ValueError(f"n_background must be >= 2, got {self.n_background!r}")
        if not isinstance(self.rounds, int | np.integer) or self.rounds < 1:
            raise ValueError(f"rounds must be an integer >= 1, got {self.rounds!r}")
        pairs = training_pairs(X, n_pairs=self.n_pairs, seed=self.random_state)
        super()._fit_impl(X, y)
        self.background_ = background_pool(X, int(self.n_background), self.random_state)
        self.authors_ = author_groups(X)
        if len(self.background_) < 3:
            raise ValueError(
                f"{type(self).__name__} needs at least 3 distinct training texts "
                f"for its background pool, got {len(self.background_)}"
            )
        raw = self.verifier_.score_problems(pairs)
        z = self.normalise(raw, pairs.known, pairs.unknown)
        self.calibrator_ = ScoreCalibrator(
            platt=True, grey_zone=self.grey_zone, objective=self.objective
        ).fit(z, pairs.labels)

    def normalise(
        self,
        scores: np.ndarray,
        known: list[list[str]],
        unknown: list[str],
        pool: list[str] | None = None,
    ) -> np.ndarray:
        """s-norm ``z`` of raw inner scores of (known[i], unknown[i]) (see the module
        docstring) against ``pool`` (default: the training pool ``background_``). Each
        distinct known list (its texts joined, as the default problem kernel scores it) and
        each distinct unknown text is scored against the pool once, by the inner verifier's
        ``score_cross``, in the role it has in the pair; each side's statistics leave out its
        own texts (with ``transductive``, both texts of its pair)."""
        pool = self.background_ if pool is None else pool
        keys = list(dict.fromkeys(tuple(k) for k in known))
        texts = list(dict.fromkeys(unknown))
        ki = {k: i for i, k in enumerate(keys)}
        ui = {t: i for i, t in enumerate(texts)}
        rk = np.array([ki[tuple(k)] for k in known], dtype=np.intp)
        ru = np.array([ui[t] for t in unknown], dtype=np.intp)
        k_scores = self.verifier_.score_cross(join_known(keys), pool)[rk]
        u_scores = self.verifier_.score_cross(pool, texts).T[ru]
        # a side's own texts are no background for it; with ``transductive`` neither are its
        # partner's (a call's pool holds both texts of its pairs)
        where, partner = {p: j for j, p in enumerate(pool)}, bool(self.transductive)
        k_text = np.ones((len(known), len(pool)), dtype=bool)
        u_text = np.ones((len(known), len(pool)), dtype=bool)
        for i, (k, u) in enumerate(zip(known, unknown)):
            own_k = [where[t] for t in k if t in where]
            own_u = [where[u]] if u in where else []
            k_text[i, own_k + (own_u if partner else [])] = False
            u_text[i, own_u + (own_k if partner else [])] = False
        group = self.authors_.get
        pool_groups = np.array([group(p, -1) for p in pool])
        k_groups = [{group(t, -2) for t in k} for k in keys]
        shape = (-1, len(pool))
        # False where a pool text's author is one of the side's own: marked through each
        # author's pool columns, not one comparison per key and pool text (20,495 keys in five
        # one-to-many cells on Blog: 1.2 s)
        columns: dict = {}
        for j, g in enumerate(pool_groups.tolist()):
            columns.setdefault(g, []).append(j)
        k_author = np.ones((len(keys), len(pool)), dtype=bool)
        for i, own in enumerate(k_groups):
            for g in own:
                k_author[i, columns.get(g, [])] = False
        u_author = np.array([pool_groups != group(t, -2) for t in texts], dtype=bool)
        k_keep = _kept(k_text, k_author.reshape(shape)[rk])
        u_keep = _kept(u_text, u_author.reshape(shape)[ru])
        s = np.asarray(scores, dtype=np.float64)
        rounds, pool_scores, pool_keep = int(self.rounds), None, None
        if rounds > 1:
            # a pool text's own statistics leave out itself and the texts the training data
            # ties to its author
            same = pool_groups[:, None] == pool_groups[None, :]
            pool_keep = _kept(~np.eye(len(pool), dtype=bool), ~(same & (pool_groups >= 0)))
            pool_scores = self.verifier_.score_cross(pool, pool)
        keeps = (k_keep, u_keep, pool_keep)
        return _iterated_snorm(s, k_scores, u_scores, pool_scores, keeps, rounds)

    def call_pool(self, known: list[list[str]], unknown: list[str]) -> list[str]:
        """The pool a scoring call normalises against: ``background_``, or with
        ``transductive`` up to ``n_background`` of the call's own distinct texts (known and
        unknown, drawn with ``random_state``), topped up from ``background_`` when the call
        has fewer."""
        if not self.transductive:
            return self.background_
        n = int(self.n_background)
        called = dict.fromkeys([t for k in known for t in k] + list(unknown))
        texts = [t for t in called if has_text(t)]
        if len(texts) > n:
            rng = np.random.default_rng(self.random_state)
            return [texts[i] for i in np.sort(rng.choice(len(texts), size=n, replace=False))]
        extra = top_up(self.background_, set(texts), n - len(texts))
        return texts + [self.background_[i] for i in extra]

    def _scores_out(self, scores, known, unknown, ranking):
        z = self.normalise(scores, known, unknown, self.call_pool(known, unknown))
        out = self.calibrator_.probabilities(z) if ranking else self.calibrator_.transform(z)
        out[scores == NO_ANSWER] = NO_ANSWER
        return out
