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

It times each run (wall clock of the subprocess, start-up included), scores the answers with
:mod:`stylo.metrics.pan` and prints a tidy table; ``--csv`` saves it for
``bench_verifiers_pan.py --pancode-csv``. Right after each corpus it runs stylo's
counterparts (``naive`` and ``ppm-raw``, fit + score in this process) and prints the AUC
difference and the speed ratio measured in the same run.
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
from benchmarks.bench_verifiers_pan import PARITY, compare
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pancode", type=Path, help="local checkout of pan-webis-de/pan-code")
    ap.add_argument("--work", type=Path, default=Path("/tmp/stylo_pancode_bench"))
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--csv", type=Path, help="also save the table here")
    args = ap.parse_args(argv)
    code = args.work / "code"
    prepare_code(args.pancode.resolve(), code)
    py = sys.executable
    rows = []
    for name in args.datasets:
        train, test = train_test(name)
        root = args.work / name.replace("/", "_")
        shutil.rmtree(root, ignore_errors=True)
        tr = write_pan20_format(train, root / "train")
        te = write_pan20_format(test, root / "test")
        t = run(
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
            ],
            cwd=root,
        )
        rows.append(
            {
                "dataset": name,
                "method": "pan-code cngdist",
                "fit_s": np.nan,
                "score_s": np.nan,
                "total_s": t,
                **score(root / "out_cngdist" / "answers.jsonl", test),
            }
        )
        t_fit = run(
            [
                py,
                str(code / Path(COMPRESSOR).name),
                "--train",
                "-train_dir",
                str(tr),
                "-model_dir",
                str(root / "model"),
            ],
            cwd=root,
        )
        t_test = run(
            [
                py,
                str(code / Path(COMPRESSOR).name),
                "-model_dir",
                str(root / "model"),
                "-test_dir",
                str(te),
                "-out_dir",
                str(root / "out_ppm"),
            ],
            cwd=root,
        )
        rows.append(
            {
                "dataset": name,
                "method": "pan-code compressor",
                "fit_s": t_fit,
                "score_s": t_test,
                "total_s": t_fit + t_test,
                **score(root / "out_ppm" / "answers.jsonl", test),
            }
        )
        print(pd.DataFrame(rows[-2:]).round(3).to_string(index=False), flush=True)
        ours = pd.DataFrame([run_stylo(name, m, 0, 1) for m in PARITY.values()])
        print(compare(ours, pd.DataFrame(rows[-2:])).round(4).to_string(index=False), flush=True)
        if args.csv:  # after every corpus, so a long run keeps what it has measured
            pd.DataFrame(rows).to_csv(args.csv, index=False)
    print(pd.DataFrame(rows).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
