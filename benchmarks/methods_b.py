"""Measurements of the General Impostors, Delta and SVM baselines on their reference data.

    python -m benchmarks.methods_b gi          # PAN15 English train->test, each PAN14 corpus
    python -m benchmarks.methods_b svm         # PAN18 test / PAN19 cross-domain attribution
    python -m benchmarks.methods_b federalist  # Delta attribution of the 12 disputed essays

Verification rows: the PAN21 evaluator's metrics (stylo.metrics.pan) plus AUC x c@1 (the
PAN13-15 final score), fitted on the train split and scored on the test split. Times are
wall-clock seconds on this machine, vectorisation included.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from stylo.datasets import load
from stylo.metrics.pan import evaluate_all


def verification_row(name: str, y: np.ndarray, scores: np.ndarray, seconds: float) -> dict:
    m = evaluate_all(y, scores, version="pan21")
    return {"data": name, "problems": len(y), **{k: round(v, 3) for k, v in m.items()},
            "auc_x_c@1": round(m["auc"] * m["c@1"], 3), "seconds": round(seconds, 1)}


def general_impostors() -> pd.DataFrame:
    from baselines.impostors import GeneralImpostors

    rows = []
    t = time.perf_counter()
    gi = GeneralImpostors().fit(load("pan15_av_en", split="train"))
    test = load("pan15_av_en", split="test")
    rows.append(verification_row("pan15_av_en", test.labels, gi.score_problems(test),
                                 time.perf_counter() - t))
    pan14 = load("pan14_av")
    start = time.perf_counter()
    for corpus in sorted(pan14.frame["corpus"].unique()):
        t = time.perf_counter()
        in_corpus = pan14.frame["corpus"] == corpus
        train = pan14.subset(in_corpus & (pan14.frame["split"] == "train"))
        test = pan14.subset(in_corpus & (pan14.frame["split"] == "test"))
        scores = GeneralImpostors().fit(train).score_problems(test)
        rows.append(verification_row(f"pan14/{corpus}", test.labels, scores,
                                     time.perf_counter() - t))
    print(f"PAN14, all six corpora (train + test, {int((pan14.frame['split'] == 'train').sum())}"
          f" + {int((pan14.frame['split'] == 'test').sum())} problems): "
          f"{time.perf_counter() - start:.1f} s")
    return pd.DataFrame(rows)


def main(argv: list[str]) -> int:
    what = argv or ["gi", "svm", "federalist"]
    pd.set_option("display.width", 200)
    for name in what:
        if name == "gi":
            print(general_impostors().to_string(index=False))
        else:
            raise SystemExit(f"unknown measurement {name!r}; choose gi, svm, federalist")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
