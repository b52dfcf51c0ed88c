"""Can a verifier read the test batch's share of same-author pairs from its own scores?

    python -m benchmarks.label_shift [--methods impostors] [--datasets guardian blog ...]
                                     [--seeds 0 1]

AIDBench's one-to-one mixes (150/50, 100/100, 50/150 same/different-author pairs) are scored by
accuracy, and a threshold fitted on balanced training pairs loses most where the mix is most
skewed. Under pure label shift the fix is known: estimate the test prior from the unlabelled
scores, then move each posterior by Bayes' rule. For each cell (corpus, mix, seed) of the
grid's ``aidbench_one_to_one`` task this script fits the method on the task's training texts,
Platt-scales its raw scores of the training pairs (General Impostors: the raw margin, without
score shifting), and estimates the test batch's same-author share two ways:

- ``em``: Saerens, Latinne & Decaestecker, "Adjusting the outputs of a classifier to new a
  priori probabilities", Neural Computation 14(1), 2002 (EM on the posteriors);
- ``acc``: adjusted classify and count (Forman, "Quantifying counts and costs via
  classification", DMKD 17, 2008): the share answered "same" corrected by the training
  pairs' true and false positive rates, clipped to [0.02, 0.98].

It prints each estimate, the accuracy at the Platt threshold and after each adjustment. The
test labels are read only to score; nothing is chosen here.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from baselines.registry import make
from stylo.datasets import load
from stylo.protocols import PROTOCOLS
from stylo.verifier import training_pairs

_DATASETS = ("guardian", "blog", "enron", "imdb62", "federalist")


def em_prior(p: np.ndarray, prior: float, iters: int = 500, tol: float = 1e-8) -> float:
    """Saerens et al.'s EM estimate of the share of positives behind posteriors ``p`` (n,)
    computed under the training share ``prior``."""
    share = prior
    for _ in range(iters):
        new = float(adjust(p, prior, share).mean())
        if abs(new - share) < tol:
            return new
        share = new
    return share


def adjust(p: np.ndarray, prior: float, share: float) -> np.ndarray:
    """Posteriors ``p`` computed under ``prior`` moved to the class share ``share``."""
    same = share / prior * p
    different = (1.0 - share) / (1.0 - prior) * (1.0 - p)
    return same / (same + different)


def acc_prior(p: np.ndarray, p_train: np.ndarray, y_train: np.ndarray) -> float:
    """Adjusted classify and count at the 0.5 threshold, clipped to [0.02, 0.98]."""
    tpr, fpr = (p_train[y_train] > 0.5).mean(), (p_train[~y_train] > 0.5).mean()
    share = ((p > 0.5).mean() - fpr) / max(tpr - fpr, 1e-3)
    return float(np.clip(share, 0.02, 0.98))


def cell(method: str, corpus, setting: dict, seed: int) -> dict:
    protocol = PROTOCOLS["aidbench_one_to_one"]
    task = protocol.sample(corpus, setting, seed)
    est = make(method, seed)
    if "shift" in est.get_params():
        est.set_params(shift=False)
    est.fit(task.train)
    pairs = training_pairs(task.train, seed=0)
    y_train = pairs.labels.astype(bool)
    y = task.test.labels.astype(bool)
    raw_train = est.score_problems(pairs)[:, None]
    platt = LogisticRegression().fit(raw_train, y_train)
    p_train = platt.predict_proba(raw_train)[:, 1]
    p = platt.predict_proba(est.score_problems(task.test)[:, None])[:, 1]
    prior = float(y_train.mean())
    share_em, share_acc = em_prior(p, prior), acc_prior(p, p_train, y_train)
    return {
        "method": method,
        "dataset": corpus.name,
        "mix": setting["mix"],
        "seed": seed,
        "n": len(y),
        "true share": float(y.mean()),
        "em share": share_em,
        "acc share": share_acc,
        "accuracy": float(((p > 0.5) == y).mean()),
        "accuracy em": float(((adjust(p, prior, share_em) > 0.5) == y).mean()),
        "accuracy acc": float(((adjust(p, prior, share_acc) > 0.5) == y).mean()),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=["impostors"])
    ap.add_argument("--datasets", nargs="+", default=list(_DATASETS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    args = ap.parse_args(argv)
    protocol = PROTOCOLS["aidbench_one_to_one"]
    rows = []
    for method in args.methods:
        for name in args.datasets:
            corpus = load(name)
            for setting in protocol.settings(corpus):
                for seed in args.seeds:
                    rows.append(cell(method, corpus, setting, seed))
                    print(
                        pd.DataFrame(rows[-1:])
                        .round(3)
                        .to_string(header=len(rows) == 1, index=False),
                        flush=True,
                    )
    table = pd.DataFrame(rows)
    err = table[["em share", "acc share"]].sub(table["true share"], axis=0).abs()
    print("\nmean absolute error of the share:", err.mean().round(3).to_dict())
    print(table.groupby(["method", "mix"])[[c for c in table if "accuracy" in c]].mean().round(3))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
