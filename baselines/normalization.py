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

Cost: each distinct text (each distinct known list) of a call is scored against the pool once,
through the inner verifier's ``score_cross`` (one matrix product for a cosine), whatever the
number of pairs it appears in.
"""

from __future__ import annotations

import numpy as np

from baselines.calibration import ScoreCalibrator
from stylo.corpus import Corpus, PairSet, join_known
from stylo.text_input import has_text
from stylo.verifier import NO_ANSWER, Verifier, training_pairs
from stylo.verifier_wrapper import VerifierWrapper

__all__ = ["BackgroundNormalized", "author_groups", "background_pool", "snorm_reference"]

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
        random_state: int = 0,
    ):
        self.verifier = verifier
        self.n_background = n_background
        self.grey_zone = grey_zone
        self.objective = objective
        self.n_pairs = n_pairs
        self.transductive = transductive
        self.random_state = random_state

    def _fit_impl(self, X, y) -> None:
        if int(self.n_background) < 2:
            raise ValueError(f"n_background must be >= 2, got {self.n_background!r}")
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
        k_mean, k_std = _side_stats(k_scores, _kept(k_text, k_author.reshape(shape)[rk]))
        u_mean, u_std = _side_stats(u_scores, _kept(u_text, u_author.reshape(shape)[ru]))
        s = np.asarray(scores, dtype=np.float64)
        return (s - k_mean) / k_std + (s - u_mean) / u_std

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
