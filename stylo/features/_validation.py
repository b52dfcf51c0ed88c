"""Parameter checks and tags shared by the text transformers."""

from __future__ import annotations

import os
from numbers import Integral


class EmptyVocabularyError(ValueError):
    """No n-gram survives: the documents have none of the requested lengths, or pruning
    (``min_df``, ``max_df``, ``max_features``) left none; the messages are scikit-learn's.
    A caller combining several feature views can catch it and go on without the empty one
    (word n-grams of text written without spaces, in which every document is one token)."""


def effective_n_jobs(n_jobs) -> int:
    """Number of worker threads for ``n_jobs`` (None -> 1, negative -> cores + 1 + n_jobs)."""
    if n_jobs is None:
        return 1
    if not isinstance(n_jobs, Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero int or None, got {n_jobs!r}")
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))
    return int(n_jobs)


class TextInputMixin:
    """scikit-learn tags of a transformer whose input is a list of raw strings, not a 2-D
    array (so the numeric estimator checks that cannot apply to text are skipped, as for
    ``CountVectorizer``)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags
