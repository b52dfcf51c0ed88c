"""What every chat backend shares: the request, the cache lookup and the per-call record.

A backend turns a list of chat messages into one :class:`Completion`. The public
:meth:`ChatBackend.chat` looks the request up in the response cache, checks the prompt fits
the model's context window, calls the model (``_call``, the one method a backend implements)
and records every call (tokens, wall time, whether it came from the cache) in ``calls`` and in
the process-wide :func:`model_clock`. Failures end in a Completion with ``status="error"`` and
the reason, never an exception, so a method can record an abstention and go on.
"""

from __future__ import annotations

import json
import re
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from stylo.llm.cache import ResponseCache, request_key
from stylo.progress import advance

__all__ = ["BackendError", "ChatBackend", "Completion", "ModelClock", "OverWindow", "model_clock"]

#: placed between the two texts of a likelihood sequence (not scored)
SEPARATOR = "\n\n"

#: statuses of a Completion
OK, TRUNCATED, ERROR, OVER_WINDOW = "ok", "truncated", "error", "over_window"


@dataclass(frozen=True)
class ModelClock:
    """What the model calls of this process have cost so far, every backend together.

    ``calls``: answers recorded (from the model, from the cache, or refused as too long);
    ``cached``: those served from the response cache; ``seconds``: the model's time for all of
    them, a cached answer counted at what it took when it was first computed, so a run replayed
    from the cache still says what its answers cost (a hosted model's seconds are its latency).
    """

    calls: int = 0
    cached: int = 0
    seconds: float = 0.0

    def __sub__(self, before: ModelClock) -> ModelClock:
        return ModelClock(
            self.calls - before.calls, self.cached - before.cached, self.seconds - before.seconds
        )


_clock = [ModelClock()]
_clock_lock = threading.Lock()


def model_clock() -> ModelClock:
    """The process's :class:`ModelClock` now; the difference of two readings is what the calls
    between them cost."""
    return _clock[0]


class BackendError(RuntimeError):
    """A call that failed for good (after any retries); the message says why."""


class OverWindow(BackendError):
    """The prompt does not fit the model's context window."""


@dataclass(frozen=True)
class Completion:
    """One answer. ``status`` is ``ok``, ``truncated`` (stopped at ``max_tokens``),
    ``over_window`` (prompt too long, no call made) or ``error`` (see ``error``)."""

    text: str
    status: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    finish_reason: str | None = None
    error: str = ""

    @property
    def answered(self) -> bool:
        return self.status in (OK, TRUNCATED)


def _cached(hit: dict) -> Completion:
    """The record of a likelihood result read from the cache."""
    return Completion(
        text=hit["text"],
        status=OK,
        prompt_tokens=hit["prompt_tokens"],
        seconds=hit["seconds"],
        cached=True,
        finish_reason="stop",
    )


