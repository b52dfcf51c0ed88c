"""Benchmark: stylo.features n-gram extractors and distance kernels vs scikit-learn / SciPy,
and the text kernels (TextDistortion's, LambdaG's tokens) vs the Python they replaced.

    python -m benchmarks.bench_features [--docs 30000] [--pairs 1000] [--repeats 3]
        [--max-load 0.5] [--quiet-timeout 900]

It imports ``stylo`` as installed (``pip install -e .``): to measure another checkout, run it
with ``PYTHONPATH=<checkout>`` (the subprocesses inherit it).

Loads the blog corpus as its file holds it (``stylo.datasets.load("blog", clean=False)``,
30,000 posts: speed, not authorship, is measured) and, for char 1-4-grams and word 1-2-grams,
runs ``CountVectorizer.fit_transform`` and ``CharNgrams`` /
``WordNgrams.fit_transform`` with ``n_jobs=1`` and ``n_jobs=2``, each in a fresh subprocess
(after a small warm-up call, so Numba's cached compilation and imports are not timed). It
first checks that every matrix equals CountVectorizer's (same feature names, same counts),
then prints seconds, documents/s, MB/s (UTF-8 text), peak memory and speed ratios. Each stylo
configuration runs ``--repeats`` times (default 3, the median is reported) once the machine is
quiet (:mod:`benchmarks.quiet`; the load before and after is printed), ``n_jobs=1`` and
``n_jobs=2`` alternating: on a virtual machine one run can vary by 30 % or more, mostly in
first-touch page faults of the result, and the machine's state drifts between runs, so that
a drift weighs on both sides of their ratio alike. Each run waits ``--settle`` seconds
(default 3) after its warm-up before it is timed: this machine's virtual memory device hands
freed memory back to the host about 2 s after it is freed (free page reporting is on), and a run
that starts right after the previous run and the comparison of its matrix freed gigabytes
competes with that. Measured here (2 cores): char 1-4 with ``n_jobs=2`` took 0.92-1.03 s
right after another process allocated and freed 3.2 GB, 0.81-0.86 s after a 3 s pause; the
guest's CPUs stayed idle in between.

Peak memory = the process's peak resident set (``VmHWM``) during the call minus its resident
set just before, after resetting the peak with ``/proc/self/clear_refs`` (Linux); it counts
Numba's allocations, which ``tracemalloc`` would not see.

Then the pairwise kernels: ``pairwise_*`` on a block of documents and ``paired_*`` on aligned
rows, against scikit-learn's sparse ``cosine_similarity`` / ``manhattan_distances``, SciPy
sparse element-wise ``minimum``/``maximum``, and dense NumPy for all-vs-all min-max; results
are checked to agree (to 1e-9) before timing is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchmarks import quiet

#: the checkout this file is in: the children run ``-m benchmarks.bench_features`` from it
_ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {"char 1-4": ("char", (1, 4)), "word 1-2": ("word", (1, 2))}


def rss_kb(field: str) -> int:
    """A field of ``/proc/self/status`` in kB (``VmRSS``, ``VmHWM``)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def engine_factory(engine: str, analyzer: str, rng: tuple[int, int], n_jobs: int):
    """A function making a fresh counter: scikit-learn's CountVectorizer (word tokens as
    stylo's) or stylo's CharNgrams/WordNgrams with ``n_jobs`` threads."""
    from sklearn.feature_extraction.text import CountVectorizer

    from stylo.features import TOKEN_PATTERN, CharNgrams, WordNgrams

    if engine == "sklearn":
        extra = {"token_pattern": TOKEN_PATTERN} if analyzer == "word" else {}
        return lambda: CountVectorizer(analyzer=analyzer, ngram_range=rng, **extra)
    if analyzer == "word":
        return lambda: WordNgrams(rng, n_jobs=n_jobs)
    return lambda: CharNgrams(rng, analyzer=analyzer, n_jobs=n_jobs)


