"""The in-process llama.cpp backend with the packaged Gemma 3 270M: chat, likelihoods, and the
likelihood verifier."""

from __future__ import annotations

import json

import numpy as np
import pytest

# skipped without the extra, a failure under CI (conftest.py)
pytestmark = pytest.mark.extra("llm")

A = (
    "The committee met on Tuesday to discuss the new budget. Members agreed that spending on "
    "roads should rise, while the library fund would stay the same for another year."
)
B = (
    "I honestly loved this film. The acting was superb, the music gave me chills, and the "
    "ending left the whole theatre in tears. Ten out of ten, would watch again!"
)


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    from stylo.llm import LlamaCpp, ResponseCache

    return LlamaCpp(
        n_ctx=2048, nll_batch=32, cache=ResponseCache(tmp_path_factory.mktemp("c") / "c.sqlite")
    )


def test_structured_chat_gives_valid_json(backend):
    from stylo.llm.prompts import verify_prompt

    p = verify_prompt(A, B)
    out = backend.chat(p.messages, max_tokens=16, json_schema=p.schema)
    assert out.status == "ok", out
    assert isinstance(json.loads(out.text)["same"], bool)
    assert out.prompt_tokens > 100 and out.completion_tokens > 0 and out.seconds > 0
    again = backend.chat(p.messages, max_tokens=16, json_schema=p.schema)
    assert again.cached and again.text == out.text


def test_over_window_prompt_is_refused_without_a_call(backend):
    n = backend.n_backend_calls
    out = backend.chat([{"role": "user", "content": A * 200}], max_tokens=8)
    assert out.status == "over_window" and backend.n_backend_calls == n


def test_batched_token_losses_match_the_full_logits_reference(backend):
    """Our batched per-token losses equal llama-cpp-python's own logits_all evaluation, so
    the KV cache carries the context across forward passes."""
    from llama_cpp import Llama

    llm = backend._load()
    tokens = [llm.token_bos()] + backend._tokens(A + "\n\n" + B)
    assert len(tokens) > backend.nll_batch  # more than one forward pass
    llm.reset()
    llm._ctx.kv_cache_clear()
    got, last = backend._decode(llm, tokens, 0)
    ref_llm = Llama(
        model_path=backend.model_path,
        n_ctx=256,
        n_batch=256,
        logits_all=True,
        n_threads=2,
        verbose=False,
    )
    ref_llm.eval(tokens)
    logits = np.asarray(ref_llm.scores[: len(tokens)], dtype=np.float64)
    lse = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
    ref = lse[:-1] - logits[np.arange(len(tokens) - 1), tokens[1:]]
    # the first 32 positions are the same computation; later ones see the context through the
    # KV cache, and llama.cpp's batch-size-dependent quantised kernels move values slightly
    np.testing.assert_allclose(got[:32], ref[:32], rtol=1e-4, atol=1e-4)
    assert np.abs(got - ref).mean() < 0.05 and np.abs(got - ref).max() < 0.5
    assert last.shape == (llm.n_vocab(),) and np.exp(last).sum() == pytest.approx(1.0)


def test_shared_prefix_equals_each_pair_read_in_one_sequence(backend):
    """nll_after decodes the first text once and each second text after it from the cut-back
    KV cache. That is exactly decoding [first, blank line] and then the second text on a fresh
    state, so the cut leaves nothing of the previous second text behind; and it equals one
    decode of the whole sequence up to llama.cpp's batch-size-dependent quantised kernels
    (this fixture's 32-token batches split the two differently: ~1e-2 nats)."""
    llm = backend._load()
    seconds = [B, A[::-1], "Short one."]
    h_first, h_seconds, _ = backend._nll_after_impl(A, seconds, 40)
    a = backend._tokens(A)[:40]
    prefix = [llm.token_bos()] + a + backend._tokens("\n\n")
    for second, h in zip(seconds, h_seconds, strict=True):
        b = backend._tokens(second)[:40]
        llm.reset()
        llm._ctx.kv_cache_clear()
        first_losses, last = backend._decode(llm, prefix, 0)
        losses, _ = backend._decode(llm, b, len(prefix))
        assert h_first == first_losses[: len(a)].mean()
        assert h == (losses.sum() - last[b[0]]) / len(b)
        llm.reset()
        llm._ctx.kv_cache_clear()
        whole, _ = backend._decode(llm, prefix + b, 0)
        assert h == pytest.approx(whole[len(prefix) - 1 :].mean(), abs=0.03)
    alone = backend._nll_after_impl(A, [seconds[2]], 40)[1]
    assert alone == [h_seconds[2]]  # a second text's result does not depend on its company


def test_unscored_prefix_and_alone_agree_with_the_scored_reading(backend):
    """Without score_first the prefix is decoded with its last position's logits only: the
    second texts' cross-entropies equal those after a scored prefix (the KV cache is the same;
    only the output matmul's batch differs), and ``nll`` is the scored prefix's H(first)."""
    seconds = [B, "Short one."]
    h_first, h_seconds, _ = backend._nll_after_impl(A, seconds, 40)
    nan, light, _ = backend._nll_after_impl(A, seconds, 40, score_first=False)
    assert np.isnan(nan)
    np.testing.assert_allclose(light, h_seconds, rtol=1e-4, atol=1e-4)
    assert backend.nll(A, 40) == pytest.approx(h_first, abs=1e-6)
    # an entry cached without H(first) does not answer a call that needs it
    n = backend.n_backend_calls
    got_nan, _ = backend.nll_after(B, [A], 24, score_first=False)
    got_first, again = backend.nll_after(B, [A], 24)
    assert np.isnan(got_nan) and got_first == pytest.approx(backend.nll(B, 24), abs=1e-6)
    assert backend.n_backend_calls == n + 3


def test_reading_a_text_first_makes_its_copy_predictable(backend):
    h_a, h_a_given_a = backend.sequence_nll(A, A, 64)
    h_b, h_a_given_b = backend.sequence_nll(B, A, 64)
    assert 0 < h_a_given_a < 0.5 * h_a  # a copy is cheap to predict
    assert h_a_given_b > h_a_given_a
    n = backend.n_backend_calls
    assert backend.sequence_nll(A, A, 64) == (h_a, h_a_given_a)  # from the cache
    assert backend.n_backend_calls == n


def test_likelihood_verifier_fits_and_scores(backend):
    from baselines.llm import LikelihoodVerifier
    from stylo.corpus import PairSet

    same_b = B.replace("film", "movie").replace("superb", "great")
    train = PairSet.from_lists(
        [A, B, A, B, same_b, A],
        [A[::-1][:90] + A[:60], same_b, B, A, B, same_b],
        same=[True, True, False, False, True, False],
    )
    m = LikelihoodVerifier(backend=backend, max_text_tokens=48).fit(train)
    assert m.features_.shape == (6, 2) and m.backend_ is backend
    s = m.score_pairs([A, B], [B, same_b])
    assert s.shape == (2,) and np.all((s >= 0) & (s <= 1))
    with pytest.raises(ValueError, match="both"):
        LikelihoodVerifier(backend=backend, max_text_tokens=48).fit(
            PairSet.from_lists([A], [B], same=[True])
        )
