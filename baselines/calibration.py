"""Calibration for any verifier: Platt scaling plus a grey zone of non-answers.

PAN scores verification answers with metrics that reward leaving hard problems unanswered
(score exactly 0.5). PAN's baselines (pan-code ``pan20-verif-baseline.py``, "cngdist") and
Kestemont et al.'s score shifting (Kestemont, Stover, Koppel, Karsdorp & Daelemans,
"Authenticating the writings of Julius Caesar", Expert Systems with Applications 63, 2016;
code ``mikekestemont/ruzicka``) therefore fit two thresholds p1 <= p2 on training scores and
map

    s <= p1       ->  0.49 * s / p1                        (in [0, 0.49], "different")
    p1 < s < p2   ->  0.5                                  (no answer)
    s >= p2       ->  0.51 + 0.49 * (s - p2) / (1 - p2)    (in [0.51, 1], "same")

with (p1, p2) found by a grid search (steps of 0.01 on [0.01, 0.98], p1 < p2) that maximises
a PAN score on the training pairs. Optionally a logistic (Platt 1999) map turns raw scores into
probabilities first, or (``quantiles``) each raw score becomes its mid-rank quantile among the
training scores, for raw scores crowded in a narrow band where the 0.01 grid would leave few
cuts (General Impostors' impostor margins).

:class:`ScoreCalibrator` is that map on arrays of raw scores; :class:`Calibrated` wraps any
:class:`~stylo.verifier.Verifier`. Objectives (``objective=``), all from :mod:`stylo.metrics`:

- ``"pan21"`` (default): mean of AUC, c@1, F1, F0.5u and 1 - Brier (PAN 2021+ "overall").
- ``"pan20-baseline"``: mean of AUC, c@1, F1 and F0.5u (non-answers counted with the false
  negatives) -- what pan-code's cngdist baseline maximises with the evaluator it ships.
- ``"auc_c1"``: AUC x c@1, the PAN 2013-2015 final score.

As in pan-code, each grid cell's objective is rounded to ``decimals`` digits and the first best
cell in grid order (lowest p1, then lowest p2) wins.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from baselines._blas import fit_one_thread
from stylo.metrics import pan
from stylo.verifier import NO_ANSWER, Verifier, training_pairs
from stylo.verifier_wrapper import VerifierWrapper

__all__ = ["OBJECTIVES", "ScoreCalibrator", "Calibrated", "CalibratedVerifier", "shift_scores"]

#: metric keys of each objective; "auc_c1" is a product, the others a mean
OBJECTIVES = {
    "pan21": ("auc", "c@1", "F1", "f_05_u", "brier"),
    "pan20-baseline": ("auc", "c@1", "F1", "f_05_u"),
    "auc_c1": ("auc", "c@1"),
}
_METRICS = {
    "auc": pan.auc,
    "c@1": pan.c_at_1,
    "F1": pan.f1,
    "f_05_u": lambda t, s: pan.f_05_u(t, s, version="pan21"),
    "brier": pan.brier,
}


def shift_scores(scores, p1: float, p2: float) -> np.ndarray:
    """Apply the grey-zone map above to raw scores in [0, 1]; shape preserved."""
    s = np.asarray(scores, dtype=np.float64)
    if not 0.0 < p1 <= p2 < 1.0:
        raise ValueError(f"need 0 < p1 <= p2 < 1, got p1={p1}, p2={p2}")
    return np.where(s <= p1, _below(s, p1), np.where(s < p2, NO_ANSWER, _above(s, p2)))


# the same float operations as pan-code's rescale(), so shifted scores agree bit for bit
def _below(s: np.ndarray, p1: float) -> np.ndarray:
    return 0.0 + ((s - 0.0) / (p1 - 0.0)) * 0.49


def _above(s: np.ndarray, p2: float) -> np.ndarray:
    return 0.51 + ((s - p2) / (1.0 - p2)) * 0.49


def _combine(objective: str, keys: tuple[str, ...], values: dict[str, float]) -> float:
    if objective == "auc_c1":
        return values["auc"] * values["c@1"]
    return float(np.mean([values[k] for k in keys]))


def _combined(objective: str, keys: tuple[str, ...], metrics: dict[str, np.ndarray]) -> np.ndarray:
    """:func:`_combine` for every cell at once: NumPy's mean of a short row adds its values in
    order from the first, as a column-wise sum of the stacked rows does, so each cell's value
    is bit for bit the per-cell one."""
    if objective == "auc_c1":
        return metrics["auc"] * metrics["c@1"]
    return np.mean(np.vstack([metrics[k] for k in keys]), axis=0)


def _fit_grey_zone(
    scores: np.ndarray, y: np.ndarray, objective: str, grid: np.ndarray, decimals: int
) -> tuple[float, float, float]:
    """Best (p1, p2, objective value) over all grid cells p1 < p2, as
    :func:`_fit_grey_zone_reference` finds it, bit for bit, in a fraction of the time.

    Why it can be fast and still exact: the shift keeps the order of scores below p1 and above
    p2 and ties everything between at 0.5, so with the scores sorted once, a cell's AUC, c@1, F1
    and F0.5u follow from counts (and rank sums) below and above its two cuts, computed for all
    cells at once with the same integer/float operations as ``stylo.metrics.pan``. The
    Mann-Whitney rank sums are sums of half-integers, hence exact in any order. The one exception,
    two distinct scores that the shift rounds to the same float (a tie the sorted counts cannot
    see), is detected per cut, and such cells take their AUC from the shifted values
    (:func:`_auc_rows`). The Brier term needs the shifted values too: :func:`_brier_rows`
    computes them for blocks of cells with the expression of :func:`shift_scores`. Each cell is
    rounded with Python's own round, as in the reference; the first best cell wins, as there.
    """
    keys = OBJECTIVES[objective]
    s = np.asarray(scores, dtype=np.float64)
    t = np.asarray(y, dtype=bool)
    n, n_pos = len(s), int(t.sum())
    n_neg = n - n_pos
    order = np.argsort(s, kind="stable")
    ss, ts = s[order], t[order]
    cum_pos = np.r_[0, np.cumsum(ts)]
    cum_neg = np.arange(n + 1) - cum_pos
    ranks = rankdata(ss)
    cum_rank_pos = np.r_[0.0, np.cumsum(np.where(ts, ranks, 0.0))]
    cells = list(combinations(grid, 2))
    p1 = np.array([c[0] for c in cells])
    p2 = np.array([c[1] for c in cells])
    lo = np.searchsorted(ss, p1, "right")  # scores <= p1: "different"
    hi = np.searchsorted(ss, p2, "left")  # scores >= p2 from here on: "same"
    low_pos, low_neg = cum_pos[lo], cum_neg[lo]
    high_pos, high_neg = n_pos - cum_pos[hi], n_neg - cum_neg[hi]
    n_u = hi - lo
    metrics = {}
    if "auc" in keys:
        mid_pos = cum_pos[hi] - cum_pos[lo]
        u = (
            cum_rank_pos[lo]
            + (cum_rank_pos[n] - cum_rank_pos[hi])
            + mid_pos * ((lo + 1 + hi) / 2.0)
            - n_pos * (n_pos + 1) / 2.0
        )
        metrics["auc"] = u / (n_pos * n_neg) if n_pos and n_neg else np.zeros(len(cells))
    n_c = low_neg + high_pos
    metrics["c@1"] = (n_c + n_u * n_c / n) / n
    if "F1" in keys:
        denom = 2 * high_pos + high_neg + low_pos
        metrics["F1"] = np.where(denom > 0, 2 * high_pos / np.maximum(denom, 1), 0.0)
    if "f_05_u" in keys:
        denom = 1.25 * high_pos + 0.25 * (low_pos + n_u) + high_neg
        metrics["f_05_u"] = np.where(
            denom > 0, 1.25 * high_pos / np.where(denom > 0, denom, 1), 0.0
        )
    if "brier" in keys:
        metrics["brier"] = _brier_rows(s, t, p1, p2)
    exact = _order_kept(ss, grid)
    tied = np.flatnonzero([not (exact[a] and exact[b]) for a, b in cells])
    if "auc" in keys and len(tied):
        metrics["auc"][tied] = _auc_rows(s, t, p1[tied], p2[tied])
    values = _combined(objective, keys, metrics)
    # Python's round (correctly rounded), not np.round, so cells tie as in the reference
    rounded = np.array([round(v, decimals) for v in values.tolist()])
    # the first best cell in grid order, as the reference's strict ">" keeps it
    rounded = np.where(np.isnan(rounded), -np.inf, rounded)
    c = int(np.argmax(rounded))
    if rounded[c] == -np.inf:
        return np.nan, np.nan, -np.inf
    return float(cells[c][0]), float(cells[c][1]), float(rounded[c])


def _shifted_blocks(s: np.ndarray, p1: np.ndarray, p2: np.ndarray, chunk: int = 512):
    """(start, rows) for blocks of cells: each row ``shift_scores(s, p1[c], p2[c])``, by the
    same expression."""
    for start in range(0, len(p1), chunk):
        a = p1[start : start + chunk, None]
        b = p2[start : start + chunk, None]
        yield start, np.where(s <= a, _below(s, a), np.where(s < b, NO_ANSWER, _above(s, b)))


def _brier_rows(s: np.ndarray, t: np.ndarray, p1: np.ndarray, p2: np.ndarray) -> np.ndarray:
    """``pan.brier(t, shift_scores(s, p1[c], p2[c]))`` for every cell c (a row-wise mean of a
    C-contiguous block sums each row exactly as a 1-D mean does)."""
    out = np.empty(len(p1))
    for start, shifted in _shifted_blocks(s, p1, p2):
        out[start : start + len(shifted)] = 1.0 - np.mean((shifted - t) ** 2, axis=1)
    return out


def _auc_rows(s: np.ndarray, t: np.ndarray, p1: np.ndarray, p2: np.ndarray) -> np.ndarray:
    """``pan.auc(t, shift_scores(s, p1[c], p2[c]))`` for every cell c, from the shifted values
    themselves: for the cells whose shift rounds distinct scores to one float, a tie the
    sorted counts cannot see. Rank sums are sums of half-integers, exact in any order."""
    n_pos = int(t.sum())
    n_neg = len(t) - n_pos
    out = np.zeros(len(p1))
    if n_pos == 0 or n_neg == 0:
        return out
    for start, shifted in _shifted_blocks(s, p1, p2):
        u = rankdata(shifted, axis=1)[:, t].sum(axis=1) - n_pos * (n_pos + 1) / 2.0
        out[start : start + len(shifted)] = u / (n_pos * n_neg)
    return out


def _order_kept(sorted_scores: np.ndarray, grid: np.ndarray) -> dict[float, bool]:
    """For each cut value, whether the shift keeps distinct scores on its side distinct
    (below it as p1, above it as p2)."""
    step_up = np.diff(sorted_scores) > 0
    out = {}
    for cut in grid:
        below = step_up & (sorted_scores[1:] <= cut)
        above = step_up & (sorted_scores[:-1] >= cut)
        out[cut] = bool(
            np.all(np.diff(_below(sorted_scores, cut))[below] > 0)
            and np.all(np.diff(_above(sorted_scores, cut))[above] > 0)
        )
    return out


def _fit_grey_zone_reference(
    scores: np.ndarray, y: np.ndarray, objective: str, grid: np.ndarray, decimals: int
) -> tuple[float, float, float]:
    """Best (p1, p2, objective value) over all grid cells p1 < p2: the plain search, every
    cell shifted and scored with ``stylo.metrics.pan`` as pan-code does; :func:`_fit_grey_zone`
    gives the same answer."""
    keys = OBJECTIVES[objective]
    best = (np.nan, np.nan, -np.inf)
    for p1, p2 in combinations(grid, 2):
        shifted = shift_scores(scores, p1, p2)
        values = {k: _METRICS[k](y, shifted) for k in keys}
        value = round(_combine(objective, keys, values), decimals)
        if value > best[2]:
            best = (float(p1), float(p2), value)
    return best


#: logit rise over the training scores' range of a Platt map that found no increasing fit
_FLAT_SLOPE = 1e-6


class ScoreCalibrator(BaseEstimator):
    """Map raw verification scores to PAN answers: optional Platt scaling, then the grey zone.

    Parameters
    ----------
    platt : fit a logistic map of the raw score first (needed when raw scores are not in
        [0, 1] or not probability-like); without it raw scores must lie in [0, 1]. The map
        never decreases: when the training scores do not order the labels (a fitted slope
        <= 0), it is flat at the training share of same-author pairs but still rises, by
        ``_FLAT_SLOPE`` over the scores' spread, so ranks keep the raw scores' order. A
        falling map would rank every candidate backwards (``naive-norm`` on one Guardian
        one-to-two seed: slope -0.038, accuracy 39.5 %).
    quantiles : instead of Platt scaling, map each score to its mid-rank quantile among the
        training scores (interpolated between them), plus a thousandth of the score itself, so
        that scores past the training range keep their order; scores must lie in [0, 1].
    grey_zone : fit (p1, p2) and shift scores as in the module docstring; without it the
        (Platt-scaled or quantile-mapped) scores are returned as they are.
    objective : ``"pan21"``, ``"pan20-baseline"`` or ``"auc_c1"`` (see the module docstring).
    grid_step : spacing of the p1/p2 grid on [grid_step, 1 - 2 * grid_step].
    decimals : the objective is rounded to this many digits before comparing cells.

    Attributes: ``platt_`` (LogisticRegression or None), ``quantiles_`` (the distinct training
    scores and their mid-rank quantiles, or None), ``p1_``, ``p2_`` (None without a grey zone)
    and ``train_objective_`` (the rounded objective of the chosen cell).
    """

    def __init__(
        self,
        platt: bool = True,
        grey_zone: bool = True,
        objective: str = "pan21",
        grid_step: float = 0.01,
        decimals: int = 3,
        quantiles: bool = False,
    ):
        self.platt = platt
        self.quantiles = quantiles
        self.grey_zone = grey_zone
        self.objective = objective
        self.grid_step = grid_step
        self.decimals = decimals

    def fit(self, scores, y):
        """Fit on raw scores (n,) of labelled training pairs y (n,) bool; returns self."""
        s = np.asarray(scores, dtype=np.float64)
        y = np.asarray(y).astype(bool)
        if s.ndim != 1 or s.shape != y.shape:
            raise ValueError(f"scores and y must be 1-D of equal length, got {s.shape}, {y.shape}")
        if not np.isfinite(s).all():
            raise ValueError("raw scores must be finite to calibrate")
        if y.all() or not y.any():
            raise ValueError("calibration needs both same-author and different-author pairs")
        if self.objective not in OBJECTIVES:
            raise ValueError(
                f"unknown objective {self.objective!r}; choose from {sorted(OBJECTIVES)}"
            )
        if not 0.0 < self.grid_step < 0.25:
            raise ValueError(f"grid_step must be in (0, 0.25), got {self.grid_step}")
        if self.platt and self.quantiles:
            raise ValueError("platt and quantiles are two first maps: choose one")
        self.platt_ = self.quantiles_ = None
        if self.platt:
            self.platt_ = fit_one_thread(LogisticRegression(), s[:, None], y)
            if not self.platt_.coef_[0, 0] > 0:
                spread = float(s.max() - s.min()) or 1.0
                self.platt_.coef_[0, 0] = _FLAT_SLOPE / spread
                self.platt_.intercept_[0] = np.log(y.mean() / (1 - y.mean())) - (
                    _FLAT_SLOPE / spread * s.mean()
                )
            s = self.platt_.predict_proba(s[:, None])[:, 1]
        elif s.min() < 0.0 or s.max() > 1.0:
            raise ValueError("raw scores outside [0, 1]: use platt=True")
        elif self.quantiles:
            values, times = np.unique(s, return_counts=True)
            self.quantiles_ = (values, (np.cumsum(times) - times / 2.0) / times.sum())
            s = self._quantile(s)
        self.p1_ = self.p2_ = None
        if self.grey_zone:
            # np.arange as pan-code builds it, so the grid values are the same floats
            grid = np.arange(self.grid_step, 1.0 - self.grid_step, self.grid_step)
            self.p1_, self.p2_, self.train_objective_ = _fit_grey_zone(
                s, y, self.objective, grid, self.decimals
            )
        else:
            self.train_objective_ = np.nan
        return self

    def probabilities(self, scores) -> np.ndarray:
        """Platt-scaled scores (the raw scores without Platt): monotone, no grey zone."""
        if not hasattr(self, "platt_"):
            raise NotFittedError("ScoreCalibrator is not fitted yet; call fit first")
        s = np.asarray(scores, dtype=np.float64)
        if self.platt_ is not None:
            return self.platt_.predict_proba(s[:, None])[:, 1]
        if self.quantiles_ is not None:
            s = self._quantile(s)
        return np.clip(s, 0.0, 1.0)

    def _quantile(self, s: np.ndarray) -> np.ndarray:
        values, quantiles = self.quantiles_
        return 0.999 * np.interp(s, values, quantiles) + 0.001 * s

    def transform(self, scores) -> np.ndarray:
        """PAN answers (n,) in [0, 1] for raw scores (n,)."""
        p = self.probabilities(scores)
        if self.p1_ is None:
            return p
        return shift_scores(p, self.p1_, self.p2_)


class CalibratedVerifier(VerifierWrapper):
    """Base for a verifier whose answers are an inner verifier's scores through a calibrator.

    Subclasses say how to build the calibrator (``_make_calibrator``) and, unless they take a
    ``verifier`` parameter, the inner verifier (``_make_inner``). ``fit(X)`` fits the inner
    verifier on ``X``, scores the training pairs with it (a PairSet as given; from a Corpus,
    ``n_pairs`` pairs drawn with ``random_state``) and fits the calibrator on those in-sample
    scores, as PAN's baselines do. An answer of exactly 0.5 from the inner verifier (its
    abstention) stays 0.5. ``rank`` uses the Platt-scaled scores without the grey zone, so
    candidates inside the zone are not tied.
    """

    #: the calibrator needs training scores, whatever the inner verifier needs
    requires_fit = True
    n_pairs: int = 200
    random_state: int = 0

    def _make_calibrator(self) -> ScoreCalibrator:
        raise NotImplementedError

    def _fit_impl(self, X, y) -> None:
        pairs = training_pairs(X, n_pairs=self.n_pairs, seed=self.random_state)
        super()._fit_impl(X, y)
        raw = self.verifier_.score_problems(pairs)
        self.calibrator_ = self._make_calibrator().fit(raw, pairs.labels)

    def _scores_out(self, scores, known, unknown, ranking):
        if ranking:
            return self.calibrator_.probabilities(scores)
        out = self.calibrator_.transform(scores)
        out[scores == NO_ANSWER] = NO_ANSWER
        return out


class Calibrated(CalibratedVerifier):
    """Any verifier followed by a :class:`ScoreCalibrator` (parameters as there)."""

    def __init__(
        self,
        verifier: Verifier,
        platt: bool = True,
        grey_zone: bool = True,
        objective: str = "pan21",
        grid_step: float = 0.01,
        decimals: int = 3,
        n_pairs: int = 200,
        random_state: int = 0,
    ):
        self.verifier = verifier
        self.platt = platt
        self.grey_zone = grey_zone
        self.objective = objective
        self.grid_step = grid_step
        self.decimals = decimals
        self.n_pairs = n_pairs
        self.random_state = random_state

    def _make_calibrator(self) -> ScoreCalibrator:
        return ScoreCalibrator(
            self.platt, self.grey_zone, self.objective, self.grid_step, self.decimals
        )
