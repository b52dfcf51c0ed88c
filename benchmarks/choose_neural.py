"""The validation evidence ``bert-pair``'s and ``siamese-pair``'s registered settings are chosen on.

Usage::

    python -m benchmarks.choose_neural [--datasets guardian,blog] [--split closed]
        [--seed 0] [--models bert-pair,siamese-pair] [--n-jobs 1] [--csv out.csv]

For every corpus the reference grid's own Rethinking-AV task is sampled (first seed), and only
its ``train`` and ``val`` parts are read: each candidate is fitted on the training pairs and
scored on the validation pairs (AUC), so no test pair enters the choice. The table prints each
candidate's validation AUC per corpus, the mean, and its fit + score time; the registered
setting of a model is its candidate with the best mean AUC, the cheaper one when two are
within 0.01 (printed as ``chosen``).

Candidates vary one parameter at a time around a first sizing (:data:`BASE`): learning rate,
epochs, tokens a chunk, all within the budget of the reference grid's 58 neural cells (about
an hour on 2 cores): more training pairs or longer chunks would not fit it. The registered
settings are :data:`CHOSEN`. Measured (Guardian and Blog closed splits, seed 0, one torch
thread a fit, two fits at a time on a machine loaded ~6x by a grid run): see
``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
from sklearn.metrics import roc_auc_score

from baselines.registry import make
from stylo.datasets import load
from stylo.protocols import PROTOCOLS

#: within this validation AUC the cheaper candidate is preferred
_TIE = 0.01

#: the setting each model's candidates vary, one parameter at a time (the helper's first
#: sizing: 32-token chunks, 2 x 2 chunk pairs, 2 epochs at 2e-4 for bert-pair; 64-token
#: chunks, 4 chunks, 1 epoch at 1e-4 for siamese-pair; 400 training pairs each)
BASE = {
    "bert-pair": {
        "max_tokens": 32,
        "max_chunks": 2,
        "n_train_pairs": 400,
        "epochs": 2,
        "learning_rate": 2e-4,
    },
    "siamese-pair": {
        "max_tokens": 64,
        "max_chunks": 4,
        "n_train_pairs": 400,
        "epochs": 1,
        "learning_rate": 1e-4,
    },
}
#: name -> what a candidate changes in its model's :data:`BASE`
CANDIDATES = {
    "bert-pair": {
        "lr2e-4": {},
        "lr5e-5": {"learning_rate": 5e-5},
        "1-epoch": {"epochs": 1},
        "64-tokens-1-chunk": {"max_tokens": 64, "max_chunks": 1},
    },
    "siamese-pair": {
        "64-tokens": {},
        "lr3e-5": {"learning_rate": 3e-5},
        "lr3e-4": {"learning_rate": 3e-4},
        "32-tokens": {"max_tokens": 32},
    },
}
#: the candidate each model is registered with (``python -m benchmarks.choose_neural`` prints
#: it as ``chosen``; tests check that the registry agrees)
CHOSEN = {"bert-pair": "lr5e-5", "siamese-pair": "32-tokens"}


def candidate_params(model: str, name: str) -> dict:
    """The full parameters of candidate ``name`` of ``model``."""
    return {**BASE[model], **CANDIDATES[model][name]}


def _task(name: str, split: str, seed: int):
    protocol = PROTOCOLS["rethinking_av"]
    task = protocol.sample(load(name), {"split": split}, seed)
    if task.val is None or len(task.val) == 0 or task.val.labels.all() or not task.val.labels.any():
        raise SystemExit(
            f"{name}, split {split}: the validation part has no pairs of both kinds to choose on"
        )
    return task


def measure(model: str, params: dict, task, n_jobs: int) -> dict:
    """Validation AUC and times of ``model`` with ``params`` (as :func:`candidate_params`
    gives them) fitted on ``task.train``."""
    est = make(model, 0).set_params(n_jobs=n_jobs, **params)
    start = time.perf_counter()
    est.fit(task.train)
    fitted = time.perf_counter()
    scores = est.score_problems(task.val)
    done = time.perf_counter()
    return {
        "auc": roc_auc_score(task.val.labels, scores),
        "fit_s": fitted - start,
        "score_s": done - fitted,
        "n_train": len(task.train),
        "n_val": len(task.val),
    }


def choose(table: pd.DataFrame) -> pd.DataFrame:
    """Per model: mean validation AUC and time per candidate, ``chosen`` marking the best
    (the cheapest within :data:`_TIE` of the best)."""
    rows = []
    for model, part in table.groupby("model", sort=False):
        summary = part.groupby("candidate", sort=False).agg(
            auc=("auc", "mean"), seconds=("seconds", "sum")
        )
        best = summary["auc"].max()
        near = summary[summary["auc"] >= best - _TIE]
        pick = near["seconds"].idxmin()
        for name, row in summary.iterrows():
            rows.append({"model": model, "candidate": name, **row, "chosen": name == pick})
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="guardian,blog")
    parser.add_argument("--split", default="closed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", default="bert-pair,siamese-pair")
    parser.add_argument("--n-jobs", type=int, default=1, help="torch threads a fit")
    parser.add_argument("--csv", default=None, help="also write the per-corpus rows here")
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in CANDIDATES]
    if unknown:
        parser.error(f"--models: no candidates for {unknown}; known: {sorted(CANDIDATES)}")
    rows = []
    for name in [d for d in args.datasets.split(",") if d]:
        task = _task(name, args.split, args.seed)
        for model in models:
            for cand in CANDIDATES[model]:
                got = measure(model, candidate_params(model, cand), task, args.n_jobs)
                got["seconds"] = got["fit_s"] + got["score_s"]
                rows.append({"dataset": name, "model": model, "candidate": cand, **got})
                print(
                    f"{name:12s} {model:13s} {cand:18s} AUC {got['auc']:.3f}  "
                    f"fit {got['fit_s']:6.1f} s  score {got['score_s']:5.1f} s",
                    flush=True,
                )
    table = pd.DataFrame(rows)
    if args.csv:
        table.to_csv(args.csv, index=False)
    print(table.pivot_table(index=["model", "candidate"], columns="dataset", values="auc").round(3))
    print(choose(table).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
