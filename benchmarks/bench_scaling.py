"""Benchmark: how time and peak memory grow with the work, at 1x, 4x and 16x.

    python -m benchmarks.bench_scaling [--what features naive impostors] [--scales 1 4 16]
        [--repeats 3] [--max-load 0.5] [--quiet-timeout 900]

Each measurement runs in a fresh subprocess (imports and one small warm-up call untimed, so
Numba's cached kernels are loaded), which reports its seconds and its peak resident-set growth
(``VmHWM`` after resetting it through ``/proc/self/clear_refs``, minus the resident set before
the call: Numba's and NumPy's allocations included). Each (work, scale) runs ``--repeats``
times once the machine is quiet (:mod:`benchmarks.quiet`), the scales alternating; the median
seconds with their range and the largest peak are printed, with the load before and after.

- ``features``: ``CharNgrams((1, 4))`` and ``WordNgrams((1, 2))`` counts (``n_jobs=1``) of the
  blog corpus's 30,000 posts (1x, 40 MB of UTF-8) and of the same posts repeated 4 and 16 times
  (the vocabulary stays that of 1x; the text and the matrix grow).
- ``naive`` and ``impostors``: fit on half of a pair set and score the other half. 1x is 1,500
  blog posts drawn with the seed (750 pairs, up to half of them same-author: two posts of
  one blogger); 4x and 16x draw 6,000 and 24,000 posts (the corpus has 30,000). Drawn, not
  repeated: General Impostors would find a repeated text's copy in its impostor pool. The
  full corpus at 16x would take General Impostors hours, for the reason this table shows: it
  compares every query with every text of its pool, and the pool grows with the corpus.
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import quiet
from benchmarks.bench_features import rss_kb

_ROOT = Path(__file__).resolve().parents[1]
WORKS = ("features", "naive", "impostors")
#: what ``features`` times, each a work of its own in the table
_FEATURES = ("char 1-4", "word 1-2")
#: posts drawn for the verifiers at 1x (see the module docstring)
_BASE_POSTS = 1500


def _blog():
    from stylo.datasets import load

    return load("blog", clean=False).frame


def pair_set(frame, n_posts: int, seed: int):
    """``n_posts`` posts of ``frame`` (columns ``author``, ``text``) as n_posts / 2 pairs, each
    post in at most one pair: up to half same-author (two posts of one author drawn with
    ``seed``; an author drawn again once two of its posts are left no longer gives one), the
    rest by two authors; returns (train, test) PairSets, the pairs shuffled and halved."""
    from stylo.corpus import PairSet

    rng = np.random.default_rng(seed)
    frame = frame.reset_index(drop=True)
    n_pairs = n_posts // 2
    by_author = {a: idx.to_numpy() for a, idx in frame.groupby("author").groups.items()}
    authors = np.array(sorted(by_author))
    texts = frame["text"].to_numpy()
    same_n = n_pairs // 2
    chosen = rng.choice(authors, size=same_n, replace=same_n > len(authors))
    known, unknown, same = [], [], []
    used: set[int] = set()
    for a in chosen:
        free = [i for i in by_author[a] if i not in used]
        if len(free) < 2:
            continue
        i, j = rng.choice(free, size=2, replace=False)
        used |= {int(i), int(j)}
        known.append(texts[i])
        unknown.append(texts[j])
        same.append(True)
    rest = rng.permutation([i for i in range(len(texts)) if i not in used])
    author = frame["author"].to_numpy()
    k = 0
    while len(known) < n_pairs and k + 1 < len(rest):
        i, j = rest[k], rest[k + 1]
        k += 2
        if author[i] == author[j]:
            continue
        known.append(texts[i])
        unknown.append(texts[j])
        same.append(False)
    order = rng.permutation(len(known))
    half = len(order) // 2

    def part(idx, name):
        return PairSet.from_lists(
            [known[i] for i in idx],
            [unknown[i] for i in idx],
            same=[same[i] for i in idx],
            name=name,
        )

    return part(order[:half], "train"), part(order[half:], "test")


def _work(what: str):
    """The timed call of ``what``: on texts (features) or on a (train, test) pair of PairSets."""
    if what == "char 1-4":
        from stylo.features import CharNgrams

        return lambda texts: CharNgrams((1, 4), n_jobs=1).fit_transform(texts)
    if what == "word 1-2":
        from stylo.features import WordNgrams

        return lambda texts: WordNgrams((1, 2), n_jobs=1).fit_transform(texts)
    from baselines.registry import make

    return lambda data: make(what, seed=0).fit(data[0]).score_problems(data[1])


def child(args) -> None:
    with open(args.data, "rb") as fh:
        payload = pickle.load(fh)
    run = _work(args.what)
    if args.what in _FEATURES:
        run(payload[:50])
    else:
        run(tuple(pairs.subset(np.arange(40)) for pairs in payload))
    time.sleep(args.settle)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = rss_kb("VmRSS")
    t0 = time.perf_counter()
    run(payload)
    seconds = time.perf_counter() - t0
    peak = (rss_kb("VmHWM") - base) / 1024
    with open(args.out, "w") as fh:
        json.dump({"seconds": seconds, "peak_mb": peak}, fh)


def _measure(what: str, path: Path, out: Path, settle: float) -> dict:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.bench_scaling",
            "--child",
            what,
            "--data",
            str(path),
            "--out",
            str(out),
            "--settle",
            str(settle),
        ],
        check=True,
        cwd=_ROOT,
    )
    with open(out) as fh:
        return json.load(fh)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--what", nargs="+", choices=WORKS, default=list(WORKS))
    ap.add_argument("--scales", nargs="+", type=int, default=[1, 4, 16])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--settle", type=float, default=3.0, help="seconds' pause before timing")
    ap.add_argument("--child", metavar="WORK", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    quiet.add_arguments(ap)
    args = ap.parse_args(argv)
    if args.child:
        args.what = args.child
        child(args)
        return 0
    if any(s < 1 for s in args.scales):
        ap.error(f"--scales must be >= 1, got {args.scales}")
    frame = _blog()
    works = []
    for what in args.what:
        works += list(_FEATURES) if what == "features" else [what]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        paths = {}
        for what in works:
            for s in args.scales:
                if what in _FEATURES:
                    payload = frame["text"].tolist() * s
                    size = f"{len(payload):,} posts, {sum(map(len, payload)) / 1e6:.0f} M chars"
                else:
                    n = _BASE_POSTS * s
                    if n > len(frame):
                        print(f"skip {what} at {s}x: needs {n} posts, the corpus has {len(frame)}")
                        continue
                    payload = pair_set(frame, n, args.seed)
                    size = f"{len(payload[0]) + len(payload[1]):,} pairs"
                path = tmp / f"{what.replace(' ', '_')}_{s}.pkl"
                with open(path, "wb") as fh:
                    pickle.dump(payload, fh)
                paths[(what, s)] = (path, size)
        record = quiet.LoadRecord(quiet.wait_for_quiet(args.max_load, args.quiet_timeout))
        for what in works:
            done: dict[int, list[dict]] = {}
            for _ in range(args.repeats):
                for s in args.scales:
                    if (what, s) in paths:
                        got = _measure(what, paths[(what, s)][0], tmp / "out.json", args.settle)
                        done.setdefault(s, []).append(got)
            base = None
            for s, runs in done.items():
                took = quiet.spread([r["seconds"] for r in runs])
                peak = max(r["peak_mb"] for r in runs)
                base = base or (s, took["median"], peak)
                rows.append((what, s, paths[(what, s)][1], took, peak, base))
                took_s = ", ".join(f"{r['seconds']:.2f}" for r in runs)
                print(f"  done {what} {s}x: {took_s} s", flush=True)
        record.close()
    print(f"\n{record.label()}; median of {args.repeats} fresh processes (min-max)")
    print("| work | scale | size | seconds | time / 1x time | peak MB | peak / 1x peak |")
    print("|---|---|---|---|---|---|---|")
    for what, s, size, took, peak, (s0, t0, p0) in rows:
        seconds = f"{took['median']:.2f} ({took['min']:.2f}-{took['max']:.2f})"
        print(
            f"| {what} | {s}x | {size} | {seconds} | {took['median'] / t0:.1f} "
            f"(work {s // s0}x) | {peak:.0f} | {peak / max(p0, 1):.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
