"""The term-statistics and TF-IDF weighting kernels against their NumPy references."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from stylo.features import CharNgrams
from stylo.features._weighting import add_frequencies, weigh_counts, weigh_reference


def _counts(rows, n_cols, seed):
    """A CSR matrix of int64 counts (some rows empty, counts up to 10,000) from ``rows``'
    distinct column lists."""
    rng = np.random.default_rng(seed)
    indptr = np.cumsum([0] + [len(r) for r in rows])
    indices = np.array([c for r in rows for c in sorted(r)], dtype=np.int32)
    data = rng.choice([1, 1, 1, 2, 3, 7, 10_000], size=indices.shape[0]).astype(np.int64)
    return sp.csr_matrix((data, indices, indptr), shape=(len(rows), n_cols))


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 49), max_size=30, unique=True), min_size=1, max_size=8),
    st.integers(0, 2**31 - 1),
    st.booleans(),
    st.booleans(),
    st.sampled_from([None, "l1", "l2"]),
)
def test_weigh_counts_equals_numpy_reference_to_the_bit(rows, seed, sublinear, use_idf, norm):
    x = _counts(rows, 50, seed)
    idf = np.random.default_rng(seed + 1).uniform(1, 5, 50) if use_idf else None
    want = weigh_reference(x, sublinear, idf, norm, np.float64)
    counts = x.data.copy()
    got = weigh_counts(x.copy(), sublinear, idf, norm)
    assert got.data.dtype == np.float64
    assert np.array_equal(got.indptr, want.indptr) and np.array_equal(got.indices, want.indices)
    assert np.array_equal(got.data.view(np.int64), want.data.view(np.int64))  # bit for bit
    assert np.array_equal(x.data, counts)  # the caller's copy was consumed, not x


def test_weigh_counts_refuses_what_it_cannot_overwrite():
    x = _counts([[0, 1]], 2, 0)
    with pytest.raises(ValueError, match="int64"):
        weigh_counts(x.astype(np.int32), False, None, "l2")
    x.data.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        weigh_counts(x, False, None, "l2")


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 29), st.integers(1, 1000)), max_size=200),
    st.integers(1, 40),
    st.integers(0, 2**31 - 1),
)
def test_add_frequencies_equals_bincount(entries, n_terms, seed):
    ids = np.array([i for i, _ in entries], dtype=np.int32)
    counts = np.array([c for _, c in entries], dtype=np.int64)
    term_of = np.random.default_rng(seed).integers(0, n_terms, 30).astype(np.int32)
    df = np.full(n_terms, 5, dtype=np.int64)  # added to, not overwritten
    tf = np.full(n_terms, 7, dtype=np.int64)
    add_frequencies(ids, counts, term_of, df, tf)
    t = term_of[ids]
    assert np.array_equal(df, 5 + np.bincount(t, minlength=n_terms))
    assert np.array_equal(tf, 7 + np.bincount(t, weights=counts, minlength=n_terms).astype(int))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_float32_output_keeps_the_numpy_path(n_jobs):
    docs = ["the cat sat on the mat", "a dog; a log", "", "mat mat mat"] * 5
    opts = dict(use_idf=True, sublinear_tf=True, norm="l2", n_jobs=n_jobs)
    x64 = CharNgrams((1, 3), dtype=np.float64, **opts).fit_transform(docs)
    x32 = CharNgrams((1, 3), dtype=np.float32, **opts).fit_transform(docs)
    assert x32.dtype == np.float32
    np.testing.assert_allclose(x32.toarray(), x64.toarray(), rtol=1e-6, atol=1e-7)
