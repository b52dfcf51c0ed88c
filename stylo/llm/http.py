"""Chat completions over HTTP from any OpenAI-compatible server (OpenAI, vLLM, llama.cpp's
server, llama-cpp-python's server, Ollama), with the standard library only.

Transient failures (timeouts, refused connections, HTTP 429 and 5xx, a body that is not the
expected JSON) are retried with exponential backoff, honouring ``Retry-After``; a call that
still fails ends in an ``error`` Completion. The API key is read from the environment at call
time and sent only in the request header: it is never part of a cache key, a cached row or a
call record.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request

import numpy as np

from stylo.llm.backend import SEPARATOR, BackendError, ChatBackend, OverWindow

__all__ = ["OpenAICompatible"]

# the ways servers accept a JSON schema for the answer, tried in this order: OpenAI's
# json_schema form, then the json_object+schema form of llama-cpp-python's server, then none
_SCHEMA_FORMATS = ("json_schema", "json_object", None)

_CONTEXT_WORDS = (
    "context length",
    "context window",
    "maximum context",
    "context size",
    "exceeds the available context",
    "too many tokens",
    "n_ctx",
)


class _Transient(Exception):
    """A failure worth retrying; ``retry_after`` is the server's hint in seconds, if any."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class _Refused(Exception):
    """A 4xx answer (not 429): retrying the same request cannot help."""

    def __init__(self, status: int, body: str):
        super().__init__(f"HTTP {status}: {body[:300]}")
        self.status = status
        self.body = body


