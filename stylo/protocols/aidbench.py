"""AIDBench's evaluation setups (Wen, Guo & Zhang, arXiv 2411.13226), seeded and reproducible.

- ``aidbench_one_to_one``: 200 verification pairs at a positive/negative mix of 150/50,
  100/100 or 50/150 (three seeds each in the benchmark). With ``cross_topic`` (the Guardian
  rule, available for any corpus with a ``topic`` column) positives are same-author pairs on
  *different* topics and negatives different-author pairs on the *same* topic, so topic works
  against the right answer. Pairs are distinct and drawn uniformly among the valid ones.
- ``aidbench_one_to_two``: 200 distinct triplets (query, same-author candidate, other
  candidate), the true candidate's slot drawn at random. With ``cross_topic`` the same-author
  candidate has another topic than the query and the other candidate shares the query's topic.
  The (query, same-author candidate) pair is uniform among the valid ones whose query has a
  valid other candidate; the other candidate is then uniform among the query's.
- ``aidbench_one_to_many``: a group is ``n_authors`` authors x ``texts_per_author`` texts
  (10); one text is the query, the other ``n_authors * texts_per_author - 1`` are candidates,
  ``texts_per_author - 1`` of them by the query's author. ``n_groups`` groups (10) x
  ``n_repeats`` repeats (3); groups are drawn independently. This structure is what gives
  AIDBench Table 3's random-guess row: with 2 authors, 9 of 19 candidates are relevant and
  Rank@k = 1 - C(10, k) / C(19, k) = 47.4 / 87.6 / 97.8 % for k = 1 / 3 / 5; with 5 authors,
  9 of 49 give 18.4 / 46.4 / 65.5 %.

The research-paper and RAG settings of one-to-many: :mod:`stylo.protocols.aidbench_one_to_many`.

Training data (``train_policy``). A test text is never a training text. Methods that need
fitting draw labelled pairs from ``task.train`` (:func:`stylo.verifier.training_pairs` needs
two authors and one with two texts; calibration wants many more), so the default
``train_policy="auto"`` takes the first of these that gives a *usable* train corpus, i.e. one
with at least ``min(min_train_authors, A3)`` authors having two or more texts (A3: authors with
three or more texts in the whole corpus, for whom step 3 can guarantee two training texts;
``min_train_authors`` defaults to 20):

1. ``disjoint_authors``: every text not used by the test items and by no test author;
2. ``disjoint_texts``: every text not used by the test items (test authors allowed);
3. ``reserve``: before the test items are drawn, a seeded share of each author's texts is set
   aside (``min(n - 1, max(2, ceil(reserve_fraction * n)))`` of an author's ``n`` texts, so
   every author with 3+ texts keeps two for training and one for the test pool); the test
   items are drawn from the rest and train is every text they do not use. Small corpora whose
   test items use almost every text (Guardian cross-topic) end here. If the smaller pool
   cannot supply the requested test items, the ``disjoint_texts`` result of step 2 is kept,
   unless step 2 left no training text at all: then one-to-two draws as many triplets as the
   pool holds (``info["setting"]`` says how many, ``info["setting_requested"]`` what the
   setting asked for), so that a small corpus of one's own still trains the methods that fit
   (24 texts of six authors: 120 triplets and 12 training texts instead of 200 and none).

``task.info["train_policy"]`` records the policy actually used and ``info["train_usable"]``
whether it met the minimum. ``train_policy`` may also name one of the three to force it.

``max_train_texts`` and ``max_train_chars`` (defaults 1,000 texts and 20 million characters,
None for no cap) then cap the training corpus with :func:`~stylo.protocols.base.capped_corpus`
(two texts per author per round, seeded), because a method's fitting cost grows with its
training material (an impostor pool, a vocabulary) while what it learns — a few hundred
training pairs, a background of a thousand texts — does not need all of IMDb62 or Blog, nor a
thousand novels (the reference corpora's training texts stay under 7 million characters).
``info`` keeps ``n_train_texts_available`` beside ``n_train_texts``.
Under the cross-topic rule the training corpus carries it (``Corpus.pair_rule``), so methods
that learn from pairs draw them as the test pairs are drawn: same-author pairs across topics,
different-author pairs within one.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from stylo.corpus import Corpus
from stylo.protocols import _scoring
from stylo.protocols._sampling import PairRules, labelled_pairs
from stylo.protocols.base import (
    MAX_TRAIN_CHARS,
    Protocol,
    ProtocolError,
    Task,
    Triplets,
    VerificationProtocol,
    author_sets,
    capped_corpus,
    fit_clone,
    known_authors,
    training_corpus,
)
from stylo.verifier import Verifier

__all__ = ["OneToOne", "OneToTwo", "MIXES", "parse_mix"]

MIXES = ("150/50", "100/100", "50/150")


def parse_mix(mix: str) -> tuple[int, int]:
    """``"150/50"`` -> ``(150, 50)`` (positives, negatives)."""
    try:
        pos, neg = (int(x) for x in str(mix).split("/"))
    except ValueError:
        raise ProtocolError(
            f"mix must look like '150/50' (positives/negatives), got {mix!r}"
        ) from None
    if pos < 0 or neg < 0 or pos + neg == 0:
        raise ProtocolError(f"mix {mix!r} needs non-negative counts and at least one pair")
    return pos, neg


def _require_corpus(data, protocol: str) -> Corpus:
    """``data`` as a Corpus of texts by known authors (see ``UNKNOWN_AUTHORS``)."""
    if not isinstance(data, Corpus):
        raise ProtocolError(
            f"{protocol} samples from a Corpus (texts with authors), got {type(data).__name__}"
        )
    return known_authors(data)


def _default_rules(corpus: Corpus) -> PairRules:
    """The cross-topic rule when the corpus has topics and it yields both kinds of pairs,
    else the plain rule."""
    if corpus.has_topics:
        rules = PairRules(corpus, cross_topic=True)
        if rules.n_pairs(True) > 0 and rules.n_pairs(False) > 0:
            return rules
    return PairRules(corpus, cross_topic=False)


def _n_unknown_author(corpus: Corpus) -> int:
    return sum(s.before - s.after for s in corpus.history if s.name == "known authors only")


def _n_triplets(rules: PairRules) -> int:
    """Distinct (query, same-author candidate, other candidate) triplets under ``rules``."""
    return int((rules.n_pos_partners * rules.n_neg_partners).sum())


TRAIN_POLICIES = ("auto", "disjoint_authors", "disjoint_texts", "reserve")


def _n_multi_authors(corpus: Corpus | None, k: int = 2) -> int:
    """Authors (``author`` column, the one training pairs use) with at least ``k`` texts."""
    if corpus is None:
        return 0
    return int((corpus.frame["author"].value_counts() >= k).sum())


class _AIDBench(Protocol):
    """Shared parts: the corpus check, the training corpus (see the module docstring) and the
    cross-topic default. Subclasses implement ``_draw``."""

    def __init__(
        self,
        train_policy: str = "auto",
        min_train_authors: int = 20,
        reserve_fraction: float = 0.2,
        max_train_texts: int | None = 1000,
        max_train_chars: int | None = MAX_TRAIN_CHARS,
    ):
        self.train_policy = train_policy
        self.min_train_authors = min_train_authors
        self.reserve_fraction = reserve_fraction
        self.max_train_texts = max_train_texts
        self.max_train_chars = max_train_chars

    def _draw(self, corpus: Corpus, setting: dict, seed: int) -> tuple[object, set, dict]:
        """The test items drawn from ``corpus``, the corpus positions they use, their info."""
        raise NotImplementedError

    def _column(self, corpus: Corpus, setting: dict) -> str:
        """The author column whose authors a ``disjoint_authors`` train must avoid."""
        return "author"

    def sample(self, data, setting: dict, seed: int) -> Task:
        corpus = _require_corpus(data, self.name)
        if self.train_policy not in TRAIN_POLICIES:
            raise ProtocolError(
                f"train_policy must be one of {TRAIN_POLICIES}, got {self.train_policy!r}"
            )
        if not 0 < self.reserve_fraction < 1:
            raise ProtocolError(f"reserve_fraction must be in (0, 1), got {self.reserve_fraction}")
        column = self._column(corpus, setting)
        sets = author_sets(corpus, column)
        need = max(1, min(int(self.min_train_authors), _n_multi_authors(corpus, 3)))
        auto = self.train_policy == "auto"
        fallback = None
        if self.train_policy != "reserve":
            test, used, info = self._draw(corpus, setting, seed)
            for policy in ("disjoint_authors", "disjoint_texts"):
                if not (auto or self.train_policy == policy):
                    continue
                train = self._train(corpus, used, column, sets, policy)
                fallback = (policy, train, test, info, 0)
                if not auto or _n_multi_authors(train) >= need:
                    return self._task(setting, seed, need, *fallback)
        reserved = self._reserve(corpus, seed)
        pool = corpus.filter(
            ~reserved,
            "reserved for training",
            f"{int(reserved.sum())} texts kept out of the test items",
        )
        try:
            test, used_in_pool, info = self._draw(pool, setting, seed)
        except ProtocolError:
            # fewer test items only where "auto" found no training text at all
            no_train = fallback is not None and fallback[1] is None
            smaller = self._fewer_items(pool, setting) if no_train else None
            if smaller is None:
                if fallback is None:
                    raise
                return self._task(setting, seed, need, *fallback)
            test, used_in_pool, info = self._draw(pool, smaller, seed)
            info = {**info, "setting_requested": dict(setting)}
        used = pd.Index(corpus.ids).get_indexer(pool.ids[sorted(used_in_pool)])
        train = self._train(corpus, set(used.tolist()), column, sets, "disjoint_texts")
        return self._task(setting, seed, need, "reserve", train, test, info, int(reserved.sum()))

    def _task(self, setting, seed, need, policy, train, test, info, n_reserved) -> Task:
        available = len(train) if train is not None else 0
        train = capped_corpus(train, self.max_train_texts, seed, self.max_train_chars)
        if train is not None and info.get("cross_topic"):
            # methods draw their training pairs by the test pairs' rule
            train = dataclasses.replace(train, pair_rule="cross_topic")
        info = {
            **info,
            "n_train_texts": len(train) if train is not None else 0,
            "n_train_texts_available": available,
            "train_policy": policy,
            "train_policy_requested": self.train_policy,
            "n_train_authors_with_2_texts": _n_multi_authors(train),
            "train_authors_needed": need,
            "train_usable": _n_multi_authors(train) >= need
            and train.frame["author"].nunique() >= 2,
            "n_reserved_for_train": n_reserved,
        }
        return Task(self.name, dict(setting), seed, train, test, info)

    def _fewer_items(self, pool: Corpus, setting: dict) -> dict | None:
        """A setting asking for only the test items ``pool`` can supply, when fewer than the
        setting's own but some; None where the protocol keeps its number (the default)."""
        return None

    def _reserve(self, corpus: Corpus, seed: int) -> np.ndarray:
        """Boolean mask of the texts set aside for training (see the module docstring)."""
        rng = np.random.default_rng([seed, 1])
        out = np.zeros(len(corpus), dtype=bool)
        for _, idx in corpus.by_author().items():
            n = len(idx)
            k = min(n - 1, max(2, int(np.ceil(self.reserve_fraction * n))))
            if k > 0:
                out[rng.choice(idx, size=k, replace=False)] = True
        return out

    @staticmethod
    def _train(corpus: Corpus, used_pos, column: str, sets: list, policy: str) -> Corpus | None:
        used = np.zeros(len(corpus), dtype=bool)
        used[np.asarray(sorted(used_pos), dtype=np.int64)] = True
        test_authors = set().union(*(sets[i] for i in np.flatnonzero(used)))
        return training_corpus(corpus, used, test_authors, policy, column, sets)

    def _cross_topic(self, corpus: Corpus, setting: dict) -> bool:
        return bool(setting.get("cross_topic", False))

    def _info(self, seed: int, setting: dict, rules: PairRules, **counts) -> dict:
        return {
            "seed": seed,
            "setting": dict(setting),
            **counts,
            "unknown_author_texts_excluded": _n_unknown_author(rules.corpus),
            "cross_topic": rules.cross_topic,
            "texts_without_topic_excluded": rules.n_without_topic,
        }


