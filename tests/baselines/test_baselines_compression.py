"""Compression verifiers: measures, contract and scores."""

import numpy as np
import pytest
from baselines_synth import synthetic_pairs
from sklearn.exceptions import NotFittedError

from baselines.compression import (
    DEFAULT_LEVELS,
    MEASURES,
    CompressionVerifier,
    compression_measures,
)
from stylo.metrics.pan import auc

A = "the cat sat on the mat and then the cat sat on the hat " * 8
B = "quantum flux capacitors require plutonium for time travel " * 8


@pytest.mark.parametrize("measure", MEASURES)
def test_a_text_is_closer_to_itself_than_to_another(measure):
    d = compression_measures([A, A], [A, B], measure=measure)
    assert d.shape == (2, 2) and np.isfinite(d).all()
    assert d[0].mean() < d[1].mean()


def test_threads_give_the_same_numbers(monkeypatch):
    import baselines.compression as compression

    a, b = [A, B, A + B, B + A], [B, A, A, B + B]
    for m in ("ncd", "xent", "ppm"):
        monkeypatch.setattr(compression, "_MEMO", {})  # measure again, not from the memo
        one = compression_measures(a, b, m, n_jobs=1)
        monkeypatch.setattr(compression, "_MEMO", {})
        assert np.array_equal(one, compression_measures(a, b, m, n_jobs=2))


def test_a_full_memo_keeps_the_pairs_the_call_reads(monkeypatch):
    # a call holding pairs measured before and more new ones than the memo has room for: it
    # had cleared the memo and then read the old pairs from it (a KeyError)
    import baselines.compression as compression

    monkeypatch.setattr(compression, "_MEMO", {})
    monkeypatch.setattr(compression, "_MEMO_PAIRS", 3)
    a, b = [A, B, A + B, B + A], [B, A, A, B + B]
    first = compression_measures(a[:2], b[:2], "cdm")
    got = compression_measures(a, b, "cdm")
    monkeypatch.setattr(compression, "_MEMO", {})
    np.testing.assert_array_equal(got, compression_measures(a, b, "cdm"))
    np.testing.assert_array_equal(got[:2], first)


def test_xent_pairs_sharing_texts_equal_one_fresh_compressor_each(monkeypatch):
    # attribution pairs every unknown text with every candidate: the measures are grouped by
    # their dictionary text, each group compressed with one compressor
    import zstandard

    import baselines.compression as compression

    monkeypatch.setattr(compression, "_MEMO", {})
    known, unknown = [A, B, A + B], [B[:90], A[:70], "x" * 50, A[:70]]
    a = [k for u in unknown for k in known]
    b = [u for u in unknown for _ in known]
    got = compression_measures(a, b, "xent", n_jobs=2)
    for i, (x, y) in enumerate(zip(a, b)):
        for j, (ref, text) in enumerate(((x, y), (y, x))):
            cctx = zstandard.ZstdCompressor(
                level=DEFAULT_LEVELS["xent"],
                dict_data=zstandard.ZstdCompressionDict(
                    ref.encode(), dict_type=zstandard.DICT_TYPE_RAWCONTENT
                ),
                write_checksum=False,
                write_content_size=False,
                write_dict_id=False,
            )
            assert got[i, j] == 8.0 * len(cctx.compress(text.encode())) / len(text)


@pytest.mark.parametrize("measure", MEASURES)
def test_verifier_on_synthetic_pairs(measure):
    train, test = synthetic_pairs(40, seed=0), synthetic_pairs(30, seed=1)
    model = CompressionVerifier(measure)
    with pytest.raises(NotFittedError, match="is not fitted yet"):
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
    for bad in (0, 23, 2.5, True, "9"):
        with pytest.raises(ValueError, match="level"):
            CompressionVerifier("ncd", level=bad).fit(train)
        with pytest.raises(ValueError, match="level"):
            compression_measures([A], [B], "cdm", level=bad)


def test_levels_default_to_the_chosen_ones_and_an_explicit_level_is_used():
    train = synthetic_pairs(20, seed=0)
    for measure in ("ncd", "cdm", "xent"):
        assert CompressionVerifier(measure).fit(train).level_ == DEFAULT_LEVELS[measure]
        assert CompressionVerifier(measure, level=9).fit(train).level_ == 9
    assert CompressionVerifier("ppm").fit(train).level_ == 0  # no zstd level
    # the level changes the measure (so it is not only a speed setting) and is memoised apart
    default = compression_measures([A + B], [B + A], "ncd")
    assert not np.array_equal(default, compression_measures([A + B], [B + A], "ncd", level=1))
    np.testing.assert_array_equal(
        default, compression_measures([A + B], [B + A], "ncd", level=DEFAULT_LEVELS["ncd"])
    )


@pytest.mark.parametrize("measure", MEASURES)
def test_repeated_pairs_are_measured_once_with_the_same_numbers(measure, monkeypatch):
    import zstandard

    import baselines.compression as compression

    a = ["the cat sat on the mat. " * 5, "a dog barked all night long. " * 4, "plain words " * 9]
    b = ["a bird sang in the tree. " * 5, "the cat sat on the mat. " * 5, "plain words " * 8]
    monkeypatch.setattr(compression, "_MEMO", {})
    fresh = compression_measures(a, b, measure)
    assert np.all(np.isfinite(fresh)) and fresh.shape == (3, 2)
    if measure == "cdm":  # the definition, from zstd sizes of each text and concatenation
        cctx = zstandard.ZstdCompressor(
            level=DEFAULT_LEVELS["cdm"], write_checksum=False, write_content_size=False
        )
        size = lambda t: len(cctx.compress(t.encode()))  # noqa: E731
        np.testing.assert_allclose(
            fresh[0],
            [
                size(a[0] + b[0]) / (size(a[0]) + size(b[0])),
                size(b[0] + a[0]) / (size(a[0]) + size(b[0])),
            ],
        )
    seen = []
    real = compression._measures
    monkeypatch.setattr(
        compression, "_measures", lambda pairs, *args: seen.extend(pairs) or real(pairs, *args)
    )
    again = compression_measures([a[2], a[0], a[2], b[1]], [b[2], b[0], b[2], a[1]], measure)
    np.testing.assert_array_equal(again[:3], fresh[[2, 0, 2]])
    assert seen == [(b[1], a[1])]  # only the pair not measured before, once
    monkeypatch.setattr(compression, "_MEMO", {})
    np.testing.assert_array_equal(compression_measures([b[1]], [a[1]], measure), again[3:])
