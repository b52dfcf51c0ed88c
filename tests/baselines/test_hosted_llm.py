"""Language-model methods on a hosted server through the grid: keys, labels, backends,
missing extras, and failures that are loud (warned, and a dead server fails the cell)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from experiments_standins import ToyVerification, toy_loader
from llm_fakes import ScriptedServer, chat_body

from baselines import registry
from baselines.llm import PromptedLLM
from baselines.registry import METHODS, MethodOptions, on_server, unavailable
from experiments.grid import DatasetSpec, GridSpec, expand, full_grid
from experiments.methods import LOCAL_LLM, key_options, method_label
from experiments.run_all import _grid, build_parser
from experiments.suite import Suite
from stylo.llm import BackendError, OpenAICompatible

HOSTED = MethodOptions(
    llm_base_url="http://127.0.0.1:9/v1", llm_model="big-model", llm_max_retries=0
)


def test_every_llm_method_names_its_model_in_the_key_and_label():
    for name, spec in METHODS.items():
        local, hosted = key_options(spec, MethodOptions()), key_options(spec, HOSTED)
        if spec.kind == "llm":
            assert local == {"llm_model": LOCAL_LLM}
            assert hosted == {"llm_base_url": HOSTED.llm_base_url, "llm_model": "big-model"}
        else:
            assert local == hosted == {}, name
    assert (
        method_label("llm-prompt", {"llm_model": LOCAL_LLM})
        == "llm-prompt (general prompt) [gemma-3-270m (local)]"
    )
    assert (
        method_label("llm-prompt", key_options(METHODS["llm-prompt"], HOSTED))
        == "llm-prompt (general prompt) [big-model @ 127.0.0.1:9]"
    )
    assert method_label("naive", {}) == "naive"
    assert (
        method_label("rag-embedding-llm", {"llm_model": LOCAL_LLM})
        == "rag-embedding-llm (topic-ignored prompt) [gemma-3-270m (local)]"
    )
    assert (
        method_label("llm-prompt", {"llm_model": "m"}, {"prompt": "no_style"})
        == "llm-prompt (no-style prompt) [m]"
    )
    assert method_label("llm-likelihood", {"llm_model": "m"}) == "llm-likelihood [m]"
    assert (
        method_label("rag-embedding-llm", {"llm_model": "m"}, {"reranker__max_text_chars": 400})
        == "rag-embedding-llm (topic-ignored prompt) [m, texts cut to 400 chars]"
    )


def test_the_reference_grid_cuts_prompted_texts_for_the_local_model_only():
    local, hosted = full_grid(0).method_params, full_grid(0, local_llm=False).method_params
    assert local == {
        "llm-prompt": {"max_text_chars": 400},
        "llm-prompt-both-orders": {"max_text_chars": 400},
        "rag-embedding-llm": {"reranker__max_text_chars": 400},
    }
    assert hosted == {}
    # each cut parameter is one the method takes, so the grid's set_params cannot fail
    for name, params in local.items():
        METHODS[name].factory(0, MethodOptions()).set_params(**params)
    parser = build_parser({})
    assert _grid(parser.parse_args([]), METHODS).method_params == local
    hosted_args = parser.parse_args(["--llm-base-url", "http://h/v1", "--llm-model", "m"])
    assert _grid(hosted_args, METHODS).method_params == {}


def test_local_and_hosted_cells_never_share_a_key(monkeypatch):
    monkeypatch.setattr(registry, "EXTRAS", {"llm": (), "embed": ()})
    grid = GridSpec(datasets=[DatasetSpec("toy")], seeds=[0], methods=["llm-prompt"])
    protocols = {"toy_verification": ToyVerification()}
    local = expand(grid, Suite(protocols, toy_loader, options=MethodOptions()))
    hosted = expand(grid, Suite(protocols, toy_loader, options=HOSTED))
    assert local.cells and len(local.cells) == len(hosted.cells)
    assert not {c.key for c in local.cells} & {c.key for c in hosted.cells}


def test_on_server_sets_every_backend_the_method_holds():
    for name in ("llm-prompt", "llm-prompt-both-orders", "rag-embedding-llm"):
        method = METHODS[name].factory(0, HOSTED)
        backends = [
            v
            for k, v in method.get_params(deep=True).items()
            if k == "backend" or k.endswith("__backend")
        ]
        assert backends and all(isinstance(b, OpenAICompatible) for b in backends), name
        assert all(
            b.base_url == HOSTED.llm_base_url and b.model == "big-model" and b.max_retries == 0
            for b in backends
        )
    assert METHODS["llm-prompt"].factory(0, MethodOptions()).backend is None  # local default
    with pytest.raises(TypeError, match="NaiveDistance has no language-model backend"):
        on_server(registry.make("naive"), HOSTED)


def test_missing_extras_are_named_and_a_server_replaces_the_local_model(monkeypatch):
    monkeypatch.setattr(
        registry, "EXTRAS", {"llm": ("no_such_module_xyz",), "embed": ("no_such_module_abc",)}
    )
    assert (
        unavailable(METHODS["llm-prompt"], MethodOptions())
        == "needs extra llm (pip install 'stylo[llm]')"
    )
    assert unavailable(METHODS["llm-prompt"], HOSTED) is None
    assert (
        unavailable(METHODS["embedding"], HOSTED)
        == "needs extra embed (pip install 'stylo[embed]')"
    )
    assert (
        unavailable(METHODS["rag-embedding-llm"], MethodOptions())
        == "needs extra llm,embed (pip install 'stylo[llm,embed]')"
    )
    assert unavailable(METHODS["naive"], MethodOptions()) is None


def test_unreachable_server_warns_once_per_cause_and_fails_the_method():
    backend = OpenAICompatible(
        "http://127.0.0.1:9/v1", "m", api_key_env="", max_retries=0, timeout=2
    )
    method = PromptedLLM(backend=backend).fit()
    with pytest.warns(RuntimeWarning, match="connection failed") as caught:
        with pytest.raises(BackendError, match=r"every model call failed \(2 of 2"):
            method.score_pairs(["a text", "b text"], ["c text", "d text"])
    assert len([w for w in caught if "connection failed" in str(w.message)]) == 1


def test_failures_after_a_first_answer_are_abstentions_with_one_warning_per_cause():
    answers = [("json", chat_body('{"same": true}'))]
    with ScriptedServer(default=lambda req: ("status", 503, "overloaded")) as srv:
        srv.script += answers
        backend = OpenAICompatible(srv.url, "m", api_key_env="", max_retries=0, max_concurrency=1)
        method = PromptedLLM(backend=backend).fit()
        assert method.score_pairs(["a"], ["b"]).tolist() == [1.0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scores = method.score_pairs(["a", "c", "e"], ["b", "d", "f"])
    np.testing.assert_array_equal(scores, [0.5, 0.5, 0.5])
    assert [a["status"] for a in method.answers_] == ["ok", "error", "error", "error"]
    assert "HTTP 503: overloaded" in method.answers_[-1]["reason"]
    assert len([w for w in caught if "HTTP 503" in str(w.message)]) == 1


def _hosted_run(tmp_path, monkeypatch, url: str, *extra: str) -> int:
    from experiments.run_all import main

    monkeypatch.setenv("STYLO_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    # its own dataset name: the runner keeps sampled tasks per process, keyed by dataset,
    # setting and seed, and other tests sample the toy protocol with 20 pairs
    grid = GridSpec(datasets=[DatasetSpec("hosted-toy")], seeds=[0], methods=["llm-prompt"])
    return main(
        [
            "--llm-base-url",
            url,
            "--llm-model",
            "m",
            "--llm-max-retries",
            "0",
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
            "--no-plots",
            "--cache-dir",
            str(tmp_path),
            *extra,
        ],
        protocols={"toy_verification": ToyVerification(n_pairs=6)},
        loader=toy_loader,
        grid=grid,
    )


def test_run_all_against_a_dead_port_fails_its_cells_and_says_why(tmp_path, monkeypatch):
    with pytest.warns(RuntimeWarning, match="connection failed"):
        code = _hosted_run(tmp_path, monkeypatch, "http://127.0.0.1:9/v1")
    assert code == 1
    report = (tmp_path / "out" / "REPORT.md").read_text()
    assert "every model call failed" in report and "connection failed" in report


def test_run_all_asks_the_hosted_server_and_labels_its_rows(tmp_path, monkeypatch):
    with ScriptedServer() as srv:
        code = _hosted_run(tmp_path, monkeypatch, srv.url)
    assert code == 0
    # two settings of the toy protocol, 6 pairs each, one question a pair; a question asked
    # twice is answered from the cache, which holds every answer the server gave
    from stylo.llm import ResponseCache

    assert 6 <= len(srv.requests) <= 12
    assert len(ResponseCache(tmp_path / "llm_responses.sqlite")) == len(srv.requests)
    assert {r["json"]["model"] for r in srv.requests} == {"m"}
    import pandas as pd

    table = pd.read_csv(tmp_path / "out" / "results.csv")
    port = srv.url.split(":")[2].split("/")[0]
    assert set(table["method"]) == {f"llm-prompt (general prompt) [m @ 127.0.0.1:{port}]"}


def _echo_logprobs(req):
    """A legacy /completions answer with echo and logprobs: one token a word, log-probability
    -(word length) / 10, the first token without one (as the API does), one generated token."""
    if "prompt" not in req:
        return ("json", chat_body('{"same": true}'))
    text = req["prompt"]
    words = [(m.start(), m.group()) for m in __import__("re").finditer(r"\S+\s*", text)]
    words.append((len(text), "!"))
    logprobs = [None] + [-len(w.strip()) / 10 for _, w in words[1:]]
    return (
        "json",
        {
            "choices": [
                {
                    "text": text + "!",
                    "logprobs": {
                        "tokens": [w for _, w in words],
                        "text_offset": [o for o, _ in words],
                        "token_logprobs": logprobs,
                    },
                }
            ]
        },
    )


def test_likelihoods_from_a_server_cut_texts_and_score_the_second_after_the_first():
    with ScriptedServer(default=_echo_logprobs) as srv:
        backend = OpenAICompatible(srv.url, "m", api_key_env="", max_retries=0)
        h_first, h_second = backend.sequence_nll("aa bbbb cc dddddd", "e ff ggg hhhh", 3)
        again = backend.sequence_nll("aa bbbb cc dddddd", "e ff ggg hhhh", 3)
        n_requests = len(srv.requests)
    # first cut to "aa bbbb cc " (its first token has no log-probability), second "e ff ggg "
    assert h_first == pytest.approx((0.4 + 0.2) / 2)
    assert h_second == pytest.approx((0.1 + 0.2 + 0.3) / 3)
    assert again == (h_first, h_second)
    # two cuts and the sequence; without a response cache the repeat asks the sequence again,
    # but its cuts are remembered
    assert n_requests == 4
    assert [r["path"] for r in srv.requests] == ["/v1/completions"] * 4
    assert all(r["json"]["echo"] and r["json"]["logprobs"] == 1 for r in srv.requests)


def test_likelihood_verifier_on_a_server_without_logprobs_fails_at_fit():
    from baselines.llm import LikelihoodVerifier
    from stylo.corpus import PairSet

    plain = {"choices": [{"text": "hello", "finish_reason": "stop"}]}
    pairs = PairSet.from_lists(["a b c", "d e f"], ["a b d", "x y z"], same=[True, False])
    with ScriptedServer(default=lambda req: ("json", plain)) as srv:
        backend = OpenAICompatible(srv.url, "m", api_key_env="", max_retries=0)
        method = LikelihoodVerifier(backend=backend, max_text_tokens=8, n_train_pairs=2)
        with pytest.raises(
            BackendError,
            match="gives no prompt log-probabilities.*no prompt log-probabilities in the answer",
        ):
            method.fit(pairs)
