"""The PAN verification train->test splits the verifier benchmarks run on."""

from __future__ import annotations

from stylo.corpus import PairSet
from stylo.datasets import load

__all__ = ["DATASETS", "train_test"]

DATASETS = (
    "pan15_av_en",
    "pan14_av/du_essays",
    "pan14_av/du_reviews",
    "pan14_av/en_essays",
    "pan14_av/en_novels",
    "pan14_av/gr_articles",
    "pan14_av/sp_articles",
)


def train_test(name: str) -> tuple[PairSet, PairSet]:
    """The official training and test problems of one PAN corpus, as loaded (no filtering)."""
    return load(name, split="train"), load(name, split="test")
