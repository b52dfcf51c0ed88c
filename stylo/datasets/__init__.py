"""Dataset registry and loaders.

``load(name, **options)`` returns a :class:`~stylo.corpus.Corpus` (texts with authors) or a
:class:`~stylo.corpus.PairSet` (PAN-style verification problems). Data are looked up in
``$STYLO_DATA`` (``os.pathsep``-separated), then ``./data/``, then ``../shared/data/``; the
registry ``registry.json`` (package data beside this module) gives each dataset's file and
checksum.

Names: ``blog``, ``enron``, ``federalist``, ``guardian``, ``imdb62``, ``mlpapers``,
``pan13_av_en``, ``pan14_av`` (or one corpus: ``pan14_av/en_essays``), ``pan15_av_en``,
``pan18_cdaa``, ``pan19_cdaa``; ``load_pan20_format(folder)`` reads the official PAN20/21
``pairs.jsonl`` + ``truth.jsonl`` layout from any folder.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from stylo.corpus import Corpus, FilterStep, PairSet
from stylo.datasets._jsonl import DataError, check_new_id, iter_jsonl, read_jsonl, sha256_of

__all__ = ["DataError", "DatasetNotAvailable", "available", "data_roots", "load",
           "load_pan20_format", "load_pan20_labels", "registry", "Pan20Labels"]

log = logging.getLogger(__name__)

_REPO_ROOT = Path(__file__).resolve().parents[2]
# package data, so a non-editable install finds it as well as a checkout does
_REGISTRY_PATH = Path(__file__).resolve().with_name("registry.json")


class DatasetNotAvailable(DataError, LookupError):
    """The dataset is registered but its files are not on this machine, or it is unknown."""


@lru_cache(maxsize=1)
def registry() -> dict[str, dict]:
    """The registry entries (file, kind, sha256, citation, license, ...) by dataset name."""
    with open(_REGISTRY_PATH, encoding="utf-8") as fh:
        return json.load(fh)["datasets"]


def data_roots() -> list[Path]:
    """Folders searched for ``<name>/``, in order of precedence."""
    roots = [Path(p) for p in os.environ.get("STYLO_DATA", "").split(os.pathsep) if p]
    roots += [Path("data"), Path("..") / "shared" / "data"]
    # also beside the checkout, so commands run from another folder still find the data
    fallback = _REPO_ROOT.parent / "shared" / "data"
    if fallback.resolve() not in {r.resolve() for r in roots}:
        roots.append(fallback)
    return roots


def _split_name(name: str) -> tuple[str, str | None]:
    base, _, sub = name.partition("/")
    reg = registry()
    if base not in reg:
        raise DatasetNotAvailable(f"unknown dataset {name!r}; registered: {sorted(reg)}")
    subs = reg[base].get("subsets")
    if sub and (not subs or sub not in subs):
        raise DatasetNotAvailable(f"dataset {base!r} has no sub-corpus {sub!r}; "
                                  f"it has {subs or 'none'}")
    return base, sub or None


def _locate(base: str) -> Path:
    entry = registry()[base]
    looked = []
    for root in data_roots():
        path = root / base / entry["file"]
        looked.append(str(path))
        if path.is_file():
            return path
    raise DatasetNotAvailable(
        f"dataset {base!r} is registered but not available on this machine: "
        f"{entry['file']} was not found in any of: {', '.join(looked)}. "
        f"Set $STYLO_DATA to the folder that holds {base}/.")


def _verify(path: Path, expected: str) -> None:
    got = sha256_of(path)
    if got != expected:
        raise DataError(f"{path}: checksum mismatch (sha256 {got}, registry says {expected}); "
                        f"the file differs from the registered copy. Pass verify=False to load "
                        f"it anyway.")


def available() -> pd.DataFrame:
    """One row per registered dataset: name, kind, whether found here, and where."""
    rows = []
    for name, entry in sorted(registry().items()):
        try:
            path, ok = _locate(name), True
        except DatasetNotAvailable:
            path, ok = None, False
        rows.append({"name": name, "kind": entry["kind"], "available": ok,
                     "path": str(path) if path else "", "description": entry["description"]})
    return pd.DataFrame(rows)


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


_TOKEN = re.compile(r"\S+")


def _n_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def _parse_span(span, path, lineno) -> tuple[int, int]:
    if isinstance(span, str):
        try:
            span = json.loads(span)
        except json.JSONDecodeError:
            raise DataError(f"{path}:{lineno}: known_spans entry {span!r} is not "
                            f"[start, end]") from None
    if (not isinstance(span, (list, tuple)) or len(span) != 2
            or not all(isinstance(x, int) for x in span)):
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
            raise DataError(f"{path}:{lineno}: known span [{start}, {end}) outside the "
                            f"{len(joined)}-character known text")
        docs.append(joined[start:end])
    if "n_known" in rec and rec["n_known"] != len(docs):
        raise DataError(f"{path}:{lineno}: n_known={rec['n_known']} but {len(docs)} spans")
    for i, d in enumerate(docs):
        if not d.strip():
            raise DataError(f"{path}:{lineno}: known document {i} is empty")
    return docs


def _frame(rows: list[dict], path: Path) -> pd.DataFrame:
    """The records of ``path`` as a table; a file without any is an error, not an empty set."""
    if not rows:
        raise DataError(f"{path}: no records (the file is empty or blank)")
    return pd.DataFrame(rows)


def _read_texts(path: Path, normalise: bool) -> pd.DataFrame:
    rows, first_line = [], {}
    for lineno, rec in iter_jsonl(path, required=("id", "author", "text"),
                                  text_fields=("text",)):
        rec = dict(rec)
        rec["id"] = str(rec["id"])
        check_new_id(first_line, rec["id"], path, lineno)
        rec["author"] = str(rec["author"])
        if normalise:
            rec["text"] = _normalise_newlines(rec["text"])
        rows.append(rec)
    return _frame(rows, path)


def _pair_of(rec: dict, path: Path, lineno: int) -> list[str]:
    """The record's ``pair`` after checking it is a list of two strings."""
    pair = rec["pair"]
    if (not isinstance(pair, list) or len(pair) != 2
            or not all(isinstance(t, str) for t in pair)):
        raise DataError(f"{path}:{lineno}: 'pair' must be a list of two strings")
    return pair


