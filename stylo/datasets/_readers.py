"""Readers of the registered JSON Lines layouts: texts with authors, and verification pairs
(PAN13/14 problems' known documents recovered from ``known_spans``). Each file is parsed once
per process, and its parsed table is kept on disk (see :func:`read_cached`)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
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


# the package's name, as users configure it: the module is an implementation detail
log = logging.getLogger("stylo.datasets")

#: where parsed tables are kept, unless ``$STYLO_PARSE_CACHE`` names another folder (empty: none)
DEFAULT_PARSE_CACHE = Path.home() / ".cache" / "stylo" / "parsed"
#: part of every cache key: raise it when the parsed tables change, so older ones are not read
_PARSE_FORMAT = 1


def _cache_file(path: str, mtime_ns: int, size: int, kind: str, normalise: bool) -> Path | None:
    """Where the parsed table of ``path`` at this modification time and size is kept, or None
    when ``$STYLO_PARSE_CACHE`` is set empty. The name starts with a digest of the path alone,
    so a newer parse of the same file replaces the older one."""
    env = os.environ.get("STYLO_PARSE_CACHE")
    folder = DEFAULT_PARSE_CACHE if env is None else Path(env) if env.strip() else None
    if folder is None:
        return None
    version = f"{mtime_ns}|{size}|{kind}|{normalise}|{_PARSE_FORMAT}|{pd.__version__}"
    digest = hashlib.sha256(path.encode()).hexdigest()[:16]
    return folder / f"{digest}-{hashlib.sha256(version.encode()).hexdigest()[:16]}.pkl"


def _store(frame: pd.DataFrame, file: Path) -> None:
    """Write ``frame`` to ``file`` atomically (a reader never sees half a file) and drop older
    parses of the same data file; a folder that cannot be written only costs the next parse."""
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        frame.to_pickle(tmp, protocol=5)
        os.replace(tmp, file)
        for old in file.parent.glob(f"{file.name.split('-')[0]}-*.pkl"):
            if old != file:
                old.unlink(missing_ok=True)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        log.info("parse cache not written (%s): %s", file, exc)


@lru_cache(maxsize=4)
def read_cached(path: str, mtime_ns: int, size: int, kind: str, normalise: bool) -> pd.DataFrame:
    """Parse a data file once per process, and once per change of the file on this machine:
    sub-corpora and repeated loads share the parse, and the parsed table is kept under
    ``$STYLO_PARSE_CACHE`` (default ``~/.cache/stylo/parsed``; empty: not kept), which a
    later process reads in a fraction of the parse's time (every grid worker loads its corpora).

    ``mtime_ns`` and ``size`` (the file's, from one ``stat``) are part of the key so that a file
    changed on disk is parsed again. Only a file that parsed without error is kept, so a
    malformed one fails with its line every time; an unreadable cache entry is parsed afresh
    and replaced.
    """
    file = _cache_file(path, mtime_ns, size, kind, normalise)
    if file is not None and file.is_file():
        try:
            return pd.read_pickle(file)
        except Exception as exc:  # a truncated or foreign file: parse again, say so
            log.warning(
                "parse cache %s unreadable (%s: %s); parsing %s again",
                file,
                type(exc).__name__,
                exc,
                path,
            )
    reader = _read_texts if kind == "texts" else _read_pairs
    frame = reader(Path(path), normalise)
    if file is not None:
        _store(frame, file)
    return frame
