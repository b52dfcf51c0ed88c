"""The logistic pair verifier: synthetic sanity and the estimator contract."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from pseudoword_synth import synthetic_corpus, synthetic_pairs
from sklearn.exceptions import NotFittedError

from baselines.pair_logistic import LogisticPairVerifier, pair_features, pair_features_reference
from stylo.metrics.pan import auc


def test_pair_verifier_separates_synthetic_pairs_and_follows_the_contract():
    train = synthetic_corpus(seed=0)
    test = synthetic_pairs(synthetic_corpus(seed=5), seed=2)
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        LogisticPairVerifier().score_pairs(["a"], ["b"])
    ver = LogisticPairVerifier(n_pairs=300, max_features=3000).fit(train)
    scores = ver.score_problems(test)
    assert np.all((scores >= 0) & (scores <= 1))
    assert auc(test.labels, scores) > 0.8
    again = LogisticPairVerifier(n_pairs=300, max_features=3000).fit(train).score_problems(test)
    np.testing.assert_array_equal(scores, again)
    with pytest.warns(UserWarning, match="empty"):
        out = ver.score_pairs(["", "x y"], ["x y", " "])
    np.testing.assert_array_equal(out, [0.5, 0.5])


@settings(max_examples=60, deadline=None)
@given(
    n_rows=st.integers(1, 8),
    n_features=st.integers(1, 12),
    density=st.floats(0.0, 1.0),
    n_pairs=st.integers(0, 20),
    seed=st.integers(0, 2**16),
)
def test_pair_features_kernel_equals_scipys_operations(n_rows, n_features, density, n_pairs, seed):
    rng = np.random.default_rng(seed)
    # few distinct values, some negative and some stored zeros: differences and products
    # that vanish must be dropped as scipy drops them
    x = sp.random(n_rows, n_features, density=density, random_state=seed, format="csr")
    x.data = rng.choice([0.0, 0.5, 1.0, -2.0, 3.0], size=x.nnz)
    rows_a = rng.integers(0, n_rows, n_pairs)
    rows_b = np.where(rng.random(n_pairs) < 0.3, rows_a, rng.integers(0, n_rows, n_pairs))
    got = pair_features(x, rows_a, rows_b)
    want = pair_features_reference(x[rows_a], x[rows_b])
    assert got.shape == want.shape == (n_pairs, 2 * n_features)
    assert got.has_sorted_indices and want.has_sorted_indices
    assert got.indices.dtype == got.indptr.dtype == np.int32  # small enough for scipy's int32
    for field in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field))


def test_pair_features_reads_unsorted_or_duplicated_columns():
    # a hand-built CSR may list a row's columns out of order or twice (summed, as scipy does)
    x = sp.csr_matrix(
        (np.array([1.0, 2.0, 0.5, 4.0]), np.array([3, 0, 3, 1]), np.array([0, 3, 4])), shape=(2, 5)
    )
    got = pair_features(x, [0, 1, 0], [1, 0, 0])
    want = pair_features_reference(x[[0, 1, 0]], x[[1, 0, 0]])
    np.testing.assert_array_equal(got.toarray(), want.toarray())
    with pytest.raises(ValueError, match="equal-length"):
        pair_features(x, [0, 1], [0])
