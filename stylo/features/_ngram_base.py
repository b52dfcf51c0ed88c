"""The shared fit/transform of the n-gram counters: chunks counted in parallel, merged,
pruned and assembled into one CSR matrix (see ``ngrams`` for the whole pipeline).

A subclass says what a chunk of documents becomes and how it is counted, through the hooks
declared on :class:`NgramCounts`: ``_prepare_chunks``, ``_learn_alphabet``, ``_count_context``,
``_counter``, ``_fit_vocabulary``, ``_decode_names`` and ``_reference_ngrams``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from stylo._threads import map_parallel
from stylo.features import shared_counts
from stylo.features._columns import argsort_keys, local_columns, merge_sorted, remap_rows
from stylo.features._entries import EntryStore
from stylo.features._reference import count_ngrams, pack
from stylo.features._validation import EmptyVocabularyError, TextInputMixin, effective_n_jobs
from stylo.features._weighting import term_frequencies, weigh_counts, weigh_reference
from stylo.text_input import check_texts


class ChunkCounter(NamedTuple):
    """What ``_counter`` makes of a chunk: a bound on its entries and the counting call,
    ``count(ids, counts, at_end) -> (row_nnz, nnz, keys)`` (see ``count_segments``)."""

    bound: int
    count: Callable


class ChunkCounts(NamedTuple):
    """A chunk's counted entries: per document its number of distinct n-grams, the entries'
    local ids and counts (views into the ``EntryStore``), the chunk's distinct keys sorted,
    and the local id of each sorted key."""

    row_nnz: np.ndarray
    ids: np.ndarray
    counts: np.ndarray
    keys: np.ndarray
    order: np.ndarray


def _split(docs: list[str], n_chunks: int) -> list[list[str]]:
    """Consecutive slices of about equal character counts."""
    if n_chunks <= 1 or len(docs) < 2:
        return [docs]
    sizes = np.cumsum(np.fromiter(map(len, docs), dtype=np.int64, count=len(docs)) + 1)
    cuts = np.searchsorted(sizes, sizes[-1] * np.arange(1, n_chunks) / n_chunks)
    bounds = [0, *sorted(set(int(c) + 1 for c in cuts if c + 1 < len(docs))), len(docs)]
    return [docs[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


_IDENTITY = np.zeros(0, dtype=np.int32)  # ``local_columns``: positions are the columns


class NgramCounts(TextInputMixin, TransformerMixin, BaseEstimator):
    """Shared fit/transform logic; subclasses turn texts into symbol segments (the hooks
    below)."""

    _analyzers: tuple[str, ...] = ()

    def __init__(
        self,
        *,
        analyzer,
        ngram_range,
        lowercase=True,
        min_df=1,
        max_df=1.0,
        max_features=None,
        vocabulary=None,
        binary=False,
        use_idf=False,
        smooth_idf=True,
        sublinear_tf=False,
        norm=None,
        dtype=None,
        n_jobs=None,
    ):
        self.analyzer = analyzer
        self.ngram_range = ngram_range
        self.lowercase = lowercase
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.vocabulary = vocabulary
        self.binary = binary
        self.use_idf = use_idf
        self.smooth_idf = smooth_idf
        self.sublinear_tf = sublinear_tf
        self.norm = norm
        self.dtype = dtype
        self.n_jobs = n_jobs

    # ---------------------------------------------------------------- validation
    def _validate_params(self):
        if self.analyzer not in self._analyzers:
            raise ValueError(f"analyzer must be one of {self._analyzers}, got {self.analyzer!r}")
        rng = self.ngram_range
        if (
            not isinstance(rng, (tuple, list))
            or len(rng) != 2
            or not all(isinstance(v, Integral) and not isinstance(v, bool) for v in rng)
            or not 1 <= rng[0] <= rng[1]
        ):
            raise ValueError(
                f"ngram_range must be (min_n, max_n) with 1 <= min_n <= max_n, got {rng!r}"
            )
        for name in ("min_df", "max_df"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, Real):
                raise ValueError(f"{name} must be an int (documents) or a float in [0, 1]")
            if isinstance(v, Integral) and v < 0 or not isinstance(v, Integral) and not 0 <= v <= 1:
                raise ValueError(f"{name} must be an int >= 0 or a float in [0, 1], got {v!r}")
        mf = self.max_features
        if mf is not None and (isinstance(mf, bool) or not isinstance(mf, Integral) or mf < 1):
            raise ValueError(f"max_features must be a positive int or None, got {mf!r}")
        if self.norm not in (None, "l1", "l2"):
            raise ValueError(f"norm must be None, 'l1' or 'l2', got {self.norm!r}")
        weighted = self.use_idf or self.sublinear_tf or self.norm is not None
        dtype = (
            np.dtype(self.dtype)
            if self.dtype is not None
            else (np.dtype(np.float64) if weighted else np.dtype(np.int64))
        )
        if dtype.kind not in "iuf":
            raise ValueError(f"dtype must be a numeric dtype, got {self.dtype!r}")
        if weighted and dtype.kind != "f":
            raise ValueError(
                "use_idf, sublinear_tf and norm give real values: dtype must be a "
                f"float dtype, got {dtype}"
            )
        n_jobs = effective_n_jobs(self.n_jobs)
        return tuple(int(v) for v in rng), dtype, n_jobs

    def _vocabulary_terms(self) -> list[str] | None:
        voc = self.vocabulary
        if voc is None:
            return None
        if isinstance(voc, dict):
            idx = sorted(voc.values())
            if idx != list(range(len(voc))):
                raise ValueError(
                    "vocabulary indices must be 0 .. len(vocabulary) - 1, each used once"
                )
            terms = [None] * len(voc)
            for term, i in voc.items():
                terms[i] = term
        else:
            terms = list(voc)
            if len(set(terms)) != len(terms):
                raise ValueError("vocabulary contains repeated terms")
        if not terms:
            raise ValueError("empty vocabulary passed to fit")
        if not all(isinstance(t, str) for t in terms):
            raise ValueError("vocabulary terms must be str")
        return terms

    # ---------------------------------------------------------------- fit / transform
    def fit(self, X, y=None):
        """Learn the vocabulary (and idf) from ``X``, a list of n_samples str documents."""
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None):
        """Learn the vocabulary and return the (n_samples, n_features) CSR matrix of ``X``."""
        (min_n, max_n), dtype, n_jobs = self._validate_params()
        docs = check_texts(X)
        terms = self._vocabulary_terms()
        self._shared_token = None
        shared = shared_counts.active()
        if terms is not None:
            self._fit_vocabulary(terms, max_n)
            X_counts = self._count_fixed(docs, min_n, max_n, n_jobs)
        elif shared is None or (X_counts := shared.fit(self, docs)) is None:
            X_counts = self._count_learn(docs, min_n, max_n, n_jobs)
        self._fitted_dtype = dtype
        if self.use_idf:
            df = np.bincount(X_counts.indices, minlength=X_counts.shape[1])
            n = X_counts.shape[0] + int(bool(self.smooth_idf))
            self.idf_ = np.log(n / (df + int(bool(self.smooth_idf)))) + 1.0
        return self._finish(X_counts, dtype)

    def transform(self, X):
        """Count the fitted vocabulary's n-grams in ``X``; unknown n-grams are ignored.

        Returns a CSR matrix of shape (n_samples, n_features_out) of counts (or tf-idf
        weights if configured), with sorted column indices.
        """
        check_is_fitted(self, "n_features_out_")
        (min_n, max_n), dtype, n_jobs = self._validate_params()
        docs = check_texts(X)
        shared = shared_counts.active()
        if shared is None or (X_counts := shared.transform(self, docs)) is None:
            X_counts = self._count_fixed(docs, min_n, max_n, n_jobs)
        return self._finish(X_counts, self._fitted_dtype)

    def _adopt(self, fitted, columns, token):
        """Take the fitted state of ``fitted``, the same counting fitted unpruned on a
        superset of the texts (:mod:`stylo.features.shared_counts`): its symbols, and of its
        columns ``columns`` (ascending)."""
        own = set(self.get_params(deep=False)) | {"analyzer"}
        for name, value in vars(fitted).items():
            if name not in own:
                setattr(self, name, value)
        self.ngram_keys_ = fitted.ngram_keys_[columns]
        self.n_features_out_ = int(columns.shape[0])
        self._names = None
        self._shared_token = token
        self._shared_columns = columns

    def _finish(self, X, dtype):
        """The output of the counts ``X`` (consumed): counts in ``dtype``, or their weights."""
        if self.binary:
            X.data[:] = 1
        if dtype.kind != "f":
            return sp.csr_matrix(
                (X.data.astype(dtype, copy=False), X.indices, X.indptr), shape=X.shape
            )
        idf = self.idf_ if self.use_idf else None
        if dtype == np.float64 and X.data.dtype == np.int64:
            return weigh_counts(X, self.sublinear_tf, idf, self.norm)
        return weigh_reference(X, self.sublinear_tf, idf, self.norm, dtype)

    # ---------------------------------------------------------------- counting
    def _count_learn(self, docs, min_n, max_n, n_jobs):
        items = self._prepare_chunks(_split(docs, n_jobs), n_jobs)
        bits = int(self._learn_alphabet(items, n_jobs)).bit_length()
        if bits * max_n > 63:
            return self._fallback_learn(docs, min_n, max_n, bits)
        self._packed_ = True
        self._bits_ = bits
        results, entries = self._count_chunks(items, min_n, max_n, bits, n_jobs)
        del items
        n_docs = len(docs)
        keys, pos = self._merge_keys(results)
        if keys.shape[0] == 0:
            raise EmptyVocabularyError(
                "empty vocabulary; the documents contain no n-grams of the requested lengths"
            )

        def columns_of(col):
            # per chunk, in its thread: the column of each local id
            return map_parallel(
                lambda k: local_columns(results[k].order, pos[k], col), range(len(results)), n_jobs
            )

        kept = self._prune(
            [(r.ids, r.counts) for r in results],
            lambda: columns_of(_IDENTITY),
            keys.shape[0],
            n_docs,
            n_jobs,
        )
        if kept is None:
            self.ngram_keys_ = keys
            maps = columns_of(_IDENTITY)
        else:
            col = np.full(keys.shape[0], -1, dtype=np.int32)
            col[kept] = np.arange(kept.shape[0])
            self.ngram_keys_ = keys[kept]
            maps = columns_of(col)
        self.n_features_out_ = int(self.ngram_keys_.shape[0])
        self._names = None
        return self._assemble(results, maps, entries, n_docs, n_jobs)

    @staticmethod
    def _merge_keys(results):
        """The sorted distinct keys of all chunks and, per chunk, the position in them of each
        of its keys (chunk results carry their keys sorted)."""
        keys = results[0].keys
        pos = [np.arange(keys.shape[0])]
        for r in results[1:]:
            keys, old, new = merge_sorted(keys, r.keys)
            pos = [old[p] for p in pos] + [new]
        return keys, pos

    def _prune(self, entries, inverse, n_terms, n_docs, n_jobs):
        """Term positions kept by min_df/max_df/max_features (scikit-learn semantics), or None
        if all are. ``entries`` are each chunk's ``(ids, counts)``; ``inverse()`` gives, per
        chunk, the term position of each local id."""
        low, high = self._df_bounds(n_docs)
        if high >= n_docs and low <= 1 and self.max_features is None:
            return None  # every term occurs in 1 .. n_docs documents
        df, tf = term_frequencies(
            entries, inverse(), n_terms, lambda f, xs: map_parallel(f, xs, n_jobs)
        )
        return self._kept(df, tf, low, high)

    def _df_bounds(self, n_docs):
        high = self.max_df if isinstance(self.max_df, Integral) else self.max_df * n_docs
        low = self.min_df if isinstance(self.min_df, Integral) else self.min_df * n_docs
        if high < low:
            raise ValueError("max_df corresponds to < documents than min_df")
        return low, high

    def _kept(self, df, tf, low, high):
        """Positions of the terms (in name order) whose document frequencies ``df`` lie in
        [low, high], the ``max_features`` most frequent of them (total counts ``tf``)."""
        mask = (df <= high) & (df >= low)
        if self.max_features is not None and mask.sum() > self.max_features:
            counts = df if self.binary else tf
            # ties at the cut go to the n-gram first in name order (a stable sort of the
            # name-ordered array). scikit-learn sorts unstably: which of equal counts it keeps
            # depends on the CPU's SIMD sort (AVX-512 and AVX2 machines differ), so its
            # vocabulary, and every score after it, would change from machine to machine
            top = np.argsort(-counts[mask], kind="stable")[: self.max_features]
            new_mask = np.zeros_like(mask)
            new_mask[np.where(mask)[0][top]] = True
            mask = new_mask
        kept = np.flatnonzero(mask)
        if kept.shape[0] == 0:
            raise EmptyVocabularyError(
                "After pruning, no terms remain. Try a lower min_df or a higher max_df."
            )
        return kept

    def _count_fixed(self, docs, min_n, max_n, n_jobs):
        if not self._packed_:
            return self._fallback_count(docs, min_n, max_n)
        items = self._prepare_chunks(_split(docs, n_jobs), n_jobs)
        results, entries = self._count_chunks(items, min_n, max_n, self._bits_, n_jobs)
        del items
        sorted_keys, sorted_cols = self._key_index()

        def columns_of(r):
            pos = np.searchsorted(sorted_keys, r.keys)
            pos[pos == sorted_keys.shape[0]] = 0
            hit = sorted_keys.shape[0] > 0
            found = (sorted_keys[pos] == r.keys) if hit else np.zeros(r.keys.shape[0], bool)
            cols = np.where(found, sorted_cols[pos] if hit else -1, -1)
            return local_columns(r.order, cols, _IDENTITY)

        maps = map_parallel(columns_of, results, n_jobs)
        return self._assemble(results, maps, entries, len(docs), n_jobs)

    def _key_index(self):
        keys = self.ngram_keys_
        order = np.argsort(keys, kind="stable")
        valid = keys[order] >= 0  # -1 marks vocabulary terms that can never occur
        return keys[order][valid], order[valid]

    def _count_chunks(self, items, min_n, max_n, bits, n_jobs):
        """Count every chunk (in parallel) into one ``EntryStore``.

        Returns ``([ChunkCounts, ...], entries)``; each chunk's keys are sorted in its thread
        (numpy sorts without the GIL).
        """
        ctx = self._count_context()
        counters = map_parallel(
            lambda it: self._counter(it, ctx, min_n, max_n, bits), items, n_jobs
        )
        items.clear()  # each counter holds what it needs
        entries = EntryStore([c.bound for c in counters])

        def count(k):
            row_nnz, nnz, keys = counters[k].count(*entries.region(k), entries.at_end(k))
            counters[k] = None
            order = argsort_keys(keys)
            return ChunkCounts(row_nnz, *entries.used(k, nnz), keys[order], order)

        return map_parallel(count, range(len(counters)), n_jobs), entries

    def _assemble(self, results, maps, entries, n_docs, n_jobs):
        def remap(args):
            r, m = args
            return remap_rows(r.row_nnz, r.ids, r.counts, m, self.n_features_out_)

        parts = map_parallel(remap, list(zip(results, maps, strict=True)), n_jobs)
        del results
        indptr = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(np.concatenate([row_nnz for row_nnz, _ in parts]), out=indptr[1:])
        total = entries.pack(
            [int(nnz) for _, nnz in parts], lambda f, xs: map_parallel(f, xs, n_jobs), n_jobs
        )
        idx_dtype = np.int32 if total < 2**31 else np.int64
        ids, counts = entries.packed(total)
        return sp.csr_matrix(
            (counts, ids.astype(idx_dtype, copy=False), indptr.astype(idx_dtype)),
            shape=(n_docs, self.n_features_out_),
        )

    # ---------------------------------------------------------------- plain fallback
    def _fallback_learn(self, docs, min_n, max_n, bits):
        warnings.warn(
            f"{bits} bits per symbol x {max_n} symbols exceed 63 bits: counting "
            "n-grams with the (slow, exact) pure-Python path",
            RuntimeWarning,
            stacklevel=4,
        )
        self._packed_ = False
        counts = [count_ngrams(self._reference_ngrams(d, min_n, max_n)) for d in docs]
        names = sorted(set().union(*counts))
        if not names:
            raise EmptyVocabularyError(
                "empty vocabulary; the documents contain no n-grams of the requested lengths"
            )
        col = {t: i for i, t in enumerate(names)}
        ids = np.array([col[t] for c in counts for t in c], dtype=np.int64)
        vals = np.array([v for c in counts for v in c.values()], dtype=np.int64)
        kept = self._prune([(ids, vals)], lambda: [np.arange(len(names))], len(names), len(docs), 1)
        if kept is None:
            kept = np.arange(len(names))
        self._names = np.array([names[i] for i in kept], dtype=object)
        self.ngram_keys_ = np.full(kept.shape[0], -1, dtype=np.int64)
        self.n_features_out_ = int(kept.shape[0])
        return self._fallback_count(docs, min_n, max_n, counts)

    def _fallback_count(self, docs, min_n, max_n, counts=None):
        if counts is None:
            counts = [count_ngrams(self._reference_ngrams(d, min_n, max_n)) for d in docs]
        col = {t: i for i, t in enumerate(self._names)}
        rows, cols, vals = [], [], []
        for r, c in enumerate(counts):
            for t, v in c.items():
                if t in col:
                    rows.append(r)
                    cols.append(col[t])
                    vals.append(v)
        X = sp.csr_matrix(
            (np.asarray(vals, dtype=np.int32), (rows, cols)),
            shape=(len(docs), self.n_features_out_),
        )
        X.sort_indices()
        return X

    # ---------------------------------------------------------------- subclass hooks
    def _prepare_chunks(self, parts, n_jobs):
        """Each part (a list of consecutive documents) made ready to count, in parallel: a
        list of chunks, in order, that ``_learn_alphabet`` and ``_counter`` understand."""
        raise NotImplementedError

    def _learn_alphabet(self, chunks, n_jobs):
        """Learn the fitted symbols (characters or tokens) from the chunks; return how many
        there are (symbol ids are then 1 .. that number)."""
        raise NotImplementedError

    def _count_context(self):
        """What every chunk's counter needs of the fitted symbols (e.g. code point -> symbol
        id), made once per fit or transform and passed to ``_counter``."""
        raise NotImplementedError

    def _counter(self, chunk, context, min_n, max_n, bits) -> ChunkCounter:
        """A chunk's counter: its bound on entries and the call counting them (one of the
        kernels ``count_text`` / ``count_segments``) with ``bits`` per symbol."""
        raise NotImplementedError

    def _fit_vocabulary(self, terms, max_n):
        """Fix the columns to ``terms`` (a ``vocabulary`` given by the user): record the
        symbols they use and call ``_set_vocabulary``."""
        raise NotImplementedError

    def _decode_names(self):
        """The n-gram of each column from ``ngram_keys_`` (object array of str)."""
        raise NotImplementedError

    def _reference_ngrams(self, doc, min_n, max_n):
        """The n-grams of one document as a list of str, by the plain Python reference (the
        exact fallback when keys do not fit 63 bits)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- names
    def get_feature_names_out(self, input_features=None):
        """The n-gram of each column, as an object array of str (length n_features_out)."""
        check_is_fitted(self, "n_features_out_")
        if self._names is None:
            self._names = self._decode_names()
        return self._names.copy()

    @property
    def vocabulary_(self) -> dict[str, int]:
        """Mapping n-gram -> column, as in scikit-learn (built on first access)."""
        return {t: i for i, t in enumerate(self.get_feature_names_out())}

    def _set_vocabulary(self, terms, symbol_ids, n_symbols, max_n):
        """Record the terms; pack each term's symbol ids (1-based) into one int64 key when
        ``max_n`` ids of ``n_symbols`` symbols fit in 63 bits, else use the exact slow path."""
        bits = int(n_symbols).bit_length()
        self.n_features_out_ = len(terms)
        self._names = np.array(terms, dtype=object)
        self._packed_ = bits * max_n <= 63
        if not self._packed_:
            return
        self._bits_ = bits
        self.ngram_keys_ = np.array(
            [pack(ids, bits, max_n) if 0 < len(ids) <= max_n else -1 for ids in symbol_ids],
            dtype=np.int64,
        )
