"""Wall time and PAN metrics of ``lambdag`` on PAN14 (and PAN15-en), beside the published and
the suite's reference figures, and the authors' own package as the competitor.

Usage::

    python -m benchmarks.bench_lambdag [--datasets ...] [--competitor-path DIR]
        [--competitor-dataset pan14_av/du_essays] [--study] [--csv out.csv]

Each corpus is fitted on its official training problems and scores its test problems (train ->
test, no filtering); the time is fit + scoring, after one Numba warm-up that is not counted,
taken on a quiet machine (:mod:`benchmarks.quiet`: ``--max-load``, ``--quiet-timeout``) as the
median of ``--repeats`` runs with its min-max and the load average before and after.
The table has AUC, c@1, AUC x c@1 (the PAN 2013-2015 final score, :mod:`stylo.metrics.pan`)
and overall, and beside them the PAN14/15 winner and the suite's ``impostors`` and ``naive``
from ``results/REFERENCE.md``.

``--competitor-path`` is a directory where the authors' package is installed (``pip install
--no-deps --target DIR lambdag``; never part of this repository): its ``LambdaGMethod`` runs on
``--competitor-dataset`` with our order and number of references, on the same distorted
sentences, and the time ratio is printed.

``--study`` prints instead the training-only evidence the defaults were chosen on: for each
setting, the AUC of the cross-fitted training lambdas (``LambdaG.train_auc_``) on every
corpus's training problems. Test problems are not read.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from baselines._sentence_tokens import BREAK, reference_tokens
from baselines.lambdag import LambdaG
from baselines.registry import make
from benchmarks import quiet
from benchmarks.pan_datasets import DATASETS, train_test
from stylo.datasets import load
from stylo.metrics.pan import evaluate_all

ROOT = Path(__file__).resolve().parents[1]

PAN14 = tuple(d for d in DATASETS if d.startswith("pan14"))
#: what the study compares, each against the registered defaults
STUDY = (
    {"order": 5},
    {"order": 10},
    {"n_references": 10},
    {"n_references": 100},
    {"distortion": "dv_ma"},
    {"n_words": 300},
    {"discount": 0.1},
    {"discount": 0.75},
    {"eps": 0.01},
    {"eps": 0.3},
)
_REFERENCE_ROW = re.compile(
    r"^\| (?P<dataset>\S+) \| pan_verification \| - \| auc\*c@1 \| "
    r"(?P<label>[^|]+?) \| (?P<value>[0-9.]+) \|"
)
_LABELS = {
    "PAN14 best on this corpus": "winner",
    "PAN15 winner (Bagnall)": "winner",
    "stylo: impostors [test=test, train=train]": "impostors",
    "stylo: naive [test=test, train=train]": "naive",
}


def reference_figures(path: Path = ROOT / "results" / "REFERENCE.md") -> pd.DataFrame:
    """AUC x c@1 of the published winner, ``impostors`` and ``naive`` per corpus."""
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _REFERENCE_ROW.match(line)
        if m and m["label"] in _LABELS:
            rows.setdefault(m["dataset"], {})[_LABELS[m["label"]]] = float(m["value"])
    return pd.DataFrame.from_dict(rows, orient="index")


def run(dataset: str, seed: int) -> dict:
    train, test = train_test(dataset)
    est = make("lambdag", seed)
    t0 = time.perf_counter()
    est.fit(train)
    scores = est.score_problems(test)
    seconds = time.perf_counter() - t0
    m = evaluate_all(test.labels, scores, version="pan21")
    return {
        "dataset": dataset,
        "seconds": seconds,
        "auc": m["auc"],
        "c@1": m["c@1"],
        "auc_x_c@1": m["auc"] * m["c@1"],
        "overall": m["overall"],
    }


def timed(call, repeats: int) -> dict:
    """``call()``'s row (deterministic figures) with ``seconds`` the median of ``repeats``
    runs and ``min_s``/``max_s`` their spread."""
    rows, spread = quiet.repeated(call, repeats, "seconds")
    return {
        **rows[-1],
        "seconds": spread["median"],
        "min_s": spread["min"],
        "max_s": spread["max"],
    }


def competitor(path: Path, dataset: str, seed: int) -> dict:
    """The authors' LambdaGMethod, fitted and scored on ``dataset`` like ours."""
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
    from lambdag import LambdaGMethod

    ours = make("lambdag", seed)
    train, test = train_test(dataset)
    distortion = ours.set_params(grey_zone=False).fit(train).distortion_

    def prepared(items):  # the same distorted tokens as ours, one sentence a line
        return [
            "\n".join(s.strip() for s in " ".join(reference_tokens(t)).split(BREAK) if s.strip())
            for t in distortion.transform(items)
        ]

    def problems(pairs):
        return [
            (k, f"known-{pid}", u, f"unknown-{pid}")
            for pid, k, u in zip(pairs.ids, prepared(pairs.known_joined), prepared(pairs.unknown))
        ]

    # the reference pool is the training texts, each under its problem's author names, so
    # that the package's exclusion of a problem's own authors keeps its texts out
    pool = {}
    for known, author, unknown, other in problems(train):
        pool[author], pool[other] = [known], [unknown]
    method = LambdaGMethod(
        basis="tokens",
        order=ours.order,
        smoothing="kneser_ney",
        lowercasing=False,
        sentenize=True,
        num_references=ours.n_references,
        random_seed=seed,
    )
    t0 = time.perf_counter()
    method.fit(problems(train), pool, train.labels.astype(int))
    probs = method.predict_proba(problems(test), pool)
    seconds = time.perf_counter() - t0
    m = evaluate_all(test.labels, probs[:, 1], version="pan21")
    return {
        "dataset": dataset,
        "seconds": seconds,
        "auc": m["auc"],
        "c@1": m["c@1"],
        "auc_x_c@1": m["auc"] * m["c@1"],
        "overall": m["overall"],
    }


