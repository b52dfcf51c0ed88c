"""What the fine-tuned transformer verifiers share (``bert-pair``, ``siamese-pair``): a local
Hugging Face checkpoint loaded offline, seeded deterministic CPU torch with ``n_jobs`` threads,
token chunking, and the fine-tuning loop.

A text is tokenised once (no special tokens) and cut into chunks of at most ``max_tokens``
token ids (:func:`token_id_chunks`); a text with more than ``max_chunks`` chunks keeps a seeded
choice of them, drawn from the seed and the text itself, so a text has the same chunks in
every call whatever it is scored with. Training draws one random chunk per text per epoch
(as Brad et al. 2022 do); what a model does with chunks is the subclass's: two kernels,
``_new_model`` and ``_loss``. torch is imported inside functions only, so that importing the
registry, or this module, loads no torch.
"""

from __future__ import annotations

import os
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from numbers import Integral, Real

import numpy as np
from tqdm.auto import tqdm

from baselines.embedding import default_embedding_model_path
from stylo.progress import advance
from stylo.verifier import Verifier, training_pairs

__all__ = [
    "SpecialTokens",
    "TransformerVerifier",
    "chunk_choice",
    "padded",
    "quiet_load",
    "token_id_chunks",
    "token_id_chunks_reference",
]


def token_id_chunks(ids: list[int], max_tokens: int) -> list[list[int]]:
    """``ids`` cut into consecutive chunks of ``max_tokens`` (the last one shorter); an empty
    list gives no chunk."""
    return [ids[i : i + max_tokens] for i in range(0, len(ids), max_tokens)]


def token_id_chunks_reference(ids: list[int], max_tokens: int) -> list[list[int]]:
    """:func:`token_id_chunks` one id at a time (the reference its tests compare with)."""
    chunks: list[list[int]] = []
    for token in ids:
        if not chunks or len(chunks[-1]) == max_tokens:
            chunks.append([])
        chunks[-1].append(token)
    return chunks


