"""Compression verifiers: measures, contract and scores."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from baselines.compression import MEASURES, CompressionVerifier, compression_measures
from baselines_synth import synthetic_pairs
from stylo.metrics.pan import auc

A = "the cat sat on the mat and then the cat sat on the hat " * 8
B = "quantum flux capacitors require plutonium for time travel " * 8


@pytest.mark.parametrize("measure", MEASURES)
def test_a_text_is_closer_to_itself_than_to_another(measure):
    d = compression_measures([A, A], [A, B], measure=measure)
    assert d.shape == (2, 2) and np.isfinite(d).all()
    assert d[0].mean() < d[1].mean()


def test_threads_give_the_same_numbers():
    a, b = [A, B, A + B] * 3, [B, A, A] * 3
    for m in ("ncd", "xent", "ppm"):
        assert np.array_equal(compression_measures(a, b, m, n_jobs=1),
                              compression_measures(a, b, m, n_jobs=2))


@pytest.mark.parametrize("measure", MEASURES)
def test_verifier_on_synthetic_pairs(measure):
    train, test = synthetic_pairs(40, seed=0), synthetic_pairs(30, seed=1)
    model = CompressionVerifier(measure)
    with pytest.raises(NotFittedError):
        model.score_pairs([A], [B])
    s = model.fit(train).score_problems(test)
    assert ((s >= 0) & (s <= 1)).all()
    assert auc(test.labels, s) > 0.7
    assert np.array_equal(s, CompressionVerifier(measure).fit(train).score_problems(test))
    with pytest.warns(UserWarning, match="empty"):
        assert model.score_pairs([" "], [A])[0] == 0.5


def test_radius_turns_near_half_into_no_answer():
    train = synthetic_pairs(40, seed=0)
    wide = CompressionVerifier("ppm", radius=0.49).fit(train)
    s = wide.score_problems(synthetic_pairs(10, seed=2))
    assert (s == 0.5).all()


def test_bad_parameters():
    train = synthetic_pairs(10)
    with pytest.raises(ValueError, match="measure"):
        CompressionVerifier("gzip").fit(train)
    with pytest.raises(ValueError, match="features"):
        CompressionVerifier(features="both").fit(train)
