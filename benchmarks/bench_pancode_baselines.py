"""Run PAN's two official verification baselines (pan-code) on stylo's PAN corpora.

Usage::

    python -m benchmarks.bench_pancode_baselines PAN_CODE_DIR [--work DIR] [--datasets ...]

``PAN_CODE_DIR`` is a local checkout of https://github.com/pan-webis-de/pan-code (nothing of it
is part of stylo). The script copies two of its scripts into ``--work`` and runs them unchanged
except for two documented shims, on the same train->test pairs stylo's benchmark uses:

- ``clef20/authorship-verification/pan20-verif-baseline.py`` (cngdist, train+test in one run),
  with its evaluator's F1 returning 0 on an empty input (a grid cell where every answer is 0.5:
  current scikit-learn raises there) and a no-op ``seaborn`` stub (it only draws plots);
- ``clef22/authorship-verification/pan22-verif-baseline-compressor.py`` (PPM compressor, a
  train run and a test run).

Per corpus it waits for a quiet machine (:mod:`benchmarks.quiet`: ``--max-load``,
``--quiet-timeout``), then runs pan-code's two baselines (wall clock of the subprocesses,
start-up included) and stylo's counterparts (``naive`` and ``ppm-raw``, fit + score in this
process, after one Numba warm-up) ``--repeats`` times each, alternating, and prints the
median time (``total_s``) with its min-max, the load average before and after, the AUC
difference and the ratio of the medians (with the range of ratios the spreads allow). stylo's
methods run once per thread count of ``--stylo-jobs`` (default 1 and 2: pan-code's scripts use
one core; a row "ppm-raw n_jobs=2" is stylo on two). The answers are scored with
:mod:`stylo.metrics.pan`; ``--csv`` saves the table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from baselines.pan_io import write_pan20_format
from benchmarks import quiet
from benchmarks.bench_verifiers_pan import PARITY, warm_up
from benchmarks.bench_verifiers_pan import run as run_stylo
from benchmarks.pan_datasets import DATASETS, train_test
from stylo.metrics.pan import evaluate_all

CNGDIST = "clef20/authorship-verification/pan20-verif-baseline.py"
CNGDIST_EVAL = "clef20/authorship-verification/pan20_verif_evaluator.py"
COMPRESSOR = "clef22/authorship-verification/pan22-verif-baseline-compressor.py"
F1_LINE = "    return f1_score(true_y_filtered, pred_y_filtered)"
F1_PATCH = (
    "    if not true_y_filtered:\n        return 0.0\n"
    "    return f1_score(true_y_filtered, pred_y_filtered)"
)


def prepare_code(pancode: Path, code_dir: Path) -> None:
    """Copy the two baselines and the evaluator, patch the F1 edge case, stub seaborn."""
    code_dir.mkdir(parents=True, exist_ok=True)
    for rel in (CNGDIST, CNGDIST_EVAL, COMPRESSOR):
        shutil.copy(pancode / rel, code_dir / Path(rel).name)
    ev = code_dir / Path(CNGDIST_EVAL).name
    src = ev.read_text(encoding="utf-8")
    if F1_LINE not in src:
        raise RuntimeError(f"{ev}: the F1 line to patch was not found; pan-code changed?")
    ev.write_text(src.replace(F1_LINE, F1_PATCH), encoding="utf-8")
    (code_dir / "seaborn.py").write_text("def kdeplot(*args, **kwargs):\n    return None\n")


def run(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return elapsed


def score(answers: Path, test) -> dict:
    got = {}
    with open(answers, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            got[str(rec["id"])] = float(rec["value"])
    y_score = np.array([got.get(str(i), np.nan) for i in test.ids])
    m = evaluate_all(test.labels, y_score, version="pan21")
    m["auc_x_c@1"] = m["auc"] * m["c@1"]
    return m


def commands(py: str, code: Path, root: Path, tr: Path, te: Path) -> dict[str, list[list[str]]]:
    """pan-code's command lines per baseline (the compressor: a train run, then a test run)."""
    cngdist = [
        [
            py,
            str(code / Path(CNGDIST).name),
            "-input_pairs",
            str(tr / "pairs.jsonl"),
            "-input_truth",
            str(tr / "truth.jsonl"),
            "-test_pairs",
            str(te / "pairs.jsonl"),
            "-output",
            str(root / "out_cngdist"),
        ]
    ]
    compressor = [
        [py, str(code / Path(COMPRESSOR).name), "--train", "-train_dir", str(tr), "-model_dir"]
        + [str(root / "model")],
        [py, str(code / Path(COMPRESSOR).name), "-model_dir", str(root / "model"), "-test_dir"]
        + [str(te), "-out_dir", str(root / "out_ppm")],
    ]
    return {"pan-code cngdist": cngdist, "pan-code compressor": compressor}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pancode", type=Path, help="local checkout of pan-webis-de/pan-code")
    ap.add_argument("--work", type=Path, default=Path("/tmp/stylo_pancode_bench"))
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--csv", type=Path, help="also save the table here")
    ap.add_argument(
        "--stylo-jobs",
        type=int,
        nargs="+",
        default=[1, 2],
        help="thread counts (n_jobs) to run stylo's methods with (default: 1 2)",
    )
    quiet.add_arguments(ap)
    args = ap.parse_args(argv)
    code = args.work / "code"
    prepare_code(args.pancode.resolve(), code)
    warm_up()
    rows, ratios = [], []
    for name in args.datasets:
        train, test = train_test(name)
        root = args.work / name.replace("/", "_")
        shutil.rmtree(root, ignore_errors=True)
        tr = write_pan20_format(train, root / "train")
        te = write_pan20_format(test, root / "test")
        per_baseline = commands(sys.executable, code, root, tr, te)
        contenders = {
            k: (lambda c=c, r=root: sum(run(cmd, r) for cmd in c)) for k, c in per_baseline.items()
        }
        jobs = {}  # contender -> (stylo method, n_jobs)
        for method in PARITY.values():
            for n_jobs in args.stylo_jobs:
                label = method if n_jobs == 1 else f"{method} n_jobs={n_jobs}"
                jobs[label] = (method, n_jobs)
                contenders[label] = lambda m=method, n=name, j=n_jobs: run_stylo(n, m, 0, j)[
                    "total_s"
                ]
        load = quiet.LoadRecord(quiet.wait_for_quiet(args.max_load, args.quiet_timeout))
        times = quiet.alternate(contenders, args.repeats)
        load.close()
        answers = {
            "pan-code cngdist": root / "out_cngdist" / "answers.jsonl",
            "pan-code compressor": root / "out_ppm" / "answers.jsonl",
        }
        for method, seconds in times.items():
            if method in answers:
                quality = score(answers[method], test)
            else:
                stylo_method, n_jobs = jobs[method]
                result = run_stylo(name, stylo_method, 0, n_jobs)
                quality = {k: v for k, v in result.items() if k not in _TIMES}
            t = quiet.spread(seconds)
            rows.append(
                {
                    "dataset": name,
                    "method": method,
                    # the median run, under the name bench_verifiers_pan --pancode-csv reads
                    "total_s": t["median"],
                    "min_s": t["min"],
                    "max_s": t["max"],
                    "runs": t["runs"],
                    "load": load.label(),
                    "auc": quality["auc"],
                    "overall": quality["overall"],
                    "auc_x_c@1": quality["auc_x_c@1"],
                }
            )
        theirs_of = {ours: theirs for theirs, ours in PARITY.items()}
        for label, (ours, _) in jobs.items():
            mine = [r for r in rows[-len(times) :] if r["method"] == label][0]
            ref = [r for r in rows[-len(times) :] if r["method"] == theirs_of[ours]][0]
            ratios.append(
                {
                    "dataset": name,
                    "pan-code": theirs_of[ours],
                    "stylo": label,
                    "auc_diff": mine["auc"] - ref["auc"],
                    "ratio of medians": ref["total_s"] / mine["total_s"],
                    "ratio range": f"{ref['min_s'] / mine['max_s']:.1f}-"
                    f"{ref['max_s'] / mine['min_s']:.1f}",
                    "load": load.label(),
                }
            )
        print(pd.DataFrame(rows[-len(times) :]).round(4).to_string(index=False), flush=True)
        print(pd.DataFrame(ratios[-len(jobs) :]).round(4).to_string(index=False), flush=True)
        if args.csv:  # after every corpus, so a long run keeps what it has measured
            pd.DataFrame(rows).to_csv(args.csv, index=False)
    print(pd.DataFrame(ratios).round(4).to_string(index=False))
    return 0


#: run_stylo's timing columns (the quality columns are read from its result)
_TIMES = ("fit_s", "score_s", "total_s")


if __name__ == "__main__":
    raise SystemExit(main())
