"""What the poem-corpus builders share: reading a git checkout, joining poems into texts of a
least length, and writing ``texts.jsonl`` and ``SOURCE.md`` for ``stylo.datasets.load``."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path


def git_output(checkout: Path, *args: str) -> bytes:
    """git's output, or one line naming the checkout and what git said."""
    done = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True)
    if done.returncode:
        said = done.stderr.decode(errors="replace").strip().splitlines() or ["no message"]
        raise SystemExit(f"error: git {args[0]} in {checkout}: {said[0]}")
    return done.stdout


def joined_texts(
    poems: dict[str, list[str]], per_author: int, min_chars: int, separator: str = ""
) -> list[dict]:
    """Rows (id, author, text): each poet's poems, in order, joined by ``separator`` into texts
    of at least ``min_chars`` characters, at most ``per_author`` a poet (a short remainder is
    left out)."""
    rows = []
    for poet, pieces in poems.items():
        text, k = "", 0
        for piece in pieces:
            text = f"{text}{separator}{piece}" if text else piece
            if len(text) >= min_chars:
                rows.append({"id": f"{poet}-{k}", "author": poet, "text": text})
                text, k = "", k + 1
                if k == per_author:
                    break
    return rows


def most_characters(poems: dict[str, list[str]], authors: int) -> list[str]:
    """The ``authors`` poets with the most characters, most first (ties: by name)."""
    return sorted(poems, key=lambda a: (-sum(map(len, poems[a])), a))[:authors]


def size_flags(p: argparse.ArgumentParser, authors: int, per_author: int, min_chars: int):
    """Add ``--authors``, ``--per-author`` and ``--min-chars`` with these defaults."""
    p.add_argument("--authors", type=int, default=authors)
    p.add_argument("--per-author", type=int, default=per_author)
    p.add_argument("--min-chars", type=int, default=min_chars)


def parsed(p: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """The parsed arguments; a size flag below 1 is refused in one line."""
    a = p.parse_args(argv)
    for flag in ("authors", "per_author", "min_chars", "max_chars"):
        if getattr(a, flag, 1) < 1:
            p.error(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(a, flag)}")
    return a


def write_corpus(out: Path, rows: list[dict], source: str) -> int:
    """``out/texts.jsonl`` and ``out/SOURCE.md`` (``source`` and the count); prints a line."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "texts.jsonl", "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    (out / "SOURCE.md").write_text(f"{source} {len(rows)} texts.\n", encoding="utf-8")
    print(f"{len(rows)} texts of {len({r['author'] for r in rows})} poets -> {out}")
    return 0


def git_files(checkout: Path, paths: list[str]) -> list[bytes]:
    """The contents of ``paths`` at HEAD, in order, read by one ``git cat-file --batch``."""
    names = "".join(f"HEAD:{p}\n" for p in paths).encode()
    done = subprocess.run(
        ["git", "-C", str(checkout), "cat-file", "--batch"], input=names, capture_output=True
    )
    out, at = [], 0
    for path in paths:
        end = done.stdout.index(b"\n", at)
        header = done.stdout[at:end].split()
        if done.returncode or len(header) != 3 or header[1] != b"blob":
            raise SystemExit(f"error: git cat-file in {checkout}: cannot read HEAD:{path}")
        size = int(header[2])
        out.append(done.stdout[end + 1 : end + 1 + size])
        at = end + 2 + size
    return out
