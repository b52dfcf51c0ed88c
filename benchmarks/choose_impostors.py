"""Which score General Impostors verifies with: training data only.

Usage::

    python -m benchmarks.choose_impostors [--parts cross,halves] [--seeds 0,1,2] [--csv out.csv]

Where authors repeat (AIDBench's corpora: 62 IMDb62 authors, their other texts in the impostor
pool), the win rate saturates: on IMDb62's one-to-one 150/50 task (seed 0) 42 % of the training
pairs' and 49 % of the test pairs' same-author problems win no iteration, as different-author
ones do. Ranking already reads the continuous margin (``_impostor_margins``). Candidates,
each fitted and scored as ``choose_transductive``'s verification parts do (``cross``: fitted on
one English PAN training set, scored on another's; ``halves``: fitted on half of a training
set's authors or problems and scored on the other half, seeds 0-2):

- ``wins``: the registered verifier (win rate, score shifting);
- ``margin``: the mean margin mapped onto [0, 1], the same score shifting;
- ``margin-platt``: the margin through a Platt map, then the grey zone (as ``-cal`` does);
- ``margin-quantile``: the margin through its training quantiles, then the score shifting.

The rule, stated before the runs: a candidate replaces ``wins`` if its mean AUC x c@1 and mean
overall are at least ``wins``' on both parts.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
import pandas as pd

from baselines.calibration import ScoreCalibrator
from baselines.impostors import GeneralImpostors
from benchmarks.choose_ensemble import _halves, training_part
from benchmarks.choose_transductive import _ENGLISH, _HALVES, _verification
from stylo.datasets import load
from stylo.verifier import training_pairs


class _MarginImpostors(GeneralImpostors):
    """Verification by the margin instead of the win rate."""

    def _raw_scores(self, known_lists, unknowns, margin=False):
        return super()._raw_scores(known_lists, unknowns, margin=True)


class _MarginPlattImpostors(_MarginImpostors):
    """The margin through a Platt map, then the grey zone (built with ``shift=False``, so
    that the parent fits no score shifting of its own)."""

    def _fit_impl(self, X, y) -> None:
        super()._fit_impl(X, y)
        pairs = training_pairs(X, seed=self.random_state)
        raw = self._raw_scores(pairs.known, pairs.unknown)
        self.calibrator_ = ScoreCalibrator(objective=self.objective).fit(raw, pairs.labels)


class _MarginQuantileImpostors(_MarginImpostors):
    """The margin through the training pairs' empirical distribution of it (each score its
    mid-rank quantile among the training margins, interpolated; a thousandth of the margin
    itself added, so that scores beyond the training range keep their order), then the score
    shifting: the grey zone's grid then has the scores' whole range to cut."""

    def _fit_impl(self, X, y) -> None:
        pairs = training_pairs(X, seed=self.random_state)
        super()._fit_impl(X, y)  # built with shift=False: fits no calibrator of its own
        raw = super()._raw_scores(pairs.known, pairs.unknown)
        values, counts = np.unique(raw, return_counts=True)
        self.quantiles_ = (values, (np.cumsum(counts) - counts / 2.0) / counts.sum())
        q = self._quantile(raw)
        self.calibrator_ = ScoreCalibrator(platt=False, objective=self.objective)
        self.calibrator_.fit(q, pairs.labels)

    def _quantile(self, m: np.ndarray) -> np.ndarray:
        values, quantiles = self.quantiles_
        return 0.999 * np.interp(m, values, quantiles) + 0.001 * m

    def _shifted(self, raw: np.ndarray) -> np.ndarray:
        return self.calibrator_.transform(self._quantile(raw))


_CANDIDATES = {
    "wins": GeneralImpostors,
    "margin": _MarginImpostors,
    "margin-platt": lambda: _MarginPlattImpostors(shift=False),
    "margin-quantile": lambda: _MarginQuantileImpostors(shift=False),
}


def study(parts, seeds) -> pd.DataFrame:
    pairs = []
    if "cross" in parts:
        train = {n: load(n, split="train") for n in _ENGLISH}
        for a, b in itertools.permutations(train, 2):
            pairs.append(("cross", a, b, 0, train[a], train[b]))
    for name in _HALVES if "halves" in parts else ():
        for seed in seeds:
            data = load(name, split="train") if name.startswith("pan") else None
            fit, held = _halves(data or training_part(name, seed), seed)
            pairs.append(("halves", name, name, seed, fit, held))
    rows = []
    for part, fitted_on, scored, seed, fit, held in pairs:
        for cand, make in _CANDIDATES.items():
            row = dict(part=part, fitted_on=fitted_on, scored=scored, seed=seed, candidate=cand)
            rows.append({**row, "n": len(held), **_verification(fit, held)(make())})
            print({k: round(v, 3) if isinstance(v, float) else v for k, v in rows[-1].items()})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="cross,halves")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--csv")
    args = ap.parse_args(argv)
    parts = {p for p in args.parts.split(",") if p}
    if not parts or parts - {"cross", "halves"}:
        ap.error(f"--parts takes some of cross, halves, got {args.parts!r}")
    table = study(parts, [int(s) for s in args.seeds.split(",")])
    if args.csv:
        table.to_csv(args.csv, index=False)
    means = table.pivot_table(index="part", columns="candidate", values=["auc_c1", "overall"])
    print(means.round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
