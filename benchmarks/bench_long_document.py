"""Benchmark: peak memory of counting n-grams in ONE long document, stylo vs CountVectorizer.

    python -m benchmarks.bench_long_document [--mb 50] [--cv-mb 5] [--repeats 3] [--max-load 0.5]

Builds one document of ``--mb`` MB (UTF-8) by joining blog posts (``stylo.datasets.load(
"blog", clean=False)``, cycled) with newlines, and one of ``--cv-mb`` MB the same way, and runs
``fit_transform([document])`` of char 1-4-grams (``CharNgrams``) and word 1-2-grams
(``WordNgrams``), each in a fresh subprocess after a small warm-up call (imports, Numba's
cached compilation, tables). ``CountVectorizer`` runs on the smaller document only: it holds
every n-gram of a document as a Python str at once (char 1-4 of 50 MB: 200 million str, more
memory than this machine should lend a benchmark). On the smaller document every stylo matrix
is checked to equal CountVectorizer's (same names, same counts).

Peak memory = the process's peak resident set (``VmHWM``) during the call minus its resident
set just before, after resetting the peak (Linux ``/proc/self/clear_refs``), as in
``bench_features.py``; it counts Numba's allocations, which ``tracemalloc`` would not see. The
document itself is built before the measurement and is not counted. Each row waits for a
quiet machine and alternates its engines ``--repeats`` times (:mod:`benchmarks.quiet`):
median seconds with the min-max, median peak, and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchmarks import quiet

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {"char 1-4": ("char", (1, 4)), "word 1-2": ("word", (1, 2))}


def child(args) -> None:
    """One (configuration, engine, document) in this fresh process; writes matrix, names and
    measurements."""
    from benchmarks.bench_features import engine_factory, timed_fit

    with open(args.text, "rb") as fh:
        doc = pickle.load(fh)
    make = engine_factory(args.engine, *CONFIGS[args.config], args.n_jobs)
    make().fit_transform([doc[:5000]])  # warm-up
    timed_fit(make, [doc], args.out)


def document(texts: list[str], mb: float) -> str:
    """Blog posts joined by newlines (cycled) up to ``mb`` MB of UTF-8."""
    want = int(mb * 1e6)
    parts, size = [], 0
    while size < want:
        for t in texts:
            parts.append(t)
            size += len(t.encode("utf-8")) + 1
            if size >= want:
                break
    return "\n".join(parts)


def run(doc: str, tmp: Path, config: str, engine: str, n_jobs: int):
    path = tmp / "doc.pkl"
    with open(path, "wb") as fh:
        pickle.dump(doc, fh)
    out = str(tmp / "out")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.bench_long_document",
            "--child",
            "--config",
            config,
            "--engine",
            engine,
            "--n-jobs",
            str(n_jobs),
            "--text",
            str(path),
            "--out",
            out,
        ],
        check=True,
        cwd=ROOT,
    )
    with open(out + ".json") as fh:
        row = json.load(fh)
    X = sp.load_npz(out + ".npz")
    names = list(np.load(out + ".names.npy", allow_pickle=True))
    for suffix in (".npz", ".names.npy", ".json"):
        os.remove(out + suffix)
    return row, X, names


def _contender(doc: str, tmp: Path, config: str, engine: str, n_jobs: int, kept: dict):
    """A callable for :func:`quiet.alternate`: one fresh subprocess a call; keeps each run's
    measurements and the first run's matrix (for the equality check)."""

    def once() -> float:
        row, X, names = run(doc, tmp, config, engine, n_jobs)
        kept.setdefault("rows", []).append(row)
        kept.setdefault("matrix", (X, names))
        return row["seconds"]

    return once


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mb", type=float, default=50.0, help="size of the long document (MB)")
    p.add_argument(
        "--cv-mb",
        type=float,
        default=5.0,
        help="size of the document CountVectorizer also counts (MB)",
    )
    quiet.add_arguments(p)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--config", help=argparse.SUPPRESS)
    p.add_argument("--engine", help=argparse.SUPPRESS)
    p.add_argument("--n-jobs", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--text", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args)
    from stylo.datasets import load

    texts = load("blog", clean=False).texts
    print(f"machine: {os.cpu_count()} cores")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for config in CONFIGS:
            for mb in (args.cv_mb, args.mb):
                doc = document(texts, mb)
                engines = ([("sklearn", 1)] if mb == args.cv_mb else []) + [
                    ("stylo", 1),
                    ("stylo", 2),
                ]
                kept = {e: {} for e in engines}
                contenders = {e: _contender(doc, Path(tmp), config, *e, kept[e]) for e in engines}
                load = quiet.LoadRecord(quiet.wait_for_quiet(args.max_load, args.quiet_timeout))
                times = quiet.alternate(contenders, args.repeats)
                load.close()
                ref = kept.get(("sklearn", 1), {}).get("matrix")
                for (engine, n_jobs), seconds in times.items():
                    X, names = kept[(engine, n_jobs)]["matrix"]
                    equal = "" if ref is None else str(names == ref[1] and (X != ref[0]).nnz == 0)
                    peaks = [r["peak_mb"] for r in kept[(engine, n_jobs)]["rows"]]
                    rows.append(
                        {
                            "config": config,
                            "mb": mb,
                            "engine": engine,
                            "n_jobs": n_jobs,
                            "equal": equal,
                            **quiet.spread(seconds),
                            "peak_mb": float(np.median(peaks)),
                            "load": load.label(),
                        }
                    )
                    print(
                        f"  done {config} {mb:g} MB {engine} n_jobs={n_jobs}: median "
                        f"{rows[-1]['median']:.2f} s, {rows[-1]['peak_mb']:.0f} MB",
                        flush=True,
                    )
    print(
        "\nfit_transform of one document (blog posts joined): seconds and peak resident memory,"
        f" medians of {args.repeats} fresh processes per row, the engines alternating"
    )
    head = (
        f"{'features':9} {'document':>8} {'engine':18} {'equal':>5} {'seconds':>8} "
        f"{'min-max':>11} {'peak MB':>8} {'peak/text':>9} {'vs CV':>6}  load"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        cv = next(
            (
                x
                for x in rows
                if x["config"] == r["config"] and x["mb"] == r["mb"] and x["engine"] == "sklearn"
            ),
            None,
        )
        name = "CountVectorizer" if r["engine"] == "sklearn" else f"stylo n_jobs={r['n_jobs']}"
        vs = f"{cv['peak_mb'] / r['peak_mb']:5.1f}x" if cv and r["engine"] == "stylo" else ""
        span = f"{r['min']:.2f}-{r['max']:.2f}"
        print(
            f"{r['config']:9} {r['mb']:6g} MB {name:18} {r['equal']:>5} {r['median']:8.2f} "
            f"{span:>11} {r['peak_mb']:8.0f} {r['peak_mb'] / r['mb']:8.1f}x {vs:>6}  {r['load']}"
        )


if __name__ == "__main__":
    main()
