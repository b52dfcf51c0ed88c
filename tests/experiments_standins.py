"""Small stand-in protocols and a synthetic dataset loader for the experiments tests.

They follow the protocol contract (settings / sample / evaluate returning tidy rows
``metric, value, n, group``) on a synthetic corpus, so the runner is tested without the real
protocols or any corpus text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from stylo.corpus import Corpus
from stylo.datasets import DatasetNotAvailable
from stylo.protocols.base import fit_clone
from stylo.verifier import Verifier

_WORDS = [f"w{i}" for i in range(60)]


def toy_loader(name: str, **options) -> Corpus:
    """A deterministic synthetic corpus; names starting with ``missing`` are not available."""
    if name.startswith("missing"):
        raise DatasetNotAvailable(f"dataset {name!r} is registered but not available here")
    rng = np.random.default_rng(sum(map(ord, name)))
    n_authors, per_author = int(options.get("n_authors", 6)), 6
    texts, authors = [], []
    for a in range(n_authors):
        vocab = _WORDS[a * 5 : a * 5 + 20]
        for _ in range(per_author):
            texts.append(" ".join(rng.choice(vocab, size=30)))
            authors.append(f"author{a}")
    return Corpus.from_lists(texts, authors, name=name)


@dataclass
class ToyTask:
    train: object
    a: list
    b: list
    y: np.ndarray
    info: dict = field(default_factory=dict)


def _fitted(method, train):
    return clone(method).fit(train)


class ToyVerification:
    """Pairs of texts, same author or not; metrics accuracy and auc, per-item scores kept."""

    name = "toy_verification"

    def __init__(self, n_pairs: int = 20):
        self.n_pairs = n_pairs

    def settings(self, data) -> list[dict]:
        return [{"mix": "half"}, {"mix": "quarter"}] if isinstance(data, Corpus) else []

    def sample(self, data: Corpus, setting: dict, seed: int) -> ToyTask:
        rng = np.random.default_rng(seed)
        n = self.n_pairs
        n_pos = n // 2 if setting["mix"] == "half" else n // 4
        groups = list(data.by_author().values())
        texts, a, b, y = data.texts, [], [], []
        for i in range(n):
            if i < n_pos:
                idx = groups[rng.integers(len(groups))]
                j, k = rng.choice(idx, size=2, replace=False)
            else:
                g1, g2 = rng.choice(len(groups), size=2, replace=False)
                j, k = rng.choice(groups[g1]), rng.choice(groups[g2])
            a.append(texts[j]), b.append(texts[k]), y.append(i < n_pos)
        return ToyTask(None, a, b, np.array(y), {"n_pairs": n, "seed": seed})

    def evaluate(self, method, task: ToyTask) -> pd.DataFrame:
        scores = _fitted(method, task.train).score_pairs(task.a, task.b)
        n = len(task.y)
        rows = pd.DataFrame(
            {
                "metric": ["accuracy", "auc"],
                "value": [
                    float(np.mean((scores > 0.5) == task.y)),
                    float(roc_auc_score(task.y, scores)),
                ],
                "n": [n, n],
                "group": ["all", "all"],
            }
        )
        items = pd.DataFrame({"y_true": task.y, "y_score": scores, "group": "all"})
        return pd.concat([rows, items], ignore_index=True)


class ToyRanking:
    """One query against the other texts of n authors, in two groups; rank@1 and rank@3."""

    name = "toy_ranking"

    def settings(self, data) -> list[dict]:
        return [{"n_authors": 2}, {"n_authors": 3}] if isinstance(data, Corpus) else []

    def sample(self, data: Corpus, setting: dict, seed: int) -> ToyTask:
        rng = np.random.default_rng(seed)
        by = data.by_author()
        problems = []
        for _ in range(2):
            chosen = rng.choice(sorted(by), size=setting["n_authors"], replace=False)
            idx = np.concatenate([by[a] for a in chosen])
            q = idx[0]
            cands = idx[1:]
            problems.append(
                (
                    data.texts[q],
                    [data.texts[c] for c in cands],
                    data.authors[cands] == data.authors[q],
                )
            )
        return ToyTask(None, problems, [], np.array([]), {"groups": 2})

    def evaluate(self, method, task: ToyTask) -> pd.DataFrame:
        m = _fitted(method, task.train)
        rows = []
        for g, (query, cands, relevant) in enumerate(task.a):
            order = np.argsort(-m.rank(query, cands), kind="stable")
            for k in (1, 3):
                rows.append(
                    {
                        "metric": f"rank@{k}",
                        "value": float(relevant[order[:k]].any()),
                        "n": 1,
                        "group": str(g),
                    }
                )
        rows = pd.DataFrame(rows)
        # like the real protocols: the per-group rows and their mean as group "all"
        overall = (
            rows.groupby("metric", as_index=False)["value"]
            .mean()
            .assign(n=len(task.a), group="all")
        )
        return pd.concat([rows, overall], ignore_index=True)


class FailingVerification(ToyVerification):
    """Fails on the ``quarter`` mix, as a cell with an unreachable server would."""

    def evaluate(self, method, task: ToyTask) -> pd.DataFrame:
        if task.y.mean() < 0.5:
            raise ConnectionError("stand-in server unreachable")
        return super().evaluate(method, task)


class FittingVerification(ToyVerification):
    """Fits the method as the real protocols do (``fit_clone``), on a task without training
    data: a method that must be fitted does not apply."""

    def evaluate(self, method, task: ToyTask) -> pd.DataFrame:
        fit_clone(method, task.train)
        return super().evaluate(method, task)


class InterruptingVerification(ToyVerification):
    """Raises KeyboardInterrupt at its ``after + 1``-th evaluation (in-process runs only)."""

    def __init__(self, after: int, n_pairs: int = 20):
        super().__init__(n_pairs)
        self.after, self.calls = after, 0

    def evaluate(self, method, task: ToyTask) -> pd.DataFrame:
        self.calls += 1
        if self.calls > self.after:
            raise KeyboardInterrupt(f"interrupted at evaluation {self.calls}")
        return super().evaluate(method, task)


class UpperCased(Verifier):
    """A stand-in masking: the wrapped verifier sees upper-cased texts."""

    def __init__(self, inner=None):
        self.inner = inner

    @property
    def requires_fit(self) -> bool:
        return getattr(self.inner, "requires_fit", True)

    def _fit_impl(self, X, y) -> None:
        self.inner_ = clone(self.inner).fit(X)

    def _score_impl(self, texts_a, texts_b):
        return self.inner_.score_pairs([t.upper() for t in texts_a], [t.upper() for t in texts_b])


def toy_grid(*datasets: str, seeds=(0,), methods=("random",), **options):
    """A GridSpec over stand-in datasets (default ``toy``) with the random baseline."""
    from experiments.grid import DatasetSpec, GridSpec

    return GridSpec(
        datasets=[DatasetSpec(n) for n in datasets or ("toy",)],
        seeds=list(seeds),
        methods=list(methods),
        **options,
    )
