"""Input checks shared by the text transformers."""

from __future__ import annotations

import math
import os
from numbers import Integral


def check_texts(X) -> list[str]:
    """Return ``X`` as a list of ``str``, or raise naming the first bad item.

    A single string is refused (it would be read as a sequence of one-character documents);
    ``None`` and NaN (missing texts, e.g. from pandas) and any other non-string raise
    ``TypeError`` with the index of the offending item. Empty strings are valid documents.
    """
    if isinstance(X, (str, bytes)):
        raise TypeError("expected an iterable of str documents, got a single "
                        f"{type(X).__name__}; wrap it in a list")
    try:
        items = list(X.tolist() if hasattr(X, "tolist") else X)
    except TypeError as exc:
        raise TypeError(f"expected an iterable of str documents, got {type(X).__name__}") from exc
    for i, doc in enumerate(items):
        if isinstance(doc, str):
            continue
        if doc is None or (isinstance(doc, float) and math.isnan(doc)):
            raise TypeError(f"document at index {i} is missing ({doc!r}); drop or fill "
                            "missing texts before feature extraction")
        raise TypeError(f"document at index {i} is {type(doc).__name__}, expected str")
    return [str(doc) for doc in items] if any(type(d) is not str for d in items) else items


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
