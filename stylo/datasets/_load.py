"""``load``: a registered dataset, or a corpus in a folder of one's own, read, checked and
filtered."""

from __future__ import annotations

from pathlib import Path

from stylo.corpus import Corpus, PairSet
from stylo.datasets._authors import merge_authors_by_text
from stylo.datasets._filters import apply_filters, registry_cleaning
from stylo.datasets._jsonl import DataError
from stylo.datasets._pan20 import load_pan20_format
from stylo.datasets._readers import log, read_cached
from stylo.datasets._registry import check_sha256, locate, registry, split_name


def load(
    name: str,
    *,
    split: str | None = None,
    normalize_newlines: bool = True,
    min_tokens: int | None = None,
    min_per_author: int | None = None,
    per_author: int | None = None,
    seed: int = 0,
    verify: bool = True,
    clean: bool = True,
    **where,
) -> Corpus | PairSet:
    """Load a registered dataset, or a corpus of one's own.

    Parameters
    ----------
    name : registry name, optionally ``base/sub`` for a sub-corpus (``pan14_av/en_essays``);
        or the path of a folder holding ``texts.jsonl[.gz]`` or ``pairs.jsonl[.gz]``, or of
        such a file, in the registered corpora's format (README, Data): read with the same
        line-by-line checks, without a checksum or the registry's cleaning. A ``pairs.jsonl``
        with a ``truth.jsonl`` beside it is the official PAN20/21 layout and is read as
        :func:`~stylo.datasets.load_pan20_format` reads it.
    split : keep only rows whose ``split`` column equals this (``"train"``/``"test"``).
    normalize_newlines : turn ``\\r\\n`` and ``\\r`` into ``\\n`` (several PAN corpora mix them).
    min_tokens : drop texts (problems: any of whose texts) with fewer whitespace tokens.
    min_per_author : drop authors with fewer texts (corpora only), after ``min_tokens``.
    per_author : sample at most this many texts per author with ``seed`` (corpora only).
    verify : check the file's SHA-256 against the registry.
    clean : apply the registry's cleaning of a corpus (``registry.json``: ``min_text_tokens``,
        ``drop_repeated_texts``; mlpapers drops 257 placeholder or fragment "abstracts" under
        20 tokens and 23 repeated ones, blog 220 repeated posts, 168 of them cross-posted by
        several bloggers); False reads the file's rows as they are.
    where : column=value filters, e.g. ``role="known"`` or ``language="en"``.

    Every filter is explicit and recorded with its counts in the result's ``history``, and so
    are the registry's cleaning (first) and, for a corpus whose registry entry says
    ``merge_authors_by_text`` (PAN 2018/2019 attribution, whose problems name one person once
    per problem), the merging of author labels that share a text (``stylo.datasets._authors``)
    that comes before the filters.
    """
    own = own_file(name)
    if own is not None:
        path, entry, sub = own, {"kind": own.name.split(".")[0]}, None
    else:
        base, sub = split_name(name)
        entry = registry()[base]
        path = None
    if entry["kind"] not in ("texts", "pairs"):
        raise DataError(
            f"dataset {base!r} is a {entry['kind']} fixture, not texts or pairs; "
            f"use stylo.datasets.load_pan20_labels()"
        )
    if path is None:
        path = locate(base)
        if verify:
            check_sha256(path, entry["sha256"])
    if entry["kind"] == "pairs" and (min_per_author is not None or per_author is not None):
        raise ValueError("min_per_author/per_author apply to corpora, not pair sets")
    if own is not None and pan20_layout(own):
        # the official PAN20/21 layout keeps the labels, authors and fandoms in truth.jsonl
        obj: Corpus | PairSet = load_pan20_format(own.parent, name, normalize_newlines)
    else:
        stat = path.stat()
        frame = read_cached(
            str(path.resolve()), stat.st_mtime_ns, stat.st_size, entry["kind"], normalize_newlines
        ).copy()
        obj = (Corpus if entry["kind"] == "texts" else PairSet)(frame, name=name)
    if clean:
        obj = registry_cleaning(obj, entry)
    if entry.get("merge_authors_by_text"):
        obj = merge_authors_by_text(obj)
    if sub is not None:
        where = {entry["subsets_field"]: sub, **where}
    if split is not None:
        where = {"split": split, **where}
    obj = apply_filters(obj, name, where, min_tokens, min_per_author, per_author, seed)
    for step in obj.history:
        log.info("%s: %s", name, step)
    return obj


_OWN_FILES = ("texts.jsonl", "texts.jsonl.gz", "pairs.jsonl", "pairs.jsonl.gz")


def pan20_layout(path: Path) -> bool:
    """Whether ``path`` is a ``pairs.jsonl`` with a ``truth.jsonl`` beside it: the official
    PAN20/21 layout, read by :func:`~stylo.datasets.load_pan20_format` (labels, authors and
    fandoms as ``same``, ``authors`` and ``topics``)."""
    return path.name == "pairs.jsonl" and (path.parent / "truth.jsonl").is_file()


def own_file(name: str) -> Path | None:
    """The data file of ``name`` when it is a path rather than a registered name: the file
    itself (named as a registered corpus's file is) or the one such file in a folder; None for
    a name that is not a path. A path that holds no such file, or two, is a DataError naming
    what was looked for."""
    if name.split("/")[0] in registry() or not (Path(name).exists() or "/" in name):
        return None
    path = Path(name)
    if not path.exists():
        raise DataError(
            f"{path}: no such file or folder, and {name.split('/')[0]!r} is not a registered "
            f"dataset ({', '.join(sorted(registry()))})"
        )
    if path.is_file():
        if path.name not in _OWN_FILES:
            raise DataError(f"{path}: a corpus file is named one of {', '.join(_OWN_FILES)}")
        return path
    found = [path / f for f in _OWN_FILES if (path / f).is_file()]
    if len(found) != 1:
        what = "none" if not found else " and ".join(f.name for f in found)
        raise DataError(
            f"{path}: a corpus folder holds one of {', '.join(_OWN_FILES)}; found {what}"
        )
    return found[0]