def _read_pairs(path: Path, normalise: bool) -> pd.DataFrame:
    rows, first_line = [], {}
    for lineno, rec in iter_jsonl(path, required=("id", "pair")):
        check_new_id(first_line, str(rec["id"]), path, lineno)
        pair = _pair_of(rec, path, lineno)
        if not pair[1].strip():
            raise DataError(f"{path}:{lineno}: the unknown text (pair[1]) is empty")
        if not pair[0].strip():
            raise DataError(f"{path}:{lineno}: the known text (pair[0]) is empty")
        known = _split_known(rec, path, lineno)
        unknown = pair[1]
        if normalise:
            known = [_normalise_newlines(k) for k in known]
            unknown = _normalise_newlines(unknown)
        row = {k: v for k, v in rec.items() if k not in ("pair", "known_spans")}
        row.update(id=str(rec["id"]), known=known, unknown=unknown)
        if "same" in rec and rec["same"] is not None and not isinstance(rec["same"], bool):
            raise DataError(f"{path}:{lineno}: 'same' must be true/false, got {rec['same']!r}")
        rows.append(row)
    return _frame(rows, path)


@lru_cache(maxsize=4)
def _read_cached(path: str, mtime_ns: int, kind: str, normalise: bool) -> pd.DataFrame:
    """Parse a data file once per process: sub-corpora and repeated loads share the parse.

    ``mtime_ns`` is part of the key so that a file changed on disk is read again.
    """
    reader = _read_texts if kind == "texts" else _read_pairs
    return reader(Path(path), normalise)


def load(name: str, *, split: str | None = None, normalize_newlines: bool = True,
         min_tokens: int | None = None, min_per_author: int | None = None,
         per_author: int | None = None, seed: int = 0, verify: bool = True,
         **where) -> Corpus | PairSet:
    """Load a registered dataset.

    Parameters
    ----------
    name : registry name, optionally ``base/sub`` for a sub-corpus (``pan14_av/en_essays``).
    split : keep only rows whose ``split`` column equals this (``"train"``/``"test"``).
    normalize_newlines : turn ``\\r\\n`` and ``\\r`` into ``\\n`` (several PAN corpora mix them).
    min_tokens : drop texts (problems: any of whose texts) with fewer whitespace tokens.
    min_per_author : drop authors with fewer texts (corpora only), after ``min_tokens``.
    per_author : sample at most this many texts per author with ``seed`` (corpora only).
    verify : check the file's SHA-256 against the registry.
    where : column=value filters, e.g. ``role="known"`` or ``language="en"``.

    Every filter is explicit and recorded with its counts in the result's ``history``.
    """
    base, sub = _split_name(name)
    entry = registry()[base]
    if entry["kind"] not in ("texts", "pairs"):
        raise DataError(f"dataset {base!r} is a {entry['kind']} fixture, not texts or pairs; "
                        f"use stylo.datasets.load_pan20_labels()")
    path = _locate(base)
    if verify:
        _verify(path, entry["sha256"])
    if entry["kind"] == "pairs" and (min_per_author is not None or per_author is not None):
        raise ValueError("min_per_author/per_author apply to corpora, not pair sets")
    frame = _read_cached(str(path.resolve()), path.stat().st_mtime_ns, entry["kind"],
                         normalize_newlines).copy()
    obj: Corpus | PairSet = (Corpus if entry["kind"] == "texts" else PairSet)(frame, name=name)
    if sub is not None:
        where = {entry["subsets_field"]: sub, **where}
    if split is not None:
        where = {"split": split, **where}
    for col, value in where.items():
        if col not in obj.frame.columns:
            raise ValueError(f"dataset {name!r} has no column {col!r} to filter on")
        mask = (obj.frame[col] == value).to_numpy()
        if not mask.any():
            values = sorted(map(str, obj.frame[col].dropna().unique()))[:20]
            raise ValueError(f"dataset {name!r}: no rows with {col}={value!r}; values: {values}")
        obj = _filter(obj, mask, f"{col}={value}")
    if min_tokens is not None:
        obj = _filter(obj, _token_mask(obj, min_tokens), f"min_tokens={min_tokens}")
    if isinstance(obj, Corpus):
        if min_per_author is not None:
            counts = obj.frame["author"].map(obj.frame["author"].value_counts())
            obj = _filter(obj, (counts >= min_per_author).to_numpy(),
                          f"min_per_author={min_per_author}")
        if per_author is not None:
            obj = _filter(obj, _sample_per_author(obj, per_author, seed),
                          f"per_author={per_author}", f"seed={seed}")
    for step in obj.history:
        log.info("%s: %s", name, step)
    return obj


