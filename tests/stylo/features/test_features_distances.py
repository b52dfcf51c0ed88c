"""Distance kernels: Numba == plain Python reference == SciPy/scikit-learn."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics.pairwise import cosine_similarity, manhattan_distances
from sklearn.utils.estimator_checks import parametrize_with_checks

from stylo.features import distances
from stylo.features._reference import delta, row_similarity, z_scores
from stylo.features.delta import DeltaScaler, paired_delta, pairwise_delta
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

PAIRED = {"minmax": paired_minmax, "cosine": paired_cosine, "manhattan": paired_manhattan}
PAIRWISE = {"minmax": pairwise_minmax, "cosine": pairwise_cosine, "manhattan": pairwise_manhattan}

# sparse-ish count matrices with zero rows
counts = st.integers(1, 6).flatmap(
    lambda f: st.tuples(
        arrays(
            np.int64,
            st.tuples(st.integers(0, 5), st.just(f)),
            elements=st.sampled_from([0, 0, 0, 1, 2, 7]),
        ),
        arrays(
            np.int64,
            st.tuples(st.integers(0, 5), st.just(f)),
            elements=st.sampled_from([0, 0, 1, 3]),
        ),
    )
)


# real-valued, sparse rows: float sums whose value depends on the order of their terms
frequencies = st.integers(1, 12).flatmap(
    lambda f: st.tuples(
        *[
            arrays(
                np.float64,
                st.tuples(st.integers(0, 9), st.just(f)),
                elements=st.sampled_from([0.0, 0.0, 0.1, 1 / 3, 0.7, 2.5e-3, 1e8]),
            )
        ]
        * 2
    )
)


@settings(max_examples=40, deadline=None)
@given(
    pair=frequencies, kind=st.sampled_from(["minmax", "manhattan"]), n_jobs=st.sampled_from([1, 2])
)
def test_pairwise_equals_paired_bit_for_bit(pair, kind, n_jobs):
    # the all-vs-all kernel takes x rows four at a time and adds exact zeros where a row lacks
    # a column; each sum must still be the one-pair-at-a-time sum, in the same column order
    A, B = (sp.csr_matrix(M) for M in pair)
    got = PAIRWISE[kind](A, B, n_jobs=n_jobs)
    ia, ib = (
        np.repeat(np.arange(A.shape[0]), B.shape[0]),
        np.tile(np.arange(B.shape[0]), A.shape[0]),
    )
    want = PAIRED[kind](A[ia], B[ib]).reshape(got.shape)
    assert np.array_equal(got, want)


@settings(max_examples=40, deadline=None)
@given(
    pair=counts,
    kind=st.sampled_from(["minmax", "cosine", "manhattan"]),
    n_jobs=st.sampled_from([1, 2]),
)
def test_pairwise_and_paired_agree_with_reference(pair, kind, n_jobs):
    A, B = pair
    got = PAIRWISE[kind](sp.csr_matrix(A), sp.csr_matrix(B), n_jobs=n_jobs)
    assert got.shape == (A.shape[0], B.shape[0])
    ref = np.array([[row_similarity(a, b, kind) for b in B] for a in A]).reshape(got.shape)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    m = min(A.shape[0], B.shape[0])
    paired = PAIRED[kind](sp.csr_matrix(A[:m]), B[:m].astype(float), n_jobs=n_jobs)
    np.testing.assert_allclose(paired, np.diag(ref[:m, :m]), rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    pair=frequencies,
    kind=st.sampled_from(["minmax", "cosine", "manhattan"]),
    n_jobs=st.sampled_from([1, 2]),
    seed=st.integers(0, 2**16),
)
def test_paired_rows_equal_paired_copies_bit_for_bit(pair, kind, n_jobs, seed):
    # rows read in place (attribution: one profile in thousands of pairs) must give what the
    # copied rows gave, so that no verifier's score moves
    A, B = (sp.csr_matrix(M) for M in pair)
    if A.shape[0] == 0 or B.shape[0] == 0:
        return
    rng = np.random.default_rng(seed)
    ia, ib = rng.integers(0, A.shape[0], 25), rng.integers(0, B.shape[0], 25)
    got = PAIRED[kind](A, B, n_jobs=n_jobs, rows=(ia, ib))
    assert np.array_equal(got, PAIRED[kind](A[ia], B[ib]))
    # one matrix on both sides, checked and summed once
    ja = rng.integers(0, A.shape[0], 25)
    assert np.array_equal(
        PAIRED[kind](A, A, n_jobs=n_jobs, rows=(ia, ja)), PAIRED[kind](A[ia], A[ja])
    )


def test_paired_rows_errors():
    x = sp.csr_matrix([[1, 2, 0], [0, 1, 1]])
    with pytest.raises(ValueError, match=r"rows of Y must be in \[0, 2\)"):
        paired_cosine(x, x, rows=([0, 1], [1, 2]))
    with pytest.raises(ValueError, match="one length"):
        paired_minmax(x, x, rows=([0, 1], [1]))
    assert paired_cosine(x, x, rows=([], [])).shape == (0,)


@settings(max_examples=60, deadline=None)
@given(pair=frequencies, share=st.sampled_from([-1.0, 0.0, 0.3, 0.6]), block=st.integers(1, 4))
def test_gram_equals_the_sparse_product_and_the_plain_sums(pair, share, block):
    # share -1: every column dense, in blocks of 1-4 columns; 0.6: mostly sparse; mixed between
    X = sp.csr_matrix(np.vstack(pair))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(distances, "_GRAM_DENSE_SHARE", share)
        patch.setattr(distances, "_GRAM_BLOCK", block)
        got = gram(X)
    assert got.shape == (X.shape[0], X.shape[0])
    assert np.array_equal(got, got.T)
    np.testing.assert_allclose(got, (X @ X.T).toarray(), rtol=1e-12, atol=1e-12)
    dense = X.toarray()
    ref = [[sum(float(a) * float(b) for a, b in zip(x, y)) for y in dense] for x in dense]
    np.testing.assert_allclose(got, np.array(ref).reshape(got.shape), rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(pair=frequencies)
def test_gram_with_no_dense_column_is_the_sparse_product_bit_for_bit(pair):
    # each entry sums the two rows' common columns in increasing order, as SciPy's product does
    X = sp.csr_matrix(np.vstack(pair))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(distances, "_GRAM_DENSE_SHARE", np.inf)
        got = gram(X)
    assert np.array_equal(got, (X @ X.T).toarray())


@settings(max_examples=40, deadline=None)
@given(pair=counts, k=st.integers(1, 7), n_jobs=st.sampled_from([1, 2]), block=st.integers(1, 3))
def test_nearest_minmax_is_the_stable_argsort_of_the_similarities(pair, k, n_jobs, block):
    # small counts make many ties: the lower row must come first, as a stable sort has it
    A, B = pair
    old = distances._NEAREST_BLOCK
    distances._NEAREST_BLOCK = block  # several blocks even for a handful of rows
    try:
        got = nearest_minmax(sp.csr_matrix(A), sp.csr_matrix(B), k, n_jobs=n_jobs)
    finally:
        distances._NEAREST_BLOCK = old
    sim = pairwise_minmax(sp.csr_matrix(A), sp.csr_matrix(B))
    want = np.argsort(-sim, axis=1, kind="stable")[:, : min(k, B.shape[0])]
    assert got.dtype == np.int64 and got.shape == (A.shape[0], min(k, B.shape[0]))
    assert np.array_equal(got, want)


def test_top_columns_keeps_the_lower_of_tied_columns():
    sim = np.array([[0.5, 0.9, 0.5, 0.5, 0.1], [0.0, 0.0, 0.0, 0.0, 0.0]])
    assert distances._top_columns(sim, 2).tolist() == [[1, 0], [0, 1]]
    assert distances._top_columns(sim, 3).tolist() == [[1, 0, 2], [0, 1, 2]]


def test_against_sklearn_on_real_valued_rows():
    rng = np.random.default_rng(0)
    A = sp.random(30, 50, density=0.2, random_state=1, format="csr") * 3
    B = sp.random(20, 50, density=0.3, random_state=2, format="csr")
    A.data -= 0.5  # signed values: cosine and manhattan are defined for them
    np.testing.assert_allclose(pairwise_cosine(A, B), cosine_similarity(A, B), atol=1e-12)
    np.testing.assert_allclose(pairwise_manhattan(A, B), manhattan_distances(A, B), atol=1e-12)
    Z = rng.normal(size=(5, 50))
    np.testing.assert_allclose(pairwise_manhattan(Z, Z), manhattan_distances(Z, Z), atol=1e-12)


def test_minmax_edge_cases_and_errors():
    zero = sp.csr_matrix((2, 3))
    assert np.all(paired_minmax(zero, zero) == 0.0)  # documented: 0 for two zero rows
    x = sp.csr_matrix([[1, 2, 0]])
    assert paired_minmax(x, x)[0] == 1.0
    assert paired_cosine(x, zero[:1])[0] == 0.0
    with pytest.raises(ValueError, match="negative"):
        pairwise_minmax(sp.csr_matrix([[-1.0, 1]]), sp.csr_matrix([[1.0, 1]]))
    with pytest.raises(ValueError, match="features"):
        pairwise_cosine(x, sp.csr_matrix([[1, 2]]))
    with pytest.raises(ValueError, match="rows"):
        paired_manhattan(x, sp.csr_matrix([[1, 2, 0], [0, 0, 1]]))
    with pytest.raises(ValueError, match="NaN"):
        paired_cosine(sp.csr_matrix([[np.nan, 1, 0]]), x)
    stored_zero = sp.csr_matrix(
        (np.array([0.0, 2.0]), np.array([0, 2]), np.array([0, 2])), shape=(1, 3)
    )
    # [0, 0, 2] vs [1, 2, 1]: sum min 1, sum max 5
    assert paired_minmax(stored_zero, sp.csr_matrix([[1, 2, 1]]))[0] == pytest.approx(0.2)
    assert stored_zero.nnz == 2  # the caller's matrix is not modified


@settings(max_examples=30, deadline=None)
@given(
    M=arrays(np.int64, st.tuples(st.integers(3, 7), st.integers(2, 6)), elements=st.integers(0, 9)),
    k=st.integers(1, 6),
    kind=st.sampled_from(["burrows", "argamon", "cosine", "eder"]),
)
@example(M=np.array([[1, 5], [7, 5], [0, 0]]), k=1, kind="cosine")
def test_delta_matches_reference(M, k, kind):
    scaler = DeltaScaler(max_features=k).fit(M)
    Z = scaler.transform(M)
    ref_z = np.array(z_scores(M.tolist(), M.tolist(), k))
    np.testing.assert_allclose(Z, ref_z, atol=1e-12)
    D = pairwise_delta(Z, Z[::-1], kind=kind, n_jobs=2)
    # the reference distances of the same z-scores: a row that should be zero (a text at the
    # mean of its one feature) is 1e-17 in one computation and 0.0 in the other, and its
    # cosine is then +-1 against 0
    ref = np.array([[delta(a, b, kind) for b in Z[::-1]] for a in Z])
    np.testing.assert_allclose(D, ref, atol=1e-12)
    np.testing.assert_allclose(paired_delta(Z, Z[::-1], kind=kind), np.diag(ref), atol=1e-12)


def test_delta_scaler_orders_by_frequency_and_validates():
    M = np.array([[1, 5, 0], [0, 7, 1], [2, 4, 1]])
    s = DeltaScaler(max_features=2).fit(M)
    assert list(s.columns_) == [1, 0]  # most frequent first: Eder's rank order
    with pytest.raises(ValueError, match="max_features must be a positive int or None, got 0"):
        DeltaScaler(max_features=0).fit(M)
    with pytest.raises(ValueError, match="X has 2 features, .*DeltaScaler .*3"):
        s.transform(M[:, :2])
    with pytest.raises(ValueError, match="kind"):
        pairwise_delta(s.transform(M), s.transform(M), kind="manhattan")


# every check applies (DeltaScaler is tagged positive_only and sparse): none is expected to fail
@parametrize_with_checks([DeltaScaler(), DeltaScaler(max_features=3, ddof=0)])
def test_delta_scaler_passes_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_delta_scaler_validates_like_sklearn_and_names_its_columns():
    import pandas as pd

    M = pd.DataFrame([[1, 5, 0], [0, 7, 1], [2, 4, 1]], columns=["of", "the", "and"])
    s = DeltaScaler(max_features=2).set_output(transform="pandas").fit(M)
    Z = s.transform(M)
    assert list(Z.columns) == ["the", "of"]  # most frequent first
    np.testing.assert_array_equal(
        Z.to_numpy(), DeltaScaler(max_features=2).fit(M.to_numpy()).transform(M.to_numpy())
    )
    assert list(DeltaScaler().fit(M.to_numpy()).get_feature_names_out()) == ["x1", "x0", "x2"]
    with pytest.raises(ValueError, match="Negative values"):
        DeltaScaler().fit(-M)
    with pytest.raises(ValueError, match="1 sample"):
        DeltaScaler().fit(M[:1])
    with pytest.raises(ValueError, match="NaN"):
        DeltaScaler().fit(M.astype(float).where(M > 0))
    with pytest.raises(ValueError, match="3 features"):
        DeltaScaler().fit(M.to_numpy()).transform(sp.csr_matrix(M.to_numpy()[:, :2]))


def test_pairwise_cosine_dense_and_sparse_parts_match_sklearn():
    """Blocks large enough for the dense BLAS part (frequent columns) plus the sparse rest."""
    rng = np.random.default_rng(3)
    p = np.r_[np.full(20, 0.9), np.full(480, 0.01)]  # 20 busy columns, 480 rare ones
    dense_a = (rng.random((150, 500)) < p) * rng.integers(1, 5, (150, 500))
    dense_a[7] = 0  # a zero row: similarity 0
    A = sp.csr_matrix(dense_a)
    B = sp.csr_matrix((rng.random((120, 500)) < p) * rng.integers(1, 5, (120, 500)))
    from stylo.features.distances import _busy_columns

    assert 0 < _busy_columns(A, B).shape[0] < 500
    for n_jobs in (1, 2):
        got = pairwise_cosine(A, B, n_jobs=n_jobs)
        np.testing.assert_allclose(got, cosine_similarity(A, B), rtol=1e-12, atol=1e-12)
    assert np.all(got[7] == 0)
    ref = [[row_similarity(a, b, "cosine") for b in B[:5].toarray()] for a in A[:5].toarray()]
    np.testing.assert_allclose(got[:5, :5], ref, rtol=1e-12, atol=1e-12)
