"""Whether the s-normalised verifiers normalise against the scored texts: training data only.

Usage::

    python -m benchmarks.choose_transductive [--methods cosine-norm,naive-norm,ensemble]
        [--parts cross,halves] [--seeds 0,1,2] [--csv out.csv]

:class:`~baselines.normalization.BackgroundNormalized` standardises a raw similarity against a
pool of other texts. Drawn from the training texts, the pool describes the training domain;
with ``transductive=True`` it is drawn from the texts of the call being scored, so that a test
set of another genre or length is measured against texts like its own. Each registered method
(``ensemble``: its s-normalised base) is fitted both ways and scored where no test item is read:

- ``cross``: domain shift inside training data: fitted on one English PAN training set
  (PAN13, PAN14 essays, PAN14 novels, PAN15) and scored on another's training problems;
- ``halves``: no shift: fitted on half of a training set's authors (AIDBench corpora: the grid
  task's training texts) or problems (PAN) and scored on 600 pairs of the other half (a PAN
  half: its own problems), as ``choose_ensemble`` does, seeds 0-2.

The figures are PAN's AUC x c@1 and overall (each method's grey zone is fitted for overall),
one row per method, part, fit set, scored set and seed, and each method's means per part.
"""

from __future__ import annotations

import argparse
import itertools

import pandas as pd
from sklearn.base import clone

from baselines.normalization import BackgroundNormalized
from baselines.registry import make
from benchmarks.choose_ensemble import _halves, training_part
from stylo.datasets import load
from stylo.metrics.pan import evaluate_all

_ENGLISH = ("pan13_av_en", "pan14_av/en_essays", "pan14_av/en_novels", "pan15_av_en")
_HALVES = (
    "pan15_av_en",
    "pan14_av/du_essays",
    "pan14_av/gr_articles",
    "pan14_av/sp_articles",
    "imdb62",
    "enron",
    "blog",
    "guardian",
)


def built(method: str, transductive: bool):
    """The registered ``method`` with every s-normalised part set to ``transductive``."""
    est = make(method, 0)
    if isinstance(est, BackgroundNormalized):
        return est.set_params(transductive=transductive)
    bases = tuple(
        clone(b).set_params(transductive=transductive)
        if isinstance(b, BackgroundNormalized)
        else clone(b)
        for b in est.bases
    )
    return est.set_params(bases=bases)


def _row(method, part, fitted_on, scored, seed, fit, held) -> list[dict]:
    rows = []
    for transductive in (False, True):
        got = built(method, transductive).fit(fit).score_problems(held)
        r = evaluate_all(held.labels.astype(float), got)
        rows.append(
            dict(
                method=method,
                part=part,
                fitted_on=fitted_on,
                scored=scored,
                seed=seed,
                transductive=transductive,
                n=len(held),
                auc_c1=r["auc"] * r["c@1"],
                overall=r["overall"],
            )
        )
    a, b = rows
    print(
        f"{method:12s} {part:6s} {fitted_on:20s} -> {scored:20s} seed {seed}  n {a['n']:4d}  "
        f"AUCxc@1 {a['auc_c1']:.3f} -> {b['auc_c1']:.3f}  overall {a['overall']:.3f} -> "
        f"{b['overall']:.3f}",
        flush=True,
    )
    return rows


def study(methods, parts, seeds) -> pd.DataFrame:
    rows = []
    train = {n: load(n, split="train") for n in _ENGLISH} if "cross" in parts else {}
    for method in methods:
        for a, b in itertools.permutations(train, 2):
            rows += _row(method, "cross", a, b, 0, train[a], train[b])
        for name in _HALVES if "halves" in parts else ():
            for seed in seeds:
                data = load(name, split="train") if name.startswith("pan") else None
                fit, held = _halves(data or training_part(name, seed), seed)
                rows += _row(method, "halves", name, name, seed, fit, held)
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="cosine-norm,naive-norm,ensemble")
    ap.add_argument("--parts", default="cross,halves")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--csv")
    args = ap.parse_args(argv)
    parts = {p for p in args.parts.split(",") if p}
    if not parts or parts - {"cross", "halves"}:
        ap.error(f"--parts takes cross and/or halves, got {args.parts!r}")
    table = study(
        [m for m in args.methods.split(",") if m],
        parts,
        [int(s) for s in args.seeds.split(",")],
    )
    if args.csv:
        table.to_csv(args.csv, index=False)
    means = table.pivot_table(
        index=["method", "part"], columns="transductive", values=["auc_c1", "overall"]
    )
    print(means.round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