class OneToOne(_AIDBench, VerificationProtocol):
    """AIDBench one-to-one verification: ``mix`` = "positives/negatives" (200 pairs)."""

    name = "aidbench_one_to_one"
    needs = "a corpus with 150 same- and 50 other-author text pairs, or 100 and 100, or 50 and 150"

    def settings(self, data) -> list[dict]:
        if not isinstance(data, Corpus):
            return []
        data = known_authors(data)
        rules = _default_rules(data)
        n_pos, n_neg = rules.n_pairs(True), rules.n_pairs(False)
        return [
            {"mix": mix, "cross_topic": rules.cross_topic}
            for mix in MIXES
            if n_pos >= parse_mix(mix)[0] and n_neg >= parse_mix(mix)[1]
        ]

    def _draw(self, corpus: Corpus, setting: dict, seed: int):
        n_pos, n_neg = parse_mix(setting.get("mix", "100/100"))
        cross = self._cross_topic(corpus, setting)
        rules = PairRules(corpus, cross)
        test = labelled_pairs(
            rules,
            n_pos,
            n_neg,
            np.random.default_rng(seed),
            f"{self.name}-{seed}",
            f"{corpus.name}:{self.name}",
        )
        used = pd.Index(corpus.ids).get_indexer(np.r_[test.frame["id_a"], test.frame["id_b"]])
        info = self._info(
            seed, setting, rules, n_pairs=len(test), n_positive=n_pos, n_negative=n_neg
        )
        return test, set(used.tolist()), info


