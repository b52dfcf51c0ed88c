"""Closed-set authorship attribution on any corpus with enough texts per author.

A task is ``problems`` attribution problems. Each draws ``authors`` candidate authors (seeded)
and, per candidate, ``train`` known texts and ``test`` held-out texts to attribute among the
candidates; the true author is always a candidate (closed set), so a method's answer is its
best-scoring candidate. With ``cross_topic`` every candidate's test texts are on topics none of
its known texts are on (a topic goes wholly to one side), so topic words cannot carry the
answer. With ``within`` (e.g. ``language`` of the PAN18/19 fanfiction) the candidates of one
problem share that column's value, as in the PAN problems.

Texts are drawn once each: a text its author has twice (PAN's attribution problems repeat
their candidates' known texts) counts once (``stylo.protocols.base.distinct_texts``).

A method fits on the candidates' known texts of all the task's problems (a
:class:`~stylo.corpus.Corpus`), never on a test text, and attributes with
``Verifier.attribute``, scored as :mod:`stylo.protocols.cdaa` scores a closed-set problem:
accuracy and macro precision/recall/F1 per problem, averaged over problems in the ``"all"``
rows. Accuracy depends on the number of candidates and texts, so the setting carries them.

Default settings, from the data: the largest of 10 authors x (10 known + 5 test), 10 x (5 + 2)
and 5 x (5 + 2) that the corpus has enough authors for, three problems, plus the cross-topic
variant of it when the corpus has topics and enough authors whose texts span several topics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stylo.corpus import Corpus
from stylo.protocols.base import Protocol, ProtocolError, Task, distinct_texts, known_authors
from stylo.protocols.cdaa import Attribution, score_attribution
from stylo.verifier import Verifier

__all__ = ["ClosedSetAttribution"]

#: (authors, known texts, test texts) tried in order by ``settings``: the first the corpus has
#: enough authors for is its default size
SIZES = ((10, 10, 5), (10, 5, 2), (5, 5, 2))
#: seeded topic orders tried before the smallest-first one
_TOPIC_TRIES = 5
#: columns of a PAN attribution corpus that describe its own (open-set) problems
_PAN_PROBLEM_COLUMNS = ("problem", "candidate", "role")


def _split_by_topic(
    idx: np.ndarray, topics: np.ndarray, n_train: int, n_test: int, rng: np.random.Generator | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """An author's texts ``idx`` split into a known side and a test side that share no topic:
    topics go to the test side until it holds ``n_test`` texts, the rest are known. The topics
    are taken in a seeded order (a few tries), else smallest first (which seldom overshoots
    ``n_test``); None when even that leaves fewer than ``n_train`` known texts. With ``rng``
    None only the smallest-first split is tried (the eligibility test)."""
    by_topic: dict[str, list[int]] = {}
    for i in idx:
        by_topic.setdefault(str(topics[i]), []).append(int(i))
    names = sorted(by_topic)
    orders = (
        []
        if rng is None
        else [[names[j] for j in rng.permutation(len(names))] for _ in range(_TOPIC_TRIES)]
    )
    orders.append(sorted(names, key=lambda t: (len(by_topic[t]), t)))
    for order in orders:
        test, known = [], []
        for t in order:
            (test if len(test) < n_test else known).extend(by_topic[t])
        if len(test) >= n_test and len(known) >= n_train:
            return np.array(known), np.array(test)
    return None


class ClosedSetAttribution(Protocol):
    """``closed_attribution``: settings ``authors``, ``train``, ``test`` (texts per candidate),
    ``problems``, ``cross_topic`` (bool) and ``within`` (a column, or None)."""

    name = "closed_attribution"
    # the smallest of SIZES, the last ``settings`` tries
    needs = f"a corpus with at least {SIZES[-1][0]} authors of {sum(SIZES[-1][1:])} texts each"
    #: 2: texts pooled by author are distinct (``distinct_texts``), and PAN's attribution
    #: corpora name each author once (``stylo.datasets._authors``)
    revision = 2

    def _usable(self, data) -> Corpus | None:
        if not isinstance(data, Corpus) or "author" not in data.frame.columns:
            return None
        if data.frame["author"].map(lambda a: isinstance(a, str)).all():
            return distinct_texts(known_authors(data))
        return None

    def _eligible(self, corpus: Corpus, setting: dict) -> dict[str, np.ndarray]:
        """Author -> the texts a problem can draw from (all of them; or, cross-topic, those of
        authors whose topics allow the split)."""
        need = setting["train"] + setting["test"]
        groups = {a: idx for a, idx in corpus.by_author().items() if len(idx) >= need}
        if setting.get("cross_topic"):
            topics = corpus.frame["topic"].to_numpy()
            has_topic = corpus.frame["topic"].notna().to_numpy()
            groups = {a: idx[has_topic[idx]] for a, idx in groups.items()}
            groups = {
                a: idx
                for a, idx in groups.items()
                if _split_by_topic(idx, topics, setting["train"], setting["test"], None) is not None
            }
        return groups

    def _pools(self, corpus: Corpus, setting: dict, groups: dict) -> list[list[str]]:
        """The author pools problems draw from: one per value of ``within`` (or one)."""
        within = setting.get("within")
        if not within:
            return [sorted(groups)] if len(groups) >= setting["authors"] else []
        first = corpus.frame[within].to_numpy()
        by_value: dict[str, list[str]] = {}
        for a, idx in groups.items():
            by_value.setdefault(str(first[idx[0]]), []).append(a)
        return [sorted(v) for _, v in sorted(by_value.items()) if len(v) >= setting["authors"]]

    def settings(self, data) -> list[dict]:
        corpus = self._usable(data)
        if corpus is None:
            return []
        within = "language" if "language" in corpus.frame.columns else None
        out = []
        for cross in (False, True) if corpus.has_topics else (False,):
            for authors, train, test in SIZES:
                s = {
                    "authors": authors,
                    "train": train,
                    "test": test,
                    "problems": 3,
                    "cross_topic": cross,
                    "within": within,
                }
                if self._pools(corpus, s, self._eligible(corpus, s)):
                    out.append(s)
                    break
        return out

    def sample(self, data, setting: dict, seed: int) -> Task:
        corpus = self._usable(data)
        if corpus is None:
            raise ProtocolError(f"{self.name} needs a Corpus with one author (a str) per text")
        setting = {"problems": 3, "cross_topic": False, "within": None, **setting}
        for key in ("authors", "train", "test", "problems"):
            if not isinstance(setting.get(key), (int, np.integer)) or setting[key] < 1:
                raise ProtocolError(
                    f"{self.name}: setting {key!r} must be a positive int, got {setting.get(key)!r}"
                )
        if setting["authors"] < 2:
            raise ProtocolError(f"{self.name}: attribution needs at least 2 authors")
        if setting["cross_topic"] and not corpus.has_topics:
            raise ProtocolError(f"{self.name}: {corpus.name!r} has no topics for cross_topic")
        rng = np.random.default_rng([seed, 11])
        groups = self._eligible(corpus, setting)
        pools = self._pools(corpus, setting, groups)
        if not pools:
            raise ProtocolError(
                f"{self.name}: {corpus.name!r} has fewer than "
                f"{setting['authors']} authors with {setting['train']} + "
                f"{setting['test']} texts"
                + (" on separable topics" if setting["cross_topic"] else "")
                + (f" within one {setting['within']}" if setting["within"] else "")
            )
        texts, ids = corpus.texts, corpus.ids
        n_train, n_test = setting["train"], setting["test"]
        # each author's texts as queues, consumed across problems, so no text is used twice
        # (as known in one problem and test in another, say); cross-topic, one topic split per
        # author for the whole task, so no test topic is among that author's known topics
        queues: dict[str, tuple[list[int], list[int] | None]] = {}
        for author in sorted(groups):
            idx = groups[author]
            if setting["cross_topic"]:
                known_side, test_side = _split_by_topic(
                    idx, corpus.frame["topic"].to_numpy(), n_train, n_test, rng
                )
                queues[author] = (
                    list(rng.permutation(known_side)),
                    list(rng.permutation(test_side)),
                )
            else:
                queues[author] = (list(rng.permutation(idx)), None)

        def ready(author: str) -> bool:
            known_q, test_q = queues[author]
            return (
                len(known_q) >= n_train + n_test
                if test_q is None
                else len(known_q) >= n_train and len(test_q) >= n_test
            )

        known: dict[str, dict[str, list[str]]] = {}
        rows, used_known = [], []
        for p in range(setting["problems"]):
            open_pools = [
                q
                for q in ([a for a in pool if ready(a)] for pool in pools)
                if len(q) >= setting["authors"]
            ]
            if not open_pools:
                break
            pool = open_pools[rng.integers(len(open_pools))]
            chosen = [pool[j] for j in rng.choice(len(pool), setting["authors"], replace=False)]
            prob = f"problem{p:02d}"
            known[prob] = {}
            for author in sorted(chosen):
                known_q, test_q = queues[author]
                k_idx = [known_q.pop() for _ in range(n_train)]
                t_idx = [(known_q if test_q is None else test_q).pop() for _ in range(n_test)]
                known[prob][author] = [texts[i] for i in k_idx]
                used_known += k_idx
                rows += [
                    {"id": str(ids[i]), "problem": prob, "text": texts[i], "truth": author}
                    for i in t_idx
                ]
        unknown = pd.DataFrame(rows, columns=["id", "problem", "text", "truth"])
        keep = np.zeros(len(corpus), dtype=bool)
        keep[used_known] = True
        train = corpus.filter(keep, f"{self.name}:known texts")
        # a PAN attribution corpus's own problem, candidate and role columns describe its open
        # problems, not this closed one; an attributor that learns an open-set rule from them
        # (ensemble-attribution) would fit it for nothing
        train = Corpus(
            train.frame.drop(columns=[c for c in _PAN_PROBLEM_COLUMNS if c in train.frame]),
            name=train.name,
            history=train.history,
        )
        info = {
            "seed": seed,
            "setting": dict(setting),
            "problems": len(known),
            "candidates": setting["authors"],
            "known_texts": int(keep.sum()),
            "test_texts": len(unknown),
            "authors_eligible": len(groups),
        }
        return Task(
            self.name, dict(setting), seed, train, Attribution(known, unknown, open_set=False), info
        )

    def evaluate(self, method: Verifier, task: Task) -> pd.DataFrame:
        return score_attribution(method, task.train, task.test)
