"""A grid cell (:class:`Cell`: one method on one sampled task) and the ``cells/`` folder of a
run, one result file per cell.

A cell's key is the hash of its JSON-normalised spec (:func:`cell_key`), so a result on disk is
found again by any later run of the same cell. Each finished cell is stored as
``<out>/cells/<key>.json`` (spec, status, metric rows, runtime, task info, error and traceback for
a failed cell), written atomically: a temporary file in the same folder is renamed over the target,
so a reader never sees half a file. Per-item scores, when the protocol returns them, go to
``<key>.scores.parquet`` (``.csv.gz`` without pyarrow), written before the JSON, which is the
cell's commit marker. A cell whose JSON says ``ok`` or ``inapplicable`` (a method that must be
fitted on a task with no training data) is done (a rerun skips it); a record file that is not a
JSON object (truncated by a full disk, edited by hand) is reported on one stderr line and read as
missing.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

__all__ = ["DONE", "SPEC_VERSION", "Cell", "CellStore", "cell_key", "normalise", "write_atomic"]

#: bump when the meaning of a stored cell changes, so old results are not reused
SPEC_VERSION = 2


def normalise(obj):
    """``obj`` as plain JSON types (tuples -> lists, numpy scalars -> Python), keys sorted."""

    def default(o):
        if hasattr(o, "item"):
            return o.item()
        if isinstance(o, (set, frozenset)):
            return sorted(o)
        raise TypeError(f"{type(o).__name__} is not JSON-serialisable: {o!r}")

    return json.loads(json.dumps(obj, default=default, sort_keys=True))


def cell_key(spec: Mapping) -> str:
    """Stable 20-hex-digit key of a cell spec: SHA-256 of its canonical JSON."""
    text = json.dumps(
        normalise(dict(spec)), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True)
class Cell:
    """One unit of work: one method on one sampled task of one protocol setting."""

    dataset: str
    load: Mapping
    protocol: str
    setting: Mapping
    method: str
    method_options: Mapping
    seed: int
    protocol_params: Mapping = field(default_factory=dict)
    masking: str | None = None
    method_params: Mapping = field(default_factory=dict)
    #: the protocol's ``revision``: a protocol that starts drawing other tasks bumps it
    revision: int = 1

    def spec(self) -> dict:
        spec = {
            "v": SPEC_VERSION,
            "dataset": self.dataset,
            "load": dict(self.load),
            "protocol": self.protocol,
            "protocol_params": dict(self.protocol_params),
            "setting": dict(self.setting),
            "method": self.method,
            "method_options": dict(self.method_options),
            "seed": int(self.seed),
        }
        # absent when unused, so the keys of cells without them never change
        if self.masking is not None:
            spec["masking"] = self.masking
        if self.method_params:
            spec["method_params"] = dict(self.method_params)
        if self.revision != 1:
            spec["revision"] = int(self.revision)
        return normalise(spec)

    @property
    def key(self) -> str:
        return cell_key(self.spec())

    @property
    def task_key(self) -> tuple:
        """Cells with equal task keys share one sampled task (only the method differs)."""
        return (
            self.dataset,
            json.dumps(normalise(dict(self.load)), sort_keys=True),
            self.protocol,
            json.dumps(normalise(dict(self.protocol_params)), sort_keys=True),
            json.dumps(normalise(dict(self.setting)), sort_keys=True),
            int(self.seed),
        )


#: statuses of a cell a rerun does not compute again (``failed`` cells are retried)
DONE = ("ok", "inapplicable")


def write_atomic(path: Path, data: bytes, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so that ``path`` is either absent, the old file or complete;
    ``durable`` also syncs it to disk first (results do; throw-away progress notes need not)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _has_parquet() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


class CellStore:
    """The ``cells/`` folder of a run: one JSON record (and maybe a scores file) per cell."""

    def __init__(self, out_dir: str | Path):
        self.dir = Path(out_dir) / "cells"

    def record_path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    @staticmethod
    def _load(path: Path, then: str) -> dict | None:
        """The record in ``path``, or None when it is not a JSON object, which is reported on
        one stderr line naming the file and ending in ``then`` (what happens to the cell)."""
        try:
            with open(path, encoding="utf-8") as fh:
                rec = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            problem = f"{type(exc).__name__}: {exc}"
        else:
            if isinstance(rec, dict):
                return rec
            problem = f"a JSON {type(rec).__name__}, not an object"
        print(f"run_all: corrupt cell file {path} ({problem}); {then}", file=sys.stderr)
        return None

    def read(self, key: str) -> dict | None:
        """The record of ``key``; None when absent or corrupt (so the cell is recomputed)."""
        path = self.record_path(key)
        if not path.is_file():
            return None
        return self._load(path, "recomputing")

    def records(self, keys: set[str] | None = None) -> list[dict]:
        """Stored records, all or those of ``keys``; corrupt files are reported and skipped
        (temporary files start with a dot and are never matched)."""
        out = []
        for path in sorted(self.dir.glob("[!.]*.json")):
            if keys is not None and path.stem not in keys:
                continue
            rec = self._load(path, "skipped")
            if rec is not None:
                out.append(rec)
        return out

    def is_done(self, key: str) -> bool:
        rec = self.read(key)
        return rec is not None and rec.get("status") in DONE

    def scores(self, record: dict) -> pd.DataFrame | None:
        name = record.get("scores_file")
        if not name:
            return None
        path = self.dir / name
        return pd.read_parquet(path) if name.endswith(".parquet") else pd.read_csv(path)

    def write(self, record: dict, scores: pd.DataFrame | None) -> None:
        record = dict(record)
        if scores is not None and len(scores):
            if _has_parquet():
                name, buf = f"{record['key']}.scores.parquet", io.BytesIO()
                scores.to_parquet(buf, index=False)
                data = buf.getvalue()
            else:
                name = f"{record['key']}.scores.csv.gz"
                data = _gzip_csv(scores)
            write_atomic(self.dir / name, data)
            record["scores_file"] = name
        text = json.dumps(record, indent=1, sort_keys=True, default=str)
        write_atomic(self.record_path(record["key"]), text.encode("utf-8"))


def _gzip_csv(frame: pd.DataFrame) -> bytes:
    return gzip.compress(frame.to_csv(index=False).encode("utf-8"), mtime=0)
