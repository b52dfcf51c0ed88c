"""Quality and speed of General Impostors, SVM attribution and Delta on their reference data:
General Impostors' PAN verification scores and its kernel's speed, the linear SVM attributor
on PAN18/19 cross-domain and on closed-set attribution, and Delta on the Federalist papers.

    python -m benchmarks.bench_impostors_svm_delta gi          # PAN15-en train->test, PAN14
    python -m benchmarks.bench_impostors_svm_delta gi-kernel   # Numba GI kernel vs reference
    python -m benchmarks.bench_impostors_svm_delta svm         # PAN18 test / PAN19 attribution
    python -m benchmarks.bench_impostors_svm_delta svm-closed  # closed set: IMDb62, Enron, Blog
    python -m benchmarks.bench_impostors_svm_delta federalist  # Delta on the 12 disputed essays

The other verifiers (e.g. ``logreg-pair``) are measured on PAN by
``python -m benchmarks.bench_verifiers_pan --methods NAME``.

Verification rows: the PAN21 evaluator's metrics (stylo.metrics.pan) plus AUC x c@1 (the
PAN13-15 final score), fitted on the train split and scored on the test split. Times are
wall-clock seconds on this machine, vectorisation and fitting included (JIT compilation not:
the kernels are warmed up first); CPU seconds are summed over threads, a check on machines
shared with other work.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

from benchmarks import quiet
from stylo.datasets import load
from stylo.metrics.pan import evaluate_all


def verification_row(name: str, y: np.ndarray, scores: np.ndarray, seconds: float) -> dict:
    m = evaluate_all(y, scores, version="pan21")
    return {
        "data": name,
        "problems": len(y),
        **{k: round(v, 3) for k, v in m.items()},
        "auc_x_c@1": round(m["auc"] * m["c@1"], 3),
        "seconds": round(seconds, 1),
    }


def _warm_up() -> None:
    """Compile (or load from cache) the Numba kernels outside the timed runs."""
    from baselines.impostors import GeneralImpostors
    from stylo.corpus import Corpus

    corpus = Corpus.from_lists(
        ["one text here", "another text", "a third text", "and more"], ["a", "a", "b", "b"]
    )
    GeneralImpostors(n_iter=2, n_candidates=1, n_impostors=1, shift=False).fit(corpus).score_pairs(
        ["one text"], ["another"]
    )


def general_impostors(repeats: int = 3, max_load: float = 0.5, timeout: float = 900.0):
    """PAN15-en and the six PAN14 corpora, train -> test. All six PAN14 corpora together are
    timed ``repeats`` times once the machine is quiet (:mod:`benchmarks.quiet`); the median,
    its spread and the load are printed."""
    from baselines.impostors import GeneralImpostors

    _warm_up()
    rows = []
    t = time.perf_counter()
    gi = GeneralImpostors().fit(load("pan15_av_en", split="train"))
    test = load("pan15_av_en", split="test")
    rows.append(
        verification_row(
            "pan15_av_en", test.labels, gi.score_problems(test), time.perf_counter() - t
        )
    )
    pan14 = load("pan14_av")
    splits = {}
    for corpus in sorted(pan14.frame["corpus"].unique()):
        in_corpus = pan14.frame["corpus"] == corpus
        splits[corpus] = (
            pan14.subset(in_corpus & (pan14.frame["split"] == "train")),
            pan14.subset(in_corpus & (pan14.frame["split"] == "test")),
        )
    last: list[dict] = []

    def all_six() -> float:
        last.clear()
        start = time.perf_counter()
        for corpus, (train, test) in splits.items():
            t = time.perf_counter()
            scores = GeneralImpostors().fit(train).score_problems(test)
            last.append(
                verification_row(f"pan14/{corpus}", test.labels, scores, time.perf_counter() - t)
            )
        return time.perf_counter() - start

    record = quiet.LoadRecord(quiet.wait_for_quiet(max_load, timeout))
    took = quiet.spread(quiet.alternate({"gi": all_six}, repeats)["gi"])
    record.close()
    rows += last
    print(
        f"PAN14, all six corpora (train + test, {int((pan14.frame['split'] == 'train').sum())}"
        f" + {int((pan14.frame['split'] == 'test').sum())} problems), {os.cpu_count()} cores: "
        f"median {took['median']:.1f} s wall (min {took['min']:.1f}, max {took['max']:.1f}, "
        f"{took['runs']} runs); {record.label()}"
    )
    return pd.DataFrame(rows)


def _cdaa_problems(name: str, split: str | None):
    """(problem, known texts, their candidates, unknown texts, true candidates) per problem.

    The truth is the problem's own ``candidate`` column (``<UNK>`` for a text by none of its
    candidates), not ``author``, which names the person across problems."""
    frame = load(name, split=split).frame if split else load(name).frame
    for problem, g in frame.groupby("problem", sort=True):
        known, unknown = g[g["role"] == "known"], g[g["role"] == "unknown"]
        yield (
            problem,
            known["text"].tolist(),
            known["candidate"].to_numpy(),
            unknown["text"].tolist(),
            unknown["candidate"].tolist(),
        )


def svm() -> pd.DataFrame:
    from baselines.svm import SVMAttributor, fit_reject_margin, top2_margin
    from stylo.metrics.classification import attribution_scores

    rows = []
    t = time.perf_counter()
    for problem, k_texts, k_auth, u_texts, u_auth in _cdaa_problems("pan18_cdaa", "test"):
        pred = SVMAttributor().fit(k_texts, k_auth).predict(u_texts)
        rows.append(
            {
                "data": "pan18_cdaa:test",
                "problem": problem,
                "rule": "closed",
                **attribution_scores(u_auth, list(pred)),
            }
        )
    print(f"PAN18 test: {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    fitted = []
    for problem, k_texts, k_auth, u_texts, u_auth in _cdaa_problems("pan19_cdaa", None):
        clf = SVMAttributor().fit(k_texts, k_auth)
        fitted.append(
            (
                problem,
                clf.decision_function(u_texts),
                clf.classes_,
                np.asarray(u_auth, dtype=object),
            )
        )
    for i, (problem, scores, classes, y_true) in enumerate(fitted):
        closed = classes[scores.argmax(axis=1)].astype(object)
        rows.append(
            {
                "data": "pan19_cdaa",
                "problem": problem,
                "rule": "no rejection",
                **attribution_scores(list(y_true), list(closed), unknown_label="<UNK>"),
            }
        )
        # the rejection margin of problem i is fitted on the other 19 problems only
        margin = fit_reject_margin([f[1:] for j, f in enumerate(fitted) if j != i])
        open_pred = closed.copy()
        open_pred[top2_margin(scores) < margin] = "<UNK>"
        rows.append(
            {
                "data": "pan19_cdaa",
                "problem": problem,
                "rule": "<UNK> LOPO margin",
                "margin": margin,
                **attribution_scores(list(y_true), list(open_pred), unknown_label="<UNK>"),
            }
        )
    print(f"PAN19: {time.perf_counter() - t:.1f} s")
    per_problem = pd.DataFrame(rows)
    return (
        per_problem.groupby(["data", "rule"])
        .agg(
            problems=("problem", "size"),
            macro_f1=("macro_f1", "mean"),
            accuracy=("accuracy", "mean"),
            mean_margin=("margin", "mean"),
        )
        .round(3)
        .reset_index()
    )


def gi_kernel(n_problems: int = 10) -> pd.DataFrame:
    """Speed of the batched Numba kernels (win counts, margins) against their plain references
    on the first ``n_problems`` PAN15 test problems (same inputs, same output checked)."""
    import scipy.sparse as sp

    from baselines import _impostor_trials as trials
    from stylo.features import CharNgrams

    test = load("pan15_av_en", split="test")
    texts = test.known_joined + test.unknown
    # relative frequencies of the 10,000 most frequent char 4-grams, as the method counts them
    counter = CharNgrams(ngram_range=(4, 4), max_features=10_000, norm="l1", dtype=np.float64)
    rows = sp.csr_matrix(counter.fit_transform(texts))
    rows.sort_indices()
    n = len(test)
    rng = np.random.default_rng(0)
    k, m, n_iter = 100, 10, 100
    mask_t = np.zeros((rows.shape[1], n_iter))
    for it in range(n_iter):
        mask_t[rng.choice(rows.shape[1], rows.shape[1] // 2, replace=False), it] = 1.0
    picks = np.stack([rng.choice(k, m, replace=False) for _ in range(n_iter)])
    q = np.arange(n_problems, dtype=np.int64) + n
    t = np.arange(n_problems, dtype=np.int64)
    cand = np.stack(
        [
            rng.choice(np.setdiff1d(np.arange(2 * n), [i, i + n]), k, replace=False)
            for i in range(n_problems)
        ]
    ).astype(np.int64)
    csr = (rows.indptr.astype(np.int64), rows.indices.astype(np.int64), rows.data, rows.shape[1])
    sums = trials.masked_sums(csr[0], csr[1], csr[2], mask_t)
    # one byte a feature, as GeneralImpostors passes it
    mask = np.ascontiguousarray(mask_t.T, dtype=np.uint8)
    table = []
    for kernel in ("wins", "margins"):
        fast = getattr(trials, f"impostor_{kernel}")
        fast(*csr, q[:1], t[:1], cand[:1], mask, picks, sums)  # compile
        timings = {}
        for name, fn in (
            ("numba", fast),
            ("reference", getattr(trials, f"impostor_{kernel}_reference")),
        ):
            start = time.perf_counter()
            out = fn(*csr, q, t, cand, mask, picks, sums)
            timings[name] = (time.perf_counter() - start, out)
        table.append(
            {
                "kernel": kernel,
                "problems": n_problems,
                "k": k,
                "m": m,
                "iterations": n_iter,
                "numba_s": round(timings["numba"][0], 4),
                "reference_s": round(timings["reference"][0], 2),
                "speedup": round(timings["reference"][0] / timings["numba"][0], 1),
                "identical": bool(np.array_equal(timings["numba"][1], timings["reference"][1])),
            }
        )
    return pd.DataFrame(table)


CLOSED_SET = {"imdb62": (100, 62), "enron": (20, 50), "blog": (10, 100)}


def svm_closed(seed: int = 0) -> pd.DataFrame:
    """Closed-set SVM attribution: ``per_author`` texts of up to ``max_authors`` authors with
    at least that many texts (drawn with ``seed``), 20% of each author's texts held out."""
    from baselines.svm import SVMAttributor
    from stylo.metrics.classification import attribution_scores

    rows = []
    for name, (per_author, max_authors) in CLOSED_SET.items():
        t = time.perf_counter()
        corpus = load(name, min_per_author=per_author, per_author=per_author, seed=seed)
        rng = np.random.default_rng(seed)
        groups = corpus.by_author()
        authors = sorted(groups)
        if len(authors) > max_authors:
            authors = sorted(rng.choice(authors, size=max_authors, replace=False))
        test = np.zeros(len(corpus), dtype=bool)
        keep = np.zeros(len(corpus), dtype=bool)
        for a in authors:
            idx = rng.permutation(groups[a])
            keep[idx] = True
            test[idx[: max(1, len(idx) // 5)]] = True
        texts, labels = np.array(corpus.texts, dtype=object), corpus.authors
        train = keep & ~test
        clf = SVMAttributor().fit(list(texts[train]), labels[train])
        pred = clf.predict(list(texts[test]))
        rows.append(
            {
                "data": name,
                "authors": len(authors),
                "train": int(train.sum()),
                "test": int(test.sum()),
                **{
                    k: round(v, 3)
                    for k, v in attribution_scores(list(labels[test]), list(pred)).items()
                },
                "seconds": round(time.perf_counter() - t, 1),
            }
        )
    return pd.DataFrame(rows)


def federalist() -> pd.DataFrame:
    from experiments.federalist import attribute_disputed

    table = attribute_disputed()
    return table.groupby("delta")["predicted"].value_counts().unstack(fill_value=0).reset_index()


def main(argv: list[str]) -> int:
    runs = {
        "gi": general_impostors,
        "gi-kernel": gi_kernel,
        "svm": svm,
        "svm-closed": svm_closed,
        "federalist": federalist,
    }
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="*", help=f"any of {sorted(runs)} (default: all but gi-kernel)")
    quiet.add_arguments(ap)
    args = ap.parse_args(argv)
    unknown = sorted(set(args.what) - set(runs))
    if unknown:
        ap.error(f"unknown measurement(s) {unknown}; choose from {sorted(runs)}")
    pd.set_option("display.width", 200)
    for name in args.what or ["gi", "svm", "svm-closed", "federalist"]:
        if name == "gi":
            table = general_impostors(args.repeats, args.max_load, args.quiet_timeout)
        else:
            table = runs[name]()
        print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