def chunk_choice(n_chunks: int, max_chunks: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of the chunks kept, in text order: all of them up to ``max_chunks``, else a
    random ``max_chunks`` of them."""
    if n_chunks <= max_chunks:
        return np.arange(n_chunks)
    return np.sort(rng.choice(n_chunks, size=max_chunks, replace=False))


@dataclass(frozen=True)
class SpecialTokens:
    """The special tokens a tokenizer puts around one sequence and around a pair (BERT: [CLS]
    a [SEP] and [CLS] a [SEP] b [SEP]), read off by encoding probes, since a transformers 5
    tokenizer builds them only from text, and chunks are token ids."""

    single: tuple[tuple[int, ...], tuple[int, ...]]
    pair: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    #: token type of each part of a pair: before b (prefix, a, middle) and from b on
    pair_types: tuple[int, int]
    pad_id: int

    @classmethod
    def of(cls, tokenizer) -> SpecialTokens:
        a = tokenizer("alpha", add_special_tokens=False)["input_ids"]
        b = tokenizer("omega", add_special_tokens=False)["input_ids"]
        one = tokenizer("alpha")["input_ids"]
        two = tokenizer("alpha", "omega", return_token_type_ids=True)
        ids, types = two["input_ids"], two["token_type_ids"]
        i = _find(one, a)
        j = _find(ids, a)
        k = _find(ids[j + len(a) :], b) + j + len(a)
        return cls(
            single=(tuple(one[:i]), tuple(one[i + len(a) :])),
            pair=(tuple(ids[:j]), tuple(ids[j + len(a) : k]), tuple(ids[k + len(b) :])),
            pair_types=(types[0], types[k]),
            pad_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0,
        )

    def one(self, ids: list[int]) -> list[int]:
        head, tail = self.single
        return [*head, *ids, *tail]

    def two(self, a: list[int], b: list[int]) -> tuple[list[int], list[int]]:
        """The pair's input ids and token types."""
        head, mid, tail = self.pair
        first = len(head) + len(a) + len(mid)
        t0, t1 = self.pair_types
        return [*head, *a, *mid, *b, *tail], [t0] * first + [t1] * (len(b) + len(tail))


def _find(seq: list[int], sub: list[int]) -> int:
    for i in range(len(seq) - len(sub) + 1):
        if seq[i : i + len(sub)] == sub:
            return i
    raise ValueError(f"tokenizer probe: {sub} not found in {seq}")


def padded(seqs: list[list[int]], pad_id: int, types: list[list[int]] | None = None) -> dict:
    """A batch of id lists right-padded to the longest: ``input_ids``, ``attention_mask``
    (and ``token_type_ids`` when ``types`` are given) as torch tensors."""
    import torch

    width = max(map(len, seqs))
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[i, : len(s)] = 1
    batch = {"input_ids": ids, "attention_mask": mask}
    if types is not None:
        tt = torch.zeros((len(seqs), width), dtype=torch.long)
        for i, t in enumerate(types):
            tt[i, : len(t)] = torch.tensor(t, dtype=torch.long)
        batch["token_type_ids"] = tt
    return batch


def _offline() -> None:
    # the checkpoint is local, and a hub lookup would stall without network; torch's OpenMP
    # threads spin while idle (see baselines.embedding), read when torch loads
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@lru_cache(maxsize=4)
def _tokenizer(path: str):
    _offline()
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:
        raise ImportError(
            "the transformer verifiers need torch and transformers (pip install 'stylo[neural]')"
        ) from exc
    return AutoTokenizer.from_pretrained(path)


@contextmanager
def _torch_run(n_jobs: int, seed: int | None = None):
    """torch on ``n_jobs`` threads with deterministic algorithms (and seeded, given a seed)
    while the block runs; the process's own settings come back afterwards."""
    _offline()
    import torch

    threads, strict = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(n_jobs)
    torch.use_deterministic_algorithms(True)
    if seed is not None:
        torch.manual_seed(seed)
    try:
        yield torch
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(strict)


class TransformerVerifier(Verifier):
    """Base of the fine-tuned transformer verifiers; the parameters are documented on each
    subclass (scikit-learn's contract: stored here, validated in ``fit``)."""

    #: special tokens a model input adds to one chunk (siamese: 2) or to a chunk pair (BERT: 3)
    _specials_per_input = 2
    _chunks_per_input = 1
    #: the function of :mod:`stylo.explain` that explains this kind of model
    _explainer = "explain_siamese"

    def __init__(
        self,
        model_path: str | None = None,
        max_tokens: int = 128,
        max_chunks: int = 4,
        epochs: int = 1,
        n_train_pairs: int = 400,
        batch_size: int = 16,
        learning_rate: float = 5e-5,
        warmup: float = 0.1,
        random_state: int = 0,
        n_jobs: int = 1,
        progress: bool = False,
    ):
        self.model_path = model_path
        self.max_tokens = max_tokens
        self.max_chunks = max_chunks
        self.epochs = epochs
        self.n_train_pairs = n_train_pairs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.warmup = warmup
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress

    # -- parameters and data ---------------------------------------------------------------
    def _validate(self) -> None:
        for name in ("max_tokens", "max_chunks", "epochs", "n_train_pairs", "batch_size", "n_jobs"):
            value = getattr(self, name)
            if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not isinstance(self.learning_rate, Real) or not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}")
        if not isinstance(self.warmup, Real) or not 0 <= self.warmup < 1:
            raise ValueError(f"warmup must be in [0, 1), got {self.warmup!r}")
        if not isinstance(self.random_state, Integral):
            raise ValueError(f"random_state must be an integer, got {self.random_state!r}")

    def _path(self) -> str:
        return str(
            self.model_path if self.model_path is not None else default_embedding_model_path()
        )

    def _training_set(self, X) -> tuple[list[str], list[str], np.ndarray]:
        """At most ``n_train_pairs`` labelled pairs (a seeded subset of a larger PairSet)."""
        pairs = training_pairs(X, self.n_train_pairs, self.random_state)
        if len(pairs) > self.n_train_pairs:
            rng = np.random.default_rng(self.random_state)
            pairs = pairs.subset(np.sort(rng.choice(len(pairs), self.n_train_pairs, replace=False)))
        return pairs.texts_a(), pairs.texts_b(), pairs.labels.astype(np.float32)

    def _chunks(self, texts: list[str]) -> list[list[list[int]]]:
        """Every chunk of each text (memoised per text; a text of no token is one [UNK])."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._chunk_memo]
        if todo:
            enc = self.tokenizer_(todo, add_special_tokens=False, verbose=False)["input_ids"]
            unk = self.tokenizer_.unk_token_id
            for text, ids in zip(todo, enc, strict=True):
                self._chunk_memo[text] = token_id_chunks(ids or [unk], self.max_tokens)
        return [self._chunk_memo[t] for t in texts]

    def _kept_chunks(self, text: str) -> list[list[int]]:
        """The chunks prediction uses: at most ``max_chunks``, a choice seeded by the text."""
        chunks = self._chunks([text])[0]
        rng = np.random.default_rng([self.random_state, zlib.crc32(text.encode("utf-8"))])
        return [chunks[i] for i in chunk_choice(len(chunks), self.max_chunks, rng)]

    # -- fitting ---------------------------------------------------------------------------
    def _fit_impl(self, X, y) -> None:
        self._validate()
        path = self._path()
        self.tokenizer_ = _tokenizer(path)
        self.special_ = SpecialTokens.of(self.tokenizer_)
        self._chunk_memo: dict[str, list[list[int]]] = {}
        a, b, labels = self._training_set(X)
        with _torch_run(self.n_jobs, self.random_state) as torch:
            model = self._new_model(path)
            longest = model.config.max_position_embeddings
            need = self._chunks_per_input * self.max_tokens + self._specials_per_input
            if need > longest:
                raise ValueError(
                    f"max_tokens={self.max_tokens} gives inputs of {need} tokens; the model "
                    f"takes at most {longest}"
                )
            self._train(torch, model, self._chunks(a), self._chunks(b), labels)
            model.eval()
        self.model_ = model

    def _train(self, torch, model, chunks_a, chunks_b, labels) -> None:
        from transformers.optimization import get_linear_schedule_with_warmup

        n, size = len(labels), self.batch_size
        steps = self.epochs * -(-n // size)
        opt = torch.optim.AdamW(model.parameters(), lr=self.learning_rate, weight_decay=0.01)
        schedule = get_linear_schedule_with_warmup(opt, int(self.warmup * steps), steps)
        rng = np.random.default_rng(self.random_state)
        model.train()
        for epoch in range(self.epochs):
            order = rng.permutation(n)
            # a random chunk of each text of each pair, drawn anew every epoch
            pick_a = [chunks_a[i][rng.integers(len(chunks_a[i]))] for i in order]
            pick_b = [chunks_b[i][rng.integers(len(chunks_b[i]))] for i in order]
            y = torch.tensor(labels[order])
            starts = range(0, n, size)
            bar = tqdm(
                starts,
                desc=f"{type(self).__name__} epoch {epoch + 1}/{self.epochs}",
                unit="batch",
                disable=not self.progress,
                leave=False,
            )
            for done, s in enumerate(bar, 1):
                loss = self._loss(
                    model, pick_a[s : s + size], pick_b[s : s + size], y[s : s + size]
                )
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                schedule.step()
                opt.zero_grad()
                advance(f"epoch {epoch + 1}/{self.epochs} batches", done, len(starts))

    def _new_model(self, path: str):
        """The model to fine-tune, loaded from ``path`` (a head, if any, freshly seeded)."""
        raise NotImplementedError

    def _loss(self, model, chunks_a, chunks_b, labels):
        """The training loss of a batch: one chunk of each text of each pair, 0/1 labels."""
        raise NotImplementedError

    # -- explanation -----------------------------------------------------------------------
    def explain(self, text_a: str, text_b: str, n_steps: int = 50):
        """Per-token Integrated Gradients of this pair's score (:mod:`stylo.explain`).

        Returns a tidy DataFrame, one row per token of the two texts' first chunks (the first
        ``max_tokens`` tokens of each: to explain another chunk, pass its text): ``side``
        (``"a"``/``"b"``), ``position``, ``token``, ``start``/``end`` (character offsets
        into the text) and ``attribution`` (in score units; with the convergence delta,
        ``truncated`` and the score in ``.attrs``). Needs the ``neural`` extra (captum).
        """
        import stylo.explain

        self._check_fitted()
        explainer = getattr(stylo.explain, self._explainer)
        with _torch_run(self.n_jobs):
            return explainer(
                self.model_,
                self.tokenizer_,
                text_a,
                text_b,
                max_tokens=self.max_tokens,
                n_steps=int(n_steps),
            )

    # -- prediction ------------------------------------------------------------------------
    def _batched(self, n: int, length, run) -> np.ndarray:
        """``run(indices)`` (an array of results, one per index) over ``range(n)`` in batches
        of similar input length (``length(i)``), so little of a batch is padding; the results
        in index order. Runs without gradients, on ``n_jobs`` threads."""
        order = sorted(range(n), key=length)
        out: list[np.ndarray | None] = [None] * n
        size = self.batch_size
        with _torch_run(self.n_jobs) as torch, torch.no_grad():
            for s in range(0, n, size):
                idx = order[s : s + size]
                for i, r in zip(idx, run(idx), strict=True):
                    out[i] = r
                advance("batches", s // size + 1, -(-n // size))
        return np.stack(out) if n else np.empty(0)


def quiet_load(load, path: str):
    """``load(path)`` without transformers' loading bar and its report of the head it
    initialised (every fit makes a fresh head, so the report says nothing)."""
    from transformers.utils import logging as hf_logging

    level, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        return load(path)
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()
