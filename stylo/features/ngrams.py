"""Exact, fast character and word n-gram count matrices.

``CharNgrams`` and ``WordNgrams`` produce the same matrix as scikit-learn's ``CountVectorizer``
(same columns, same order, same counts) for the same ``analyzer``/``ngram_range``/``lowercase``/
``min_df``/``max_df``/``max_features``/``vocabulary``/``binary`` settings, and optionally apply
tf-idf weighting and row normalisation like ``TfidfTransformer``.

How: each chunk of documents is encoded once to UTF-8. For characters, the counting kernel
decodes one document at a time into dense symbol ids in code-point order (through one table
that also lowercases); for words, a kernel decodes, lowercases and tokenises the chunk into
UTF-8 tokens, which are interned and sorted by their bytes (Python's order of str), so that
the chunks' vocabularies merge without Python strings.
Every n-gram is packed into one int64 key (see ``_kernels``). Counting runs in
Numba ``nogil`` kernels, one chunk of documents per thread (``n_jobs``), writing (document,
n-gram) entries into one lazily backed memory map that becomes the CSR matrix without copies.
A long document is decoded and counted in pieces (``_DOC_PIECE`` symbols), so that counting
it holds its text, its distinct n-grams and one piece, not every n-gram of it at once.
The packing is exact as long as ``bits_per_symbol * max_n <= 63`` (e.g. up to 32,767 distinct
characters for 4-grams, 4,095 for 5-grams; for words, up to 2^31 - 1 distinct tokens for
bigrams); beyond that ``fit`` falls back to a plain Python counter with the same result
(slower, warned about).
"""

from __future__ import annotations

import mmap
import re
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from stylo.features import _kernels as K
from stylo.features import _reference as R
from stylo.features._validation import TextInputMixin, effective_n_jobs
from stylo.text_input import check_texts

__all__ = ["CharNgrams", "WordNgrams", "TOKEN_PATTERN"]

#: The word tokeniser of ``WordNgrams`` as a regular expression: maximal runs of word
#: characters (Python's Unicode ``\w``: letters, digits, marks counted as alphanumeric, ``_``),
#: where an apostrophe (``'`` or ``’``) between two word characters keeps them in one token
#: ("don't", "o'clock"). Single-character tokens ("I", "a") are kept, unlike scikit-learn's
#: default pattern, because they are frequent function words. As in ``re``, combining marks
#: (category Mn, e.g. U+0301) are not word characters: normalise to NFC first if that matters.
TOKEN_PATTERN = r"(?u)\w+(?:['\u2019]\w+)*"
_TOKEN = re.compile(TOKEN_PATTERN)

_N_CODEPOINTS = 0x110000
_SPACE = 32


def _codepoint_table(pattern: str) -> np.ndarray:
    """uint8 table over all code points: 1 where ``pattern`` (one character) matches."""
    every = "".join(map(chr, range(_N_CODEPOINTS)))
    table = np.zeros(_N_CODEPOINTS, dtype=np.uint8)
    table[[m.start() for m in re.finditer(pattern, every)]] = 1
    return table


_TABLES: dict[str, np.ndarray] = {}


def _table(name: str) -> np.ndarray:
    # built from Python's own regex classes, so the kernels agree with ``re`` by construction
    if name not in _TABLES:
        _TABLES[name] = _codepoint_table({"space": r"\s", "word": r"\w", "apos": "['\u2019]",
                                          "lower_special": f"[{_LOWER_SPECIAL}]"}[name])
    return _TABLES[name]


# the two code points whose str.lower() is not one context-free code point: U+0130 lowers to
# two, U+03A3 to a final or a medial sigma depending on its neighbours
_LOWER_SPECIAL = "\u0130\u03a3"


def _lower_table() -> np.ndarray:
    """int32 table code point -> ``str.lower()`` of it, for every code point but
    ``_LOWER_SPECIAL`` (mapped to themselves; text containing them is lowered by Python)."""
    if "lower" not in _TABLES:
        every = "".join(map(chr, range(_N_CODEPOINTS)))
        for c in _LOWER_SPECIAL:
            every = every.replace(c, "a")
        table = np.frombuffer(every.lower().encode("utf-32-le", "surrogatepass"),
                              dtype=np.int32).copy()
        for c in _LOWER_SPECIAL:
            table[ord(c)] = ord(c)
        _TABLES["lower"] = table
    return _TABLES["lower"]


