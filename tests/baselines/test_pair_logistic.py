"""The logistic pair verifier: synthetic sanity and the estimator contract."""

import numpy as np
import pytest
from pseudoword_synth import synthetic_corpus, synthetic_pairs
from sklearn.exceptions import NotFittedError

from baselines.pair_logistic import LogisticPairVerifier
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
