"""Evaluation metrics: PAN verification (:mod:`~stylo.metrics.pan`), ranking for one-to-many
identification (:mod:`~stylo.metrics.ranking`), attribution and binary classification
(:mod:`~stylo.metrics.classification`) and mean ± std tables (:mod:`~stylo.metrics.aggregate`).
"""

from __future__ import annotations

import importlib

__all__ = ["auc", "brier", "c_at_1", "evaluate_all", "f1", "f_05_u"]


def __getattr__(name: str):
    # the PAN functions are imported on first use, not with the package: importing
    # stylo.metrics.pan here put it in sys.modules before ``python -m stylo.metrics.pan`` ran
    # it as __main__, and runpy warned about that (RuntimeWarning) on every call
    if name in __all__:
        return getattr(importlib.import_module("stylo.metrics.pan"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
