"""Stylometric features: exact and fast n-gram counts, function words, masking, distances."""

from stylo.features.ngrams import TOKEN_PATTERN, CharNgrams, WordNgrams

__all__ = ["TOKEN_PATTERN", "CharNgrams", "WordNgrams"]
