"""The training-only evidence ``ensemble``'s settings are chosen on.

Usage::

    python -m benchmarks.choose_ensemble [--datasets imdb62,enron,blog,guardian,pan15_av_en]
        [--seeds 0,1,2] [--candidates NAME,...] [--csv out.csv]

For every corpus and seed the grid's own task is sampled (AIDBench one-to-two for the AIDBench
corpora, the official training problems for PAN), and only its *training* part is read. That
part is split in two with the seed: by author for a Corpus (half the authors each), by
connected problems for a PairSet (:func:`baselines.ensemble.pair_groups`). Each candidate stack
is fitted on one half and scored on labelled pairs of the other (600 pairs drawn from a
Corpus half; a PairSet half's own problems), so the figure is a held-out-author AUC that no
test item enters. The table prints each candidate's AUC per corpus, the mean over corpora and
seeds, and its fit + score time; the registered ``ensemble`` is the candidate with the best
mean AUC, the cheaper one when two are within 0.005 (printed as ``chosen``).

Candidates differ in the number of folds, the size of the ``logreg-pair`` base and the base
pool (the meta-model weighs the bases on out-of-fold scores, so a larger pool is chosen only if
the meta-model makes use of it on held-out authors).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from baselines.ensemble import StackedVerifier, pair_groups
from baselines.registry import Construct, make
from stylo.corpus import Corpus, PairSet
from stylo.datasets import load
from stylo.protocols import PROTOCOLS
from stylo.verifier import training_pairs

_AIDBENCH = ("imdb62", "enron", "blog", "guardian")
_PAN = ("pan15_av_en",)
#: within this AUC the cheaper candidate is preferred
_TIE = 0.005
#: held-out pairs drawn from a Corpus half
_N_VAL_PAIRS = 600


def _logreg(**params):
    return Construct("baselines.pair_logistic:LogisticPairVerifier", params)


def _candidates() -> dict[str, StackedVerifier]:
    """Name -> unfitted stack; ``small`` is the registered stack's own base pool."""
    registered = make("ensemble", 0)
    parts = {type(b).__name__: b for b in registered.bases}
    norm, delta = parts["BackgroundNormalized"], parts["DeltaVerifier"]
    small = _logreg(n_pairs=400, max_features=5000)
    full = _logreg()
    lambdag = Construct("baselines.lambdag:LambdaG")
    cdm = Construct("baselines.compression:CompressionVerifier", {"measure": "cdm"})

    def stack(bases, n_folds):
        built = tuple(b.build() if isinstance(b, Construct) else clone(b) for b in bases)
        return clone(registered).set_params(bases=built, n_folds=n_folds)

    return {
        "2f-small": stack((norm, small, delta), 2),
        "3f-small": stack((norm, small, delta), 3),
        "2f-full": stack((norm, full, delta), 2),
        "3f-full": stack((norm, full, delta), 3),
        "2f-small+lambdag": stack((norm, small, delta, lambdag), 2),
        "2f-small+cdm": stack((norm, small, delta, cdm), 2),
        "3f-small+cdm": stack((norm, small, delta, cdm), 3),
        "2f-small+lambdag+cdm": stack((norm, small, delta, lambdag, cdm), 2),
        "3f-full+lambdag+cdm": stack((norm, full, delta, lambdag, cdm), 3),
    }


def _halves(train: Corpus | PairSet, seed: int):
    """(fit half, labelled held-out pairs) of a task's training data."""
    rng = np.random.default_rng([seed, 11])
    if isinstance(train, PairSet):
        groups = pair_groups(train)
        side = rng.permutation(groups.max() + 1) % 2
        fold = side[groups]
        return train.subset(fold == 0), train.subset(fold == 1)
    fit, held = author_halves(train, seed)
    return fit, training_pairs(held, n_pairs=_N_VAL_PAIRS, seed=seed)


def author_halves(train: Corpus, seed: int) -> tuple[Corpus, Corpus]:
    """(fit half, held half) of a Corpus, half its authors each, drawn with ``seed``."""
    rng = np.random.default_rng([seed, 11])
    names = np.unique(train.authors)
    side = dict(zip(names, rng.permutation(len(names)) % 2))
    fold = np.array([side[a] for a in train.authors])
    return (
        train.subset(fold == 0, name=f"{train.name}:fit"),
        train.subset(fold == 1, name=f"{train.name}:held"),
    )


def training_part(name: str, seed: int) -> Corpus | PairSet:
    """The training part of the grid's task on ``name`` (PAN's official training problems;
    AIDBench one-to-two's training texts, first setting, ``seed``)."""
    if name in _PAN:
        return load(name, split="train")
    protocol = PROTOCOLS["aidbench_one_to_two"]
    data = load(name)
    setting = protocol.settings(data)[0]
    return protocol.sample(data, setting, seed).train


def study(datasets, seeds, names) -> pd.DataFrame:
    rows = []
    for name in datasets:
        for seed in seeds:
            fit_half, held = _halves(training_part(name, seed), seed)
            for cand, est in _candidates().items():
                if names and cand not in names:
                    continue
                t0 = time.perf_counter()
                scores = clone(est).set_params(random_state=seed).fit(fit_half).score_problems(held)
                rows.append(
                    dict(
                        dataset=name,
                        seed=seed,
                        candidate=cand,
                        auc=roc_auc_score(held.labels, scores),
                        n=len(held),
                        seconds=time.perf_counter() - t0,
                    )
                )
                print(
                    f"{name:12s} seed {seed} {cand:18s} AUC {rows[-1]['auc']:.4f} "
                    f"n {len(held)}  {rows[-1]['seconds']:.1f} s",
                    flush=True,
                )
    return pd.DataFrame(rows)


def choose(table: pd.DataFrame) -> str:
    """The best mean AUC; the cheapest candidate within ``_TIE`` of it."""
    means = table.groupby("candidate").agg(auc=("auc", "mean"), seconds=("seconds", "median"))
    close = means[means.auc >= means.auc.max() - _TIE]
    return str(close.seconds.idxmin())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(_AIDBENCH + _PAN))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--candidates", default="")
    ap.add_argument("--csv")
    args = ap.parse_args(argv)
    names = [c for c in args.candidates.split(",") if c]
    unknown = sorted(set(names) - set(_candidates()))
    if unknown:
        ap.error(f"unknown candidate(s) {unknown}; known: {sorted(_candidates())}")
    table = study(
        [d for d in args.datasets.split(",") if d], [int(s) for s in args.seeds.split(",")], names
    )
    if args.csv:
        table.to_csv(args.csv, index=False)
    wide = table.pivot_table(index="candidate", columns="dataset", values="auc", aggfunc="mean")
    wide["mean"] = table.groupby("candidate").auc.mean()
    wide["median s"] = table.groupby("candidate").seconds.median()
    print(wide.round(4).sort_values("mean", ascending=False).to_string())
    print(f"chosen: {choose(table)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