class OneToTwo(_AIDBench):
    """AIDBench one-to-two: which of two candidates did the query's author write?"""

    name = "aidbench_one_to_two"
    needs = "a corpus with enough authors of two or more texts for its triplets"

    def __init__(
        self,
        n_triplets: int = 200,
        train_policy: str = "auto",
        min_train_authors: int = 20,
        reserve_fraction: float = 0.2,
        max_train_texts: int | None = 1000,
        max_train_chars: int | None = MAX_TRAIN_CHARS,
    ):
        super().__init__(
            train_policy, min_train_authors, reserve_fraction, max_train_texts, max_train_chars
        )
        self.n_triplets = n_triplets

    def settings(self, data) -> list[dict]:
        if not isinstance(data, Corpus):
            return []
        data = known_authors(data)
        rules = _default_rules(data)
        return [{"cross_topic": rules.cross_topic}] if _n_triplets(rules) >= self.n_triplets else []

    def _fewer_items(self, pool: Corpus, setting: dict) -> dict | None:
        possible = _n_triplets(PairRules(pool, self._cross_topic(pool, setting)))
        asked = int(setting.get("n_triplets", self.n_triplets))
        return {**setting, "n_triplets": possible} if 0 < possible < asked else None

    def _draw(self, corpus: Corpus, setting: dict, seed: int):
        cross = self._cross_topic(corpus, setting)
        n = int(setting.get("n_triplets", self.n_triplets))
        rules = PairRules(corpus, cross)
        weights = rules.n_pos_partners * (rules.n_neg_partners > 0)
        possible = _n_triplets(rules)
        if n > possible:
            raise ProtocolError(
                f"corpus {corpus.name!r}: asked for {n} one-to-two triplets "
                f"but only {possible} distinct ones exist"
                f"{' under the cross-topic rule' if cross else ''}"
            )
        rng = np.random.default_rng(seed)
        p = weights / weights.sum()
        seen, rows = set(), []
        while len(rows) < n:
            q = int(rng.choice(len(p), p=p))
            s = int(rng.choice(rules.partners(q, True)))
            o = int(rng.choice(rules.partners(q, False)))
            if (q, s, o) in seen:
                continue
            seen.add((q, s, o))
            rows.append(
                (int(rules.pos[q]), int(rules.pos[s]), int(rules.pos[o]), int(rng.integers(2)))
            )
        ids = corpus.frame["id"].to_numpy()
        texts = corpus.frame["text"].to_numpy()
        records = []
        for q, s, o, answer in rows:
            a, b = (s, o) if answer == 0 else (o, s)
            records.append(
                {
                    "query_id": ids[q],
                    "query": texts[q],
                    "a_id": ids[a],
                    "a": texts[a],
                    "b_id": ids[b],
                    "b": texts[b],
                    "answer": answer,
                }
            )
        test = Triplets(pd.DataFrame(records))
        used = {i for r in rows for i in r[:3]}
        info = self._info(
            seed, setting, rules, n_triplets=n, answer_in_slot_b=int(sum(r[3] for r in rows))
        )
        return test, used, info

    def evaluate(self, method: Verifier, task: Task) -> pd.DataFrame:
        est = fit_clone(method, task.train)
        frame = task.test.frame
        scores = est.rank_many(
            frame["query"].tolist(), [[a, b] for a, b in zip(frame["a"], frame["b"], strict=True)]
        )
        return _scoring.choice_table(frame["answer"].to_numpy(), scores, group="all")
