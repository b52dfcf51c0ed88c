"""What the poem-corpus builders share: reading a git checkout, joining poems into texts of a
minimum length, and the command line, and writing ``texts.jsonl`` and ``SOURCE.md`` for
``stylo.datasets.load``."""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import Counter, defaultdict
from pathlib import Path


def git_output(checkout: Path, *args: str) -> bytes:
    """git's output, or one line naming the checkout and what git said."""
    done = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True)
    if done.returncode:
        said = done.stderr.decode(errors="replace").strip().splitlines() or ["no message"]
        raise SystemExit(f"error: git {args[0]} in {checkout}: {said[0]}")
    return done.stdout


def head_commit(checkout: Path) -> str:
    """The commit the checkout's HEAD is at."""
    return git_output(checkout, "rev-parse", "HEAD").decode().strip()


def distinct_by_poet(records) -> dict[str, list[str]]:
    """Each poet's texts from ``(poet, raw UTF-8 bytes)`` records, stripped, in record order;
    empty texts and a text's later copies (under any poet) left out."""
    poems, seen = defaultdict(list), set()
    for poet, raw in records:
        text = raw.decode("utf-8").strip()
        if text and text not in seen:
            seen.add(text)
            poems[poet].append(text)
    return poems


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


def parser(doc: str, source: str, **sizes: int) -> argparse.ArgumentParser:
    """A builder's command line: ``checkout`` (of ``source``), ``out``, and an int flag for
    each of ``sizes`` (``min_chars=300``: ``--min-chars``, default 300)."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("checkout", type=Path, help=f"a clone or bare mirror of {source}")
    p.add_argument("out", type=Path, help="folder to write texts.jsonl and SOURCE.md to")
    for flag, default in sizes.items():
        p.add_argument(f"--{flag.replace('_', '-')}", type=int, default=default)
    return p


def parsed(p: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """The parsed arguments; a size flag below 1 is refused in one line."""
    a = p.parse_args(argv)
    for flag, value in vars(a).items():
        if isinstance(value, int) and value < 1:
            p.error(f"--{flag.replace('_', '-')} must be >= 1, got {value}")
    return a


def write_corpus(out: Path, rows: list[dict], source: str) -> int:
    """``out/texts.jsonl`` and ``out/SOURCE.md`` (``source`` and the count); prints a line.
    No text is an error: nothing is written."""
    if not rows:
        raise SystemExit(f"error: no text reaches the sizes asked for; nothing written to {out}")
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


def prolific_texts(
    poems: dict[str, list[str]],
    authors: int,
    per_author: int,
    min_chars: int,
    min_texts: int,
    separator: str = "\n\n",
) -> list[dict]:
    """``joined_texts`` of the ``authors`` poets with the most characters among those whose
    poems make at least ``min_texts`` texts."""
    rows = joined_texts(poems, per_author, min_chars, separator)
    counts = Counter(row["author"] for row in rows)
    enough = {a: poems[a] for a in poems if counts[a] >= min_texts}
    kept = set(most_characters(enough, authors))
    return [row for row in rows if row["author"] in kept]
