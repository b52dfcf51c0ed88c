"""The two data types every part of stylo speaks: a labelled ``Corpus`` and a ``PairSet``.

``Corpus`` is a set of texts with one author label each (identification, one-to-many, impostor
pools). ``PairSet`` is a set of PAN-style verification problems: one or more known texts, one
unknown text and, when known, whether they share an author.

Both wrap a pandas DataFrame, so any per-text metadata a corpus carries (topic, split, date,
language, ...) travels with the texts through ``subset`` and sampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["Corpus", "PairSet", "FilterStep", "PAIR_RULES", "UNKNOWN_AUTHORS", "join_known"]

#: author labels that stand for "someone not in the data" (PAN 2019's open-set texts are all
#: labelled ``<UNK>``); such texts share no known author with anything, so sampling skips them
UNKNOWN_AUTHORS = frozenset({"<UNK>"})

#: how labelled training pairs are drawn from a Corpus (:mod:`stylo.training_draws`)
PAIR_RULES = ("any", "cross_topic")


def join_known(known_lists) -> list[str]:
    """Each problem's known texts joined by a blank line (PAN13/14 practice).

    Problems with the same known texts (attribution repeats a candidate's for every unknown
    text) share one joined string object: one copy in memory, and its hash, which Python
    caches on the object, is computed once by the methods that look texts up."""
    joined: dict[tuple, str] = {}
    out = []
    for k in known_lists:
        key = tuple(k)
        if key not in joined:
            joined[key] = "\n\n".join(k)
        out.append(joined[key])
    return out


@dataclass(frozen=True)
class FilterStep:
    """One explicit filtering or sampling step and what it did to the data."""

    name: str
    before: int
    after: int
    detail: str = ""

    def __str__(self) -> str:
        extra = f" ({self.detail})" if self.detail else ""
        return f"{self.name}: {self.before} -> {self.after}{extra}"


def _as_index(frame: pd.DataFrame, selector) -> np.ndarray:
    """Turn a boolean mask, integer positions or a list of ids into integer positions."""
    if isinstance(selector, pd.Series):
        selector = selector.to_numpy()
    arr = np.asarray(selector)
    if arr.dtype == bool:
        if arr.shape != (len(frame),):
            raise ValueError(f"boolean mask has shape {arr.shape}, expected ({len(frame)},)")
        return np.flatnonzero(arr)
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)
    if np.issubdtype(arr.dtype, np.integer):
        if arr.min() < -len(frame) or arr.max() >= len(frame):
            raise IndexError(f"position out of range for {len(frame)} rows")
        return arr.astype(np.int64)
    # anything else is taken as ids
    pos = pd.Index(frame["id"]).get_indexer(arr)
    if (pos < 0).any():
        missing = [str(x) for x, p in zip(arr, pos) if p < 0][:5]
        raise KeyError(f"unknown ids: {missing}")
    return pos.astype(np.int64)


def _check_unique_ids(frame: pd.DataFrame, what: str) -> None:
    """ValueError naming (up to five of) the repeated ids, when ``frame["id"]`` has any."""
    if not frame["id"].is_unique:
        dup = frame["id"][frame["id"].duplicated()].iloc[:5].tolist()
        raise ValueError(f"{what} has duplicate ids: {dup}")


@dataclass
class Corpus:
    """Texts with one author label each, plus any metadata columns.

    The backing ``frame`` has at least the columns ``id`` (unique str), ``text`` (str) and
    ``author`` (str); ``topic`` is optional and every other column is metadata. Rows keep the
    order they were loaded in.

    ``pair_rule`` says how a method draws labelled training pairs from it
    (:mod:`stylo.training_draws`): ``"any"`` (two texts of one author, or of two
    authors) or ``"cross_topic"`` (same-author pairs across topics, different-author pairs
    within one: AIDBench's Guardian rule). A protocol whose test pairs follow a rule gives its
    training corpus that rule, so that what a method learns from pairs is learnt on pairs drawn
    like the ones it is tested on; subsets keep it.
    """

    frame: pd.DataFrame
    name: str = "corpus"
    history: list = field(default_factory=list)
    pair_rule: str = "any"

    def __post_init__(self) -> None:
        if self.pair_rule not in PAIR_RULES:
            raise ValueError(
                f"Corpus {self.name!r}: pair_rule must be one of {PAIR_RULES}, "
                f"got {self.pair_rule!r}"
            )
        for col in ("id", "text", "author"):
            if col not in self.frame.columns:
                raise ValueError(f"Corpus {self.name!r} needs a column {col!r}")
        _check_unique_ids(self.frame, f"Corpus {self.name!r}")
        self.frame = self.frame.reset_index(drop=True)

    @classmethod
    def from_lists(
        cls,
        texts: Sequence[str],
        authors: Sequence[str],
        ids=None,
        topics=None,
        name: str = "corpus",
        **metadata,
    ) -> Corpus:
        """Build a corpus from parallel sequences (``ids`` default to ``"0", "1", ...``)."""
        if len(texts) != len(authors):
            raise ValueError(f"{len(texts)} texts but {len(authors)} authors")
        data = {
            "id": [str(i) for i in (ids if ids is not None else range(len(texts)))],
            "text": list(texts),
            "author": [str(a) for a in authors],
        }
        if topics is not None:
            data["topic"] = list(topics)
        data.update({k: list(v) for k, v in metadata.items()})
        return cls(pd.DataFrame(data), name=name)

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        return (
            f"Corpus({self.name!r}, texts={len(self)}, authors={self.frame['author'].nunique()}"
            f"{', topics=' + str(self.frame['topic'].nunique()) if self.has_topics else ''})"
        )

    @property
    def ids(self) -> np.ndarray:
        return self.frame["id"].to_numpy()

    @property
    def texts(self) -> list[str]:
        return self.frame["text"].tolist()

    @property
    def authors(self) -> np.ndarray:
        return self.frame["author"].to_numpy()

    @property
    def has_topics(self) -> bool:
        return "topic" in self.frame.columns and self.frame["topic"].notna().any()

    @property
    def topics(self) -> np.ndarray | None:
        return self.frame["topic"].to_numpy() if "topic" in self.frame.columns else None

    @property
    def metadata(self) -> pd.DataFrame:
        """Every column except ``text``."""
        return self.frame.drop(columns=["text"])

    def subset(self, selector, name: str | None = None) -> Corpus:
        """Rows picked by a boolean mask, integer positions or a list of ids, in that order."""
        pos = _as_index(self.frame, selector)
        return Corpus(
            self.frame.iloc[pos].copy(),
            name=name or self.name,
            history=list(self.history),
            pair_rule=self.pair_rule,
        )

    def by_author(self) -> dict[str, np.ndarray]:
        """Map each author to the integer positions of their texts (in corpus order)."""
        groups = self.frame.groupby("author", sort=True).indices
        return {str(a): np.asarray(idx, dtype=np.int64) for a, idx in groups.items()}

    def to_frame(self) -> pd.DataFrame:
        """A copy of the tidy table: one row per text."""
        return self.frame.copy()

    def filter(self, mask, step: str, detail: str = "") -> Corpus:
        """Keep rows where ``mask`` holds and record the step with its counts."""
        out = self.subset(np.asarray(mask, dtype=bool))
        out.history.append(FilterStep(step, len(self), len(out), detail))
        return out

    def summary(self) -> dict:
        """Counts a user checks first: authors, texts, mean characters, topics."""
        lengths = self.frame["text"].str.len()
        return {
            "name": self.name,
            "authors": int(self.frame["author"].nunique()),
            "texts": len(self),
            "mean_chars": float(lengths.mean()) if len(self) else 0.0,
            "topics": int(self.frame["topic"].nunique()) if self.has_topics else 0,
        }


@dataclass
class PairSet:
    """PAN-style verification problems.

    ``frame`` columns: ``id`` (str), ``known`` (list[str], one or more known texts),
    ``unknown`` (str) and ``same`` (bool, or missing/None when the label is not given); any
    other column (split, language, authors, topics, ...) is metadata.
    """

    frame: pd.DataFrame
    name: str = "pairs"
    history: list = field(default_factory=list)

    def __post_init__(self) -> None:
        for col in ("id", "known", "unknown"):
            if col not in self.frame.columns:
                raise ValueError(f"PairSet {self.name!r} needs a column {col!r}")
        if "same" not in self.frame.columns:
            self.frame = self.frame.assign(same=None)
        _check_unique_ids(self.frame, f"PairSet {self.name!r}")
        self.frame = self.frame.reset_index(drop=True)

    @classmethod
    def from_lists(
        cls,
        known: Sequence,
        unknown: Sequence[str],
        same=None,
        ids=None,
        name: str = "pairs",
        **metadata,
    ) -> PairSet:
        """Build from parallel sequences; a known entry may be one str or a list of str.
        Other keyword arguments become columns, except the names a caller would mean as the
        labels (``label``, ``labels``, ``y``): those are an error pointing at ``same``, since
        as a column they would leave the pairs unlabelled."""
        if len(known) != len(unknown):
            raise ValueError(f"{len(known)} known entries but {len(unknown)} unknown texts")
        meant = sorted(set(metadata) & {"label", "labels", "y"})
        if meant:
            raise ValueError(
                f"PairSet.from_lists: {meant[0]}= is not a keyword; the labels go in same= "
                f"(True where the unknown text is by the known texts' author)"
            )
        known_lists = [[k] if isinstance(k, str) else list(k) for k in known]
        data = {
            "id": [str(i) for i in (ids if ids is not None else range(len(unknown)))],
            "known": known_lists,
            "unknown": list(unknown),
            "same": list(same) if same is not None else [None] * len(unknown),
        }
        data.update({k: list(v) for k, v in metadata.items()})
        return cls(pd.DataFrame(data), name=name)

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        lab = self.labelled
        pos = int(np.sum(self.labels)) if lab else "?"
        return f"PairSet({self.name!r}, problems={len(self)}, same={pos})"

    @property
    def ids(self) -> np.ndarray:
        return self.frame["id"].to_numpy()

    @property
    def known(self) -> list[list[str]]:
        return self.frame["known"].tolist()

    @property
    def known_joined(self) -> list[str]:
        """Known texts of each problem joined by a blank line (PAN13/14 practice)."""
        return join_known(self.frame["known"])

    @property
    def unknown(self) -> list[str]:
        return self.frame["unknown"].tolist()

    @property
    def labelled(self) -> bool:
        return bool(self.frame["same"].notna().all()) and len(self) > 0

    @property
    def labels(self) -> np.ndarray:
        """``same`` as a bool array; raises when any problem is unlabelled."""
        if not self.labelled:
            raise ValueError(f"PairSet {self.name!r} has problems without a `same` label")
        return self.frame["same"].astype(bool).to_numpy()

    def subset(self, selector, name: str | None = None) -> PairSet:
        pos = _as_index(self.frame, selector)
        return PairSet(
            self.frame.iloc[pos].copy(), name=name or self.name, history=list(self.history)
        )

    def split(self, value: str) -> PairSet:
        """Problems whose ``split`` column equals ``value`` (e.g. ``"train"``, ``"test"``)."""
        if "split" not in self.frame.columns:
            raise ValueError(f"PairSet {self.name!r} has no split column")
        values = sorted(self.frame["split"].dropna().unique())
        if value not in values:
            raise ValueError(f"PairSet {self.name!r} has no split {value!r}; it has {values}")
        return self.subset(self.frame["split"] == value, name=f"{self.name}:{value}")

    def texts_a(self) -> list[str]:
        """First side of each pair for pairwise scorers: the joined known texts."""
        return self.known_joined

    def texts_b(self) -> list[str]:
        return self.unknown

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()

    def summary(self) -> dict:
        known_chars = [sum(len(t) for t in k) for k in self.frame["known"]]
        unk_chars = self.frame["unknown"].str.len()
        return {
            "name": self.name,
            "problems": len(self),
            "same": int(np.sum(self.labels)) if self.labelled else None,
            "mean_known": float(np.mean([len(k) for k in self.frame["known"]]))
            if len(self)
            else 0.0,
            "mean_chars": float((np.asarray(known_chars) + unk_chars.to_numpy()).mean() / 2)
            if len(self)
            else 0.0,
        }
