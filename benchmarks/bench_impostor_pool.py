"""Benchmark: General Impostors on one large call, with and without a cap on the call's texts
that join its transductive impostor pool (``max_call_pool``).

    python -m benchmarks.bench_impostor_pool [--dataset imdb62] [--train 1000] [--test 6000]
        [--caps none,5000,2000] [--seeds 0,1]

General Impostors adds every text of a verification call to its impostor pool (Kestemont et
al.'s transductive set-up) and searches each query's nearest pool texts, so one call's cost is
quadratic in its size: PAN 2021's 20,000 test pairs are one call. The corpus's authors are
split in halves (``benchmarks.choose_ensemble.author_halves``); the method is fitted on
``--train`` balanced pairs of the first half and scores ``--test`` pairs of the other half in
one call, once per cap, each run in a fresh process (its peak resident set its own). Printed:
held-out AUC, the call's seconds and the peak memory, each cap's time and memory as a ratio to
the uncapped run's, medians over seeds.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time

import pandas as pd


def _one(args: tuple) -> dict:
    """Fit on the first half, score one call of the other half, with one cap (in a child)."""
    name, seed, n_train, n_test, cap = args
    from sklearn.metrics import roc_auc_score

    from baselines.impostors import GeneralImpostors
    from benchmarks.choose_ensemble import author_halves
    from stylo.datasets import load
    from stylo.training_draws import training_pairs

    fit_half, held_half = author_halves(load(name), seed)
    est = GeneralImpostors(max_call_pool=cap, random_state=seed)
    est.fit(training_pairs(fit_half, n_pairs=n_train, seed=seed))
    test = training_pairs(held_half, n_pairs=n_test, seed=seed + 1000)
    t0 = time.perf_counter()
    scores = est.score_problems(test)
    return {
        "seed": seed,
        "cap": "none" if cap is None else cap,
        "auc": float(roc_auc_score(test.labels, scores)),
        "seconds": time.perf_counter() - t0,
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="imdb62")
    ap.add_argument("--train", type=int, default=1000)
    ap.add_argument("--test", type=int, default=6000)
    ap.add_argument("--caps", default="none,5000,2000")
    ap.add_argument("--seeds", default="0,1")
    args = ap.parse_args(argv)
    caps = [None if c == "none" else int(c) for c in args.caps.split(",")]
    jobs = [
        (args.dataset, int(s), args.train, args.test, c)
        for s in args.seeds.split(",")
        for c in caps
    ]
    rows = []
    # one process per run, one run at a time: its memory is its own, its time unshared
    with mp.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
        for row in pool.imap(_one, jobs):
            print(
                f"seed {row['seed']} cap {row['cap']!s:>5}  AUC {row['auc']:.4f}  "
                f"{row['seconds']:7.1f} s  {row['peak_gb']:.2f} GB",
                flush=True,
            )
            rows.append(row)
    table = (
        pd.DataFrame(rows)
        .groupby("cap", sort=False)
        .agg(auc=("auc", "mean"), seconds=("seconds", "median"), peak_gb=("peak_gb", "max"))
    )
    table["time_x"] = table["seconds"] / table["seconds"].iloc[0]
    table["memory_x"] = table["peak_gb"] / table["peak_gb"].iloc[0]
    with pd.option_context("display.float_format", "{:.3f}".format):
        print(table.to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