class OpenAICompatible(ChatBackend):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Parameters
    ----------
    base_url : str
        The API root, e.g. ``"http://127.0.0.1:8080/v1"`` or ``"https://api.openai.com/v1"``.
    model : str
        The model name sent with each request.
    api_key_env : str
        Name of the environment variable holding the key; when unset no key is sent (local
        servers need none).
    timeout : float
        Seconds to wait for one HTTP response.
    max_retries : int
        Retries after the first attempt for transient failures.
    max_concurrency : int
        Requests in flight at once in :meth:`chat_many` (threads).
    backoff : float
        First retry delay in seconds; doubles each retry, capped at ``max_backoff``.
    structured : {"auto", "json_schema", "json_object", "none"}
        How to ask for a JSON schema: ``auto`` tries the forms in turn and remembers the
        first the server accepts.
    cache, context_window
        See :class:`~stylo.llm.backend.ChatBackend`.
    """

    kind = "openai-compatible"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_retries: int = 4,
        max_concurrency: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        structured: str = "auto",
        cache=None,
        context_window: int | None = None,
    ):
        super().__init__(model=model, cache=cache, context_window=context_window)
        if structured not in ("auto", "json_schema", "json_object", "none"):
            raise ValueError(
                f"structured must be auto, json_schema, json_object or none, got {structured!r}"
            )
        if max_retries < 0 or max_concurrency < 1 or timeout <= 0:
            raise ValueError("need max_retries >= 0, max_concurrency >= 1 and timeout > 0")
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_concurrency = int(max_concurrency)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.structured = structured
        self._schema_format = (
            None
            if structured == "none"
            else (structured if structured != "auto" else "json_schema")
        )
        self.sleep = time.sleep  # replaceable in tests
        self._cuts: dict[tuple[str, int], str] = {}

    def __repr__(self) -> str:
        return f"OpenAICompatible({self.base_url!r}, model={self.model!r})"

    def chat_many(self, requests, max_concurrency: int | None = None):
        return super().chat_many(requests, max_concurrency or self.max_concurrency)

    # -- one call ------------------------------------------------------------------------------
    def _call(self, request: dict) -> dict:
        schema = request["json_schema"]
        while True:
            body = self._body(request, schema, self._schema_format)
            try:
                return self._post_with_retries(body)
            except _Refused as exc:
                text = exc.body.lower()
                if any(w in text for w in _CONTEXT_WORDS):
                    raise OverWindow(f"server refused the prompt as too long: {exc}") from None
                if (
                    schema is not None
                    and self.structured == "auto"
                    and self._schema_format is not None
                ):
                    # the server rejected this way of asking for a schema: try the next form
                    nxt = _SCHEMA_FORMATS.index(self._schema_format) + 1
                    self._schema_format = _SCHEMA_FORMATS[nxt]
                    continue
                raise BackendError(str(exc)) from None

    # -- likelihood ------------------------------------------------------------------------
    scores_likelihoods = True

    def _nll_after_impl(
        self, first: str, seconds: list[str], max_text_tokens: int, score_first: bool = True
    ) -> tuple[float, list[float], list[int]]:
        """From the server's legacy ``/completions`` with ``echo`` and ``logprobs``
        (llama-cpp-python's server, vLLM; a server that gives no prompt log-probabilities
        raises BackendError, saying so).

        The texts are cut where the server's tokeniser puts token ``max_text_tokens`` (one
        echo request a text, remembered), then each [first, blank line, second] is scored in
        one request (``first`` alone when there are no seconds). The API gives the first token
        no log-probability, so ``first`` is scored from its second token on. A server scores
        ``first`` whether asked or not, so ``score_first`` changes nothing here."""
        a = self._cut(first, max_text_tokens)
        if not a.strip():
            raise ValueError("nll_after needs non-empty texts")
        h_first, h_seconds, read = None, [], []
        for second in seconds or [None]:
            b = "" if second is None else self._cut(second, max_text_tokens)
            if second is not None and not b.strip():
                raise ValueError("nll_after needs non-empty texts")
            text = a if second is None else a + SEPARATOR + b
            lp = self._prompt_logprobs(text)
            start_b, end = len(a) + len(SEPARATOR), len(text)
            in_a = [
                v
                for o, v in zip(lp["text_offset"], lp["token_logprobs"])
                if o < len(a) and v is not None
            ]
            in_b = [
                v
                for o, v in zip(lp["text_offset"], lp["token_logprobs"])
                if start_b <= o < end and v is not None
            ]
            if not in_a or (second is not None and not in_b):
                raise BackendError(
                    f"{self!r}: no scored tokens in one of the texts ({len(in_a)} and {len(in_b)})"
                )
            h_first = -float(np.mean(in_a))
            read.append(sum(1 for o in lp["text_offset"] if o < end))
            if second is not None:
                h_seconds.append(-float(np.mean(in_b)))
        return h_first, h_seconds, read

    def _cut(self, text: str, max_tokens: int) -> str:
        # each text of a pair is cut again for the other direction: ask the server once
        key = (text, max_tokens)
        if key not in self._cuts:
            offsets = [o for o in self._prompt_logprobs(text)["text_offset"] if o < len(text)]
            self._cuts[key] = text if len(offsets) <= max_tokens else text[: offsets[max_tokens]]
        return self._cuts[key]

    def _prompt_logprobs(self, text: str) -> dict:
        body = {
            "model": self.model,
            "prompt": text,
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": True,
            "logprobs": 1,
        }
        try:
            return self._post_with_retries(body, "/completions", _parse_logprobs)
        except _Refused as exc:
            raise BackendError(
                f"{self!r} gives no prompt log-probabilities (legacy "
                f"/completions with echo and logprobs, as llama-cpp-python's "
                f"server and vLLM answer): {exc}"
            ) from None

    def _body(self, request: dict, schema: dict | None, form: str | None) -> dict:
        body = {
            "model": self.model,
            "messages": request["messages"],
            "max_tokens": request["max_tokens"],
            "temperature": request["temperature"],
            "seed": request["seed"],
        }
        if schema is not None and form == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": True},
            }
        elif schema is not None and form == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
        return body

    def _post_with_retries(self, body: dict, path: str = "/chat/completions", parse=None) -> dict:
        """The server's JSON answer to ``body`` at ``path`` (``parse``d: a malformed answer
        is retried like a timeout), after retries of transient failures."""
        parse = parse or _parse_response
        last = None
        for attempt in range(self.max_retries + 1):
            try:
                return parse(self._post(body, path))
            except _Transient as exc:
                last = exc
                if attempt == self.max_retries:
                    break
                delay = min(self.max_backoff, self.backoff * 2**attempt)
                if exc.retry_after is not None:
                    delay = min(self.max_backoff, max(delay, exc.retry_after))
                self.sleep(delay)
        raise BackendError(f"gave up after {self.max_retries + 1} attempts: {last}")

    def _post(self, body: dict, path: str) -> bytes:
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(
            f"{self.base_url}{path}", data=data, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            text = _read_error_body(exc)
            # llama-cpp-python's server answers an unsupported response_format with HTTP 500:
            # a request problem, not a transient one
            if exc.code >= 500 and "response_format" in text:
                raise _Refused(exc.code, text) from None
            if exc.code == 429 or exc.code >= 500:
                raise _Transient(
                    f"HTTP {exc.code}: {text[:200]}", _retry_after(exc.headers.get("Retry-After"))
                ) from None
            raise _Refused(exc.code, text) from None
        except TimeoutError as exc:
            raise _Transient(f"timed out after {self.timeout:g} s ({exc})") from None
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            raise _Transient(f"connection failed: {exc}") from None
        return raw


def _parse_logprobs(raw: bytes) -> dict:
    """Token strings, character offsets and log-probabilities from a legacy ``/completions``
    body asked with ``echo`` and ``logprobs``; a body without them is a refusal (retrying
    cannot make a server return what it does not compute)."""
    try:
        doc = json.loads(raw.decode("utf-8"))
        lp = doc["choices"][0]["logprobs"]
        out = {k: list(lp[k]) for k in ("tokens", "text_offset", "token_logprobs")}
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Transient(f"malformed response body ({type(exc).__name__}): {raw[:120]!r}") from None
    except (KeyError, IndexError, TypeError) as exc:
        raise _Refused(
            200,
            f"no prompt log-probabilities in the answer "
            f"({type(exc).__name__}: {exc}): {raw[:200]!r}",
        ) from None
    if not len(out["tokens"]) == len(out["text_offset"]) == len(out["token_logprobs"]):
        raise _Refused(200, "tokens, text_offset and token_logprobs differ in length")
    return out


def _read_error_body(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _parse_response(raw: bytes) -> dict:
    """Text, finish reason and token counts from a chat-completions body; a body that is not
    that shape is a transient failure (proxies and overloaded servers send such)."""
    try:
        doc = json.loads(raw.decode("utf-8"))
        choice = doc["choices"][0]
        text = choice["message"].get("content") or ""
        usage = doc.get("usage") or {}
    except (
        UnicodeDecodeError,
        json.JSONDecodeError,
        KeyError,
        IndexError,
        TypeError,
        AttributeError,
    ) as exc:
        raise _Transient(f"malformed response body ({type(exc).__name__}): {raw[:120]!r}") from None
    if not isinstance(text, str):
        raise _Transient(f"response content is {type(text).__name__}, expected str")
    return {
        "text": text,
        "finish_reason": choice.get("finish_reason"),
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
    }
