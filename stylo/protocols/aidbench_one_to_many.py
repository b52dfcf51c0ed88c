"""AIDBench's one-to-many ranking (Wen, Guo & Zhang, arXiv 2411.13226): the group structure is
in :mod:`stylo.protocols.aidbench`'s docstring, the training data as for its other setups.

Research papers (a corpus with an ``authors`` list column, e.g. ``mlpapers``): with
``first_author=True`` (default) a paper's author is its first author (the ``author`` column),
so groups are built from authors with at least ``texts_per_author`` first-author papers — at 10
texts this satisfies AIDBench's "more than five first-author papers" a fortiori; with
``texts_per_author=6`` the pool is exactly that one. With ``first_author=False`` a paper
belongs to every author in ``authors``: a sampled author's texts are papers they co-wrote that
list no other author sampled for the same group (so each group is cleanly partitioned), and a
candidate is *relevant* when its author list shares at least one name with the query's
author list. That can make a candidate from another author's slice relevant too (an unsampled
co-author in common), so the number of relevant candidates per query is recorded and may
exceed ``texts_per_author - 1``.

RAG-style settings ("50 filter 10", "200 filter 50"): ``pool_size`` is the number of texts in
a group (query included: ``pool_size / texts_per_author`` authors, so ``pool_size - 1``
candidates), and ``keep`` is how many candidates a first-stage ranker passes on.
:class:`OneToMany` takes the first stage as a parameter (``first_stage``, a Verifier; by default
the method itself ranks both stages). The final order is the method's ranking of the kept
candidates followed by the dropped ones in first-stage order, so a relevant text the filter lost
counts as a miss; ``filter_recall`` (share of queries with a relevant candidate kept) is
reported too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from stylo.corpus import Corpus
from stylo.protocols import _scoring
from stylo.protocols.aidbench import _AIDBench, _n_unknown_author
from stylo.protocols.base import (
    MAX_TRAIN_CHARS,
    ProtocolError,
    RankingQuery,
    Task,
    author_sets,
    fit_clone,
    known_authors,
)
from stylo.verifier import Verifier

__all__ = ["OneToMany"]


class OneToMany(_AIDBench):
    """AIDBench one-to-many ranking; the group structure is in :mod:`stylo.protocols.aidbench`.

    Parameters: ``n_groups`` (10) and ``n_repeats`` (3) per task, ``texts_per_author`` (10),
    ``first_stage``: a Verifier used as the first-stage ranker of RAG settings (None = the
    evaluated method itself), ``ks``: cut-offs for rank@k and precision@k.
    """

    name = "aidbench_one_to_many"
    N_AUTHORS = (2, 5, 10)
    RAG = ((50, 10), (200, 50))  # (pool_size, keep): "50 filter 10", "200 filter 50"

    @property
    def needs(self) -> str:
        return f"a corpus with at least 2 authors of {self.texts_per_author} texts each"

    def __init__(
        self,
        n_groups: int = 10,
        n_repeats: int = 3,
        texts_per_author: int = 10,
        first_stage=None,
        ks=(1, 3, 5),
        train_policy: str = "auto",
        min_train_authors: int = 20,
        reserve_fraction: float = 0.2,
        max_train_texts: int | None = 1000,
        max_train_chars: int | None = MAX_TRAIN_CHARS,
    ):
        super().__init__(
            train_policy, min_train_authors, reserve_fraction, max_train_texts, max_train_chars
        )
        self.n_groups = n_groups
        self.n_repeats = n_repeats
        self.texts_per_author = texts_per_author
        self.first_stage = first_stage
        self.ks = ks

    # -- settings ------------------------------------------------------------------------
    def settings(self, data) -> list[dict]:
        if not isinstance(data, Corpus):
            return []
        data = known_authors(data)
        variants = [{}]
        if "authors" in data.frame.columns:
            variants = [{"first_author": True}, {"first_author": False}]
        out = []
        for extra in variants:
            column = self._column(data, extra)
            n_eligible = len(self._eligible(data, column, self.texts_per_author))
            for n in self.N_AUTHORS:
                if n_eligible >= n:
                    out.append({"n_authors": n, **extra})
            for pool, keep in self.RAG:
                if (
                    pool % self.texts_per_author == 0
                    and n_eligible >= pool // self.texts_per_author
                ):
                    out.append({"pool_size": pool, "keep": keep, **extra})
        return out

    def _column(self, corpus: Corpus, setting: dict) -> str:
        if setting.get("first_author", True):
            return "author"
        if "authors" not in corpus.frame.columns:
            raise ProtocolError(
                f"corpus {corpus.name!r} has no 'authors' list column, so "
                f"first_author=False (any author position) is not available"
            )
        return "authors"

    @staticmethod
    def _eligible(
        corpus: Corpus, column: str, k: int, sets: list | None = None
    ) -> dict[str, np.ndarray]:
        """Authors with at least ``k`` texts (any position of ``column``) -> their positions."""
        sets = author_sets(corpus, column) if sets is None else sets
        texts_of: dict[str, list[int]] = {}
        for i, s in enumerate(sets):
            for a in s:
                texts_of.setdefault(a, []).append(i)
        return {
            a: np.asarray(v, dtype=np.int64) for a, v in sorted(texts_of.items()) if len(v) >= k
        }

    def _shape(self, setting: dict) -> tuple[int, int, int | None]:
        """(n_authors, texts_per_author, keep) of a setting."""
        k = int(setting.get("texts_per_author", self.texts_per_author))
        if k < 2:
            raise ProtocolError(
                f"texts_per_author must be >= 2 (a query and a relevant candidate), got {k}"
            )
        if "pool_size" in setting:
            pool, keep = int(setting["pool_size"]), int(setting["keep"])
            if pool % k:
                raise ProtocolError(f"pool_size={pool} is not a multiple of texts_per_author={k}")
            if not 1 <= keep < pool - 1:
                raise ProtocolError(
                    f"keep must be in [1, {pool - 2}] (fewer than the "
                    f"{pool - 1} candidates), got {keep}"
                )
            return pool // k, k, keep
        n = int(setting.get("n_authors", 2))
        if n < 2:
            raise ProtocolError(f"n_authors must be >= 2, got {n}")
        return n, k, None

    # -- sampling ------------------------------------------------------------------------
    def _draw(self, corpus: Corpus, setting: dict, seed: int):
        column = self._column(corpus, setting)
        n_authors, k, keep = self._shape(setting)
        n_groups = int(setting.get("n_groups", self.n_groups))
        n_repeats = int(setting.get("n_repeats", self.n_repeats))
        sets = author_sets(corpus, column)
        eligible = self._eligible(corpus, column, k, sets)
        if len(eligible) < n_authors:
            raise ProtocolError(
                f"corpus {corpus.name!r}: {n_authors} authors with at least "
                f"{k} texts each are needed, only {len(eligible)} have that many"
                f" (author column {column!r})"
            )
        names = list(eligible)
        rng = np.random.default_rng(seed)
        ids = corpus.frame["id"].to_numpy()
        texts = corpus.frame["text"].to_numpy()
        queries, used = [], set()
        for repeat in range(n_repeats):
            for group in range(n_groups):
                chosen, slices = self._draw_group(corpus, names, eligible, sets, n_authors, k, rng)
                members = np.concatenate(slices)
                q_author = int(rng.integers(n_authors))
                q = int(rng.choice(slices[q_author]))
                cands = rng.permutation(members[members != q])
                relevant = np.array([bool(sets[c] & sets[q]) for c in cands])
                queries.append(
                    RankingQuery(
                        query_id=str(ids[q]),
                        query=texts[q],
                        candidate_ids=tuple(str(x) for x in ids[cands]),
                        candidates=tuple(texts[cands]),
                        relevant=relevant,
                        group=group,
                        repeat=repeat,
                        authors=tuple(chosen),
                    )
                )
                used.update(members.tolist())
        n_rel = np.array([q.relevant.sum() for q in queries])
        info = {
            "seed": seed,
            "setting": dict(setting),
            "n_authors": n_authors,
            "texts_per_author": k,
            "pool_size": n_authors * k,
            "n_candidates": n_authors * k - 1,
            "keep": keep,
            "n_queries": len(queries),
            "n_groups": n_groups,
            "n_repeats": n_repeats,
            "author_column": column,
            "eligible_authors": len(eligible),
            "unknown_author_texts_excluded": _n_unknown_author(corpus),
            "relevant_min": int(n_rel.min()),
            "relevant_max": int(n_rel.max()),
        }
        return queries, used, info

    @staticmethod
    def _draw_group(corpus, names, eligible, sets, n_authors, k, rng, max_tries: int = 100):
        """``n_authors`` distinct authors and ``k`` texts each, no text shared, no text listing
        two of the chosen authors."""
        for _ in range(max_tries):
            chosen = [names[i] for i in rng.choice(len(names), size=n_authors, replace=False)]
            chosen_set = set(chosen)
            slices = []
            for a in chosen:
                clean = np.array(
                    [i for i in eligible[a] if not (sets[i] & chosen_set) - {a}], dtype=np.int64
                )
                if len(clean) < k:
                    break
                slices.append(rng.choice(clean, size=k, replace=False))
            if len(slices) == n_authors:
                return chosen, slices
        raise ProtocolError(
            f"corpus {corpus.name!r}: could not draw {n_authors} authors with "
            f"{k} texts each that list no other chosen author "
            f"({max_tries} tries)"
        )

    # -- evaluation ----------------------------------------------------------------------
    def evaluate(self, method: Verifier, task: Task) -> pd.DataFrame:
        est = fit_clone(method, task.train)
        keep = task.info.get("keep")
        stage1 = (
            est
            if self.first_stage is None or keep is None
            else fit_clone(self.first_stage, task.train)
        )
        queries = [q.query for q in task.test]
        cands = [list(q.candidates) for q in task.test]
        kept_any = []
        if keep is None:
            all_scores = est.rank_many(queries, cands)
        else:
            firsts = stage1.rank_many(queries, cands)
            orders = [_ranked(first) for first in firsts]
            seconds = est.rank_many(
                queries, [[c[i] for i in order[:keep]] for c, order in zip(cands, orders)]
            )
            all_scores = []
            for q, first, order, second in zip(task.test, firsts, orders, seconds):
                top, rest = order[:keep], order[keep:]
                # one score vector for the final order: the kept candidates, ranked by the
                # method, above the dropped ones, which keep their first-stage order (and ties)
                final = np.empty(len(first))
                final[rest] = rankdata(first[rest], method="min")
                final[top] = len(rest) + rankdata(second, method="min")
                all_scores.append(final)
                kept_any.append(bool(q.relevant[top].any()))
        table = _scoring.ranking_table(
            all_scores,
            [q.relevant for q in task.test],
            np.array([q.repeat for q in task.test]),
            self.ks,
        )
        if keep is not None:
            extra = pd.DataFrame(
                [
                    {
                        "metric": "filter_recall",
                        "value": float(np.mean(kept_any)),
                        "n": len(kept_any),
                        "group": "all",
                    }
                ]
            )
            per_query = table.attrs.get("scores")
            table = pd.concat([table, extra], ignore_index=True)
            table.attrs["scores"] = per_query
        return table


def _ranked(scores: np.ndarray) -> np.ndarray:
    """Candidate indices by decreasing score; ties keep candidate order (deterministic), which
    only decides who passes a RAG filter at its boundary."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
