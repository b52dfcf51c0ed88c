"""Linear algebra on a set of text rows for models that see them through inner products
alone (``ensemble-attribution``'s linear SVMs): a dense factor of their Gram matrix, the rows'
coordinates in the span of the training rows, and their first principal axis."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from stylo._threads import blas_limit

__all__ = ["first_axis", "gram_factor", "span_coordinates"]


def gram_factor(products: np.ndarray) -> np.ndarray:
    """Dense rows, (n, n), whose inner products are the Gram matrix ``products`` (the inner
    products of n TF-IDF rows): its eigenvectors scaled by the roots of its eigenvalues. A
    linear SVM sees its data only through inner products (liblinear's dual solver, bias column
    included), so fitted on these rows it solves the same problem, its decision values equal
    within the solver's tolerance (1e-13 apart on a PAN18 problem; z-scored, up to 4e-3 apart
    on a small synthetic one; the grid's answers identical), with work n x n per pass instead
    of the number of non-zeros: a char 2-5-gram view of 245 texts and 1.7 million non-zeros
    was fitted in 1.7 s sparse, in 0.7 s for the Gram, its factor and the fit, and
    self-training's second fit reuses the factor."""
    with blas_limit(1):  # small; threads would only spin
        values, vectors = np.linalg.eigh(products)
    return vectors * np.sqrt(np.clip(values, 0.0, None))


def span_coordinates(x_fit: np.ndarray, x_texts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both dense row sets' coordinates in an orthonormal basis of the span of ``x_fit``'s m
    rows: (m, m) and (n_texts, m). A linear SVM's weights are a sum of its training rows, so
    they lie in that span; there the training rows' inner products (hence the problem liblinear
    solves) and each text's inner product with the weights are kept, while a pass of the solver
    costs m instead of n columns (a PAN19 problem's 63 known texts among 624 Gram rows)."""
    with blas_limit(1):
        basis = np.linalg.qr(x_fit.T)[0]
        return x_fit @ basis, x_texts @ basis


def first_axis(x) -> np.ndarray:
    """Each row's place on the first principal axis of the rows ``x`` (n, d), dense or
    sparse: the leading eigenvector of the centred rows' inner products, shape (n,), its sign
    set so that its largest entry in size is positive (the axis has no direction of its own,
    and runs cut along it would start from either end)."""
    n = x.shape[0]
    if n < 3:
        return np.zeros(n)
    mean = np.asarray(x.mean(axis=0)).ravel()
    if sp.issparse(x):
        # the centred rows would be dense: their inner products are taken through x
        def products(v):
            u = x.T @ v - mean * v.sum()
            return x @ u - mean @ u

        start = np.random.default_rng(0).standard_normal(n)
        op = LinearOperator((n, n), matvec=products, dtype=np.float64)
        vector = eigsh(op, k=1, which="LA", v0=start)[1][:, 0]
    else:
        centred = x - mean
        with blas_limit(1):
            vector = np.linalg.eigh(centred @ centred.T)[1][:, -1]
    return vector if vector[np.argmax(np.abs(vector))] > 0 else -vector