class ChatBackend:
    """Base class of chat-completion backends.

    Parameters
    ----------
    model : str
        The model name as the backend knows it (part of the cache key).
    cache : ResponseCache, str, Path or None
        Where responses are kept; a path opens (or creates) an sqlite file; None keeps no cache.
    context_window : int or None
        The model's context size in tokens; prompts that cannot fit with ``max_tokens`` are
        refused as ``over_window``. None means unknown (the server decides).
    """

    #: the kind of backend, part of the cache key
    kind: str = "base"

    def __init__(self, model: str, cache=None, context_window: int | None = None):
        self.model = model
        self.cache = (
            cache if cache is None or isinstance(cache, ResponseCache) else ResponseCache(cache)
        )
        self.context_window = context_window
        self.calls: list[dict] = []
        self._calls_lock = threading.Lock()
        self._warned: set[str] = set()

    # -- what a backend implements -----------------------------------------------------------
    def _call(self, request: dict) -> dict:
        """Run ``request`` on the model; return text, finish_reason, prompt_tokens,
        completion_tokens. Raise BackendError (or OverWindow) on failure."""
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text``; backends without a tokenizer estimate 1 token per 4 characters."""
        return max(1, (len(text) + 3) // 4)

    @property
    def model_id(self) -> str:
        """The model identity used in cache keys."""
        return self.model

    # -- public --------------------------------------------------------------------------------
    def prompt_tokens(self, messages: list[dict]) -> int:
        """Tokens the messages take, with a small allowance per message for the chat template."""
        return sum(self.count_tokens(m["content"]) + 8 for m in messages)

    def chat(
        self,
        messages: list[dict],
        max_tokens: int = 256,
        temperature: float = 0.0,
        json_schema: dict | None = None,
        seed: int = 0,
    ) -> Completion:
        """One chat completion, from the cache when the identical request was answered before.

        ``json_schema`` asks for structured output where the backend supports it; the answer
        text is returned as is either way (parsing is the caller's job).
        """
        request = {
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "seed": int(seed),
            "json_schema": json_schema,
        }
        key = request_key(self.kind, self.model_id, request)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            out = Completion(
                text=hit["text"],
                status=_status(hit["finish_reason"]),
                prompt_tokens=hit["prompt_tokens"],
                completion_tokens=hit["completion_tokens"],
                seconds=hit["seconds"],
                cached=True,
                finish_reason=hit["finish_reason"],
            )
            return self._record(key, out)
        if self.context_window is not None:
            need = self.prompt_tokens(request["messages"]) + request["max_tokens"]
            if need > self.context_window:
                return self._record(
                    key,
                    Completion(
                        text="",
                        status=OVER_WINDOW,
                        prompt_tokens=need - request["max_tokens"],
                        error=f"prompt needs ~{need} tokens with the answer; the context window "
                        f"is {self.context_window}",
                    ),
                )
        start = time.perf_counter()
        try:
            got = self._call(request)
        except OverWindow as exc:
            return self._record(
                key,
                Completion(
                    text="", status=OVER_WINDOW, error=str(exc), seconds=time.perf_counter() - start
                ),
            )
        except BackendError as exc:
            self._warn_once(str(exc))
            return self._record(
                key,
                Completion(
                    text="", status=ERROR, error=str(exc), seconds=time.perf_counter() - start
                ),
            )
        seconds = time.perf_counter() - start
        out = Completion(
            text=got["text"],
            status=_status(got["finish_reason"]),
            prompt_tokens=int(got["prompt_tokens"]),
            completion_tokens=int(got["completion_tokens"]),
            seconds=seconds,
            cached=False,
            finish_reason=got["finish_reason"],
        )
        if self.cache is not None:
            self.cache.put(
                key,
                self.kind,
                self.model_id,
                request,
                out.text,
                out.finish_reason,
                out.prompt_tokens,
                out.completion_tokens,
                out.seconds,
            )
        return self._record(key, out)

    def chat_many(self, requests: list[dict], max_concurrency: int = 1) -> list[Completion]:
        """``chat(**r)`` for each request dict, ``max_concurrency`` at a time, in order."""

        def answers():
            if max_concurrency <= 1 or len(requests) <= 1:
                yield from (self.chat(**r) for r in requests)
                return
            with ThreadPoolExecutor(max_workers=max_concurrency) as pool:
                yield from pool.map(lambda r: self.chat(**r), requests)

        out: list[Completion] = []
        for answer in answers():
            out.append(answer)
            advance("model calls", len(out), len(requests))
        return out

    @property
    def n_backend_calls(self) -> int:
        """Calls that reached the model (not served from the cache, not refused as too long)."""
        return sum(1 for c in self.calls if not c["cached"] and c["status"] != OVER_WINDOW)

    def calls_frame(self) -> pd.DataFrame:
        """One row per call: key, status, cached, prompt/completion tokens, seconds, error."""
        cols = [
            "key",
            "status",
            "cached",
            "prompt_tokens",
            "completion_tokens",
            "seconds",
            "finish_reason",
            "error",
        ]
        return pd.DataFrame(self.calls, columns=cols)

    # -- likelihood ----------------------------------------------------------------------------
    #: whether the backend can score token likelihoods (:meth:`nll_after`)
    scores_likelihoods: bool = False

    def _nll_after_impl(
        self, first: str, seconds: list[str], max_text_tokens: int, score_first: bool = True
    ) -> tuple[float, list[float], list[int]]:
        """H(first), H(second | first) for each second, and the tokens the model read for
        each second (the shared prefix counted with the first); see :meth:`nll_after`. With no
        seconds, H(first) alone and one count, the tokens read for it. With ``score_first``
        False the backend may skip scoring ``first`` and return NaN for it. Backends that
        score likelihoods implement this."""
        raise NotImplementedError(f"{type(self).__name__} cannot score token likelihoods")

    def nll(self, text: str, max_text_tokens: int = 256) -> float:
        """Mean per-token negative log-likelihood (nats) of ``text`` alone, cut to its first
        ``max_text_tokens`` tokens, as :meth:`nll_after` scores a first text; cached."""
        m = int(max_text_tokens)
        request = {"task": "nll", "text": text, "max_text_tokens": m}
        key = request_key(self.kind, self.model_id, request)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            self._record(key, _cached(hit))
            return float(json.loads(hit["text"]))
        start = time.perf_counter()
        h, _, (read,) = self._nll_after_impl(text, [], m)
        self._store(key, request, json.dumps(float(h)), read, time.perf_counter() - start)
        return float(h)

    def nll_after(
        self, first: str, seconds: list[str], max_text_tokens: int = 256, score_first: bool = True
    ) -> tuple[float, np.ndarray]:
        """Mean per-token negative log-likelihood (nats) of ``first`` on its own, and of each
        text of ``seconds`` read after ``first`` and a blank line, every text cut to its first
        ``max_text_tokens`` tokens: ``(h_first, h_seconds)``, ``h_seconds`` of shape
        (len(seconds),).

        One call shares the work on ``first`` among all ``seconds`` (a ranking's query, a
        candidate's texts). Each (first, second) result is cached on its own, so a pair is
        never computed twice, whichever call asked for it first. ``score_first=False`` says
        ``h_first`` is not needed (it may come back NaN): a local model then reads ``first``
        without the vocabulary-wide logits of its every position, which cost more than the
        rest of the model (Gemma 3 270M: 7.9 ms a token with them, 2.8 ms without)."""
        if not seconds:
            raise ValueError("nll_after needs at least one text to read after the first")
        m = int(max_text_tokens)
        requests = [
            {"task": "nll_after", "first": first, "second": s, "max_text_tokens": m}
            for s in seconds
        ]
        keys = [request_key(self.kind, self.model_id, r) for r in requests]
        hits = [self.cache.get(k) if self.cache is not None else None for k in keys]
        if score_first:  # an entry stored without H(first) cannot answer this call
            hits = [h if h is None or json.loads(h["text"])[0] is not None else None for h in hits]
        h_first, h_seconds = None, np.empty(len(seconds))
        for i, hit in enumerate(hits):
            if hit is not None:
                h_first, h_seconds[i] = json.loads(hit["text"])
                self._record(keys[i], _cached(hit))
        missing = [i for i, hit in enumerate(hits) if hit is None]
        if missing:
            start = time.perf_counter()
            h_first, got, read = self._nll_after_impl(
                first, [seconds[i] for i in missing], m, score_first
            )
            seconds_each = (time.perf_counter() - start) / len(missing)
            stored_first = None if np.isnan(h_first) else float(h_first)
            for i, h, n_tokens in zip(missing, got, read, strict=True):
                h_seconds[i] = h
                text = json.dumps([stored_first, float(h)])
                self._store(keys[i], requests[i], text, n_tokens, seconds_each)
        return (np.nan if h_first is None else float(h_first)), h_seconds

    def _store(self, key: str, request: dict, text: str, n_tokens: int, seconds: float) -> None:
        """Cache and record one computed likelihood result."""
        if self.cache is not None:
            self.cache.put(
                key, self.kind, self.model_id, request, text, "stop", n_tokens, 0, seconds
            )
        self._record(
            key,
            Completion(
                text=text,
                status=OK,
                prompt_tokens=n_tokens,
                seconds=seconds,
                cached=False,
                finish_reason="stop",
            ),
        )

    def sequence_nll(
        self, first: str, second: str, max_text_tokens: int = 256
    ) -> tuple[float, float]:
        """``(H(first), H(second | first))``: :meth:`nll_after` for one pair."""
        h_first, (h_second,) = self.nll_after(first, [second], max_text_tokens)
        return h_first, float(h_second)

    def _warn_once(self, error: str) -> None:
        # one warning per cause, not per call: numbers (ports, counts, seconds) vary
        cause = re.sub(r"\d+(\.\d+)?", "N", error)
        with self._calls_lock:
            if cause in self._warned:
                return
            self._warned.add(cause)
        warnings.warn(
            f"{self!r}: a model call failed and is recorded as an abstention: {error}",
            RuntimeWarning,
            stacklevel=3,
        )

    def _record(self, key: str, out: Completion) -> Completion:
        row = asdict(out)
        row.pop("text")
        row["key"] = key
        with self._calls_lock:
            self.calls.append(row)
        with _clock_lock:
            was = _clock[0]
            _clock[0] = ModelClock(
                was.calls + 1, was.cached + int(out.cached), was.seconds + float(out.seconds)
            )
        return out

    # a backend holds a model or a connection pool: estimator cloning shares it, never copies
    def __deepcopy__(self, memo):
        return self


def _status(finish_reason: str | None) -> str:
    return TRUNCATED if finish_reason == "length" else OK
