"""JSON Lines reading with errors that name the file, the line and what is wrong."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

__all__ = ["DataError", "check_new_id", "iter_jsonl", "read_jsonl", "sha256_of"]


class DataError(ValueError):
    """A data file is missing, malformed or does not match the registry."""


def _open_text(path: Path):
    # utf-8-sig: files saved by Windows editors start with a byte order mark, which plain
    # utf-8 passes on to json.loads as a character before the first brace
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def iter_jsonl(
    path: str | Path, required: tuple[str, ...] = (), text_fields: tuple[str, ...] = ()
) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)`` for every non-blank line of a ``.jsonl[.gz]`` file.

    Every record must be a JSON object holding the ``required`` fields; each of
    ``text_fields`` must be a non-empty string. Violations raise :class:`DataError` naming
    the file and the 1-based line number.
    """
    path = Path(path)
    try:
        fh = _open_text(path)
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    with fh:
        try:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(
                        f"{path}:{lineno}: malformed JSON ({exc.msg} at column {exc.colno})"
                    ) from None
                if not isinstance(rec, dict):
                    raise DataError(
                        f"{path}:{lineno}: expected a JSON object, got {type(rec).__name__}"
                    )
                missing = [f for f in required if f not in rec]
                if missing:
                    raise DataError(f"{path}:{lineno}: missing field(s) {missing}")
                for f in text_fields:
                    val = rec.get(f)
                    if not isinstance(val, str):
                        raise DataError(
                            f"{path}:{lineno}: field {f!r} must be a string, got "
                            f"{type(val).__name__}"
                        )
                    if not val.strip():
                        raise DataError(f"{path}:{lineno}: field {f!r} is empty")
                yield lineno, rec
        except (UnicodeDecodeError, EOFError, gzip.BadGzipFile, OSError) as exc:
            raise DataError(f"{path}: cannot be read as UTF-8 JSON Lines ({exc})") from None


def check_new_id(
    first_line: dict[str, int], pid: str, path: Path, lineno: int, what: str = "duplicate id"
) -> None:
    """Note that ``pid`` is on line ``lineno`` of ``path`` in ``first_line``; an id already
    noted raises :class:`DataError` naming the file, both lines and the id."""
    first = first_line.setdefault(pid, lineno)
    if first != lineno:
        raise DataError(f"{path}:{lineno}: {what} {pid!r} (first on line {first})")


def read_jsonl(
    path: str | Path, required: tuple[str, ...] = (), text_fields: tuple[str, ...] = ()
) -> list[dict]:
    """All records of a JSON Lines file (see :func:`iter_jsonl` for the checks)."""
    return [rec for _, rec in iter_jsonl(path, required, text_fields)]


_HASH_CACHE: dict[tuple[str, int, int], str] = {}


def sha256_of(path: Path) -> str:
    """SHA-256 of a file, cached per (path, size, mtime) for the life of the process."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASH_CACHE:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _HASH_CACHE[key] = h.hexdigest()
    return _HASH_CACHE[key]
