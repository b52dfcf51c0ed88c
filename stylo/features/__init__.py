"""Stylometric features: exact and fast n-gram counts, function words, masking, distances."""

from stylo.features._validation import EmptyVocabularyError
from stylo.features.delta import (
    DELTAS,
    ArgamonDelta,
    BurrowsDelta,
    CosineDelta,
    Delta,
    DeltaScaler,
    EderDelta,
    get_delta,
    paired_delta,
    pairwise_delta,
    standardise,
)
from stylo.features.distances import (
    gram,
    nearest_minmax,
    paired_cosine,
    paired_manhattan,
    paired_minmax,
    pairwise_cosine,
    pairwise_manhattan,
    pairwise_minmax,
)
from stylo.features.function_words import FunctionWords, function_words
from stylo.features.masking import EntityMasker, TextDistortion
from stylo.features.ngrams import TOKEN_PATTERN, CharNgrams, WordNgrams

__all__ = [
    "TOKEN_PATTERN",
    "CharNgrams",
    "WordNgrams",
    "EmptyVocabularyError",
    "FunctionWords",
    "function_words",
    "TextDistortion",
    "EntityMasker",
    "DeltaScaler",
    "DELTAS",
    "Delta",
    "BurrowsDelta",
    "ArgamonDelta",
    "EderDelta",
    "CosineDelta",
    "get_delta",
    "gram",
    "nearest_minmax",
    "paired_cosine",
    "paired_delta",
    "paired_manhattan",
    "paired_minmax",
    "pairwise_cosine",
    "pairwise_delta",
    "pairwise_manhattan",
    "pairwise_minmax",
    "standardise",
]