def _filter(obj, mask, step: str, detail: str = ""):
    out = obj.subset(np.asarray(mask, dtype=bool))
    out.history.append(FilterStep(step, len(obj), len(out), detail))
    return out


def _token_mask(obj, min_tokens: int) -> np.ndarray:
    if isinstance(obj, Corpus):
        return np.array([_n_tokens(t) >= min_tokens for t in obj.texts])
    return np.array([_n_tokens(u) >= min_tokens and all(_n_tokens(k) >= min_tokens for k in ks)
                     for ks, u in zip(obj.known, obj.unknown)])


def _sample_per_author(corpus: Corpus, n: int, seed: int) -> np.ndarray:
    if n < 1:
        raise ValueError(f"per_author must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(corpus), dtype=bool)
    for _, idx in corpus.by_author().items():
        chosen = idx if len(idx) <= n else rng.choice(idx, size=n, replace=False)
        keep[chosen] = True
    return keep


def load_pan20_format(folder: str | Path, name: str | None = None,
                      normalize_newlines: bool = False) -> PairSet:
    """Read the official PAN20/21 layout: ``pairs.jsonl`` and, if present, ``truth.jsonl``.

    ``pairs.jsonl`` lines are ``{"id", "fandoms": [f1, f2], "pair": [text1, text2]}``;
    ``truth.jsonl`` lines are ``{"id", "same", "authors": [a1, a2]}``. Every pair id must
    have a truth line when a truth file exists, and vice versa.
    """
    folder = Path(folder)
    pairs_path = folder / "pairs.jsonl"
    if not pairs_path.is_file():
        raise DataError(f"{folder}: no pairs.jsonl (PAN20/21 format expects pairs.jsonl and "
                        f"optionally truth.jsonl)")
    rows, first_line = [], {}
    for lineno, rec in iter_jsonl(pairs_path, required=("id", "pair")):
        pair = _pair_of(rec, pairs_path, lineno)
        a, b = (_normalise_newlines(t) for t in pair) if normalize_newlines else pair
        row = {"id": str(rec["id"]), "known": [a], "unknown": b, "same": None}
        check_new_id(first_line, row["id"], pairs_path, lineno)
        if "fandoms" in rec:
            row["topics"] = rec["fandoms"]
        rows.append(row)
    frame = _frame(rows, pairs_path)
    truth_path = folder / "truth.jsonl"
    if truth_path.is_file():
        truth, truth_lines = {}, {}
        for lineno, rec in iter_jsonl(truth_path, required=("id", "same")):
            truth[str(rec["id"])] = rec
            check_new_id(truth_lines, str(rec["id"]), truth_path, lineno)
        missing = set(frame["id"]) - set(truth)
        extra = set(truth) - set(frame["id"])
        if missing or extra:
            raise DataError(f"{truth_path}: ids do not match pairs.jsonl ({len(missing)} pairs "
                            f"without truth, {len(extra)} truth lines without a pair)")
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
    truth_path = _locate("pan20_av_test_labels")
    folder = truth_path.parent
    files = {entry["file"]: entry["sha256"], **entry["extra_files"]}
    if verify:
        for fname, digest in files.items():
            _verify(folder / fname, digest)
    truth = pd.DataFrame(read_jsonl(truth_path, required=("id", "same")))
    answers = pd.DataFrame(read_jsonl(folder / "submissions_answers.jsonl.gz",
                                      required=("system", "id", "value")))
    with open(folder / "expected_metrics.json", encoding="utf-8") as fh:
        expected = json.load(fh)
    return Pan20Labels(truth=truth, answers=answers, expected=expected)
