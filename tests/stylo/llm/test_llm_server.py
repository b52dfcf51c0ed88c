"""End to end through HTTP: llama-cpp-python's OpenAI-compatible server with Gemma 3 270M on a
loopback port, the OpenAICompatible adapter, and the prompted methods on all three tasks."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

# skipped without the extra, a failure under CI (conftest.py)
pytestmark = pytest.mark.extra("server")

QUERY = "I loved this film, the acting was great and the music was wonderful. Go see it!"
SAME = "What a movie! Great acting, wonderful music, and I loved every minute. See it!"
OTHER = "The quarterly report shows revenue declined by four percent year over year."
THIRD = "We prove a logarithmic regret bound for online convex optimisation."


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    from stylo.llm import default_model_path

    port = _free_port()
    log = open(tmp_path_factory.mktemp("server") / "server.log", "w+")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            default_model_path(),
            "--model_alias",
            "gemma-3-270m",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--n_threads",
            "2",
            "--verbose",
            "False",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                log.seek(0)
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{log.read()}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not come up within 180 s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _backend(url, cache_path):
    from stylo.llm import OpenAICompatible, ResponseCache

    return OpenAICompatible(
        url,
        "gemma-3-270m",
        api_key_env="",
        timeout=120,
        max_retries=1,
        max_concurrency=1,
        cache=ResponseCache(cache_path),
        context_window=4096,
    )


def _run_all_tasks(backend):
    from baselines.llm import PromptedLLM

    m = PromptedLLM(backend=backend, prompt="general").fit()
    verify = m.score_pairs([QUERY, QUERY], [SAME, OTHER])
    choice = m.choose(QUERY, OTHER, SAME)
    ranks = m.rank(QUERY, [OTHER, SAME, THIRD])
    return m, verify, choice, ranks


def test_all_three_tasks_end_to_end_then_from_cache(server_url, tmp_path):
    cache_path = tmp_path / "cache.sqlite"
    b1 = _backend(server_url, cache_path)
    m1, verify, choice, ranks = _run_all_tasks(b1)
    ans = m1.answers_frame()
    assert list(ans["task"]) == ["verify", "verify", "choose", "rank"]
    # the server enforces the JSON schema, so a base model's answers still parse
    assert (ans["status"] == "ok").all(), ans[["status", "raw", "reason"]]
    for raw in ans["raw"]:
        json.loads(raw)
    assert set(verify) <= {0.0, 1.0} and choice in (0, 1)
    assert ranks.shape == (3,) and ranks.max() > 0.5
    assert (ans["prompt_tokens"] > 50).all() and (ans["completion_tokens"] > 0).all()
    assert b1.n_backend_calls == 4
    # llama-cpp-python's server takes the schema in the json_object form
    assert b1._schema_format == "json_object"

    b2 = _backend(server_url, cache_path)
    m2, verify2, choice2, ranks2 = _run_all_tasks(b2)
    assert b2.n_backend_calls == 0 and m2.answers_frame()["cached"].all()
    np.testing.assert_array_equal(verify, verify2)
    assert choice == choice2
    np.testing.assert_array_equal(ranks, ranks2)


def test_run_all_puts_every_llm_cell_on_the_server(server_url, tmp_path, monkeypatch, capsys):
    """``run_all --llm-base-url --llm-model``: the cells ask the server (its answers fill the
    response cache), and the rows carry the server's model, not the local one."""
    import pandas as pd
    from conftest import load_or_skip

    from experiments.grid import DatasetSpec, GridSpec
    from experiments.run_all import main
    from stylo.llm import ResponseCache

    load_or_skip("imdb62")
    monkeypatch.setenv("STYLO_LLM_CACHE", str(tmp_path / "unused.sqlite"))
    grid = GridSpec(
        datasets=[DatasetSpec("imdb62")],
        seeds=[0],
        protocols=["aidbench_one_to_two"],
        methods=["llm-prompt"],
        protocol_params={"aidbench_one_to_two": {"n_triplets": 3}},
    )
    code = main(
        [
            "--llm-base-url",
            server_url,
            "--llm-model",
            "gemma-3-270m",
            "--llm-api-key-env",
            "",
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
            "--no-plots",
            "--cache-dir",
            str(tmp_path),
        ],
        grid=grid,
    )
    assert code == 0, capsys.readouterr().err
    cache = ResponseCache(tmp_path / "llm_responses.sqlite")
    assert len(cache) == 3  # one question a triplet, each answered by the server
    table = pd.read_csv(tmp_path / "out" / "results.csv")
    port = server_url.split(":")[2].split("/")[0]
    assert set(table["method"]) == {
        f"llm-prompt (general prompt) [gemma-3-270m @ 127.0.0.1:{port}]"
    }
    accuracy = table.loc[table["metric"] == "accuracy", "value"]
    assert len(accuracy) == 1 and accuracy.between(0, 100).all()


def test_likelihoods_from_the_server_equal_the_in_process_model(server_url, tmp_path):
    """``llm-likelihood`` on a server: the second text's cross-entropy after the first, from
    the server's prompt log-probabilities, equals the in-process computation up to the batch
    split (the server decodes the whole sequence at once, the in-process backend the first
    text and then the second: llama.cpp's quantised kernels differ by batch size, ~1e-2 nats;
    the first text differs by design: the API gives its first token no log-probability).
    Short texts: the server spends about 0.5 s a token on its log-probabilities with Gemma's
    262k vocabulary."""
    from stylo.llm import LlamaCpp

    first, second = "Go see it, friends!", "See it now, it is great."
    server = _backend(server_url, tmp_path / "cache.sqlite")
    remote = server.sequence_nll(first, second, 4)
    local = LlamaCpp().sequence_nll(first, second, 4)
    assert remote[1] == pytest.approx(local[1], abs=0.03)
    assert 0 < remote[0] < 20 and 0 < remote[1] < 20
    # a text alone is scored as the first text of a pair is (its echo request is remembered)
    assert server.nll(first, 4) == pytest.approx(remote[0], abs=1e-9)
