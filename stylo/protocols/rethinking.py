"""Train/val/test splits after Brad, Manolache et al., "Rethinking the Authorship Verification
Experimental Setups" (EMNLP 2022; arXiv 2112.05125), for any data with author and topic labels.

The paper re-split the PAN 2020 fanfiction pairs (topic = fandom) so that each split isolates
one kind of generalisation. Here the same five setups work on a :class:`~stylo.corpus.Corpus`
with ``author`` and ``topic`` columns (pairs are then drawn inside each split) or on a
:class:`~stylo.corpus.PairSet` whose rows carry ``authors`` and ``topics`` (two each, as the
PAN20/21 reader gives them; original pairs are kept when both texts land in the same split).
Texts are what gets split, so **no text ever occurs in two splits**. Per split:

``closed``
    Every val/test text's author *and* topic also occur in train. Each (author, topic) cell
    keeps one random text in train; the cell's other texts go to val/test with probabilities
    ``val_fraction``/``test_fraction``. (The paper's closed-set split "v2" aims at this; its
    "v1", after Araujo-Pino et al. 2020, only guaranteed it for same-author test pairs.)
``clopen``
    A mixed test set, like PAN 2020's and the paper's closed-set v1 where different-author test
    pairs can involve authors never seen: the closed rule for most authors, plus a share of
    authors (``val_fraction + test_fraction`` of them) held out entirely and split between val
    and test. Val/test therefore hold both seen and unseen authors.
``open_unseen_authors``
    Authors are partitioned: train, val and test authors are pairwise disjoint. Topics overlap.
``open_unseen_topics``
    Topics are partitioned: train, val and test topics are pairwise disjoint. Authors overlap.
``open_all``
    Both partitioned; a text goes to split s only when its author *and* its topic belong to s.
    Texts whose author and topic fall in different splits are left out (``info["left_out"]``).

Texts without a topic are left out of every split and counted (``info["without_topic"]``), and
so are texts by a placeholder author such as PAN 2019's ``<UNK>``
(``info["unknown_author_texts_excluded"]``); a text its author has twice (PAN's attribution
problems repeat their candidates' known texts) is split once
(``info["repeated_texts_excluded"]``).
From a Corpus, each split gets up to ``n_pairs[split]`` distinct pairs, half same-author; when a
split cannot supply that many, the number drawn is recorded (``info["pairs"]``) next to the
number asked; a split with no same-author or no different-author pair is an error. From a
PairSet, a train part of more than ``max_train_problems`` problems or ``max_train_chars``
characters (PAN 2020's pairs give tens of thousands of long ones) is cut to what fits, as
:class:`~stylo.protocols.pan.PanVerification` cuts its training split
(:func:`~stylo.protocols.base.capped_pairs`; ``info["n_train_available"]``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stylo.corpus import Corpus, PairSet
from stylo.protocols._sampling import PairRules, labelled_pairs
from stylo.protocols.base import (
    MAX_TRAIN_CHARS,
    MAX_TRAIN_PROBLEMS,
    ProtocolError,
    Task,
    VerificationProtocol,
    capped_pairs,
    distinct_texts,
    known_authors,
)

__all__ = ["SPLITS", "RethinkingAV", "assign_splits", "split_corpus", "split_pairset"]

SPLITS = ("closed", "clopen", "open_unseen_authors", "open_unseen_topics", "open_all")
PARTS = ("train", "val", "test")


def _partition(
    labels: np.ndarray, rng, val_fraction: float, test_fraction: float, what: str
) -> dict[str, str]:
    """Assign each distinct label to train/val/test; val and test get at least one each."""
    uniq = np.array(sorted(set(labels.tolist())))
    n = len(uniq)
    n_val = max(1, int(round(n * val_fraction))) if val_fraction > 0 else 0
    n_test = max(1, int(round(n * test_fraction)))
    if n - n_val - n_test < 1:
        raise ProtocolError(
            f"{n} distinct {what} are too few to give train, val and test "
            f"disjoint {what} (need at least {n_val + n_test + 1})"
        )
    order = rng.permutation(n)
    part = np.array(["train"] * n, dtype=object)
    part[order[:n_test]] = "test"
    part[order[n_test : n_test + n_val]] = "val"
    return dict(zip(uniq.tolist(), part.tolist(), strict=True))


def _closed(authors, topics, idx, rng, val_fraction, test_fraction, out) -> None:
    """Closed rule on the texts ``idx``: one text per (author, topic) cell stays in train."""
    cells: dict[tuple, list[int]] = {}
    for i in idx:
        cells.setdefault((authors[i], topics[i]), []).append(int(i))
    for key in sorted(cells):
        members = np.array(cells[key])
        keeper = members[rng.integers(len(members))]
        for i in members:
            if i == keeper:
                out[i] = "train"
                continue
            u = rng.random()
            out[i] = (
                "test"
                if u < test_fraction
                else "val"
                if u < test_fraction + val_fraction
                else "train"
            )


def assign_splits(
    authors, topics, split: str, seed: int, val_fraction: float = 0.15, test_fraction: float = 0.15
) -> np.ndarray:
    """Split label of each text: ``"train"``, ``"val"``, ``"test"`` or ``""`` (left out).

    ``authors``, ``topics``: one label per text (a topic may be None/NaN: left out).
    """
    if split not in SPLITS:
        raise ProtocolError(f"unknown split {split!r}; choose one of {SPLITS}")
    if not (0 <= val_fraction < 1 and 0 < test_fraction < 1 and val_fraction + test_fraction < 1):
        raise ProtocolError(
            f"need 0 <= val_fraction, 0 < test_fraction and a sum below 1, "
            f"got {val_fraction} and {test_fraction}"
        )
    authors = np.asarray([str(a) for a in authors], dtype=object)
    topics = pd.Series(list(topics), dtype=object)
    has_topic = topics.notna().to_numpy()
    topics = np.asarray([str(t) for t in topics], dtype=object)
    idx = np.flatnonzero(has_topic)
    if len(idx) == 0:
        raise ProtocolError("no text has a topic label; the Rethinking-AV splits need topics")
    rng = np.random.default_rng(seed)
    out = np.array([""] * len(authors), dtype=object)
    if split == "closed":
        _closed(authors, topics, idx, rng, val_fraction, test_fraction, out)
    elif split == "clopen":
        held = _partition(authors[idx], rng, val_fraction, test_fraction, "authors")
        seen = np.array([held[authors[i]] == "train" for i in idx])
        for i in idx[~seen]:
            out[i] = held[authors[i]]
        _closed(authors, topics, idx[seen], rng, val_fraction, test_fraction, out)
    else:
        by_author = (
            _partition(authors[idx], rng, val_fraction, test_fraction, "authors")
            if split in ("open_unseen_authors", "open_all")
            else None
        )
        by_topic = (
            _partition(topics[idx], rng, val_fraction, test_fraction, "topics")
            if split in ("open_unseen_topics", "open_all")
            else None
        )
        for i in idx:
            a = by_author[authors[i]] if by_author else None
            t = by_topic[topics[i]] if by_topic else None
            if a is not None and t is not None:
                out[i] = a if a == t else ""
            else:
                out[i] = a if a is not None else t
    return out


def split_corpus(
    corpus: Corpus,
    split: str,
    seed: int,
    val_fraction: float = 0.15,
    test_fraction: float = 0.15,
    topic_column: str = "topic",
) -> tuple[dict[str, Corpus], dict]:
    """Texts of ``corpus`` split by the rule ``split``: ``({"train", "val", "test"} -> Corpus,
    counts)``."""
    if topic_column not in corpus.frame.columns:
        raise ProtocolError(
            f"corpus {corpus.name!r} has no {topic_column!r} column; the "
            f"Rethinking-AV splits need author and topic labels"
        )
    topics = corpus.frame[topic_column]
    labels = assign_splits(corpus.authors, topics, split, seed, val_fraction, test_fraction)
    parts = {p: corpus.filter(labels == p, f"rethinking:{split}:{p}") for p in PARTS}
    info = {
        "texts": {p: len(parts[p]) for p in PARTS},
        "without_topic": int(topics.isna().sum()),
        "left_out": int(((labels == "") & topics.notna().to_numpy()).sum()),
    }
    return parts, info


def split_pairset(
    pairs: PairSet, split: str, seed: int, val_fraction: float = 0.15, test_fraction: float = 0.15
) -> tuple[dict[str, PairSet], dict]:
    """Split labelled pairs with ``authors`` and ``topics`` columns (two labels per pair).

    Texts are split as in :func:`assign_splits`; a pair joins a split when both its texts did,
    and is left out otherwise (counted in ``info["pairs_left_out"]``).
    """
    for col in ("authors", "topics"):
        if col not in pairs.frame.columns:
            raise ProtocolError(
                f"pair set {pairs.name!r} has no {col!r} column; the "
                f"Rethinking-AV splits need the author and topic of each text"
            )
    if any(len(k) != 1 for k in pairs.known):
        raise ProtocolError(
            f"pair set {pairs.name!r} has problems with several known texts; "
            f"the Rethinking-AV splits need one text per side"
        )
    doc_author: dict[str, str] = {}
    doc_topic: dict[str, object] = {}
    rows = zip(
        pairs.known,
        pairs.unknown,
        pairs.frame["authors"],
        pairs.frame["topics"],
        pairs.ids,
        strict=True,
    )
    for known, unknown, authors, topics, pid in rows:
        for text, a, t in zip((known[0], unknown), authors, topics, strict=True):
            if doc_author.setdefault(text, str(a)) != str(a):
                raise ProtocolError(
                    f"pair {pid!r}: one text carries two authors ({doc_author[text]!r} and {a!r})"
                )
            doc_topic.setdefault(text, t)
    docs = list(doc_author)
    labels = assign_splits(
        [doc_author[d] for d in docs],
        [doc_topic[d] for d in docs],
        split,
        seed,
        val_fraction,
        test_fraction,
    )
    where = dict(zip(docs, labels, strict=True))
    a_side = np.array([where[k[0]] for k in pairs.known], dtype=object)
    b_side = np.array([where[u] for u in pairs.unknown], dtype=object)
    parts = {
        p: pairs.subset((a_side == p) & (b_side == p), name=f"{pairs.name}:{split}:{p}")
        for p in PARTS
    }
    info = {
        "texts": {p: int((labels == p).sum()) for p in PARTS},
        "pairs": {p: len(parts[p]) for p in PARTS},
        "pairs_left_out": int(len(pairs) - sum(len(v) for v in parts.values())),
    }
    return parts, info


def _draw_pairs(corpus: Corpus, n: int, seed: int, name: str) -> PairSet:
    """Up to ``n`` distinct pairs, half same-author, from one split's texts."""
    rules = PairRules(corpus, cross_topic=False)
    n_pos = min(n // 2, rules.n_pairs(True))
    n_neg = min(n - n // 2, rules.n_pairs(False))
    if n_pos == 0 or n_neg == 0:
        raise ProtocolError(
            f"{name}: {len(corpus)} texts give {rules.n_pairs(True)} "
            f"same-author and {rules.n_pairs(False)} different-author pairs; "
            f"both kinds are needed"
        )
    return labelled_pairs(rules, n_pos, n_neg, np.random.default_rng(seed), name, name)


class RethinkingAV(VerificationProtocol):
    """The five Rethinking-AV setups as a protocol; metrics are PAN's on the test pairs.

    ``n_pairs``: pairs drawn per split from a Corpus (train, val, test); ``max_train_problems``,
    ``max_train_chars``: the most training problems and characters kept from a PairSet's
    train part. ``settings`` offers a split only when it can be sampled with each of
    ``PROBE_SEEDS`` (the reference grid's seeds); asking for an infeasible split (or another
    seed that fails) raises a :class:`ProtocolError` saying which part lacks what.
    """

    name = "rethinking_av"
    needs = "a corpus with topics and at least 5 authors, or labelled pairs with authors and topics"
    #: 2: texts pooled by author are distinct (``distinct_texts``), and PAN's attribution
    #: corpora name each author once (``stylo.datasets._authors``)
    revision = 2
    PROBE_SEEDS = (0, 1, 2)

    def __init__(
        self,
        val_fraction: float = 0.15,
        test_fraction: float = 0.15,
        n_pairs: dict | None = None,
        max_train_problems: int | None = MAX_TRAIN_PROBLEMS,
        max_train_chars: int | None = MAX_TRAIN_CHARS,
    ):
        self.val_fraction = val_fraction
        self.test_fraction = test_fraction
        self.n_pairs = n_pairs
        self.max_train_problems = max_train_problems
        self.max_train_chars = max_train_chars

    def _n_pairs(self) -> dict:
        return {"train": 400, "val": 100, "test": 200, **(self.n_pairs or {})}

    def settings(self, data) -> list[dict]:
        if isinstance(data, Corpus):
            ok = data.has_topics and data.frame["author"].nunique() >= 5
        elif isinstance(data, PairSet):
            ok = {"authors", "topics"} <= set(data.frame.columns) and data.labelled
        else:
            ok = False
        if not ok:
            return []
        return [{"split": s} for s in SPLITS if self._feasible(data, s)]

    def _feasible(self, data, split: str) -> bool:
        """Whether ``split`` can be sampled with every seed in ``PROBE_SEEDS``."""
        try:
            for seed in self.PROBE_SEEDS:
                self.sample(data, {"split": split}, seed)
        except ProtocolError:
            return False
        return True

    def sample(self, data, setting: dict, seed: int) -> Task:
        split = setting.get("split")
        if isinstance(data, Corpus):
            known = known_authors(data)
            distinct = distinct_texts(known)
            texts, info = split_corpus(distinct, split, seed, self.val_fraction, self.test_fraction)
            info["unknown_author_texts_excluded"] = len(data) - len(known)
            info["repeated_texts_excluded"] = len(known) - len(distinct)
            asked = self._n_pairs()
            parts = {
                p: _draw_pairs(texts[p], asked[p], seed + k, f"{data.name}:{split}:{p}")
                if asked[p]
                else None
                for k, p in enumerate(PARTS)
            }
            info["pairs_requested"] = asked
            info["pairs"] = {p: len(v) if v is not None else 0 for p, v in parts.items()}
        elif isinstance(data, PairSet):
            parts, info = split_pairset(data, split, seed, self.val_fraction, self.test_fraction)
            for p in PARTS:
                v = parts[p]
                if p != "val" and (len(v) == 0 or v.labels.all() or not v.labels.any()):
                    raise ProtocolError(
                        f"{data.name!r}, split {split}: the {p} part has "
                        f"{len(v)} pairs, not both same- and different-author"
                    )
            info["n_train_available"] = len(parts["train"])
            parts["train"] = capped_pairs(
                parts["train"], self.max_train_problems, seed, self.max_train_chars
            )
            info["n_train"] = len(parts["train"])
        else:
            raise ProtocolError(
                f"{self.name} needs a Corpus or a PairSet, got {type(data).__name__}"
            )
        info.update(seed=seed, setting=dict(setting))
        return Task(
            self.name, dict(setting), seed, parts["train"], parts["test"], info, val=parts["val"]
        )
