"""A Devanagari corpus for stylo's own protocols: Urdu ghazals by poet, in Hindi script.

    python -m benchmarks.rekhta_ghazals CHECKOUT OUT [--authors 30] [--per-author 50]
        [--min-chars 500] [--min-texts 20]

Devanagari writes its vowel signs, viramas and nuktas as combining marks (three characters in
ten here), which Python's ``\\w`` leaves out. The corpus is built from a checkout (or a bare
mirror) of https://github.com/amir9ume/urdu_ghazals_rekhta (MIT licence for the repository; the
ghazals were scraped from rekhta.org, whose poets, many in copyright, are credited there):
``dataset/dataset.zip`` holds ``dataset/<poet>/hi/<ghazal>``, each ghazal in Devanagari. Each
poet's ghazals, in name order, are joined into texts of at least ``--min-chars`` characters,
at most ``--per-author`` texts a poet; of the poets with at least ``--min-texts`` texts, the
``--authors`` with the most characters. The corpus goes to ``OUT`` (``texts.jsonl`` with id,
author and text, and ``SOURCE.md``), to be read by ``stylo.datasets.load(OUT)`` or ``python -m
experiments.run_all --datasets OUT``; none of its text goes in this repository.
"""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

from benchmarks import _poem_corpus as corpus

_ZIP = "dataset/dataset.zip"


def ghazals_by_poet(checkout: Path) -> tuple[dict[str, list[str]], str]:
    """Each poet's Devanagari ghazals in name order (a ghazal's second copy left out), and the
    commit read."""
    (raw,) = corpus.git_files(checkout, [_ZIP])
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile as exc:
        raise SystemExit(f"error: {checkout}:{_ZIP} is not a zip archive: {exc}") from None
    names = [n for n in sorted(archive.namelist()) if _is_hindi_ghazal(n.split("/"))]
    ghazals = corpus.distinct_by_poet((n.split("/")[1], archive.read(n)) for n in names)
    if not ghazals:
        raise SystemExit(f"error: {checkout}:{_ZIP} holds no dataset/<poet>/hi/<ghazal>")
    return ghazals, corpus.head_commit(checkout)


def _is_hindi_ghazal(parts: list[str]) -> bool:
    return len(parts) == 4 and parts[2] == "hi" and bool(parts[3])


def main(argv: list[str] | None = None) -> int:
    p = corpus.parser(
        __doc__, "urdu_ghazals_rekhta", authors=30, per_author=50, min_chars=500, min_texts=20
    )
    a = corpus.parsed(p, argv)
    ghazals, commit = ghazals_by_poet(a.checkout)
    rows = corpus.prolific_texts(ghazals, a.authors, a.per_author, a.min_chars, a.min_texts)
    return corpus.write_corpus(
        a.out,
        rows,
        f"# Urdu ghazals in Devanagari by poet (`benchmarks/rekhta_ghazals.py`)\n\n"
        f"amir9ume/urdu_ghazals_rekhta at {commit} (MIT licence; texts from rekhta.org), "
        f"`{_ZIP}`, `dataset/<poet>/hi/`: ghazals joined into texts of at least "
        f"{a.min_chars} characters, at most {a.per_author} a poet; of the poets with at least "
        f"{a.min_texts} texts, the {a.authors} with the most characters.",
    )


if __name__ == "__main__":
    sys.exit(main())
