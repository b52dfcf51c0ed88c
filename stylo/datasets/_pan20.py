"""The official PAN20/21 layout (``pairs.jsonl`` + ``truth.jsonl``) from any folder, and the
PAN 2020 test-label fixture for metric parity."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from stylo.corpus import PairSet
from stylo.datasets._jsonl import DataError, check_new_id, iter_jsonl, read_jsonl
from stylo.datasets._readers import normalise_newlines, pair_of, records_frame
from stylo.datasets._registry import check_sha256, locate, registry


def load_pan20_format(
    folder: str | Path, name: str | None = None, normalize_newlines: bool = False
) -> PairSet:
    """Read the official PAN20/21 layout: ``pairs.jsonl`` and, if present, ``truth.jsonl``.

    ``pairs.jsonl`` lines are ``{"id", "fandoms": [f1, f2], "pair": [text1, text2]}``;
    ``truth.jsonl`` lines are ``{"id", "same", "authors": [a1, a2]}``. Every pair id must
    have a truth line when a truth file exists, and vice versa.
    """
    folder = Path(folder)
    pairs_path = folder / "pairs.jsonl"
    if not pairs_path.is_file():
        raise DataError(
            f"{folder}: no pairs.jsonl (PAN20/21 format expects pairs.jsonl and "
            f"optionally truth.jsonl)"
        )
    rows, first_line = [], {}
    for lineno, rec in iter_jsonl(pairs_path, required=("id", "pair")):
        pair = pair_of(rec, pairs_path, lineno)
        a, b = (normalise_newlines(t) for t in pair) if normalize_newlines else pair
        row = {"id": str(rec["id"]), "known": [a], "unknown": b, "same": None}
        check_new_id(first_line, row["id"], pairs_path, lineno)
        if "fandoms" in rec:
            row["topics"] = rec["fandoms"]
        rows.append(row)
    frame = records_frame(rows, pairs_path)
    truth_path = folder / "truth.jsonl"
    if truth_path.is_file():
        truth, truth_lines = {}, {}
        for lineno, rec in iter_jsonl(truth_path, required=("id", "same")):
            truth[str(rec["id"])] = rec
            check_new_id(truth_lines, str(rec["id"]), truth_path, lineno)
        missing = set(frame["id"]) - set(truth)
        extra = set(truth) - set(frame["id"])
        if missing or extra:
            raise DataError(
                f"{truth_path}: ids do not match pairs.jsonl ({len(missing)} pairs "
                f"without truth, {len(extra)} truth lines without a pair)"
            )
        frame["same"] = [bool(truth[i]["same"]) for i in frame["id"]]
        if all("authors" in truth[i] for i in frame["id"]):
            frame["authors"] = [truth[i]["authors"] for i in frame["id"]]
    return PairSet(frame, name=name or folder.name)


@dataclass
class Pan20Labels:
    """The PAN 2020 test truth, the 13 submissions' answers and the expected metrics."""

    truth: pd.DataFrame
    answers: pd.DataFrame
    expected: dict


def load_pan20_labels(verify: bool = True) -> Pan20Labels:
    """Load the ``pan20_av_test_labels`` metric-parity fixture."""
    entry = registry()["pan20_av_test_labels"]
    truth_path = locate("pan20_av_test_labels")
    folder = truth_path.parent
    files = {entry["file"]: entry["sha256"], **entry["extra_files"]}
    if verify:
        for fname, digest in files.items():
            check_sha256(folder / fname, digest)
    truth = pd.DataFrame(read_jsonl(truth_path, required=("id", "same")))
    answers = pd.DataFrame(
        read_jsonl(folder / "submissions_answers.jsonl.gz", required=("system", "id", "value"))
    )
    with open(folder / "expected_metrics.json", encoding="utf-8") as fh:
        expected = json.load(fh)
    return Pan20Labels(truth=truth, answers=answers, expected=expected)
