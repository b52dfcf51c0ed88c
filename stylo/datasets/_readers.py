"""Readers of the registered JSON Lines layouts: texts with authors, and verification pairs
(PAN13/14 problems' known documents recovered from ``known_spans``). Each file is parsed once
per process."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pandas as pd

from stylo.datasets._jsonl import DataError, check_new_id, iter_jsonl


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _parse_span(span, path, lineno) -> tuple[int, int]:
    if isinstance(span, str):
        try:
            span = json.loads(span)
        except json.JSONDecodeError:
            raise DataError(
                f"{path}:{lineno}: known_spans entry {span!r} is not [start, end]"
            ) from None
    if (
        not isinstance(span, (list, tuple))
        or len(span) != 2
        or not all(isinstance(x, int) for x in span)
    ):
        raise DataError(f"{path}:{lineno}: known_spans entry {span!r} is not [start, end]")
    return int(span[0]), int(span[1])


def _split_known(rec: dict, path: Path, lineno: int) -> list[str]:
    """Recover the separate known documents of a PAN13/14 problem from ``known_spans``."""
    joined = rec["pair"][0]
    spans = rec.get("known_spans")
    if not spans:
        return [joined]
    docs = []
    for span in spans:
        start, end = _parse_span(span, path, lineno)
        if not 0 <= start < end <= len(joined):
            raise DataError(
                f"{path}:{lineno}: known span [{start}, {end}) outside the "
                f"{len(joined)}-character known text"
            )
        docs.append(joined[start:end])
    if "n_known" in rec and rec["n_known"] != len(docs):
        raise DataError(f"{path}:{lineno}: n_known={rec['n_known']} but {len(docs)} spans")
    for i, d in enumerate(docs):
        if not d.strip():
            raise DataError(f"{path}:{lineno}: known document {i} is empty")
    return docs


def records_frame(rows: list[dict], path: Path) -> pd.DataFrame:
    """The records of ``path`` as a table; a file without any is an error, not an empty set."""
    if not rows:
        raise DataError(f"{path}: no records (the file is empty or blank)")
    return pd.DataFrame(rows)


def _read_texts(path: Path, normalise: bool) -> pd.DataFrame:
    rows, first_line = [], {}
    for lineno, rec in iter_jsonl(path, required=("id", "author", "text"), text_fields=("text",)):
        rec = dict(rec)
        rec["id"] = str(rec["id"])
        check_new_id(first_line, rec["id"], path, lineno)
        rec["author"] = str(rec["author"])
        if normalise:
            rec["text"] = normalise_newlines(rec["text"])
        rows.append(rec)
    return records_frame(rows, path)


def pair_of(rec: dict, path: Path, lineno: int) -> list[str]:
    """The record's ``pair`` after checking it is a list of two strings."""
    pair = rec["pair"]
    if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(t, str) for t in pair):
        raise DataError(f"{path}:{lineno}: 'pair' must be a list of two strings")
    return pair


def _read_pairs(path: Path, normalise: bool) -> pd.DataFrame:
    rows, first_line = [], {}
    for lineno, rec in iter_jsonl(path, required=("id", "pair")):
        check_new_id(first_line, str(rec["id"]), path, lineno)
        pair = pair_of(rec, path, lineno)
        if not pair[1].strip():
            raise DataError(f"{path}:{lineno}: the unknown text (pair[1]) is empty")
        if not pair[0].strip():
            raise DataError(f"{path}:{lineno}: the known text (pair[0]) is empty")
        known = _split_known(rec, path, lineno)
        unknown = pair[1]
        if normalise:
            known = [normalise_newlines(k) for k in known]
            unknown = normalise_newlines(unknown)
        row = {k: v for k, v in rec.items() if k not in ("pair", "known_spans")}
        row.update(id=str(rec["id"]), known=known, unknown=unknown)
        if "same" in rec and rec["same"] is not None and not isinstance(rec["same"], bool):
            raise DataError(f"{path}:{lineno}: 'same' must be true/false, got {rec['same']!r}")
        rows.append(row)
    return records_frame(rows, path)


@lru_cache(maxsize=4)
def read_cached(path: str, mtime_ns: int, kind: str, normalise: bool) -> pd.DataFrame:
    """Parse a data file once per process: sub-corpora and repeated loads share the parse.

    ``mtime_ns`` is part of the key so that a file changed on disk is read again.
    """
    reader = _read_texts if kind == "texts" else _read_pairs
    return reader(Path(path), normalise)