def timed_fit(make, docs: list[str], out: str) -> None:
    """``make().fit_transform(docs)`` timed, with the peak resident-set growth during it;
    writes the matrix (``out.npz``), its feature names (``out.names.npy``) and the
    measurements (``out.json``: seconds, peak MB, shape, nnz)."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset the peak-RSS counter
    base = rss_kb("VmRSS")
    t0 = time.perf_counter()
    vec = make()
    X = vec.fit_transform(docs)
    seconds = time.perf_counter() - t0
    peak = rss_kb("VmHWM") - base
    sp.save_npz(out + ".npz", sp.csr_matrix(X), compressed=False)
    np.save(
        out + ".names.npy",
        np.asarray(vec.get_feature_names_out(), dtype=object),
        allow_pickle=True,
    )
    with open(out + ".json", "w") as fh:
        json.dump(
            {"seconds": seconds, "peak_mb": peak / 1024, "shape": X.shape, "nnz": int(X.nnz)}, fh
        )


def child(args) -> None:
    """One configuration in this fresh process; writes matrix, names and measurements."""
    with open(args.texts, "rb") as fh:
        texts = pickle.load(fh)
    make = engine_factory(args.engine, *CONFIGS[args.config], args.n_jobs)
    make().fit_transform(texts[:50])  # warm-up: imports, Numba cache load, tables
    # let the machine settle: see --settle
    time.sleep(args.settle)
    timed_fit(make, texts, args.out)


def run_extractors(texts, tmp: Path, repeats: int, settle: float) -> list[dict]:
    """CountVectorizer once (~20x slower and steadier), then each stylo configuration
    ``repeats`` times, ``n_jobs=1`` and ``n_jobs=2`` alternating (a fresh process each: median
    seconds, largest peak), so that a drift of the machine's state between runs weighs on
    both sides of their ratio alike."""
    path = tmp / "texts.pkl"
    with open(path, "wb") as fh:
        pickle.dump(texts, fh)
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    rows = []
    for config in CONFIGS:
        ref = None
        runs: dict[tuple, list[dict]] = {}
        equal = {}
        order = [("sklearn", 1)] + [("stylo", n) for _ in range(repeats) for n in (1, 2)]
        for engine, n_jobs in order:
            out = str(tmp / f"{config.replace(' ', '_')}_{engine}_{n_jobs}")
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.bench_features",
                    "--child",
                    "--config",
                    config,
                    "--engine",
                    engine,
                    "--n-jobs",
                    str(n_jobs),
                    "--texts",
                    str(path),
                    "--out",
                    out,
                    "--settle",
                    str(settle),
                ],
                check=True,
                cwd=_ROOT,
            )
            with open(out + ".json") as fh:
                runs.setdefault((engine, n_jobs), []).append(json.load(fh))
            X = sp.load_npz(out + ".npz")
            names = np.load(out + ".names.npy", allow_pickle=True)
            if ref is None:
                ref = (X, names)
            same = X is ref[0] or (
                X.shape == ref[0].shape and list(names) == list(ref[1]) and (X != ref[0]).nnz == 0
            )
            equal[(engine, n_jobs)] = equal.get((engine, n_jobs), True) and same
            for suffix in (".npz", ".names.npy", ".json"):
                os.remove(out + suffix)
        for (engine, n_jobs), done in runs.items():
            seconds = [r["seconds"] for r in done]
            rows.append(
                {
                    "config": config,
                    "engine": engine,
                    "n_jobs": n_jobs,
                    "equal": equal[(engine, n_jobs)],
                    "mb": mb,
                    **done[0],
                    "seconds": float(np.median(seconds)),
                    "peak_mb": max(r["peak_mb"] for r in done),
                }
            )
            print(
                f"  done {config} {engine} n_jobs={n_jobs}: "
                f"{', '.join(f'{s:.2f}' for s in seconds)} s, "
                f"equal to CountVectorizer: {equal[(engine, n_jobs)]}",
                flush=True,
            )
    return rows


def print_extractors(rows, n_docs):
    print(
        f"\nn-gram extraction, fit_transform on {n_docs} blog posts ({rows[0]['mb']:.1f} MB UTF-8)"
    )
    head = (
        f"{'features':9} {'engine':22} {'equal':>5} {'seconds':>8} {'docs/s':>8} "
        f"{'MB/s':>7} {'peak MB':>8} {'vs CV':>7} {'vs n_jobs=1':>11}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        cv = next(x for x in rows if x["config"] == r["config"] and x["engine"] == "sklearn")
        one = next(
            x
            for x in rows
            if x["config"] == r["config"] and x["engine"] == "stylo" and x["n_jobs"] == 1
        )
        name = "CountVectorizer" if r["engine"] == "sklearn" else f"stylo n_jobs={r['n_jobs']}"
        vs_one = f"{one['seconds'] / r['seconds']:.2f}x" if r["engine"] == "stylo" else ""
        print(
            f"{r['config']:9} {name:22} {str(r['equal']):>5} {r['seconds']:8.2f} "
            f"{n_docs / r['seconds']:8.0f} {r['mb'] / r['seconds']:7.2f} "
            f"{r['peak_mb']:8.0f} {cv['seconds'] / r['seconds']:6.1f}x {vs_one:>11}"
        )


def _time(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bench_kernels(texts, n_pairs):
    from sklearn.metrics.pairwise import cosine_similarity, manhattan_distances

    from stylo.features import (
        CharNgrams,
        gram,
        paired_cosine,
        paired_manhattan,
        paired_minmax,
        pairwise_cosine,
        pairwise_manhattan,
        pairwise_minmax,
    )

    X = CharNgrams((1, 4)).fit_transform(texts[: 2 * n_pairs]).astype(np.float64)
    A, B = X[:n_pairs], X[n_pairs : 2 * n_pairs]
    top = np.argsort(-np.asarray(X.sum(axis=0)).ravel(), kind="stable")[:2000]
    Ad, Bd = A[:, top].toarray(), B[:, top].toarray()
    # an attribution problem's size (n_pairs / 4 texts of four posts each) and view:
    # ensemble-attribution's Gram matrices
    problem = [" ".join(texts[i : i + 4]) for i in range(0, n_pairs, 4)]
    tfidf = CharNgrams(
        (2, 5), norm="l2", min_df=2, use_idf=True, sublinear_tf=True, dtype=np.float64
    )
    rows = tfidf.fit_transform(problem)

    def numpy_pairwise_minmax():
        out = np.empty((Ad.shape[0], Bd.shape[0]))
        for i in range(Ad.shape[0]):
            out[i] = np.minimum(Ad[i], Bd).sum(1) / np.maximum(Ad[i], Bd).sum(1)
        return out

    def scipy_paired_minmax():
        return np.asarray(A.minimum(B).sum(1)).ravel() / np.asarray(A.maximum(B).sum(1)).ravel()

    def scipy_paired_cosine():
        norms = np.sqrt(
            np.asarray(A.multiply(A).sum(1)).ravel() * np.asarray(B.multiply(B).sum(1)).ravel()
        )
        return np.asarray(A.multiply(B).sum(1)).ravel() / norms

    cases = [
        (
            f"pairwise_cosine {n_pairs}x{n_pairs}",
            lambda: pairwise_cosine(A, B),
            "sklearn cosine_similarity (sparse)",
            lambda: cosine_similarity(A, B),
        ),
        (
            f"pairwise_manhattan {n_pairs}x{n_pairs}",
            lambda: pairwise_manhattan(A, B),
            "sklearn manhattan_distances (sparse)",
            lambda: manhattan_distances(A, B),
        ),
        (
            f"pairwise_minmax {n_pairs}x{n_pairs}, 2000 MFF",
            lambda: pairwise_minmax(sp.csr_matrix(Ad), sp.csr_matrix(Bd)),
            "NumPy dense minimum/maximum",
            numpy_pairwise_minmax,
        ),
        (
            f"paired_minmax {n_pairs} pairs",
            lambda: paired_minmax(A, B),
            "SciPy sparse minimum/maximum",
            scipy_paired_minmax,
        ),
        (
            f"paired_cosine {n_pairs} pairs",
            lambda: paired_cosine(A, B),
            "SciPy sparse multiply",
            scipy_paired_cosine,
        ),
        (
            f"paired_manhattan {n_pairs} pairs",
            lambda: paired_manhattan(A, B),
            "SciPy sparse abs(A - B)",
            lambda: np.asarray(abs(A - B).sum(1)).ravel(),
        ),
        (
            f"gram {n_pairs // 4} rows (L2 TF-IDF, char 2-5)",
            lambda: gram(rows),
            "SciPy sparse (X @ X.T).toarray()",
            lambda: (rows @ rows.T).toarray(),
        ),
    ]
    print(
        f"\ndistance kernels on char 1-4-gram counts of blog posts "
        f"({X.shape[1]} features), best of 3, one thread"
    )
    head = f"{'kernel':40} {'stylo s':>8} {'reference':38} {'ref s':>8} {'ratio':>7} agree"
    print(head)
    print("-" * len(head))
    for name, ours, ref_name, ref in cases:
        ours()  # compile / cache load
        t_ours, got = _time(ours)
        t_ref, want = _time(ref, repeat=1 if "NumPy" in ref_name else 3)
        agree = np.allclose(got, np.asarray(want), rtol=1e-9, atol=1e-9)
        print(f"{name:40} {t_ours:8.3f} {ref_name:38} {t_ref:8.3f} {t_ref / t_ours:6.1f}x {agree}")


def bench_text_kernels(texts):
    """The text rewriting kernels (TextDistortion's, LambdaG's tokens) against the plain Python
    they replaced, which stays as their tested reference; outputs compared for equality."""
    from baselines._sentence_tokens import BREAK, SentenceTokens, reference_tokens
    from stylo.features import TextDistortion
    from stylo.features import _reference as reference

    k = 300
    fitted = TextDistortion(k=k).fit(texts)
    distorted = fitted.transform(texts)

    def reference_fit():
        counts = reference.distortion_counts(texts)
        return sorted(w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k])

    def reference_vocabulary():
        return {w for t in distorted for w in reference_tokens(t)} - {BREAK}

    cases = [
        (
            f"TextDistortion(k={k}).fit",
            lambda: list(TextDistortion(k=k).fit(texts).vocabulary_),
            "Python Counter and sort",
            reference_fit,
        ),
        (
            "TextDistortion.transform (dv_ma)",
            lambda: fitted.transform(texts),
            "Python split, map and join",
            lambda: reference.distort(texts, set(fitted.vocabulary_), False),
        ),
        (
            "LambdaG SentenceTokens, vocabulary",
            lambda: SentenceTokens(distorted).distinct(),
            "regex sub and findall",
            reference_vocabulary,
        ),
    ]
    mb = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6
    print(f"\ntext kernels on {len(texts)} blog posts ({mb:.1f} MB UTF-8), best of 3, one thread")
    head = f"{'kernel':40} {'stylo s':>8} {'reference':38} {'ref s':>8} {'ratio':>7} equal"
    print(head)
    print("-" * len(head))
    for name, ours, ref_name, ref in cases:
        t_ours, got = _time(ours)
        t_ref, want = _time(ref, repeat=1)
        ratio = t_ref / t_ours
        print(f"{name:40} {t_ours:8.3f} {ref_name:38} {t_ref:8.3f} {ratio:6.1f}x {got == want}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=30000)
    p.add_argument("--pairs", type=int, default=1000)
    p.add_argument("--kernels-only", action="store_true", help="skip the extractor runs")
    p.add_argument(
        "--settle",
        type=float,
        default=3.0,
        help="seconds each run waits, after its warm-up, before it is timed",
    )
    quiet.add_arguments(p)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    # the parent's own flags for a child process; checked all the same, so that a hand-run
    # child names a wrong value instead of failing deep inside
    p.add_argument("--config", choices=list(CONFIGS), help=argparse.SUPPRESS)
    p.add_argument("--engine", choices=["sklearn", "stylo"], help=argparse.SUPPRESS)
    p.add_argument("--n-jobs", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--texts", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args)
    from stylo.datasets import load

    texts = load("blog", clean=False).texts[: args.docs]
    record = quiet.LoadRecord(quiet.wait_for_quiet(args.max_load, args.quiet_timeout))
    print(f"machine: {os.cpu_count()} cores")
    if not args.kernels_only:
        with tempfile.TemporaryDirectory() as tmp:
            rows = run_extractors(texts, Path(tmp), args.repeats, args.settle)
        print_extractors(rows, len(texts))
    bench_kernels(texts, args.pairs)
    bench_text_kernels(texts)
    print(record.close().label())


if __name__ == "__main__":
    main()
