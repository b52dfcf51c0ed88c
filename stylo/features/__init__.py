"""Stylometric features: exact and fast n-gram counts, function words, masking, distances."""

from stylo.features.distances import (
                                      DeltaScaler,
                                      paired_cosine,
                                      paired_delta,
                                      paired_manhattan,
                                      paired_minmax,
                                      pairwise_cosine,
                                      pairwise_delta,
                                      pairwise_manhattan,
                                      pairwise_minmax,
)
from stylo.features.function_words import FunctionWords, function_words
from stylo.features.masking import EntityMasker, TextDistortion
from stylo.features.ngrams import TOKEN_PATTERN, CharNgrams, WordNgrams

__all__ = ["TOKEN_PATTERN", "CharNgrams", "WordNgrams", "FunctionWords", "function_words",
           "TextDistortion", "EntityMasker", "DeltaScaler", "paired_cosine", "paired_delta",
           "paired_manhattan", "paired_minmax", "pairwise_cosine", "pairwise_delta",
           "pairwise_manhattan", "pairwise_minmax"]
