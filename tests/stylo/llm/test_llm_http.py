"""OpenAICompatible against a scripted loopback server: retries, backoff, faults, cache."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from llm_fakes import ScriptedServer, chat_body

from baselines.llm import PromptedLLM
from stylo.llm import OpenAICompatible, ResponseCache

MSG = [{"role": "user", "content": "hello"}]


def make(server, tmp_path=None, **kw):
    kw.setdefault("max_retries", 3)
    kw.setdefault("backoff", 0.5)
    cache = ResponseCache(tmp_path / "c.sqlite") if tmp_path is not None else None
    b = OpenAICompatible(server.url, "m", api_key_env="STYLO_TEST_KEY", cache=cache, **kw)
    b.slept = []
    b.sleep = b.slept.append  # record backoff delays instead of sleeping
    return b


def test_answer_with_token_counts_and_time():
    with ScriptedServer() as srv:
        srv.script.append(
            ("json", chat_body('{"same": false}', prompt_tokens=40, completion_tokens=5))
        )
        out = make(srv).chat(MSG, max_tokens=8)
    assert out.status == "ok" and out.text == '{"same": false}'
    assert (out.prompt_tokens, out.completion_tokens) == (40, 5)
    assert out.seconds > 0 and not out.cached
    assert srv.requests[0]["path"] == "/v1/chat/completions"
    assert srv.requests[0]["json"]["max_tokens"] == 8


def test_429_is_retried_with_backoff_and_retry_after():
    with ScriptedServer() as srv:
        srv.script += [
            ("status", 429, "slow down", {"Retry-After": "3"}),
            ("status", 503, "busy"),
            ("json", chat_body('{"same": true}')),
        ]
        b = make(srv)
        out = b.chat(MSG)
    assert out.status == "ok" and len(srv.requests) == 3
    # first delay: max(backoff, Retry-After) = 3; second: backoff * 2 = 1.0
    assert b.slept == [3.0, 1.0]


def test_500_until_retries_run_out_is_an_error_not_an_exception(tmp_path):
    with ScriptedServer(default=lambda req: ("status", 500, "boom")) as srv:
        b = make(srv, tmp_path, max_retries=3)
        with pytest.warns(RuntimeWarning, match="recorded as an abstention.*HTTP 500: boom"):
            out = b.chat(MSG)
    assert out.status == "error" and "HTTP 500" in out.error
    assert len(srv.requests) == 4
    assert b.slept == [0.5, 1.0, 2.0]
    assert len(b.cache) == 0 and b.cache.integrity_ok()  # failures are not cached


def test_timeout_then_success():
    """The first answer never comes before the client's 0.2 s timeout (the server holds it
    until the test releases it); the retry gets a generous timeout (raised by the injected
    ``sleep`` between attempts), so a slow machine cannot time it out too."""
    released = threading.Event()
    with ScriptedServer() as srv:
        srv.script += [
            ("wait", released, chat_body('{"same": true}')),
            ("json", chat_body('{"same": false}')),
        ]
        b = make(srv, timeout=0.2)

        def sleep(delay):
            b.slept.append(delay)
            b.timeout = 30.0  # the retry: time enough on any machine

        b.sleep = sleep
        try:
            out = b.chat(MSG)
        finally:
            released.set()
    assert out.status == "ok" and out.text == '{"same": false}'
    assert b.slept == [0.5] and len(srv.requests) == 2


def test_malformed_body_is_retried_then_recorded(tmp_path):
    with ScriptedServer(default=lambda req: ("raw", b"<html>proxy error")) as srv:
        b = make(srv, tmp_path, max_retries=1)
        with pytest.warns(RuntimeWarning, match="malformed response body"):
            out = b.chat(MSG)
    assert out.status == "error" and "malformed" in out.error
    assert len(srv.requests) == 2 and b.cache.integrity_ok()


def test_client_error_is_not_retried():
    with ScriptedServer(default=lambda req: ("status", 401, "bad key")) as srv:
        b = make(srv)
        with pytest.warns(RuntimeWarning, match="HTTP 401: bad key"):
            out = b.chat(MSG)
    assert out.status == "error" and "401" in out.error and len(srv.requests) == 1


def test_context_overflow_reported_as_over_window():
    msg = "This model's maximum context length is 8192 tokens"
    with ScriptedServer(default=lambda req: ("status", 400, msg)) as srv:
        out = make(srv).chat(MSG)
    assert out.status == "over_window" and len(srv.requests) == 1


@pytest.mark.parametrize("code", [422, 500])  # llama-cpp-python's server says 500
def test_schema_form_falls_back_and_is_remembered(code):
    def answer(req):
        rf = req.get("response_format") or {}
        if rf.get("type") == "json_schema":
            return ("status", code, "response_format.type: input should be 'json_object'")
        return ("json", chat_body('{"same": true}'))

    schema = {"type": "object", "properties": {"same": {"type": "boolean"}}}
    with ScriptedServer(default=answer) as srv:
        b = make(srv)
        first = b.chat(MSG, json_schema=schema)
        second = b.chat(MSG + MSG, json_schema=schema)
    assert first.status == second.status == "ok"
    kinds = [(r["json"].get("response_format") or {}).get("type") for r in srv.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert srv.requests[1]["json"]["response_format"]["schema"] == schema


def test_truncated_and_malformed_answers_become_recorded_abstentions(tmp_path):
    answers = iter(
        [
            chat_body('{"ranking": [3, 1, 2', finish_reason="length"),
            chat_body("I think the second one, definitely"),
            chat_body('{"ranking": [2, 2, 1]}'),
        ]
    )
    with ScriptedServer(default=lambda req: ("json", next(answers))) as srv:
        m = PromptedLLM(backend=make(srv, tmp_path)).fit()
        s1 = m.rank("query text", ["a", "b", "c"])
        s2 = m.rank("query text", ["a b", "b c"])
        s3 = m.rank("query text", ["x", "y", "z"])
    # the cut-off ranking keeps its two complete items: candidate 3 then 1, 2 unranked
    assert s1[2] > s1[0] > s1[1] == 0.5
    np.testing.assert_array_equal(s2, [0.5, 0.5])
    np.testing.assert_array_equal(s3, [0.5, 0.5, 0.5])
    ans = m.answers_frame()
    assert list(ans["status"]) == ["ok", "unparseable", "invalid"]
    assert ans["raw"][1] == "I think the second one, definitely"
    assert "twice" in ans["reason"][2]
    assert ans["finish_reason"][0] == "length"


def test_second_identical_run_makes_no_calls_and_key_never_stored(tmp_path, monkeypatch):
    secret = "sk-test-SECRET-0123456789"
    monkeypatch.setenv("STYLO_TEST_KEY", secret)
    texts_a = ["one text here", "another one", "third text"]
    texts_b = ["a reply", "more words", "final words"]

    def answer(req):
        same = "another one" not in req["messages"][-1]["content"]
        return ("json", chat_body(json.dumps({"same": same})))

    with ScriptedServer(default=answer) as srv:
        b1 = make(srv, tmp_path)
        s1 = PromptedLLM(backend=b1).fit().score_pairs(texts_a, texts_b)
        assert len(srv.requests) == 3
        assert all(r["headers"]["Authorization"] == f"Bearer {secret}" for r in srv.requests)
        b1.cache.close()
        b2 = make(srv, tmp_path)  # a fresh process would open the same file
        m2 = PromptedLLM(backend=b2).fit()
        s2 = m2.score_pairs(texts_a, texts_b)
        assert len(srv.requests) == 3
    np.testing.assert_array_equal(s1, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(s1, s2)
    assert b2.n_backend_calls == 0 and m2.answers_frame()["cached"].all()
    blob = (tmp_path / "c.sqlite").read_bytes()
    for f in tmp_path.iterdir():
        blob += f.read_bytes()
    assert secret.encode() not in blob
    assert secret not in b2.calls_frame().to_string()
    assert secret not in m2.answers_frame().to_json()


def test_concurrent_requests_keep_order(tmp_path):
    def answer(req):
        return ("json", chat_body(json.dumps({"echo": req["messages"][0]["content"]})))

    with ScriptedServer(default=answer) as srv:
        b = make(srv, tmp_path, max_concurrency=4)
        reqs = [{"messages": [{"role": "user", "content": f"m{i}"}]} for i in range(12)]
        outs = b.chat_many(reqs)
    assert [json.loads(o.text)["echo"] for o in outs] == [f"m{i}" for i in range(12)]
    assert len(b.cache) == 12 and b.cache.integrity_ok()


def test_invalid_parameters_rejected():
    with pytest.raises(ValueError, match="structured must be auto, .* got 'xml'"):
        OpenAICompatible("http://127.0.0.1:1/v1", "m", structured="xml")
    with pytest.raises(ValueError, match="max_concurrency >= 1"):
        OpenAICompatible("http://127.0.0.1:1/v1", "m", max_concurrency=0)
