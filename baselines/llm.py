"""Language models as authorship methods: AIDBench's prompted judge and a likelihood verifier.

:class:`PromptedLLM` asks a chat model AIDBench's questions (Wen et al., "AIDBench: A benchmark
for evaluating the authorship identification capability of large language models", arXiv
2411.13226): one-to-one (same author? -> score 1 or 0), one-to-two (which of two candidates?)
and one-to-many (rank the candidates), with any of its prompt families
(:data:`stylo.llm.prompts.FAMILIES`). Every answer is kept in ``answers_`` with its raw text; an
answer that cannot be parsed, names an unknown or repeated candidate, failed, or whose prompt
exceeds the context window is an abstention: score 0.5, candidates unranked.

:class:`LikelihoodVerifier` needs no instruction following, so it suits small base models: it
measures how much reading one text first lowers a language model's per-token cross-entropy on
the other, in both directions, and maps [mean drop, |difference|] to P(same author) with a
logistic regression fitted on training pairs (the PAN compressor baseline's scoring).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from baselines._blas import fit_one_thread
from stylo.llm import BackendError, default_backend
from stylo.llm.backend import ERROR
from stylo.llm.parse import Parsed, parse_choice, parse_ranking, parse_verdict
from stylo.llm.prompts import FAMILIES, choose_prompt, rank_prompt, verify_prompt
from stylo.progress import advance
from stylo.verifier import NO_ANSWER, Verifier, rank_each_query, training_pairs

__all__ = ["PromptedLLM", "LikelihoodVerifier", "ranking_scores"]

#: tokens to allow for the answer, by task, when ``max_tokens`` is None
_ANSWER_TOKENS = {"verify": 16, "choose": 16, "rank": 8}
_EXPLAIN_TOKENS = 384


def ranking_scores(order: list[int] | None, n: int) -> np.ndarray:
    """Scores for ``n`` candidates from a (possibly partial) ranking, most likely first.

    Ranked candidates get scores in (0.5, 1], decreasing along the ranking; candidates left
    out, or all of them when ``order`` is None (an abstention), get exactly 0.5.
    """
    scores = np.full(n, NO_ANSWER)
    if order:
        m = len(order)
        scores[np.asarray(order)] = 0.5 + 0.5 * (m - np.arange(m)) / m
    return scores


class PromptedLLM(Verifier):
    """AIDBench's prompted verifier, chooser and ranker on any chat backend.

    Parameters
    ----------
    backend : stylo.llm.ChatBackend or None
        The model to ask; None uses :func:`stylo.llm.default_backend` (Gemma 3 270M in-process,
        responses cached). Shared, never copied, by ``sklearn.clone``.
    prompt : str
        Prompt family: ``general``, ``topic_ignored``, ``no_linguistic``, ``no_style``,
        ``no_topic``.
    explain : bool
        Ask for an ``analysis`` before the answer, as AIDBench does (many more tokens).
    structured : bool
        Send the answer's JSON schema for the server to enforce (where supported).
    max_tokens : int or None
        Answer budget in tokens; None picks a small budget per task (larger with ``explain``).
    both_orders : bool
        Position-debiased answers: ask every question twice, with the texts in the given and
        in the reverse order, and average the two scores. Small models often answer by
        position (e.g. always "candidate 1"); such answers then cancel out: two orders that
        disagree on a one-to-two choice give both candidates the same score, an abstention.
        Twice the model calls.
    max_text_chars : int or None
        Cut each text to at most this many characters (at its last whitespace before the
        limit, where there is one) before it goes into a prompt; bounds a prompt's tokens, and
        a hosted model's cost. None (default): whole texts, and a prompt over the model's
        context window is an abstention.
    temperature, seed
        Decoding parameters (part of the cache key).

    Fitted attributes: ``backend_`` (the backend in use) and ``answers_`` (one dict per model
    call: task, prompt, status, parsed answer, raw text, tokens, seconds, cached, reason).
    """

    requires_fit = False

    def __init__(
        self,
        backend=None,
        prompt: str = "general",
        explain: bool = False,
        structured: bool = True,
        max_tokens: int | None = None,
        both_orders: bool = False,
        max_text_chars: int | None = None,
        temperature: float = 0.0,
        seed: int = 0,
    ):
        self.backend = backend
        self.prompt = prompt
        self.explain = explain
        self.structured = structured
        self.max_tokens = max_tokens
        self.both_orders = both_orders
        self.max_text_chars = max_text_chars
        self.temperature = temperature
        self.seed = seed

    def _fit_impl(self, X, y) -> None:
        if self.prompt not in FAMILIES:
            raise ValueError(
                f"unknown prompt family {self.prompt!r}; choose from {sorted(FAMILIES)}"
            )
        if self.max_text_chars is not None and (
            isinstance(self.max_text_chars, bool)
            or not isinstance(self.max_text_chars, int | np.integer)
            or self.max_text_chars < 1
        ):
            raise ValueError(
                f"max_text_chars must be None or a positive integer, got {self.max_text_chars!r}"
            )
        self.backend_ = self.backend if self.backend is not None else default_backend()
        self.answers_ = []
        self._answered_any = False

    # -- asking ----------------------------------------------------------------------------------
    def _cut(self, text: str) -> str:
        limit = self.max_text_chars
        if limit is None or len(text) <= limit:
            return text
        head = text[:limit]
        # a word cut in half would read as a misspelling, a stylistic cue of its own
        space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
        return head[:space].rstrip() if space > 0 else head

    def _budget(self, task: str, n: int) -> int:
        if self.max_tokens is not None:
            return int(self.max_tokens)
        base = _ANSWER_TOKENS[task] + (4 * n if task == "rank" else 0)
        return base + (_EXPLAIN_TOKENS if self.explain else 0)

    def _ask(self, task: str, prompts: list, n_candidates: list[int], parse) -> list[Parsed]:
        requests = [
            {
                "messages": p.messages,
                "json_schema": p.schema if self.structured else None,
                "max_tokens": self._budget(task, n),
                "temperature": self.temperature,
                "seed": self.seed,
            }
            for p, n in zip(prompts, n_candidates, strict=True)
        ]
        done = self.backend_.chat_many(requests)
        if done and not self._answered_any and all(c.status == ERROR for c in done):
            # a dead or refusing server: fail the cell instead of recording every one of its
            # questions as an abstention (each after its retries)
            raise BackendError(
                f"every model call failed ({len(done)} of {len(done)}, none "
                f"answered before): {done[0].error}"
            )
        self._answered_any = self._answered_any or any(c.answered for c in done)
        out = []
        for comp, n in zip(done, n_candidates, strict=True):
            if comp.answered:
                parsed = parse(comp.text, n)
            else:
                parsed = Parsed(None, comp.status, comp.error)
            self.answers_.append(
                {
                    "task": task,
                    "prompt": self.prompt,
                    "n_candidates": n,
                    "status": parsed.status,
                    "answer": parsed.value,
                    "raw": comp.text,
                    "finish_reason": comp.finish_reason,
                    "prompt_tokens": comp.prompt_tokens,
                    "completion_tokens": comp.completion_tokens,
                    "seconds": comp.seconds,
                    "cached": comp.cached,
                    "reason": parsed.reason,
                }
            )
            out.append(parsed)
        return out

    def answers_frame(self) -> pd.DataFrame:
        """Every answer so far as a tidy table (one row per model call)."""
        self._check_fitted()
        return pd.DataFrame(self.answers_)

    # -- the three tasks ---------------------------------------------------------------------------
    def _score_impl(self, texts_a, texts_b):
        scores = self._verdicts(texts_a, texts_b)
        if self.both_orders:
            scores = (scores + self._verdicts(texts_b, texts_a)) / 2
        return scores

    def _verdicts(self, texts_a, texts_b) -> np.ndarray:
        prompts = [
            verify_prompt(self._cut(a), self._cut(b), self.prompt, self.explain)
            for a, b in zip(texts_a, texts_b, strict=True)
        ]
        parsed = self._ask(
            "verify", prompts, [2] * len(prompts), lambda text, n: parse_verdict(text)
        )
        return np.array([NO_ANSWER if not p.ok else float(p.value) for p in parsed])

    def _rank_many_impl(self, queries, candidate_lists):
        return rank_each_query(self._rank_query, queries, candidate_lists)

    def _rank_query(self, query, candidates):
        if len(candidates) == 1:
            return self._score_impl([query], candidates)
        scores = self._ranking(query, candidates)
        if self.both_orders:
            scores = (scores + self._ranking(query, candidates[::-1])[::-1]) / 2
        return scores

    def _ranking(self, query, candidates) -> np.ndarray:
        n = len(candidates)
        if n == 2:
            (p,) = self._ask(
                "choose",
                [choose_prompt(*map(self._cut, [query, *candidates]), self.prompt, self.explain)],
                [2],
                parse_choice,
            )
            return ranking_scores([p.value, 1 - p.value] if p.ok else None, 2)
        prompt = rank_prompt(
            self._cut(query), [self._cut(c) for c in candidates], self.prompt, self.explain
        )
        (p,) = self._ask("rank", [prompt], [n], parse_ranking)
        return ranking_scores(p.value if p.ok else None, n)


class LikelihoodVerifier(Verifier):
    """Same author if reading one text makes the other more predictable to a language model.

    For a pair (known a, unknown b) the backend evaluates the token sequence [a, b] (each text
    cut to ``max_text_tokens``): the drop H(b) - H(b | a), with H the mean per-token
    cross-entropy in nats, is how much the known text teaches the model about the unknown one.
    ``symmetric`` adds the other direction, H(a) - H(a | b), and the features become [mean
    drop, |difference|]. A logistic regression fitted on training pairs (a PairSet, or pairs
    drawn from a Corpus) maps the features to P(same author).

    Ranking reads the query as the unknown text and each candidate as a known one, so one
    direction costs one pass over the query alone and, per candidate, the candidate (as a
    prefix, without the logits of its every position) followed by the query: about half the
    work of both directions (see :meth:`drops`).

    Parameters
    ----------
    backend : stylo.llm.LlamaCpp, stylo.llm.OpenAICompatible or None
        A backend that scores likelihoods (``nll_after``; a server must return prompt
        log-probabilities, as llama-cpp-python's server and vLLM do; others fail at ``fit``,
        saying so); None uses the default in-process model.
    max_text_tokens : int
        Tokens kept from the start of each text.
    n_train_pairs : int
        Pairs drawn when fitting on a Corpus.
    symmetric : bool
        Both directions (True) or the unknown text given the known one only (False).
    random_state : int
        Seed for drawing training pairs from a Corpus.

    Fitted attributes: ``backend_``, ``model_`` (the logistic regression), ``features_``
    (training features, shape (n_pairs, 2), or (n_pairs, 1) when not ``symmetric``).
    """

    def __init__(
        self,
        backend=None,
        max_text_tokens: int = 256,
        n_train_pairs: int = 200,
        symmetric: bool = True,
        random_state: int = 0,
    ):
        self.backend = backend
        self.max_text_tokens = max_text_tokens
        self.n_train_pairs = n_train_pairs
        self.symmetric = symmetric
        self.random_state = random_state

    def drops(self, texts_a, texts_b) -> np.ndarray:
        """Cross-entropy drops of pairs (known ``texts_a``, unknown ``texts_b``): shape
        (n_pairs, 2), columns H(b)-H(b|a) and H(a)-H(a|b), or (n_pairs, 1), the first
        column alone, when not ``symmetric``.

        Pairs that share a text share the model's work on it: every distinct text is read once
        as the prefix of all the texts paired with it (a ranking's candidate before the
        query; symmetric, also the query before each candidate), see ``nll_after``."""
        backend = getattr(self, "backend_", None) or self._resolve_backend()
        texts_a, texts_b = list(texts_a), list(texts_b)
        directions = ((a, b) for a, b in zip(texts_a, texts_b, strict=True))
        if self.symmetric:
            directions = (d for a, b in zip(texts_a, texts_b) for d in ((a, b), (b, a)))
        alone: dict[str, float] = {}
        after: dict[tuple[str, str], float] = {}  # (first, second) -> H(second | first)
        followers: dict[str, list[str]] = {}
        for first, second in directions:
            if second not in followers.setdefault(first, []):
                followers[first].append(second)
        for done, (first, seconds) in enumerate(followers.items(), start=1):
            alone[first], h = backend.nll_after(
                first, seconds, self.max_text_tokens, score_first=self.symmetric
            )
            after.update({(first, s): float(v) for s, v in zip(seconds, h, strict=True)})
            advance("likelihood prefixes", done, len(followers))
        if not self.symmetric:  # each unknown text read alone once (alone holds NaN here)
            alone = {b: backend.nll(b, self.max_text_tokens) for b in dict.fromkeys(texts_b)}
            return np.array(
                [alone[b] - after[a, b] for a, b in zip(texts_a, texts_b)], dtype=np.float64
            ).reshape(-1, 1)
        return np.array(
            [
                (alone[b] - after[a, b], alone[a] - after[b, a])
                for a, b in zip(texts_a, texts_b, strict=True)
            ]
        ).reshape(-1, 2)

    def _resolve_backend(self):
        backend = self.backend if self.backend is not None else default_backend()
        if not getattr(backend, "scores_likelihoods", False):
            raise TypeError(
                f"{type(backend).__name__} cannot score token likelihoods; "
                f"use stylo.llm.LlamaCpp, or OpenAICompatible on a server that "
                f"returns prompt log-probabilities"
            )
        return backend

    @staticmethod
    def _features(drops: np.ndarray) -> np.ndarray:
        if drops.shape[1] == 1:
            return drops
        return np.column_stack([drops.mean(axis=1), np.abs(drops[:, 0] - drops[:, 1])])

    def _fit_impl(self, X, y) -> None:
        if self.max_text_tokens < 8:
            raise ValueError(f"max_text_tokens must be >= 8, got {self.max_text_tokens}")
        if not isinstance(self.symmetric, bool | np.bool_):
            raise ValueError(f"symmetric must be True or False, got {self.symmetric!r}")
        self.backend_ = self._resolve_backend()
        pairs = training_pairs(X, n_pairs=self.n_train_pairs, seed=self.random_state)
        labels = pairs.labels
        if labels.all() or not labels.any():
            raise ValueError("training pairs must contain both same- and different-author pairs")
        self.features_ = self._features(self.drops(pairs.texts_a(), pairs.texts_b()))
        self.model_ = fit_one_thread(LogisticRegression(), self.features_, labels)

    def _score_impl(self, texts_a, texts_b):
        return self.model_.predict_proba(self._features(self.drops(texts_a, texts_b)))[:, 1]

    def _rank_many_impl(
        self, queries: list[str], candidate_lists: list[list[str]]
    ) -> list[np.ndarray]:
        # the query is the unknown text, each candidate a known one
        return self._score_query_pairs(queries, candidate_lists, query_first=False)
