"""Write pan-code's answers as the test fixtures behind the README's parity claims.

    python -m benchmarks.pancode_fixtures PAN_CODE_DIR [--work DIR] [--out tests/fixtures]

``PAN_CODE_DIR`` is a local checkout of https://github.com/pan-webis-de/pan-code; none of its
code is copied into stylo, only the numbers its baselines answer here:

- ``pancode_pan15_av_en.csv``: per PAN15-en test problem (500), the answers of pan-code's
  cngdist (``pan20-verif-baseline.py``, trained on the 100 training problems) and of its PPM
  compressor (``pan22-verif-baseline-compressor.py``), run exactly as
  ``bench_pancode_baselines.py`` runs them (same shims, same train -> test files);
- ``pancode_cdaa_answers.csv.gz``: per unknown text of every ``pan18_cdaa`` / ``pan19_cdaa``
  split, the author PAN's PAN18 or PAN19 baseline predicted, run as
  ``pancode_cdaa_baselines.py`` runs them (the ``cdaa_attribution`` task of seed 0 in PAN's
  layout).

A verification answer file already in ``--work`` (``<corpus>/out_cngdist/answers.jsonl``,
``<corpus>/out_ppm/answers.jsonl``, the layout ``bench_pancode_baselines.py --work`` leaves)
is reused, not recomputed: pan-code's two verifiers take about 4 minutes on PAN15-en.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from baselines.pan_io import write_pan20_format
from benchmarks.bench_pancode_baselines import commands, prepare_code, run
from benchmarks.pan_datasets import train_test
from benchmarks.pancode_cdaa_baselines import BASELINES, score_answers, write_collection
from stylo.datasets import load
from stylo.protocols import PROTOCOLS

AV_CORPUS = "pan15_av_en"


def _answers(path: Path) -> dict[str, float]:
    with open(path, encoding="utf-8") as fh:
        return {str(r["id"]): float(r["value"]) for r in map(json.loads, fh)}


def verification(pancode: Path, work: Path) -> pd.DataFrame:
    """pan-code's cngdist and compressor answers on PAN15-en's test problems."""
    code = work / "code"
    prepare_code(pancode, code)
    py = sys.executable
    train, test = train_test(AV_CORPUS)
    root = work / AV_CORPUS
    cng, ppm = root / "out_cngdist" / "answers.jsonl", root / "out_ppm" / "answers.jsonl"
    if not (cng.exists() and ppm.exists()):
        tr = write_pan20_format(train, root / "train")
        te = write_pan20_format(test, root / "test")
        for command in sum(commands(py, code, root, tr, te).values(), []):
            run(command, cwd=root)
    a, b = _answers(cng), _answers(ppm)
    ids = [str(i) for i in test.ids]
    return pd.DataFrame(
        {"id": ids, "cngdist": [a[i] for i in ids], "compressor": [b[i] for i in ids]}
    )


def attribution(pancode: Path, work: Path) -> pd.DataFrame:
    """PAN's PAN18/19 baseline prediction for every unknown text, one row each."""
    protocol = PROTOCOLS["cdaa_attribution"]
    rows = []
    for name, script in BASELINES.items():
        data = load(name)
        for setting in protocol.settings(data):
            task = protocol.sample(data, setting, 0)
            where = work / f"{name}-{setting['split']}"
            shutil.rmtree(where, ignore_errors=True)
            truths = write_collection(task, where / "input")
            (where / "answers").mkdir()
            subprocess.run(
                [
                    sys.executable,
                    str(pancode / script),
                    "-i",
                    str(where / "input"),
                    "-o",
                    str(where / "answers"),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            print(
                name, setting["split"], score_answers(task, truths, where / "answers"), flush=True
            )
            for p in sorted(truths):
                ids = task.test.unknown.loc[task.test.unknown["problem"] == p, "id"].tolist()
                # write_collection numbers a problem's unknown texts in row order from 1
                names = [f"unknown{i:05d}.txt" for i in range(1, len(ids) + 1)]
                with open(where / "answers" / f"answers-{p}.json", encoding="utf-8") as fh:
                    pred = {a["unknown-text"]: a["predicted-author"] for a in json.load(fh)}
                rows += [
                    {
                        "dataset": name,
                        "split": setting["split"],
                        "problem": p,
                        "id": i,
                        "predicted": pred[n],
                    }
                    for i, n in zip(ids, names, strict=True)
                ]
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pancode", type=Path, help="local checkout of pan-webis-de/pan-code")
    ap.add_argument("--work", type=Path, default=Path("/tmp/stylo_pancode_fixtures"))
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parents[1] / "tests" / "fixtures"
    )
    args = ap.parse_args(argv)
    pancode = args.pancode.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    # pandas writes the shortest repr that reads back to the same float: the parity test
    # compares to 1e-15
    verification(pancode, args.work).to_csv(args.out / "pancode_pan15_av_en.csv", index=False)
    attribution(pancode, args.work / "cdaa").to_csv(
        args.out / "pancode_cdaa_answers.csv.gz", index=False
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
