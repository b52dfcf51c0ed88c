"""Choose ``ensemble-attribution``'s configuration on training data only.

    python -m benchmarks.choose_attribution [--parts pan18 open closed] [--candidates a b]

Every candidate configuration of :class:`~baselines.attribution_ensemble.EnsembleAttributor`
is scored where no target figure is measured:

- ``pan18``: PAN18's training problems (``cdaa_attribution`` split ``train``, closed set,
  so the margin is 0): macro-F1 and accuracy, mean over the 10 problems;
- ``open``: the same problems made open-set: in each, a seeded third of the candidates lose
  their known texts, so their unknown texts are by "unknown authors"; the method is fitted
  (its margin) on the remaining known texts of all 10 problems, as the protocol does, and
  scored with and without the rejection, with the share of ``<UNK>`` answers;
- ``closed``: closed-set sub-splits of training texts: the ``closed_attribution`` tasks of
  seeds 0-2 on each corpus, of which only the candidates' known texts are used, each candidate's
  first ``_SUB_KNOWN`` share as known and the rest to attribute; ``svm-attribution`` is scored
  on the same sub-problems as the bar to stay above.

PAN18's test set and PAN19's development set, where the targets are measured, are not read.
Prints one table per part and each candidate's seconds, then the summary: the mean of the
PAN18 training macro-F1 and the closed-set accuracies, the selection criterion (the open-set
table shows what the fitted rejection does; it is not part of the criterion).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from baselines.attribution_ensemble import EnsembleAttributor
from baselines.svm import SVMOpenSetAttributor
from stylo.datasets import load
from stylo.protocols import PROTOCOLS
from stylo.protocols.cdaa import UNKNOWN, Attribution, score_attribution

_WINNERS = (("char", (2, 5)), ("distorted", (1, 3)), ("word", (1, 3)))
#: the first round's configurations, without self-training; then self-training on the first
#: round's choice (l2-maxabs-zscore) and on its runner-up with both scalings; then, around the
#: second round's choice, the SVMs' C, the words kept by the distortion and svm-attribution's
#: char 1-4-grams as a fourth view (every round before the third kept 300 words); then a fourth
#: view of the text with every word masked (punctuation, spacing and word lengths); then the
#: views weighed by their cross-validated accuracy on each problem's known texts; then with
#: the folds cut along the known texts' topic axis
_ROUND1 = {
    "l2-mean (previous)": {"scaling": "l2", "combination": "mean"},
    "l2-zscore": {"scaling": "l2"},
    "maxabs-mean": {"scaling": "maxabs", "combination": "mean"},
    "maxabs-zscore": {"scaling": "maxabs"},
    "maxabs-zscore min_df=1": {"scaling": "maxabs", "min_df": 1},
    "maxabs-zscore + char 1-4": {"scaling": "maxabs", "views": (("char", (1, 4)),) + _WINNERS},
    "l2-maxabs-zscore": {"scaling": "l2-maxabs"},
    "l2-maxabs-zscore min_df=1": {"scaling": "l2-maxabs", "min_df": 1},
    "l2 and l2-maxabs, zscore": {},
}
_ONE = {"scaling": "l2-maxabs", "distortion_k": 300}
#: the second and third rounds (every earlier round had the winners' three views)
_ROUNDS_2_3 = {
    "l2-maxabs, self-training 0.5": {**_ONE, "self_training": 0.5},
    "l2-maxabs, self-training 1.0": _ONE,
    "l2-maxabs, self-training 1.0, 2 rounds": {**_ONE, "self_training_rounds": 2},
    "l2 and l2-maxabs, self-training 1.0": {"distortion_k": 300},
    "C=0.1": {"distortion_k": 300, "C": 0.1},
    "C=10": {"distortion_k": 300, "C": 10.0},
    "distortion k=100 (third round's choice)": {},
    "distortion k=1000": {"distortion_k": 1000},
    "+ char 1-4": {"distortion_k": 300, "views": (("char", (1, 4)),) + _WINNERS},
}
#: the configurations compared; "chosen" is the class's defaults
_EQUAL = {"weighting": "equal"}  # every round before the fifth weighed the views alike
CANDIDATES = (
    {
        name: {"self_training": 0.0, "distortion_k": 300, "views": _WINNERS, **_EQUAL, **p}
        for name, p in _ROUND1.items()
    }
    | {name: {"views": _WINNERS, **_EQUAL, **p} for name, p in _ROUNDS_2_3.items()}
    | {
        "+ masked char 1-3": {"views": _WINNERS + (("masked", (1, 3)),), **_EQUAL},
        "+ masked char 1-4 (fourth round's choice)": _EQUAL,
        "+ masked char 2-5": {"views": _WINNERS + (("masked", (2, 5)),), **_EQUAL},
        "views weighted by cv (fifth round's choice)": {"weighting": "cv"},
        "chosen: cv folds along the topic axis": {},
    }
)
_CLOSED_CORPORA = ("imdb62", "guardian", "pan18_cdaa", "enron", "blog")
_SUB_KNOWN = 0.7
#: the grid's seeds: their tasks' known texts only
_SEEDS = (0, 1, 2)
_OPEN_SHARE = 1 / 3


def _all_row(table: pd.DataFrame, metric: str) -> float:
    return float(
        table.loc[(table["group"] == "all") & (table["metric"] == metric), "value"].iloc[0]
    )


def pan18_train_task():
    return PROTOCOLS["cdaa_attribution"].sample(load("pan18_cdaa"), {"split": "train"}, 0)


def open_set_task(task, seed: int = 0):
    """PAN18 training problems with a seeded third of each problem's candidates removed: the
    training Corpus without their known texts and the problems with their texts as <UNK>."""
    rng = np.random.default_rng(seed)
    known, dropped = {}, set()
    for prob in sorted(task.test.known):
        cands = sorted(task.test.known[prob])
        gone = rng.choice(cands, size=max(1, round(len(cands) * _OPEN_SHARE)), replace=False)
        dropped |= {(prob, c) for c in gone}
        known[prob] = {c: v for c, v in task.test.known[prob].items() if c not in gone}
    unknown = task.test.unknown.copy()
    out = [(p, t) in dropped for p, t in zip(unknown["problem"], unknown["truth"], strict=True)]
    unknown.loc[out, "truth"] = UNKNOWN
    frame = task.train.frame
    keep = [
        (p, c) not in dropped for p, c in zip(frame["problem"], frame["candidate"], strict=True)
    ]
    train = task.train.filter(np.array(keep), "open-set simulation")
    return train, Attribution(known, unknown, open_set=True)


def closed_subsplits(name: str) -> Attribution:
    """The known texts of the closed-set tasks of ``_SEEDS`` on ``name`` (their test texts are
    not read), split per candidate into known texts and texts to attribute."""
    proto = PROTOCOLS["closed_attribution"]
    data = load(name)
    known, rows = {}, []
    for seed in _SEEDS:
        task = proto.sample(data, proto.settings(data)[0], seed)
        for prob, cands in sorted(task.test.known.items()):
            sub = f"seed{seed}-{prob}"
            known[sub] = {}
            for cand, texts in sorted(cands.items()):
                cut = int(round(len(texts) * _SUB_KNOWN))
                known[sub][cand] = texts[:cut]
                rows += [
                    {"id": f"{sub}-{cand}-{i}", "problem": sub, "text": t, "truth": cand}
                    for i, t in enumerate(texts[cut:])
                ]
    return Attribution(known, pd.DataFrame(rows), open_set=False)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", nargs="+", default=["pan18", "open", "closed"])
    ap.add_argument("--candidates", nargs="+", default=list(CANDIDATES))
    ap.add_argument("--corpora", nargs="+", default=list(_CLOSED_CORPORA))
    args = ap.parse_args(argv)
    chosen = {k: CANDIDATES[k] for k in args.candidates}
    pd.set_option("display.width", 200)
    summary: dict[str, dict[str, float]] = {name: {} for name in chosen}
    if "pan18" in args.parts or "open" in args.parts:
        task = pan18_train_task()
    if "pan18" in args.parts:
        rows = []
        for name, params in chosen.items():
            t = time.perf_counter()
            table = score_attribution(
                EnsembleAttributor(reject_margin=0.0, **params), None, task.test
            )
            rows.append(
                {
                    "candidate": name,
                    "macro_f1": _all_row(table, "macro_f1"),
                    "accuracy": _all_row(table, "accuracy"),
                    "seconds": time.perf_counter() - t,
                }
            )
            summary[name]["pan18_train"] = rows[-1]["macro_f1"]
            print(rows[-1], flush=True)
        print("\nPAN18 training problems (closed set)\n", pd.DataFrame(rows).round(4).to_string())
    if "open" in args.parts:
        train, test = open_set_task(task)
        rows = []
        for name, params in chosen.items():
            t = time.perf_counter()
            est = EnsembleAttributor(**params)
            table = score_attribution(est, train, test)
            rows.append(
                {
                    "candidate": name,
                    "macro_f1": _all_row(table, "macro_f1"),
                    "macro_f1_no_reject": _all_row(table, "macro_f1_no_reject"),
                    "unknown_share": _all_row(table, "unknown_share"),
                    "seconds": time.perf_counter() - t,
                }
            )
            print(rows[-1], flush=True)
        print(
            f"\nPAN18 training problems, {_OPEN_SHARE:.0%} of candidates removed (open set)\n",
            pd.DataFrame(rows).round(4).to_string(),
        )
    if "closed" in args.parts:
        rows = []
        for corpus in args.corpora:
            test = closed_subsplits(corpus)
            row = {"corpus": corpus, "texts": len(test)}
            methods = {"svm-attribution": SVMOpenSetAttributor()} | {
                name: EnsembleAttributor(**params) for name, params in chosen.items()
            }
            for name, est in methods.items():
                row[name] = _all_row(score_attribution(est, None, test), "accuracy")
                if name in summary:
                    summary[name][corpus] = row[name]
            rows.append(row)
            print(row, flush=True)
        table = pd.DataFrame(rows).set_index("corpus")
        print("\nclosed-set sub-splits of training texts, accuracy\n", table.round(4).to_string())
    table = pd.DataFrame(summary).T
    table["criterion"] = table.mean(axis=1)
    print("\nsummary (criterion: mean of the columns)\n", table.round(4).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
