"""PAN metrics and wall times of stylo's verifiers on PAN15-en and the six PAN14 corpora.

Usage::

    python -m benchmarks.bench_verifiers_pan [--methods naive ppm ...] [--datasets ...]
        [--pancode-csv results.csv] [--csv out.csv] [--n-jobs 1]

Every method (a name from ``python -m baselines --list``) is fitted on the official training
problems of a corpus and scores its test problems (train -> test, no filtering). The table has
AUC, c@1, F1, F0.5u, 1 - Brier, overall (PAN 2021 evaluator, :mod:`stylo.metrics.pan`) and
AUC x c@1 (the PAN 2013-2015 final score), plus fit and scoring wall times in seconds: medians
of ``--repeats`` cold runs (``total_min``/``total_max`` their spread), taken on a quiet machine
(:mod:`benchmarks.quiet`: ``--max-load``, ``--quiet-timeout``; the load average before and
after is printed).

``--pancode-csv`` takes the table written by ``bench_pancode_baselines.py --csv`` (PAN's own
baselines run on the same pairs) and prints it beside ours, with the AUC difference of
``naive`` vs pan-code cngdist and of ``ppm-raw`` vs pan-code's compressor, and speed ratios
(pan-code total time / stylo total time).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from baselines.compression import CompressionVerifier, clear_memo
from baselines.registry import make
from benchmarks import quiet
from benchmarks.pan_datasets import DATASETS, train_test
from stylo.corpus import PairSet
from stylo.features import CharNgrams, paired_cosine
from stylo.metrics.pan import evaluate_all

DEFAULT_METHODS = ("naive", "ppm", "ppm-raw", "ncd", "cdm", "zstd-xent")
# counterparts of pan-code's baselines: ours with the same features, for parity
PARITY = {"pan-code cngdist": "naive", "pan-code compressor": "ppm-raw"}


def build(name: str, seed: int, n_jobs: int):
    """A registered method, or ``ppm-raw``: the PPM verifier fed [d1, d2] as pan-code does."""
    est = CompressionVerifier("ppm", features="raw") if name == "ppm-raw" else make(name, seed)
    if "n_jobs" in est.get_params():
        est.set_params(n_jobs=n_jobs)
    return est


def warm_up() -> None:
    """Compile (or load from Numba's cache) the kernels ``naive`` and ``ppm`` use, so that no
    timed run pays for it."""
    t0 = time.perf_counter()
    warm = PairSet.from_lists(["warm up", "a b c"], ["warm it", "x y z"], same=[True, False])
    CompressionVerifier("ppm").fit(warm).score_pairs(["warm"], ["up"])
    paired_cosine(*[CharNgrams((4, 4), use_idf=True, norm="l2").fit_transform(["warm up"])] * 2)
    print(
        f"Numba warm-up (compile, or load from cache): {time.perf_counter() - t0:.2f} s, "
        f"not counted below",
        flush=True,
    )


def run(dataset: str, method: str, seed: int, n_jobs: int) -> dict:
    train, test = train_test(dataset)
    est = build(method, seed, n_jobs)
    clear_memo()  # a cold run: pairs measured by an earlier run in this process count again
    t0 = time.perf_counter()
    est.fit(train)
    t1 = time.perf_counter()
    scores = est.score_problems(test)
    t2 = time.perf_counter()
    m = evaluate_all(test.labels, scores, version="pan21")
    return {
        "dataset": dataset,
        "method": method,
        "fit_s": t1 - t0,
        "score_s": t2 - t1,
        "total_s": t2 - t0,
        **m,
        "auc_x_c@1": m["auc"] * m["c@1"],
    }


def repeated(dataset: str, method: str, seed: int, n_jobs: int, repeats: int) -> dict:
    """``run``'s row (the figures do not change between runs) with its times the medians of
    ``repeats`` runs, and the spread of the total."""
    rows, total = quiet.repeated(lambda: run(dataset, method, seed, n_jobs), repeats, "total_s")
    return {
        **rows[-1],
        "fit_s": float(np.median([r["fit_s"] for r in rows])),
        "score_s": float(np.median([r["score_s"] for r in rows])),
        "total_s": total["median"],
        "total_min": total["min"],
        "total_max": total["max"],
    }


def compare(ours: pd.DataFrame, theirs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, ref in theirs.iterrows():
        if ref.method not in PARITY:  # the table also holds stylo's own rows
            continue
        mine = ours[(ours.dataset == ref.dataset) & (ours.method == PARITY[ref.method])]
        if mine.empty:
            continue
        mine = mine.iloc[0]
        rows.append(
            {
                "dataset": ref.dataset,
                "pan-code": ref.method,
                "stylo": mine.method,
                "auc_pancode": ref.auc,
                "auc_stylo": mine.auc,
                "auc_diff": mine.auc - ref.auc,
                "pancode_s": ref.total_s,
                "stylo_s": mine.total_s,
                "speedup": ref.total_s / mine.total_s,
            }
        )
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--methods", nargs="*", default=list(DEFAULT_METHODS))
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--pancode-csv", type=Path, help="bench_pancode_baselines' table")
    ap.add_argument("--csv", type=Path, help="also save the table here")
    quiet.add_arguments(ap)
    args = ap.parse_args(argv)
    warm_up()
    rows = []
    record = quiet.LoadRecord(quiet.wait_for_quiet(args.max_load, args.quiet_timeout))
    for dataset in args.datasets:
        for method in args.methods:
            rows.append(repeated(dataset, method, args.seed, args.n_jobs, args.repeats))
            print(
                pd.DataFrame(rows[-1:]).round(3).to_string(index=False, header=len(rows) == 1),
                flush=True,
            )
            if args.csv:
                pd.DataFrame(rows).to_csv(args.csv, index=False)
    table = pd.DataFrame(rows)
    if args.pancode_csv:
        theirs = pd.read_csv(args.pancode_csv)
        theirs = theirs[theirs.dataset.isin(args.datasets)]
        print(
            "\n"
            + pd.concat([table, theirs])
            .sort_values(["dataset", "method"])
            .round(3)
            .to_string(index=False)
        )
        print("\n" + compare(table, theirs).round(4).to_string(index=False))
    else:
        print("\n" + table.round(3).to_string(index=False))
    print(f"times: medians of {args.repeats} runs; {record.close().label()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
