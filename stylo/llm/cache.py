"""A persistent response cache for language-model calls (sqlite).

A response is stored under a key derived from the backend kind, the model identity and the
full request (messages and decoding parameters), so an identical rerun is answered without
calling the model. Every write is one sqlite transaction, so a crash or a killed process leaves
either the whole row or nothing, never a half-written cache. Credentials are never part of a
request and so never reach the file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path

__all__ = ["ResponseCache", "request_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    finish_reason TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    seconds REAL NOT NULL,
    created REAL NOT NULL
)
"""


def request_key(backend: str, model: str, request: dict) -> str:
    """A hex sha256 of the canonical JSON of (backend, model, request)."""
    blob = json.dumps(
        {"backend": backend, "model": model, "request": request},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Responses by request key in an sqlite file (``path``) or in memory (``path=None``).

    Safe to share between threads of one process (one connection behind a lock) and between
    processes (sqlite's file locking, WAL journal).
    """

    def __init__(self, path: str | Path | None = None, timeout: float = 30.0):
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            ":memory:" if self.path is None else str(self.path),
            timeout=timeout,
            check_same_thread=False,
            isolation_level=None,
        )
        with self._lock:
            if self.path is not None:
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path) if self.path else ':memory:'!r})"

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def get(self, key: str) -> dict | None:
        """The stored response for ``key`` (text, finish_reason, token counts, seconds)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT text, finish_reason, prompt_tokens, completion_tokens, seconds "
                "FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return {
            "text": row[0],
            "finish_reason": row[1],
            "prompt_tokens": row[2],
            "completion_tokens": row[3],
            "seconds": row[4],
        }

    def put(
        self,
        key: str,
        backend: str,
        model: str,
        request: dict,
        text: str,
        finish_reason: str | None,
        prompt_tokens: int,
        completion_tokens: int,
        seconds: float,
    ) -> None:
        """Store one response atomically (replacing any earlier one under ``key``)."""
        row = (
            key,
            backend,
            model,
            json.dumps(request, sort_keys=True, ensure_ascii=False),
            str(text),
            finish_reason,
            int(prompt_tokens),
            int(completion_tokens),
            float(seconds),
            time.time(),
        )
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(
                    "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def integrity_ok(self) -> bool:
        """sqlite's own consistency check of the file."""
        with self._lock:
            return self._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # the cache is a shared resource: estimator cloning must not duplicate the connection
    def __deepcopy__(self, memo):
        return self
