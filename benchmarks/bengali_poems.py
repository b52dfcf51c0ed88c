"""A Bengali corpus for stylo's own protocols: poems by poet, from the Bengali Poem Dataset.

    python -m benchmarks.bengali_poems CHECKOUT OUT [--authors 30] [--per-author 60]
        [--min-chars 500] [--max-chars 3000] [--min-texts 20]

Bengali writes its vowel signs and viramas as combining marks, which Python's ``\\w`` leaves
out; this corpus measures what the suite does on such a script with real text. It is built
from a checkout (or a bare mirror) of https://github.com/shuhanmirza/Bengali-Poem-Dataset
(GPL-3.0; ``dataset/<poet>/<title>/<title>.txt``, poems from bangla-kobita.com, built for
stylometry): each poet's poems in path order, a poem longer than ``--max-chars`` cut at line
breaks into pieces of at most that many characters, the pieces joined into texts of at least
``--min-chars`` characters, at most ``--per-author`` texts a poet; of the poets with at least
``--min-texts`` texts, the ``--authors`` with the most characters. Poems in translation
(Neruda's, Ginsberg's) are left out, their style being the translators', and so is a
poem's second copy. It writes
``OUT/texts.jsonl`` (id, author, text) and ``OUT/SOURCE.md``, for ``python -m
experiments.run_all --datasets OUT`` or ``stylo.datasets.load(OUT)``; no corpus text goes in
this repository.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from benchmarks._poem_corpus import (
    git_files,
    git_output,
    joined_texts,
    most_characters,
    parsed,
    size_flags,
    write_corpus,
)

_FOLDER = "dataset"
#: poets of the dataset read in Bengali translation
_TRANSLATED = ("অ্যালেন গিন্সবার্গ", "পাবলো নেরুদা")
_NOT_POEMS = ("CLASS.txt", "SOURCE.txt")


def poems_by_poet(checkout: Path) -> tuple[dict[str, list[str]], str]:
    """Each poet's poems in path order (translations and repeated poems left out), and the
    commit read."""
    names = git_output(checkout, "ls-tree", "-r", "--name-only", "-z", "HEAD").decode().split("\0")
    paths = sorted(
        n
        for n in names
        if n.startswith(f"{_FOLDER}/")
        and n.endswith(".txt")
        and n.count("/") == 3
        and n.rsplit("/", 1)[1] not in _NOT_POEMS
        and n.split("/")[1] not in _TRANSLATED
    )
    if not paths:
        raise SystemExit(f"error: {checkout} has no {_FOLDER}/<poet>/<title>/*.txt at HEAD")
    poems, seen = defaultdict(list), set()
    for path, raw in zip(paths, git_files(checkout, paths), strict=True):
        poem = raw.decode("utf-8").strip()
        if poem and poem not in seen:  # 18 poems are there twice
            seen.add(poem)
            poems[path.split("/")[1]].append(poem)
    return poems, git_output(checkout, "rev-parse", "HEAD").decode().strip()


def cut(poem: str, max_chars: int) -> list[str]:
    """``poem`` in pieces of at most ``max_chars`` characters, cut after the last line break
    within the limit (anywhere where a line is longer)."""
    pieces = []
    while len(poem) > max_chars:
        at = poem.rfind("\n", 0, max_chars + 1) + 1 or max_chars
        pieces.append(poem[:at].strip())
        poem = poem[at:].strip()
    return [*pieces, poem] if poem else pieces


def texts(poems, authors: int, per_author: int, min_chars: int, max_chars: int, min_texts: int):
    """Rows (id, author, text) of the ``authors`` poets with the most characters among those
    whose cut and joined poems make at least ``min_texts`` texts."""
    pieces = {a: [p for poem in ps for p in cut(poem, max_chars)] for a, ps in poems.items()}
    rows = joined_texts(pieces, per_author, min_chars, separator="\n\n")
    counts = defaultdict(int)
    for row in rows:
        counts[row["author"]] += 1
    enough = {a: pieces[a] for a in pieces if counts[a] >= min_texts}
    kept = set(most_characters(enough, authors))
    return [row for row in rows if row["author"] in kept]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkout", type=Path, help="a clone or bare mirror of Bengali-Poem-Dataset")
    p.add_argument("out", type=Path, help="folder to write texts.jsonl and SOURCE.md to")
    size_flags(p, authors=30, per_author=60, min_chars=500)
    p.add_argument("--max-chars", type=int, default=3000)
    p.add_argument("--min-texts", type=int, default=20)
    a = parsed(p, argv)
    poems, commit = poems_by_poet(a.checkout)
    rows = texts(poems, a.authors, a.per_author, a.min_chars, a.max_chars, a.min_texts)
    return write_corpus(
        a.out,
        rows,
        f"# Bengali poems by poet (`benchmarks/bengali_poems.py`)\n\n"
        f"shuhanmirza/Bengali-Poem-Dataset at {commit} (GPL-3.0), `{_FOLDER}/<poet>/<title>/`: "
        f"translations left out, poems cut at line breaks into pieces of at most "
        f"{a.max_chars} characters, joined into texts of at least {a.min_chars} characters, "
        f"at most {a.per_author} a poet; of the poets with at least {a.min_texts} texts, the "
        f"{a.authors} with the most characters.",
    )


if __name__ == "__main__":
    sys.exit(main())
