"""PAN train -> test verification: fit on a PairSet's ``train`` split, score its ``test`` split.

The official PAN splits are used as they are, with one exception: a training split of more
than ``max_train_problems`` problems or ``max_train_chars`` characters (defaults 8,000 and 20
million, :data:`~stylo.protocols.base.MAX_TRAIN_PROBLEMS`; None for no cap) is cut to what
fits, drawn with the seed in the labels' shares (:func:`~stylo.protocols.base.capped_pairs`).
PAN 2020/21's training sets hold tens of thousands of long pairs; the grid's PAN sets 10-700
problems of at most a few million characters, so the caps leave them whole. ``info`` keeps
``n_train_available`` beside ``n_train``. Texts the two splits share are counted in
``info["shared_texts"]`` — PAN's own designs sometimes reuse texts — rather than silently
dropped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stylo.corpus import PairSet
from stylo.protocols import _scoring
from stylo.protocols.base import (
    MAX_TRAIN_CHARS,
    MAX_TRAIN_PROBLEMS,
    ProtocolError,
    Task,
    VerificationProtocol,
    capped_pairs,
)

__all__ = ["PanVerification"]


class PanVerification(VerificationProtocol):
    """Metrics: PAN's (``auc``, ``c@1``, ``F1``, ``f_05_u``, ``brier``, ``overall``), the
    PAN14/15 final score ``auc*c@1``, and precision/recall/accuracy at 0.5."""

    name = "pan_verification"
    needs = "a pairs folder whose problems carry a split column with train and test"

    def __init__(
        self,
        train_split: str = "train",
        test_split: str = "test",
        version: str = "pan21",
        max_train_problems: int | None = MAX_TRAIN_PROBLEMS,
        max_train_chars: int | None = MAX_TRAIN_CHARS,
    ):
        self.train_split = train_split
        self.test_split = test_split
        self.version = version
        self.max_train_problems = max_train_problems
        self.max_train_chars = max_train_chars

    def settings(self, data) -> list[dict]:
        if not isinstance(data, PairSet) or "split" not in data.frame.columns:
            return []
        splits = set(data.frame["split"].dropna())
        if {self.train_split, self.test_split} <= splits:
            return [{"train": self.train_split, "test": self.test_split}]
        return []

    def sample(self, data, setting: dict, seed: int) -> Task:
        if not isinstance(data, PairSet):
            raise ProtocolError(
                f"{self.name} needs a PairSet with a split column, got {type(data).__name__}"
            )
        try:
            train = data.split(setting.get("train", self.train_split))
            test = data.split(setting.get("test", self.test_split))
        except ValueError as exc:
            raise ProtocolError(str(exc)) from exc
        if not test.labelled:
            raise ProtocolError(
                f"{data.name!r}: the test split has problems without a "
                f"`same` label, so it cannot be scored"
            )
        available = len(train)
        train = capped_pairs(train, self.max_train_problems, seed, self.max_train_chars)
        train_texts = {t for k in train.known for t in k} | set(train.unknown)
        test_texts = {t for k in test.known for t in k} | set(test.unknown)
        info = {
            "seed": seed,
            "setting": dict(setting),
            "n_train": len(train),
            "n_train_available": available,
            "n_test": len(test),
            "test_positive": int(test.labels.sum()),
            "shared_texts": len(train_texts & test_texts),
        }
        return Task(self.name, dict(setting), seed, train, test, info)

    def _metrics(self, test: PairSet, scores: np.ndarray) -> pd.DataFrame:
        return _scoring.verification_table(
            test.labels, scores, group="all", version=self.version, auc_times_c1=True, ids=test.ids
        )
