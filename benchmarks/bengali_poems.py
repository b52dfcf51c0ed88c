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
poem's second copy. The corpus goes to ``OUT`` (``texts.jsonl`` with id, author and text, and
``SOURCE.md``), for ``stylo.datasets.load(OUT)`` or ``python -m experiments.run_all --datasets
OUT``; none of its text goes in this repository.
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks import _poem_corpus as corpus

_FOLDER = "dataset"
#: poets of the dataset read in Bengali translation
_TRANSLATED = ("অ্যালেন গিন্সবার্গ", "পাবলো নেরুদা")
_NOT_POEMS = ("CLASS.txt", "SOURCE.txt")


def poems_by_poet(checkout: Path) -> tuple[dict[str, list[str]], str]:
    """Each poet's poems in path order (translations and repeated poems left out), and the
    commit read."""
    listing = corpus.git_output(checkout, "ls-tree", "-r", "--name-only", "-z", "HEAD")
    names = listing.decode().split("\0")
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
    # 18 poems are there twice
    poets = [p.split("/")[1] for p in paths]
    records = zip(poets, corpus.git_files(checkout, paths), strict=True)
    return corpus.distinct_by_poet(records), corpus.head_commit(checkout)


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
    """Rows (id, author, text): the poems cut (``cut``), then
    :func:`benchmarks._poem_corpus.prolific_texts`."""
    pieces = {a: [p for poem in ps for p in cut(poem, max_chars)] for a, ps in poems.items()}
    return corpus.prolific_texts(pieces, authors, per_author, min_chars, min_texts)


def main(argv: list[str] | None = None) -> int:
    p = corpus.parser(
        __doc__,
        "Bengali-Poem-Dataset",
        authors=30,
        per_author=60,
        min_chars=500,
        max_chars=3000,
        min_texts=20,
    )
    a = corpus.parsed(p, argv)
    poems, commit = poems_by_poet(a.checkout)
    rows = texts(poems, a.authors, a.per_author, a.min_chars, a.max_chars, a.min_texts)
    return corpus.write_corpus(
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
