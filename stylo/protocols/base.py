"""What every evaluation protocol shares: the ``Protocol`` interface and the ``Task`` it samples.

A protocol turns a dataset (:class:`~stylo.corpus.Corpus` or :class:`~stylo.corpus.PairSet`)
into seeded, reproducible tasks and scores a method on them:

>>> task = protocol.sample(data, setting, seed=0)        # deterministic given the seed
>>> table = protocol.evaluate(method, task)              # tidy rows: metric, value, n, group

``evaluate`` clones the method (``sklearn.base.clone``) so a task never sees a method fitted on
another task, fits it on ``task.train`` (always disjoint from the test items), scores the test
items and returns one row per metric and group. The method is a :class:`~stylo.verifier.Verifier`.
Verification protocols (test items: a labelled PairSet) derive from
:class:`VerificationProtocol`, which has the one ``evaluate`` they share.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from stylo.corpus import UNKNOWN_AUTHORS, Corpus, FilterStep, PairSet
from stylo.protocols import _scoring
from stylo.verifier import Verifier

__all__ = [
    "MAX_TRAIN_CHARS",
    "MAX_TRAIN_PROBLEMS",
    "Protocol",
    "Task",
    "NoTrainingData",
    "ProtocolError",
    "RankingQuery",
    "Triplets",
    "UNKNOWN_AUTHORS",
    "VerificationProtocol",
    "author_sets",
    "capped_corpus",
    "capped_pairs",
    "distinct_texts",
    "fit_clone",
    "fit_seconds",
    "known_authors",
    "readable_texts",
    "task_texts",
    "training_corpus",
]


class ProtocolError(ValueError):
    """A protocol cannot be applied as asked: too few authors, texts or topics, bad setting."""


class NoTrainingData(ProtocolError):
    """A method that must be fitted meets a task with no training data: the cell does not
    apply (a grid records it as such, not as a failure)."""


@dataclass(frozen=True)
class RankingQuery:
    """One one-to-many item: a query text and candidates, some written by the query's author.

    ``relevant[i]`` is True when candidate ``i`` shares an author with the query. ``group`` and
    ``repeat`` say which sampled group of authors the query came from.
    """

    query_id: str
    query: str
    candidate_ids: tuple[str, ...]
    candidates: tuple[str, ...]
    relevant: np.ndarray
    group: int
    repeat: int
    authors: tuple[str, ...] = ()


@dataclass
class Triplets:
    """One-to-two items: for each row a query and two candidates, ``answer`` = slot (0 or 1)
    of the candidate written by the query's author. ``frame`` columns: ``query_id``, ``query``,
    ``a_id``, ``a``, ``b_id``, ``b``, ``answer``."""

    frame: pd.DataFrame

    def __len__(self) -> int:
        return len(self.frame)


@dataclass
class Task:
    """A sampled evaluation task.

    ``train``: what a method may learn from (Corpus or PairSet, disjoint from the test items in
    texts, and in authors when the protocol says so), or None. ``test``: the items to score —
    a PairSet (verification), :class:`Triplets` (one-to-two) or a list of
    :class:`RankingQuery` (one-to-many). ``val``: an optional validation PairSet. ``info``:
    JSON-able counts, the seed and the setting.
    """

    protocol: str
    setting: dict
    seed: int
    train: Corpus | PairSet | None
    test: Any
    info: dict = field(default_factory=dict)
    val: PairSet | None = None


def readable_texts(part) -> list[str]:
    """Every text a method may read from one part of a task: a Corpus's texts; a PairSet's
    known texts, alone and joined per problem (as pair kernels read them), and its unknown
    texts; Triplets' queries and candidates; a RankingQuery list's queries and candidates;
    nothing from anything else (None, a protocol's own structures)."""
    if isinstance(part, Corpus):
        return list(part.texts)
    if isinstance(part, PairSet):
        return [t for k in part.known for t in k] + part.texts_a() + list(part.unknown)
    if isinstance(part, Triplets):
        return [t for column in ("query", "a", "b") for t in part.frame[column].tolist()]
    if isinstance(part, list) and all(isinstance(q, RankingQuery) for q in part):
        return [t for q in part for t in (q.query, *q.candidates)]
    return []


def task_texts(task) -> list[str]:
    """The distinct texts of ``readable_texts`` over a task's ``train``, ``test`` and ``val``
    parts (those it has: a suite's own protocols may sample other objects)."""
    parts = [getattr(task, name, None) for name in ("train", "test", "val")]
    return list(dict.fromkeys(t for part in parts for t in readable_texts(part)))


class Protocol:
    """Base class: ``settings``, ``sample`` and ``evaluate``."""

    name: str = "protocol"
    #: bumped when the protocol starts drawing other tasks from the same data and setting, so
    #: a grid does not reuse results stored under the old tasks (``experiments.cells.Cell``)
    revision: int = 1
    #: how much work one cell of this protocol is, relative to the others' for the same
    #: method: a grid runner starts the costliest cells first so that none is left alone at
    #: the end of a run. A scheduling hint only; no result depends on it.
    relative_cost: float = 1.0
    #: what data this protocol applies to, said where it does not (a grid's "skipped" line)
    needs: str = ""

    def settings(self, data) -> list[dict]:
        """The JSON-able settings this protocol runs on ``data`` by default; an empty list
        when it does not apply to ``data`` (the only applicability test a grid makes)."""
        raise NotImplementedError

    def sample(self, data, setting: dict, seed: int) -> Task:
        """Draw one task; the same (data, setting, seed) gives the same task."""
        raise NotImplementedError

    def evaluate(self, method: Verifier, task: Task) -> pd.DataFrame:
        """Clone and fit ``method`` on ``task.train``, score ``task.test``; tidy rows
        with columns ``metric``, ``value``, ``n``, ``group``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class VerificationProtocol(Protocol):
    """A protocol whose test items are a labelled PairSet: ``evaluate`` scores its problems
    (``score_problems``) and turns the scores into metric rows with :meth:`_metrics`, the hook
    a protocol overrides to report other metrics (PAN's own version and its final score)."""

    def evaluate(self, method: Verifier, task: Task) -> pd.DataFrame:
        est = fit_clone(method, task.train)
        return self._metrics(task.test, est.score_problems(task.test))

    def _metrics(self, test: PairSet, scores: np.ndarray) -> pd.DataFrame:
        return _scoring.verification_table(test.labels, scores, group="all", ids=test.ids)


#: seconds this process has spent in :func:`fit_clone`'s fits; a runner reads it before and
#: after a cell to tell the cell's training time from its scoring time (a process runs one
#: cell at a time)
_fit_clock = [0.0]


def fit_seconds() -> float:
    """Seconds this process has spent fitting in :func:`fit_clone` so far."""
    return _fit_clock[0]


def fit_clone(method: Verifier, train: Corpus | PairSet | None) -> Verifier:
    """A fresh clone of ``method`` fitted on ``train``; a method that needs data and gets None
    is a :class:`ProtocolError`. The fit's time is added to :func:`fit_seconds`."""
    est = clone(method)
    if train is None and getattr(est, "requires_fit", True):
        raise NoTrainingData(f"{type(est).__name__} needs training data but this task has none")
    start = time.perf_counter()
    try:
        return est.fit(train)
    finally:
        _fit_clock[0] += time.perf_counter() - start


def known_authors(corpus: Corpus) -> Corpus:
    """``corpus`` without texts whose author is a placeholder in :data:`UNKNOWN_AUTHORS`; the
    step and its count go to the result's ``history``."""
    mask = ~corpus.frame["author"].isin(UNKNOWN_AUTHORS).to_numpy()
    if mask.all():
        return corpus
    return corpus.filter(
        mask,
        "known authors only",
        f"{int((~mask).sum())} texts by {sorted(UNKNOWN_AUTHORS)} left out",
    )


def distinct_texts(corpus: Corpus) -> Corpus:
    """``corpus`` without the rows that repeat an earlier row's author and text (the first
    is kept); the step and its count go to ``history``. A protocol that pools texts by
    author draws from these, so no text is both known and test, or in two splits, through a
    copy of it (PAN's attribution problems repeat a candidate's known texts in each problem
    the candidate is in: PAN 2018 has 2,188 such rows of 4,561)."""
    keep = ~corpus.frame.duplicated(["author", "text"]).to_numpy()
    if keep.all():
        return corpus
    return corpus.filter(
        keep, "distinct texts", f"{int((~keep).sum())} repeats of a text by the same author"
    )


def author_sets(corpus: Corpus, column: str = "author") -> list[frozenset]:
    """The set of authors of each text: ``{author}`` for a str column, the list's members for a
    list column (e.g. ``authors`` of co-authored papers)."""
    values = corpus.frame[column].tolist()
    out = []
    for i, v in enumerate(values):
        if isinstance(v, str):
            out.append(frozenset([v]))
        elif isinstance(v, (list, tuple, np.ndarray)) and len(v) > 0:
            out.append(frozenset(str(a) for a in v))
        else:
            raise ProtocolError(
                f"corpus {corpus.name!r}: text {corpus.ids[i]!r} has no usable "
                f"{column!r} value ({v!r})"
            )
    return out


def _check_cap(value, least: int, what: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ProtocolError(f"{what} must be an int >= {least} or None, got {value!r}")


def _prefix_length(sizes: np.ndarray, max_count: int | None, max_chars: int | None) -> int:
    """How many leading items of ``sizes`` (characters each) fit in ``max_count`` items and
    ``max_chars`` characters (None: no cap); ``len(sizes)`` when all of them do."""
    n = len(sizes) if max_count is None else min(max_count, len(sizes))
    if max_chars is not None:
        n = min(n, int((np.cumsum(sizes) <= max_chars).sum()))
    return n


def capped_corpus(
    corpus: Corpus | None, max_texts: int | None, seed: int, max_chars: int | None = None
) -> Corpus | None:
    """At most ``max_texts`` texts of ``corpus`` holding at most ``max_chars`` characters (all
    of it when it is within both or they are None), drawn with ``seed``.

    Texts are taken two per author at a time, authors in a seeded order: every author
    contributes two texts (if it has them) before any contributes a third. So a capped
    training corpus keeps as many authors as possible, each with the two texts a same-author
    training pair needs, instead of whatever a uniform draw leaves. The character cap stops
    that order early (at two texts at least): a thousand novels would cost every method more
    memory than a workstation has (see :func:`capped_pairs`).
    """
    _check_cap(max_texts, 1, "max_texts")
    _check_cap(max_chars, 1, "max_chars")
    if corpus is None:
        return None
    lengths = corpus.frame["text"].str.len().to_numpy()
    if _prefix_length(lengths, max_texts, max_chars) == len(corpus):
        return corpus
    rng = np.random.default_rng([seed, 2])
    order = rng.permutation(len(corpus))
    authors = corpus.frame["author"].to_numpy()[order]
    rank_in_author = pd.Series(authors).groupby(authors, sort=False).cumcount().to_numpy()
    names = pd.unique(authors)
    position = dict(zip(names[rng.permutation(len(names))], range(len(names))))
    turn = rank_in_author // 2 * len(names) + np.array([position[a] for a in authors])
    ranked = order[np.argsort(turn, kind="stable")]
    count = _prefix_length(lengths, max_texts, None)
    n = max(_prefix_length(lengths[ranked], max_texts, max_chars), min(2, count))
    if n == len(corpus):
        return corpus
    keep = np.zeros(len(corpus), dtype=bool)
    keep[ranked[:n]] = True
    return corpus.filter(
        keep,
        "train capped",
        f"{n} of {len(corpus)} texts, {int(lengths[keep].sum())} characters, two per author "
        f"per round; caps {max_texts} texts, {max_chars} characters",
    )


#: the training problems, and characters of their texts, that a protocol fitting on given pairs
#: (PAN, Rethinking-AV on a PairSet) and ``python -m baselines`` pass to a method at most
#: (:func:`capped_pairs`; chosen with benchmarks/training_budget.py)
MAX_TRAIN_PROBLEMS = 8000
MAX_TRAIN_CHARS = 20_000_000


def _stratified_order(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Positions in a seeded order whose every prefix holds each label in its share (within
    one problem): each label's problems in a random order, spread evenly over the whole."""
    key = np.empty(len(labels))
    for value in (True, False):
        idx = np.flatnonzero(labels == value)
        key[idx] = (rng.permutation(len(idx)) + rng.random()) / max(len(idx), 1)
    return np.argsort(key, kind="stable")


def capped_pairs(
    pairs: PairSet | None, max_problems: int | None, seed: int, max_chars: int | None = None
) -> PairSet | None:
    """The first problems of ``pairs`` in a seeded order, as many as ``max_problems`` and
    ``max_chars`` characters of their texts (known and unknown, counted per problem) allow;
    ``pairs`` itself when it is within both (None: no cap). Kept problems stay in their order.

    Every prefix of the order keeps same- and different-author problems in their shares
    (within one), and at least one of each label where both occur, so a capped set still
    trains a threshold; the step and its counts go to ``history``. Every method fits on the
    whole PairSet it is given: PAN 2020/21's tens of thousands of long training pairs would
    cost ``ensemble`` tens of gigabytes (General Impostors, quadratic in its pool, did not
    finish 10,000 of them in 15 minutes), for a held-out AUC that, but for ``logreg-pair``'s,
    stops moving by 500 pairs (benchmarks/README.md, "Training budgets").
    """
    _check_cap(max_problems, 2, "max_problems")
    _check_cap(max_chars, 1, "max_chars")
    if pairs is None:
        return None
    sizes = np.array([sum(map(len, k)) + len(u) for k, u in zip(pairs.known, pairs.unknown)])
    if _prefix_length(sizes, max_problems, max_chars) == len(pairs):
        return pairs
    # an unlabelled split is drawn as one group; a method fitted on it says what is missing
    labels = pairs.labels if pairs.labelled else np.zeros(len(pairs), dtype=bool)
    order = _stratified_order(labels, np.random.default_rng([seed, 3]))
    n = _prefix_length(sizes[order], max_problems, max_chars)
    both = [np.flatnonzero(labels[order] == v) for v in (True, False)]
    n = max(n, 2, *(int(i[0]) + 1 for i in both if i.size))
    if n >= len(pairs):
        return pairs
    keep = np.zeros(len(pairs), dtype=bool)
    keep[order[:n]] = True
    out = pairs.subset(keep)
    out.history.append(
        FilterStep(
            "train capped",
            len(pairs),
            len(out),
            f"{int(labels[keep].sum())} same-author, {int(sizes[keep].sum())} characters; "
            f"caps {max_problems} problems, {max_chars} characters",
        )
    )
    return out


def training_corpus(
    corpus: Corpus,
    used: np.ndarray,
    test_authors: set,
    policy: str,
    column: str = "author",
    sets: list | None = None,
) -> Corpus | None:
    """The texts a method may fit on: every text not used by the task and, when ``policy`` is
    ``"disjoint_authors"``, none written (in any position of ``column``) by a test author.

    ``used``: boolean mask of texts the task's test items use; ``sets``: precomputed
    :func:`author_sets` of ``column``. Returns None when nothing is left.
    """
    if policy not in ("disjoint_authors", "disjoint_texts"):
        raise ProtocolError(
            f"train policy must be 'disjoint_authors' or 'disjoint_texts', got {policy!r}"
        )
    keep = ~np.asarray(used, dtype=bool)
    if policy == "disjoint_authors":
        sets = author_sets(corpus, column) if sets is None else sets
        keep &= np.array([not (s & test_authors) for s in sets])
    if not keep.any():
        return None
    return corpus.filter(keep, f"train:{policy}", f"{int(keep.sum())} texts left")
