"""The training-only evidence the zstd measures' compression levels are chosen on.

Usage::

    python -m benchmarks.choose_compression [--levels 1,2,...,9] [--measures ncd,cdm,xent]
        [--datasets imdb62,...] [--seeds 0,1,2] [--parts verification attribution] [--csv out]

NCD, CDM and the dictionary cross-entropy measure what zstd finds shared between two texts,
so the level (its match finder and window) is part of the method, not a speed knob: zstd's
parameters do not improve monotonically with the level for texts of a few kilobytes. Each
level is scored where no target figure is measured:

- ``verification``: held-out AUC on the training part of every verification corpus (the grid
  task's training texts for the AIDBench corpora, the official training problems for PAN14 and
  PAN15), split in two with the seed as ``benchmarks.choose_ensemble`` does (by author; by
  connected problems, or by problem where all problems are connected, as in PAN14's novels):
  fitted on one half, scored on labelled pairs of the other;
- ``attribution``: macro-F1 on PAN18's training problems (``cdaa_attribution`` split
  ``train``, closed set), where each unknown text is compared with every candidate's joined
  known texts, a profile many times longer than one text.

The chosen level of a measure has the best mean of its two parts' means (the verification AUC
over corpora and seeds, the PAN18 training macro-F1), the cheaper level within ``_TIE`` of it:
printed as ``chosen``; ``baselines.compression.DEFAULT_LEVELS`` holds the choice.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from baselines.compression import CompressionVerifier, clear_memo
from benchmarks.choose_attribution import _all_row, pan18_train_task
from benchmarks.choose_ensemble import _AIDBENCH, _halves, training_part
from benchmarks.pan_datasets import DATASETS as PAN_DATASETS
from stylo.corpus import PairSet
from stylo.datasets import load
from stylo.protocols.cdaa import score_attribution

_VERIFICATION = _AIDBENCH + PAN_DATASETS
#: within this criterion the cheaper (lower, faster) level is preferred
_TIE = 0.005


def _split(name: str, seed: int):
    """(fit half, labelled held-out pairs) of ``name``'s training part; PAN14 problems by
    problem when they form one connected group (the novels' single unknown text)."""
    train = load(name, split="train") if name.startswith("pan14") else training_part(name, seed)
    fit, held = _halves(train, seed)
    if isinstance(train, PairSet) and (len(fit) == 0 or len(held) == 0):
        side = np.random.default_rng([seed, 11]).permutation(len(train)) % 2
        fit, held = train.subset(side == 0), train.subset(side == 1)
    return fit, held


def _verifier(measure: str, level: int) -> CompressionVerifier:
    clear_memo()  # each level pays for its own compressions
    return CompressionVerifier(measure=measure, level=level, n_jobs=1)


def verification(datasets, seeds, measures, levels) -> pd.DataFrame:
    rows = []
    for name in datasets:
        for seed in seeds:
            fit, held = _split(name, seed)
            for measure in measures:
                for level in levels:
                    t = time.perf_counter()
                    scores = _verifier(measure, level).fit(fit).score_problems(held)
                    auc = float(roc_auc_score(held.labels, scores))
                    rows.append(
                        {
                            "part": "verification",
                            "dataset": name,
                            "seed": seed,
                            "measure": measure,
                            "level": level,
                            "value": auc,
                            "n": len(held),
                            "seconds": time.perf_counter() - t,
                        }
                    )
            print(f"{name} seed {seed} done", flush=True)
    return pd.DataFrame(rows)


def attribution(measures, levels) -> pd.DataFrame:
    task = pan18_train_task()
    rows = []
    for measure in measures:
        for level in levels:
            t = time.perf_counter()
            table = score_attribution(_verifier(measure, level), task.train, task.test)
            rows.append(
                {
                    "part": "attribution",
                    "dataset": "pan18_cdaa train",
                    "seed": 0,
                    "measure": measure,
                    "level": level,
                    "value": _all_row(table, "macro_f1"),
                    "n": len(task.test.unknown),
                    "seconds": time.perf_counter() - t,
                }
            )
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per measure and level: each part's mean, their mean (the criterion) and seconds."""
    parts = table.pivot_table(index=["measure", "level"], columns="part", values="value")
    out = parts.copy()
    out["criterion"] = parts.mean(axis=1)
    out["seconds"] = table.groupby(["measure", "level"]).seconds.sum()
    return out


def choose(table: pd.DataFrame) -> dict[str, int]:
    """The level with the best criterion per measure; the lowest level within ``_TIE``."""
    s = summary(table)
    chosen = {}
    for measure, rows in s.groupby(level="measure"):
        crit = rows["criterion"].droplevel("measure")
        chosen[measure] = int(crit[crit >= crit.max() - _TIE].index.min())
    return chosen


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="1,2,3,4,5,6,7,8,9")
    ap.add_argument("--measures", default="ncd,cdm,xent")
    ap.add_argument("--datasets", default=",".join(_VERIFICATION))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--parts", nargs="+", default=["verification", "attribution"])
    ap.add_argument("--csv")
    args = ap.parse_args(argv)
    levels = [int(v) for v in args.levels.split(",") if v]
    measures = [m for m in args.measures.split(",") if m]
    bad = sorted(set(measures) - {"ncd", "cdm", "xent"})
    if bad:
        ap.error(f"--measures: unknown {bad}; choose from ncd, cdm, xent")
    unknown_parts = sorted(set(args.parts) - {"verification", "attribution"})
    if unknown_parts:
        ap.error(f"--parts: unknown {unknown_parts}; choose from verification, attribution")
    frames = []
    if "verification" in args.parts:
        seeds = [int(s) for s in args.seeds.split(",") if s]
        datasets = [d for d in args.datasets.split(",") if d]
        frames.append(verification(datasets, seeds, measures, levels))
    if "attribution" in args.parts:
        frames.append(attribution(measures, levels))
    table = pd.concat(frames, ignore_index=True)
    if args.csv:
        table.to_csv(args.csv, index=False)
    pd.set_option("display.width", 250)
    verif = table[table.part == "verification"]
    if len(verif):
        wide = verif.pivot_table(index=["measure", "level"], columns="dataset", values="value")
        print("\nheld-out AUC on training parts (mean over seeds)\n", wide.round(3).to_string())
    print("\nsummary\n", summary(table).round(4).to_string())
    print(f"chosen: {choose(table)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
