"""Writing the official PAN20/21 verification layout, so any PairSet runs through PAN tools.

Reading is :func:`stylo.datasets.load_pan20_format`. A folder holds ``pairs.jsonl``
(``{"id", "fandoms", "pair": [text_a, text_b]}``), optionally ``truth.jsonl``
(``{"id", "same", "authors"}``), and a system writes ``answers.jsonl`` (``{"id", "value"}``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from stylo.corpus import PairSet

__all__ = ["write_pan20_format", "write_answers"]


def write_pan20_format(pairs: PairSet, folder: str | Path, truth: bool = True) -> Path:
    """Write ``pairs`` as ``folder/pairs.jsonl`` (+ ``truth.jsonl`` if labelled and ``truth``).

    A problem with several known texts is written with them joined by a blank line (the PAN20
    format has exactly two texts per pair). ``fandoms`` and ``authors`` are placeholders when
    the PairSet has no such metadata; PAN tools read but do not score them.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "pairs.jsonl", "w", encoding="utf-8") as fh:
        for pid, a, b in zip(pairs.ids, pairs.texts_a(), pairs.texts_b()):
            fh.write(
                json.dumps(
                    {"id": str(pid), "fandoms": ["unknown", "unknown"], "pair": [a, b]},
                    ensure_ascii=False,
                )
                + "\n"
            )
    if truth and pairs.labelled:
        with open(folder / "truth.jsonl", "w", encoding="utf-8") as fh:
            for pid, same in zip(pairs.ids, pairs.labels):
                fh.write(
                    json.dumps(
                        {"id": str(pid), "same": bool(same), "authors": ["a", "a" if same else "b"]}
                    )
                    + "\n"
                )
    return folder


def write_answers(ids: Sequence[str], scores, folder: str | Path) -> Path:
    """Write ``folder/answers.jsonl``: one ``{"id", "value"}`` line per problem, in order."""
    scores = np.asarray(scores, dtype=np.float64)
    if len(ids) != len(scores):
        raise ValueError(f"{len(ids)} ids but {len(scores)} scores")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "answers.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for pid, value in zip(ids, scores):
            fh.write(json.dumps({"id": str(pid), "value": float(value)}) + "\n")
    return path
