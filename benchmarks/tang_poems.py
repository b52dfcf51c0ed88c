"""A Chinese corpus for stylo's own protocols: Tang poems by poet, from ``chinese-poetry``.

    python -m benchmarks.tang_poems CHECKOUT OUT [--authors 40] [--per-author 60]
        [--min-chars 300]

Chinese puts no space between words, so a tokeniser of space-separated words reads a clause
as one word; this corpus measures what the suite does on such a script with real text. It is
built from a checkout (or a bare mirror) of https://github.com/chinese-poetry/chinese-poetry
(MIT licence; ``全唐诗/poet.tang.*.json``, the Complete Tang Poems in traditional characters):
the ``--authors`` poets with the most characters, each poet's poems in file order joined into
texts of at least ``--min-chars`` characters, at most ``--per-author`` texts a poet. It writes
``OUT/texts.jsonl`` (id, author, text) and ``OUT/SOURCE.md``, for ``python -m
experiments.run_all --datasets OUT`` or ``stylo.datasets.load(OUT)``; no corpus text goes in
this repository.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from benchmarks._poem_corpus import (
    git_output,
    head_commit,
    joined_texts,
    most_characters,
    parsed,
    parser,
    write_corpus,
)

_FOLDER = "全唐诗"


def poems_by_poet(checkout: Path) -> tuple[dict[str, list[str]], str]:
    """Each poet's poems (lines joined) in file order, and the commit they were read at."""
    names = git_output(checkout, "ls-tree", "-r", "--name-only", "-z", "HEAD").decode().split("\0")
    files = sorted(
        (n for n in names if n.startswith(f"{_FOLDER}/poet.tang.") and n.endswith(".json")),
        key=lambda n: int(n.rsplit(".", 2)[1]),
    )
    if not files:
        raise SystemExit(f"error: {checkout} has no {_FOLDER}/poet.tang.*.json at HEAD")
    poems = defaultdict(list)
    for name in files:
        for poem in json.loads(git_output(checkout, "show", f"HEAD:{name}")):
            poems[poem["author"]].append("".join(poem["paragraphs"]))
    return poems, head_commit(checkout)


def texts(poems: dict[str, list[str]], authors: int, per_author: int, min_chars: int) -> list:
    """Rows (id, author, text): the most prolific poets' poems joined into texts."""
    prolific = {a: poems[a] for a in most_characters(poems, authors)}
    return joined_texts(prolific, per_author, min_chars)


def main(argv: list[str] | None = None) -> int:
    p = parser(__doc__, "chinese-poetry", authors=40, per_author=60, min_chars=300)
    a = parsed(p, argv)
    poems, commit = poems_by_poet(a.checkout)
    rows = texts(poems, a.authors, a.per_author, a.min_chars)
    return write_corpus(
        a.out,
        rows,
        f"# Tang poems by poet (`benchmarks/tang_poems.py`)\n\n"
        f"chinese-poetry/chinese-poetry at {commit} (MIT licence), `{_FOLDER}/poet.tang.*.json`: "
        f"the {a.authors} poets with the most characters, poems in file order joined into "
        f"texts of at least {a.min_chars} characters, at most {a.per_author} a poet.",
    )


if __name__ == "__main__":
    sys.exit(main())
