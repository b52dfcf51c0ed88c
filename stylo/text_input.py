"""The input check of everything in stylo that takes raw texts (transformers and verifiers)."""

from __future__ import annotations

import math

__all__ = ["check_texts", "has_text"]


def check_texts(X, name: str = "X") -> list[str]:
    """Return ``X`` as a list of ``str``, or raise ``TypeError`` naming the first bad item.

    The one input check of every text-taking estimator and verifier. A single string is
    refused (it would be read as a sequence of one-character documents); ``None`` and NaN
    (missing texts, e.g. from pandas) and any other non-string raise with the item's index.
    Empty strings are valid documents. ``name`` is the argument's name in the messages.
    """
    if isinstance(X, (str, bytes)):
        raise TypeError(
            f"{name} must be a sequence of str documents, not a single string "
            f"({type(X).__name__}); wrap it in a list"
        )
    try:
        items = list(X.tolist() if hasattr(X, "tolist") else X)
    except TypeError as exc:
        raise TypeError(
            f"{name} must be an iterable of str documents, got {type(X).__name__}"
        ) from exc
    if set(map(type, items)) <= {str}:
        return items  # the common case, without a Python-level loop
    for i, doc in enumerate(items):
        if isinstance(doc, str):
            continue
        if doc is None or (isinstance(doc, float) and math.isnan(doc)):
            raise TypeError(
                f"{name}[{i}] is {type(doc).__name__}: the document at index {i} "
                f"is missing ({doc!r}); drop or fill missing texts first"
            )
        raise TypeError(
            f"{name}[{i}] is {type(doc).__name__}, expected str (document at index {i})"
        )
    return [str(doc) for doc in items] if any(type(d) is not str for d in items) else items


def has_text(text: str) -> bool:
    """Whether ``text`` has a non-whitespace character: ``bool(text.strip())`` without the
    stripped copy (which, for the joined known texts of many problems, is gigabytes of
    copying)."""
    return bool(text) and not text.isspace()