def study(datasets: list[str], seed: int) -> pd.DataFrame:
    trains = {d: load(d, split="train") for d in datasets}
    defaults = make("lambdag", seed).get_params()
    rows = []
    for change in ({}, *STUDY):
        t0 = time.perf_counter()
        row = {"setting": ", ".join(f"{k}={v}" for k, v in change.items()) or "defaults"}
        for d, train in trains.items():
            row[d.split("/")[-1]] = LambdaG(**{**defaults, **change}).fit(train).train_auc_
        row["mean"] = float(np.mean([row[d.split("/")[-1]] for d in datasets]))
        row["seconds"] = time.perf_counter() - t0
        rows.append(row)
        print(
            pd.DataFrame(rows[-1:]).round(3).to_string(index=False, header=len(rows) == 1),
            flush=True,
        )
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="*", default=list(PAN14))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--competitor-path", type=Path)
    ap.add_argument("--competitor-dataset", default="pan14_av/du_essays")
    ap.add_argument("--study", action="store_true")
    ap.add_argument("--csv", type=Path, help="also save the table here")
    quiet.add_arguments(ap)
    args = ap.parse_args(argv)
    if args.study:
        table = study(args.datasets, args.seed)
    else:
        t0 = time.perf_counter()
        warm = load(PAN14[0], split="train").subset(np.arange(8))
        make("lambdag", args.seed).set_params(n_references=2).fit(warm).score_problems(warm)
        print(
            f"Numba warm-up (compile, or load from cache): {time.perf_counter() - t0:.2f} s, "
            f"not counted below",
            flush=True,
        )
        rows = []
        record = quiet.LoadRecord(quiet.wait_for_quiet(args.max_load, args.quiet_timeout))
        for dataset in args.datasets:
            rows.append(timed(lambda d=dataset: run(d, args.seed), args.repeats))
            print(
                pd.DataFrame(rows[-1:]).round(3).to_string(index=False, header=len(rows) == 1),
                flush=True,
            )
        table = pd.DataFrame(rows).join(reference_figures(), on="dataset")
        print("\n" + table.round(3).to_string(index=False))
        pan14 = table[table.dataset.isin(PAN14)]
        print(
            f"\nPAN14 total (fit + score, {len(pan14)} corpora, sum of the medians): "
            f"{pan14.seconds.sum():.1f} s ({pan14.min_s.sum():.1f}-{pan14.max_s.sum():.1f}); "
            f"{record.close().label()}"
        )
        if args.competitor_path:
            record = quiet.LoadRecord(quiet.wait_for_quiet(args.max_load, args.quiet_timeout))
            theirs = timed(
                lambda: competitor(args.competitor_path, args.competitor_dataset, args.seed),
                args.repeats,
            )
            ours = table[table.dataset == args.competitor_dataset]
            mine = ours.iloc[0] if len(ours) else run(args.competitor_dataset, args.seed)
            print(
                f"\nauthors' package on {args.competitor_dataset}: "
                f"{theirs['seconds']:.1f} s, AUC {theirs['auc']:.3f}, AUC x c@1 "
                f"{theirs['auc_x_c@1']:.3f}; ours {mine['seconds']:.1f} s, AUC "
                f"{mine['auc']:.3f}: {theirs['seconds'] / mine['seconds']:.0f}x faster "
                f"(medians of {args.repeats}; {record.close().label()})"
            )
    if args.csv:
        table.to_csv(args.csv, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