def _encode_utf8(docs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The documents as one UTF-8 byte array (lone surrogates as by "surrogatepass") and the
    byte offset of each (n_docs + 1)."""
    # room for 4 bytes a code point, backed only where written: each document goes straight
    # in, with no list of encoded documents and no joined copy
    text = np.empty(4 * sum(map(len, docs)), dtype=np.uint8)
    view = memoryview(text)
    doc_off = np.zeros(len(docs) + 1, dtype=np.int64)
    at = 0
    for i, d in enumerate(docs):
        encoded = d.encode("utf-8", "surrogatepass")
        view[at:at + len(encoded)] = encoded
        at += len(encoded)
        doc_off[i + 1] = at
    return text[:at], doc_off


class _Text:
    """A run of consecutive documents as one UTF-8 byte array (a quarter of the memory of
    code points for mostly ASCII text, and no joined ``str``), with what ``K.scan_text``
    found: the code points present (``present``, uint8 over all code points) and the
    ``(n_sym, n_seg)`` bound on its n-grams (``size``)."""

    __slots__ = ("text", "doc_off", "present", "size")

    def __init__(self, docs: list[str], word_bounded: bool):
        self.text, self.doc_off = _encode_utf8(docs)
        self.present = np.zeros(_N_CODEPOINTS, dtype=np.uint8)
        self.size = K.scan_text(self.text, self.doc_off, _table("space"), word_bounded,
                                self.present)


def _tokenize(docs: list[str], lowercase: bool):
    """``K.tokenize_text`` of the documents: ``(buf, tok_off, doc_tok)``."""
    tables = (_lower_table(), _table("word"), _table("apos"), _table("lower_special"))
    *tokens, special = K.tokenize_text(*_encode_utf8(docs), tables[0], lowercase, *tables[1:])
    if special:  # context-dependent lowering: Python lowers, the kernel does not
        *tokens, _ = K.tokenize_text(*_encode_utf8([d.lower() for d in docs]), tables[0],
                                     False, *tables[1:])
    return tokens


class _Tokens:
    """A run of consecutive documents as interned tokens (``_tokenize``): ``ids`` per token
    occurrence, ``doc_tok`` the first token of each document, and the distinct tokens sorted
    (``buf``/``off``, a token buffer, and ``order``, see ``K.sort_tokens``)."""

    __slots__ = ("ids", "doc_tok", "buf", "off", "order")

    def __init__(self, docs: list[str], lowercase: bool):
        buf, tok_off, self.doc_tok = _tokenize(docs, lowercase)
        self.ids, pool, pool_off = K.intern_tokens(buf, tok_off)
        del buf, tok_off  # every token's bytes: freed before the sort
        self.buf, self.off, self.order = K.sort_tokens(pool, pool_off)


def _token_buffer(tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """A token buffer ``(buf, off)`` of the tokens (str without ``_SEP``), in their order."""
    buf = np.frombuffer("".join(t + chr(K._SEP) for t in tokens).encode("utf-8"),
                        dtype=np.uint8)
    return buf, np.concatenate([[0], np.flatnonzero(buf == K._SEP) + 1])


def _token_strings(buf: np.ndarray) -> list[str]:
    """The tokens of a token buffer as str."""
    return buf.tobytes().decode("utf-8").split(chr(K._SEP))[:-1]


def _split(docs: list[str], n_chunks: int) -> list[list[str]]:
    """Consecutive slices of about equal character counts."""
    if n_chunks <= 1 or len(docs) < 2:
        return [docs]
    sizes = np.cumsum(np.fromiter(map(len, docs), dtype=np.int64, count=len(docs)) + 1)
    cuts = np.searchsorted(sizes, sizes[-1] * np.arange(1, n_chunks) / n_chunks)
    bounds = [0, *sorted(set(int(c) + 1 for c in cuts if c + 1 < len(docs))), len(docs)]
    return [docs[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


_IDENTITY = np.zeros(0, dtype=np.int32)  # ``K.local_columns``: positions are the columns

# symbols (start positions) of one document counted at a time: the kernels' working memory
# for a piece is ~30 bytes a symbol and n-gram length (8 MB for char 1-4), besides the
# distinct n-grams; counting a 50 MB document whole took 5.7 GB. A blog post is one piece
_DOC_PIECE = 1 << 16

_PIECE = 1 << 22  # entries moved between two releases of memory (48 MB)
# Linux's value; Python's mmap module does not name it
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform.startswith("linux") else 0)


class _Entries:
    """The (document, n-gram) entries of all chunks: ids (int32) and counts (int64), chunk k
    in ``region(k)``, in one private anonymous memory map.

    Each chunk's region is sized for its worst case (``K.ngram_bound``); pages are backed only
    once written, so that costs address space, not memory. Chunk 0 of several fills its region
    from the end (``at_end``), so that its entries meet chunk 1's, which start its region;
    ``firsts[k]`` is where chunk k's entries begin. Once the chunks are moved together
    (``pack``; nothing moves for two chunks, unless entries were dropped), the pages outside
    the used entries are handed back to the system, and the entries become the CSR matrix's
    ``indices`` and ``data`` without a copy.
    """

    def __init__(self, bounds: list[int]):
        self.starts = np.concatenate([[0], np.cumsum(bounds, dtype=np.int64)])
        self.firsts = self.starts[:-1].copy()
        self.size = max(int(self.starts[-1]), 1)
        # POSIX; not reserving swap for the worst case. No MADV_HUGEPAGE: where transparent
        # huge pages are "madvise" with defrag "madvise" (this project's machines), faulting
        # them in compacts memory, and char 1-4 counting on 30,000 posts took 2.2-2.9 s with
        # the hint against 1.5 s without
        if hasattr(mmap, "MAP_PRIVATE"):
            self._map = mmap.mmap(-1, 12 * self.size, flags=mmap.MAP_PRIVATE | _MAP_NORESERVE)
        else:
            self._map = bytearray(12 * self.size)
        self.counts = np.frombuffer(self._map, dtype=np.int64, count=self.size)
        self.ids = np.frombuffer(self._map, dtype=np.int32, count=self.size,
                                 offset=8 * self.size)

    def at_end(self, k: int) -> bool:
        return k == 0 and len(self.firsts) > 1

    def region(self, k: int):
        a, b = self.starts[k], self.starts[k + 1]
        return self.ids[a:b], self.counts[a:b]

    def used(self, k: int, nnz: int):
        """Record that chunk k wrote ``nnz`` entries; return them (views)."""
        ids, counts = self.region(k)
        first = ids.shape[0] - nnz if self.at_end(k) else 0
        self.firsts[k] = self.starts[k] + first
        return ids[first:first + nnz], counts[first:first + nnz]

    def pack(self, sizes: list[int], map_parallel, n_pieces: int) -> int:
        """Move chunk k's first ``sizes[k]`` entries right after chunk k - 1's and release the
        memory outside them; return their total."""
        total = sum(sizes)
        at = int(self.firsts[0])
        end = at + total
        for k, n in enumerate(sizes):
            src = int(self.firsts[k])
            if src != at:
                # chunk by chunk: a chunk's destination may overlap the previous one's source;
                # pieces of one chunk run at once only when its source and destination are
                # apart, and a piece gives its source back as soon as it has moved
                apart = src - at >= n
                pieces = max(n_pieces if apart else 1, -(-n // _PIECE))
                cuts = np.linspace(0, n, pieces + 1).astype(np.int64)
                moves = [(src + a, at + a, b - a)
                         for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]
                jobs = [[m] for m in moves] if apart else [moves]
                map_parallel(lambda job: self._move(job, end), jobs)
            at += n
        self._release(0, int(self.firsts[0]))
        self._release(end, self.size)
        return total

    def _move(self, moves, end):
        """Apply the ``(src, dst, n)`` moves in order; release sources beyond ``end``."""
        for src, dst, n in moves:
            K.move_left(self.ids, src, dst, n)
            K.move_left(self.counts, src, dst, n)
            self._release(max(src, end), src + n)

    def _release(self, first: int, end: int):
        """Hand back the whole pages of entries ``first:end`` of both arrays."""
        for offset, item in ((0, 8), (8 * self.size, 4)):
            a = -(-(offset + first * item) // mmap.PAGESIZE) * mmap.PAGESIZE
            b = (offset + end * item) // mmap.PAGESIZE * mmap.PAGESIZE
            if b > a and hasattr(self._map, "madvise"):
                self._map.madvise(mmap.MADV_DONTNEED, a, b - a)

    def packed(self, total: int):
        """``(ids, counts)``: the ``total`` packed entries, as arrays of exactly that length
        (so that scipy, seeing no much larger base, keeps them without a copy)."""
        first = int(self.firsts[0])
        return (np.frombuffer(self._map, dtype=np.int32, count=total,
                              offset=8 * self.size + 4 * first),
                np.frombuffer(self._map, dtype=np.int64, count=total, offset=8 * first))


class _NgramCounts(TextInputMixin, TransformerMixin, BaseEstimator):
    """Shared fit/transform logic; subclasses turn texts into symbol segments."""

    _analyzers: tuple[str, ...] = ()

    def __init__(self, *, analyzer, ngram_range, lowercase=True, min_df=1, max_df=1.0,
                 max_features=None, vocabulary=None, binary=False, use_idf=False,
                 smooth_idf=True, sublinear_tf=False, norm=None, dtype=None, n_jobs=None):
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
        if (not isinstance(rng, (tuple, list)) or len(rng) != 2
                or not all(isinstance(v, Integral) and not isinstance(v, bool) for v in rng)
                or not 1 <= rng[0] <= rng[1]):
            raise ValueError(f"ngram_range must be (min_n, max_n) with 1 <= min_n <= max_n, "
                             f"got {rng!r}")
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
        dtype = np.dtype(self.dtype) if self.dtype is not None else (
            np.dtype(np.float64) if weighted else np.dtype(np.int64))
        if dtype.kind not in "iuf":
            raise ValueError(f"dtype must be a numeric dtype, got {self.dtype!r}")
        if weighted and dtype.kind != "f":
            raise ValueError("use_idf, sublinear_tf and norm give real values: dtype must be a "
                             f"float dtype, got {dtype}")
        n_jobs = effective_n_jobs(self.n_jobs)
        return tuple(int(v) for v in rng), dtype, n_jobs

    def _vocabulary_terms(self) -> list[str] | None:
        voc = self.vocabulary
        if voc is None:
            return None
        if isinstance(voc, dict):
            idx = sorted(voc.values())
            if idx != list(range(len(voc))):
                raise ValueError("vocabulary indices must be 0 .. len(vocabulary) - 1, "
                                 "each used once")
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
        if terms is not None:
            self._fit_vocabulary(terms, max_n)
            X_counts = self._count_fixed(docs, min_n, max_n, n_jobs)
        else:
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
        return self._finish(self._count_fixed(docs, min_n, max_n, n_jobs), self._fitted_dtype)

    def _finish(self, X, dtype):
        if self.binary:
            X.data[:] = 1
        if dtype.kind != "f":
            return sp.csr_matrix((X.data.astype(dtype, copy=False), X.indices, X.indptr),
                                 shape=X.shape)
        data = X.data.astype(dtype)
        if self.sublinear_tf:
            np.log(data, out=data)
            data += 1
        if self.use_idf:
            data *= self.idf_.astype(dtype)[X.indices]
        out = sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape)
        if self.norm is not None:
            rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
            if self.norm == "l1":
                s = np.bincount(rows, weights=np.abs(data), minlength=X.shape[0])
            else:
                s = np.sqrt(np.bincount(rows, weights=data * data, minlength=X.shape[0]))
            s[s == 0] = 1.0
            out.data /= s[rows].astype(dtype)
        return out

    # ---------------------------------------------------------------- counting
    def _map_parallel(self, fn, items, n_jobs):
        if n_jobs == 1 or len(items) == 1:
            return [fn(it) for it in items]
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            return list(pool.map(fn, items))

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
            raise ValueError("empty vocabulary; the documents contain no n-grams of the "
                             "requested lengths")

        def local_columns(col):
            # per chunk, in its thread: the column of each local id
            return self._map_parallel(lambda k: K.local_columns(results[k][4], pos[k], col),
                                      range(len(results)), n_jobs)

        kept = self._prune(results, lambda: local_columns(_IDENTITY), keys.shape[0], n_docs)
        if kept is None:
            self.ngram_keys_ = keys
            maps = local_columns(_IDENTITY)
        else:
            col = np.full(keys.shape[0], -1, dtype=np.int32)
            col[kept] = np.arange(kept.shape[0])
            self.ngram_keys_ = keys[kept]
            maps = local_columns(col)
        self.n_features_out_ = int(self.ngram_keys_.shape[0])
        self._names = None
        return self._assemble(results, maps, entries, n_docs, n_jobs)

    @staticmethod
    def _merge_keys(results):
        """The sorted distinct keys of all chunks and, per chunk, the position in them of each
        of its keys (chunk results carry their keys sorted, ``r[3]``)."""
        keys = results[0][3]
        pos = [np.arange(keys.shape[0])]
        for r in results[1:]:
            keys, old, new = K.merge_sorted(keys, r[3])
            pos = [old[p] for p in pos] + [new]
        return keys, pos

    def _frequencies(self, results, inv, n_terms):
        """Document frequency and total count of every term, from chunk results."""
        df = np.zeros(n_terms, dtype=np.int64)
        tf = np.zeros(n_terms, dtype=np.int64)
        for r, i in zip(results, inv, strict=True):
            df += np.bincount(i[r[1]], minlength=n_terms)
            tf += np.bincount(i[r[1]], weights=r[2], minlength=n_terms).astype(np.int64)
        return df, tf

    def _prune(self, results, inverse, n_terms, n_docs):
        """Term positions kept by min_df/max_df/max_features (scikit-learn semantics), or None
        if all are. ``inverse()`` gives, per chunk, the term position of each local id."""
        high = self.max_df if isinstance(self.max_df, Integral) else self.max_df * n_docs
        low = self.min_df if isinstance(self.min_df, Integral) else self.min_df * n_docs
        if high < low:
            raise ValueError("max_df corresponds to < documents than min_df")
        if high >= n_docs and low <= 1 and self.max_features is None:
            return None  # every term occurs in 1 .. n_docs documents
        df, tf = self._frequencies(results, inverse(), n_terms)
        mask = (df <= high) & (df >= low)
        if self.max_features is not None and mask.sum() > self.max_features:
            counts = df if self.binary else tf
            # the same argsort call on the same (name-ordered) array as scikit-learn, so ties
            # are broken identically
            top = (-counts[mask]).argsort()[: self.max_features]
            new_mask = np.zeros_like(mask)
            new_mask[np.where(mask)[0][top]] = True
            mask = new_mask
        kept = np.flatnonzero(mask)
        if kept.shape[0] == 0:
            raise ValueError("After pruning, no terms remain. Try a lower min_df or a higher "
                             "max_df.")
        return kept

    def _count_fixed(self, docs, min_n, max_n, n_jobs):
        if not self._packed_:
            return self._fallback_count(docs, min_n, max_n)
        items = self._prepare_chunks(_split(docs, n_jobs), n_jobs)
        results, entries = self._count_chunks(items, min_n, max_n, self._bits_, n_jobs)
        del items
        sorted_keys, sorted_cols = self._key_index()

        def local_columns(r):
            pos = np.searchsorted(sorted_keys, r[3])
            pos[pos == sorted_keys.shape[0]] = 0
            hit = sorted_keys.shape[0] > 0
            found = (sorted_keys[pos] == r[3]) if hit else np.zeros(r[3].shape[0], bool)
            cols = np.where(found, sorted_cols[pos] if hit else -1, -1)
            return K.local_columns(r[4], cols, _IDENTITY)

        maps = self._map_parallel(local_columns, results, n_jobs)
        return self._assemble(results, maps, entries, len(docs), n_jobs)

    def _key_index(self):
        keys = self.ngram_keys_
        order = np.argsort(keys, kind="stable")
        valid = keys[order] >= 0  # -1 marks vocabulary terms that can never occur
        return keys[order][valid], order[valid]

    def _count_chunks(self, items, min_n, max_n, bits, n_jobs):
        """Count every chunk (in parallel) into one ``_Entries``.

        Returns ``([(row_nnz, ids, counts, sorted_keys, order), ...], entries)`` with ``ids``/
        ``counts`` views of the chunk's entries (see ``K.count_segments``), the chunk's keys
        sorted and ``order`` the local id of each (sorted in the chunk's thread: numpy sorts
        without the GIL).
        """
        ctx = self._count_context()
        counters = self._map_parallel(lambda it: self._counter(it, ctx, min_n, max_n, bits),
                                      items, n_jobs)
        items.clear()  # each counter holds what it needs
        entries = _Entries([c[0] for c in counters])

        def count(k):
            row_nnz, nnz, keys = counters[k][1](*entries.region(k), entries.at_end(k))
            counters[k] = None
            order = np.argsort(keys)
            return row_nnz, *entries.used(k, nnz), keys[order], order

        return self._map_parallel(count, range(len(counters)), n_jobs), entries

    def _assemble(self, results, maps, entries, n_docs, n_jobs):
        def remap(args):
            r, m = args
            row_nnz, nnz = K.remap_rows(r[0], r[1], r[2], m, self.n_features_out_)
            return row_nnz, nnz

        parts = self._map_parallel(remap, list(zip(results, maps, strict=True)), n_jobs)
        del results
        indptr = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(np.concatenate([p[0] for p in parts]), out=indptr[1:])
        total = entries.pack([int(p[1]) for p in parts],
                             lambda f, xs: self._map_parallel(f, xs, n_jobs), n_jobs)
        idx_dtype = np.int32 if total < 2**31 else np.int64
        ids, counts = entries.packed(total)
        return sp.csr_matrix((counts, ids.astype(idx_dtype, copy=False),
                              indptr.astype(idx_dtype)), shape=(n_docs, self.n_features_out_))

    # ---------------------------------------------------------------- plain fallback
    def _fallback_learn(self, docs, min_n, max_n, bits):
        warnings.warn(f"{bits} bits per symbol x {max_n} symbols exceed 63 bits: counting "
                      "n-grams with the (slow, exact) pure-Python path", RuntimeWarning,
                      stacklevel=4)
        self._packed_ = False
        counts = [R.count_ngrams(self._reference_ngrams(d, min_n, max_n)) for d in docs]
        names = sorted(set().union(*counts))
        if not names:
            raise ValueError("empty vocabulary; the documents contain no n-grams of the "
                             "requested lengths")
        col = {t: i for i, t in enumerate(names)}
        ids = np.array([col[t] for c in counts for t in c], dtype=np.int64)
        vals = np.array([v for c in counts for v in c.values()], dtype=np.int64)
        kept = self._prune([(None, ids, vals)], lambda: [np.arange(len(names))], len(names),
                           len(docs))
        if kept is None:
            kept = np.arange(len(names))
        self._names = np.array([names[i] for i in kept], dtype=object)
        self.ngram_keys_ = np.full(kept.shape[0], -1, dtype=np.int64)
        self.n_features_out_ = int(kept.shape[0])
        return self._fallback_count(docs, min_n, max_n, counts)

    def _fallback_count(self, docs, min_n, max_n, counts=None):
        if counts is None:
            counts = [R.count_ngrams(self._reference_ngrams(d, min_n, max_n)) for d in docs]
        col = {t: i for i, t in enumerate(self._names)}
        rows, cols, vals = [], [], []
        for r, c in enumerate(counts):
            for t, v in c.items():
                if t in col:
                    rows.append(r)
                    cols.append(col[t])
                    vals.append(v)
        X = sp.csr_matrix((np.asarray(vals, dtype=np.int32), (rows, cols)),
                          shape=(len(docs), self.n_features_out_))
        X.sort_indices()
        return X

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

    def _fit_vocabulary(self, terms, max_n):
        raise NotImplementedError

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
        self.ngram_keys_ = np.array([R.pack(ids, bits, max_n) if 0 < len(ids) <= max_n else -1
                                     for ids in symbol_ids], dtype=np.int64)


class CharNgrams(_NgramCounts):
    """Character n-gram counts, exactly those of ``CountVectorizer(analyzer=...)``.

    Parameters
    ----------
    ngram_range : (min_n, max_n), default (1, 4)
        Lengths of the n-grams, in code points.
    analyzer : {"char", "char_wb"}, default "char"
        "char": n-grams over the whole text after replacing runs of two or more whitespace
        characters by one space. "char_wb": n-grams inside whitespace-separated words padded
        with one space each side; a padded word shorter than or equal to max_n is also counted
        once as a whole (scikit-learn's rule).
    lowercase : bool, default True
        ``str.lower()`` before counting.
    min_df, max_df : int (documents) or float (fraction of documents)
        Keep n-grams whose document frequency lies in [min_df, max_df] (learned at fit).
    max_features : int or None
        Keep the most frequent n-grams (total count; document count if ``binary``).
    vocabulary : dict[str, int] or iterable of str, optional
        Fixed columns; nothing is learned but idf.
    binary : bool
        1 instead of the count.
    use_idf, smooth_idf, sublinear_tf, norm :
        Optional tf-idf weighting exactly as ``TfidfTransformer`` (off by default: raw counts).
    dtype : numpy dtype, default None
        int64 for counts, float64 when weighting is on.
    n_jobs : int or None
        Worker threads (documents are split into contiguous chunks). The result does not depend
        on ``n_jobs``.

    Attributes
    ----------
    alphabet_ : int32 array, the code points symbols are drawn from (sorted).
    ngram_keys_ : int64 array (n_features_out,), packed key of each column (internal).
    n_features_out_ : int
    idf_ : float array (n_features_out,), when ``use_idf``.
    """

    _analyzers = ("char", "char_wb")

    def __init__(self, ngram_range=(1, 4), *, analyzer="char", lowercase=True, min_df=1,
                 max_df=1.0, max_features=None, vocabulary=None, binary=False, use_idf=False,
                 smooth_idf=True, sublinear_tf=False, norm=None, dtype=None, n_jobs=None):
        super().__init__(analyzer=analyzer, ngram_range=ngram_range, lowercase=lowercase,
                         min_df=min_df, max_df=max_df, max_features=max_features,
                         vocabulary=vocabulary, binary=binary, use_idf=use_idf,
                         smooth_idf=smooth_idf, sublinear_tf=sublinear_tf, norm=norm,
                         dtype=dtype, n_jobs=n_jobs)

    def _prepare_chunks(self, parts, n_jobs):
        wb = self.analyzer == "char_wb"
        specials = [ord(c) for c in _LOWER_SPECIAL]

        def prepare(docs):
            chunk = _Text(docs, wb)
            if self.lowercase and chunk.present[specials].any():
                chunk = _Text([d.lower() for d in docs], wb)
            return chunk

        return self._map_parallel(prepare, parts, n_jobs)

    def _learn_alphabet(self, chunks, n_jobs):
        present = np.bitwise_or.reduce([c.present for c in chunks])
        present[_SPACE] = 1
        seen = np.flatnonzero(present)
        self.alphabet_ = np.unique(_lower_table()[seen] if self.lowercase else seen).astype(
            np.int32)
        return self.alphabet_.shape[0]

    def _count_context(self):
        """Code point -> symbol id of it (lowercased if ``lowercase``; 0 outside the
        alphabet). Lowercasing is idempotent, so chunks that Python lowered map the same."""
        idmap = np.zeros(_N_CODEPOINTS, dtype=np.int32)
        idmap[self.alphabet_] = np.arange(1, self.alphabet_.shape[0] + 1, dtype=np.int32)
        return idmap[_lower_table()] if self.lowercase else idmap

    def _counter(self, chunk, idmap, min_n, max_n, bits):
        """``(bound, count)``: ``count(ids, counts, at_end)`` runs ``K.count_text`` on the
        chunk."""
        n_sym, n_seg = chunk.size
        wb = self.analyzer == "char_wb"

        def count(ids, counts, at_end):
            return K.count_text(chunk.text, chunk.doc_off, idmap, _table("space"),
                                np.int32(idmap[_SPACE]), wb, min_n, max_n, bits, _DOC_PIECE,
                                ids, counts, at_end)

        return n_sym * (max_n - min_n + 1) + n_seg, count

    def _fit_vocabulary(self, terms, max_n):
        chars = sorted(set("".join(terms)) | {" "})
        self.alphabet_ = np.array([ord(c) for c in chars], dtype=np.int32)
        sym = {c: i + 1 for i, c in enumerate(chars)}
        self._set_vocabulary(terms, [[sym[c] for c in t] for t in terms], len(chars), max_n)

    def _decode_names(self):
        min_n, max_n = self.ngram_range
        codes = K.decode_keys(self.ngram_keys_, self._bits_, max_n)
        chars = np.concatenate([[0], self.alphabet_]).astype(np.uint32)[codes]
        if self.alphabet_[0] != 0:
            # trailing NULs are padding here: numpy's fixed-width str strips them
            return np.ascontiguousarray(chars).view(f"<U{max_n}").ravel().astype(object)
        lengths = (codes > 0).sum(axis=1)
        return np.array(["".join(map(chr, row[:n]))
                         for row, n in zip(chars, lengths, strict=True)], dtype=object)

    def _reference_ngrams(self, doc, min_n, max_n):
        if self.lowercase:  # the kernels lower code points; the reference lowers here
            doc = doc.lower()
        if self.analyzer == "char_wb":
            return R.char_wb_ngrams(doc, min_n, max_n)
        return R.char_ngrams(doc, min_n, max_n)


class WordNgrams(_NgramCounts):
    """Word n-gram counts with the tokeniser ``TOKEN_PATTERN``, exactly those of
    ``CountVectorizer(analyzer="word", token_pattern=TOKEN_PATTERN, ngram_range, lowercase)``.

    N-grams join tokens with one space, as scikit-learn does. Parameters and attributes are
    those of :class:`CharNgrams` (``analyzer`` is always "word"), with ``tokens_`` (the
    sorted token vocabulary, object array of str) in place of ``alphabet_``.
    """

    _analyzers = ("word",)

    def __init__(self, ngram_range=(1, 1), *, lowercase=True, min_df=1, max_df=1.0,
                 max_features=None, vocabulary=None, binary=False, use_idf=False,
                 smooth_idf=True, sublinear_tf=False, norm=None, dtype=None, n_jobs=None):
        super().__init__(analyzer="word", ngram_range=ngram_range, lowercase=lowercase,
                         min_df=min_df, max_df=max_df, max_features=max_features,
                         vocabulary=vocabulary, binary=binary, use_idf=use_idf,
                         smooth_idf=smooth_idf, sublinear_tf=sublinear_tf, norm=norm,
                         dtype=dtype, n_jobs=n_jobs)

    def get_params(self, deep=True):
        params = super().get_params(deep)
        params.pop("analyzer", None)
        return params

    @classmethod
    def _get_param_names(cls):
        return sorted(set(super()._get_param_names()) - {"analyzer"})

    @property
    def tokens_(self) -> np.ndarray:
        """The sorted token vocabulary seen at fit (object array of str), decoded on first use
        from the token buffer the kernels work on."""
        check_is_fitted(self, "n_features_out_")
        if self._tokens is None:
            self._tokens = np.array(_token_strings(self._token_buf), dtype=object)
        return self._tokens

    def _prepare_chunks(self, parts, n_jobs):
        return self._map_parallel(lambda docs: _Tokens(docs, self.lowercase), parts, n_jobs)

    def _learn_alphabet(self, chunks, n_jobs):
        buf, off = chunks[0].buf, chunks[0].off
        for c in chunks[1:]:
            buf, off, _, _ = K.merge_tokens(buf, off, c.buf, c.off)
        self._set_tokens(buf, off)
        return off.shape[0] - 1

    def _set_tokens(self, buf, off):
        self._token_buf = buf
        self._token_off = off
        self._tokens = None

    def _count_context(self):
        return self._token_buf, self._token_off

    def _counter(self, chunk, vocab, min_n, max_n, bits):
        """``(bound, count)``: token symbols, one segment per document, counted by
        ``count(ids, counts, at_end)`` (``K.count_segments``)."""
        sym = K.token_symbols(*vocab, chunk.buf, chunk.off, chunk.order, chunk.ids)
        doc_tok = chunk.doc_tok
        doc_seg = np.arange(doc_tok.shape[0], dtype=np.int64)

        def count(ids, counts, at_end):
            return K.count_segments(sym, doc_tok, doc_seg, min_n, max_n, bits, False,
                                    _DOC_PIECE, ids, counts, at_end)

        return K.ngram_bound(doc_tok, doc_seg, min_n, max_n), count

    def _fit_vocabulary(self, terms, max_n):
        split = [t.split(" ") for t in terms]
        # words the tokeniser cannot produce make terms that never occur (no key)
        tokens = sorted({w for ws in split for w in ws if _TOKEN.fullmatch(w)})
        self._set_tokens(*_token_buffer(tokens))
        index = {w: i + 1 for i, w in enumerate(tokens)}
        self._set_vocabulary(terms, [[index[w] for w in ws] if all(w in index for w in ws)
                                     else [] for ws in split], len(tokens), max_n)

    def _decode_names(self):
        min_n, max_n = self.ngram_range
        codes = K.decode_keys(self.ngram_keys_, self._bits_, max_n)
        toks = np.concatenate([[""], self.tokens_]).astype(object)
        return np.array([" ".join(toks[row[row > 0]]) for row in codes], dtype=object)

    def _reference_ngrams(self, doc, min_n, max_n):
        return R.word_ngrams(doc.lower() if self.lowercase else doc, min_n, max_n)
