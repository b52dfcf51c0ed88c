"""What the verifiers gain from more training pairs, and what they pay in time and memory.

Usage::

    python -m benchmarks.training_budget [--datasets imdb62,blog] [--seeds 0,1]
        [--methods naive,cosine-norm,logreg-pair,impostors,lambdag,ensemble]
        [--sizes 500,2000,8000] [--held 600] [--join K]

PAN 2020/21's training sets hold tens of thousands of labelled pairs of long texts, where the
grid's PAN sets hold 10-700 problems; every method fitted on a PairSet uses all of it
(``stylo.training_draws.training_pairs``), so its time and memory grow with it. This study
reads, on training-style data only, how far held-out AUC still moves with the number of
training pairs, which is what the PAN protocols' ``max_train_problems`` cap is chosen on.

For each corpus and seed the corpus's authors are split in two halves
(``benchmarks.choose_ensemble.author_halves``); ``n`` balanced pairs are drawn from the first
half (with the seed) and each method is fitted on them and scored on ``--held`` pairs of the
other half's authors (held-out AUC: no scored author was seen in fitting). Every (method, size,
corpus, seed) runs in a fresh process, so its peak resident memory is its own. The table gives
the mean AUC over corpora and seeds, the median fit + score seconds and the largest peak
memory per method and size, and each size's time and memory as a ratio to the smallest size's.
``--join K`` makes every text K texts of one author joined by a blank line (drawn with the
seed), so that IMDb62's reviews of about 1,700 characters become documents as long as PAN
2020's fanfiction snippets (K = 12: about 21,000), whose memory the character cap is for.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time

import numpy as np
import pandas as pd

_METHODS = "naive,cosine-norm,logreg-pair,impostors,lambdag,ensemble"


def _one(args: tuple) -> dict:
    """Fit one method on ``n`` pairs of one half and score the other half (in a child)."""
    name, seed, method, n, held_n, join = args
    from sklearn.metrics import roc_auc_score

    from baselines.registry import make
    from benchmarks.choose_ensemble import author_halves
    from stylo.datasets import load
    from stylo.training_draws import training_pairs

    fit_half, held_half = author_halves(joined(load(name), join, seed), seed)
    train = training_pairs(fit_half, n_pairs=n, seed=seed)
    held = training_pairs(held_half, n_pairs=held_n, seed=seed + 1000)
    est = make(method, seed=seed)
    t0 = time.perf_counter()
    scores = est.fit(train).score_problems(held)
    seconds = time.perf_counter() - t0
    chars = sum(map(len, {t for pair in zip(train.texts_a(), train.texts_b()) for t in pair}))
    return {
        "dataset": name,
        "seed": seed,
        "method": method,
        "pairs": n,
        "auc": float(roc_auc_score(held.labels, scores)),
        "seconds": seconds,
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "train_mchars": chars / 1e6,
    }


def joined(corpus, k: int, seed: int):
    """Each author's texts in a seeded order, joined ``k`` at a time (a remainder is left
    out); ``corpus`` itself for ``k`` = 1."""
    from stylo.corpus import Corpus

    if k == 1:
        return corpus
    rng = np.random.default_rng([seed, 7])
    source, texts, authors = corpus.texts, [], []
    for author, idx in corpus.by_author().items():
        idx = rng.permutation(idx)
        for start in range(0, len(idx) - k + 1, k):
            texts.append("\n\n".join(source[i] for i in idx[start : start + k]))
            authors.append(author)
    return Corpus.from_lists(texts, authors, name=f"{corpus.name}:joined{k}")


def study(datasets, seeds, methods, sizes, held_n, join=1) -> pd.DataFrame:
    jobs = [
        (d, s, m, n, held_n, join) for d in datasets for s in seeds for m in methods for n in sizes
    ]
    rows = []
    # one process per job, one job at a time: its peak memory is its own and the timings
    # do not share the two cores
    with mp.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
        for row in pool.imap(_one, jobs):
            print(
                f"{row['dataset']:8s} seed {row['seed']} {row['method']:12s} "
                f"{row['pairs']:6d} pairs  AUC {row['auc']:.4f}  {row['seconds']:7.1f} s  "
                f"{row['peak_gb']:.2f} GB  ({row['train_mchars']:.1f} M training chars)",
                flush=True,
            )
            rows.append(row)
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per method and size: mean AUC, median seconds, largest peak memory, and the time and
    memory ratios to the method's smallest size."""
    out = (
        table.groupby(["method", "pairs"])
        .agg(auc=("auc", "mean"), seconds=("seconds", "median"), peak_gb=("peak_gb", "max"))
        .reset_index()
    )
    first = out.groupby("method").transform("first")
    out["time_x"] = out["seconds"] / first["seconds"]
    out["memory_x"] = out["peak_gb"] / first["peak_gb"]
    out["auc_vs_largest"] = out["auc"] - out.groupby("method")["auc"].transform("last")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="imdb62,blog")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--methods", default=_METHODS)
    ap.add_argument("--sizes", default="500,2000,8000")
    ap.add_argument("--held", type=int, default=600)
    ap.add_argument("--join", type=int, default=1, help="texts of an author joined into one")
    ap.add_argument("--csv", default=None, help="also write the per-run rows here")
    args = ap.parse_args(argv)
    sizes = sorted(int(x) for x in args.sizes.split(","))
    if not sizes or sizes[0] < 2:
        ap.error("--sizes needs positive pair counts of at least 2")
    if args.join < 1:
        ap.error("--join needs a positive int")
    table = study(
        args.datasets.split(","),
        [int(s) for s in args.seeds.split(",")],
        args.methods.split(","),
        sizes,
        args.held,
        args.join,
    )
    if args.csv:
        table.to_csv(args.csv, index=False)
    with pd.option_context("display.width", 120, "display.float_format", "{:.3f}".format):
        print(summary(table).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
