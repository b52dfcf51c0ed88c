"""Run PAN's official cross-domain attribution baselines (pan-code) on stylo's PAN18/19 corpora.

    python benchmarks/pancode_cdaa_baselines.py PAN_CODE_DIR [--work DIR]

``PAN_CODE_DIR`` is a local checkout of https://github.com/pan-webis-de/pan-code (nothing of it
is copied into stylo). Each split of ``pan18_cdaa`` and ``pan19_cdaa`` is written in the
official layout (``collection-info.json``; per problem ``problem-info.json``, a folder of known
texts per candidate and the folder of unknown texts), PAN's baseline runs on it with its
defaults, as a separate process:

- PAN18: ``clef18/authorship-attribution/pan18-cdaa-baseline.py`` (character 3-grams occurring
  at least 5 times, one-vs-rest ``LinearSVC``);
- PAN19: ``clef19/authorship-attribution/pan19-cdaa-baseline-svm.py`` (character 3-grams,
  calibrated one-vs-rest ``SVC``, ``<UNK>`` when the two highest probabilities differ by less
  than 0.1).

Its answers are scored exactly as the ``cdaa_attribution`` protocol scores a method (the same
task, per-problem macro-F1 and accuracy, mean over problems; a true author without known texts
counts as ``<UNK>``), so the rows stand beside the reference grid's. Prints one row per corpus
split and the baseline's wall time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from stylo.datasets import load
from stylo.metrics.classification import attribution_scores
from stylo.protocols import PROTOCOLS
from stylo.protocols.cdaa import UNKNOWN

BASELINES = {
    "pan18_cdaa": "clef18/authorship-attribution/pan18-cdaa-baseline.py",
    "pan19_cdaa": "clef19/authorship-attribution/pan19-cdaa-baseline-svm.py",
}
_UNKNOWN_FOLDER = "unknown"


def write_collection(task, folder: Path) -> dict[str, dict[str, str]]:
    """The task's problems in PAN's layout under ``folder``; returns, per problem, the file
    name of each unknown text -> its truth."""
    problems = sorted(task.test.known)
    language = dict(zip(task.train.frame["problem"], task.train.frame["language"]))
    folder.mkdir(parents=True)
    (folder / "collection-info.json").write_text(
        json.dumps(
            [{"problem-name": p, "language": language[p], "encoding": "UTF-8"} for p in problems]
        )
    )
    truths = {}
    for p in problems:
        cands = sorted(task.test.known[p])
        (folder / p).mkdir()
        (folder / p / "problem-info.json").write_text(
            json.dumps(
                {
                    "unknown-folder": _UNKNOWN_FOLDER,
                    "candidate-authors": [{"author-name": c} for c in cands],
                }
            )
        )
        for c in cands:
            (folder / p / c).mkdir()
            for i, text in enumerate(task.test.known[p][c], 1):
                (folder / p / c / f"known{i:05d}.txt").write_text(text, encoding="utf-8")
        (folder / p / _UNKNOWN_FOLDER).mkdir()
        rows = task.test.unknown[task.test.unknown["problem"] == p]
        truths[p] = {}
        for i, (text, truth) in enumerate(zip(rows["text"], rows["truth"], strict=True), 1):
            name = f"unknown{i:05d}.txt"
            (folder / p / _UNKNOWN_FOLDER / name).write_text(text, encoding="utf-8")
            truths[p][name] = truth
    return truths


def score_answers(task, truths, answers: Path) -> dict[str, float]:
    """Per-problem metrics of PAN's answer files, averaged over problems (as the protocol)."""
    per_problem = []
    for p, truth in truths.items():
        with open(answers / f"answers-{p}.json", encoding="utf-8") as fh:
            pred = {a["unknown-text"]: a["predicted-author"] for a in json.load(fh)}
        missing = sorted(set(truth) - set(pred))
        if missing:
            raise RuntimeError(f"{p}: no answer for {missing[:3]}")
        names = sorted(truth)
        per_problem.append(
            attribution_scores(
                [truth[n] for n in names],
                [pred[n] for n in names],
                labels=sorted(task.test.known[p]),
                unknown_label=UNKNOWN if task.test.open_set else None,
            )
        )
    return pd.DataFrame(per_problem).mean().to_dict()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pancode", type=Path, help="local checkout of pan-webis-de/pan-code")
    ap.add_argument("--work", type=Path, default=None, help="folder for the written corpora")
    args = ap.parse_args(argv)
    protocol = PROTOCOLS["cdaa_attribution"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        for name, script in BASELINES.items():
            data = load(name)
            for setting in protocol.settings(data):
                task = protocol.sample(data, setting, 0)
                where = work / f"{name}-{setting['split']}"
                truths = write_collection(task, where / "input")
                (where / "answers").mkdir()
                t0 = time.perf_counter()
                subprocess.run(
                    [
                        sys.executable,
                        str(args.pancode / script),
                        "-i",
                        str(where / "input"),
                        "-o",
                        str(where / "answers"),
                    ],
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
                seconds = time.perf_counter() - t0
                rows.append(
                    {
                        "dataset": name,
                        "split": setting["split"],
                        "baseline": Path(script).name,
                        "problems": len(truths),
                        **{
                            k: round(v, 3)
                            for k, v in score_answers(task, truths, where / "answers").items()
                        },
                        "seconds": round(seconds, 1),
                    }
                )
                print(rows[-1], flush=True)
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
