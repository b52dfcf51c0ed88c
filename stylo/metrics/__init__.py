"""Evaluation metrics: PAN verification (:mod:`~stylo.metrics.pan`), ranking for one-to-many
identification (:mod:`~stylo.metrics.ranking`), attribution and binary classification
(:mod:`~stylo.metrics.classification`) and mean ± std tables (:mod:`~stylo.metrics.aggregate`).
"""

from stylo.metrics.pan import auc, brier, c_at_1, evaluate_all, f1, f_05_u

__all__ = ["auc", "brier", "c_at_1", "evaluate_all", "f1", "f_05_u"]
