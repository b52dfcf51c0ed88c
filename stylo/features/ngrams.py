"""Exact, fast character and word n-gram count matrices.

``CharNgrams`` and ``WordNgrams`` produce the same matrix as scikit-learn's ``CountVectorizer``
(same columns, same order, same counts) for the same ``analyzer``/``ngram_range``/``lowercase``/
``min_df``/``max_df``/``max_features``/``vocabulary``/``binary`` settings, and optionally apply
tf-idf weighting and row normalisation like ``TfidfTransformer``. One difference: of n-grams
tied at the ``max_features`` cut, these keep the first by name on every machine, while
``CountVectorizer``'s unstable sort keeps ones that depend on the CPU's SIMD sort.

How: each chunk of documents is encoded once to UTF-8. For characters, the counting kernel
decodes one document at a time into dense symbol ids in code-point order (through one table
that also lowercases); for words, a kernel decodes, lowercases and tokenises the chunk into
UTF-8 tokens, which are interned and sorted by their bytes (Python's order of str), so that
the chunks' vocabularies merge without Python strings.
Every n-gram is packed into one int64 key (see ``_counting``). Counting runs in
Numba ``nogil`` kernels, one chunk of documents per thread (``n_jobs``), writing (document,
n-gram) entries into one lazily backed memory map that becomes the CSR matrix without copies.
A long document is decoded and counted in pieces (``_DOC_PIECE`` symbols), so that counting
it holds its text, its distinct n-grams and one piece, not every n-gram of it at once.
The packing is exact as long as ``bits_per_symbol * max_n <= 63`` (e.g. up to 32,767 distinct
characters for 4-grams, 4,095 for 5-grams; for words, up to 2^31 - 1 distinct tokens for
bigrams); beyond that ``fit`` falls back to a plain Python counter with the same result
(slower, warned about).

Modules: ``_utf8`` (UTF-8 coding, code-point tables), ``_segments`` (segments and n-gram
windows), ``_counting`` (the counting kernels), ``_tokens`` (the word pipeline), ``_columns``
(merging keys, columns, row sorting), ``_entries`` (the entry store), ``_ngram_base`` (the
shared fit/transform). Numba checks a cached kernel against its own file only: after editing
a helper module, delete ``stylo/features/__pycache__`` so that the kernels calling its helpers
are compiled again.
"""

from __future__ import annotations

import re

import numpy as np
from sklearn.utils.validation import check_is_fitted

from stylo._threads import map_parallel
from stylo.features._columns import decode_keys
from stylo.features._counting import count_segments, count_text
from stylo.features._ngram_base import ChunkCounter, NgramCounts
from stylo.features._reference import char_ngrams, char_wb_ngrams, word_ngrams
from stylo.features._segments import TextChunk, ngram_bound
from stylo.features._tokens import (
    TokenChunk,
    merge_tokens,
    token_buffer,
    token_strings,
    token_symbols,
)
from stylo.features._utf8 import (
    LOWER_SPECIAL,
    N_CODEPOINTS,
    SPACE,
    TOKEN_PATTERN,
    char_table,
    lower_table,
)

__all__ = ["CharNgrams", "WordNgrams", "TOKEN_PATTERN"]

# TOKEN_PATTERN, the word tokeniser of ``WordNgrams`` as a regular expression: maximal runs of
# word characters (Python's Unicode ``\w``: letters, digits, marks counted as alphanumeric,
# ``_``), where an apostrophe (``'`` or ``’``) between two word characters keeps them in one
# token ("don't", "o'clock"), and each Han ideograph or kana a token by itself (``ALONE``).
# Single-character tokens ("I", "a") are kept, unlike scikit-learn's default pattern, because
# they are frequent function words. As in ``re``, combining marks (category Mn, e.g. U+0301)
# are not word characters: normalise to NFC first if that matters.
_TOKEN = re.compile(TOKEN_PATTERN)


# symbols (start positions) of one document counted at a time: the kernels' working memory
# for a piece is ~30 bytes a symbol and n-gram length (8 MB for char 1-4), besides the
# distinct n-grams; counting a 50 MB document whole took 5.7 GB. A blog post is one piece
_DOC_PIECE = 1 << 16


class CharNgrams(NgramCounts):
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
        Keep the most frequent n-grams (total count; document count if ``binary``); ties at
        the cut go to the n-gram first by name.
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

    def __init__(
        self,
        ngram_range=(1, 4),
        *,
        analyzer="char",
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
        super().__init__(
            analyzer=analyzer,
            ngram_range=ngram_range,
            lowercase=lowercase,
            min_df=min_df,
            max_df=max_df,
            max_features=max_features,
            vocabulary=vocabulary,
            binary=binary,
            use_idf=use_idf,
            smooth_idf=smooth_idf,
            sublinear_tf=sublinear_tf,
            norm=norm,
            dtype=dtype,
            n_jobs=n_jobs,
        )

    def _prepare_chunks(self, parts, n_jobs):
        wb = self.analyzer == "char_wb"
        specials = [ord(c) for c in LOWER_SPECIAL]

        def prepare(docs):
            chunk = TextChunk(docs, wb)
            if self.lowercase and chunk.present[specials].any():
                chunk = TextChunk([d.lower() for d in docs], wb)
            return chunk

        return map_parallel(prepare, parts, n_jobs)

    def _learn_alphabet(self, chunks, n_jobs):
        present = np.bitwise_or.reduce([c.present for c in chunks])
        present[SPACE] = 1
        seen = np.flatnonzero(present)
        self.alphabet_ = np.unique(lower_table()[seen] if self.lowercase else seen).astype(np.int32)
        return self.alphabet_.shape[0]

    def _count_context(self):
        """Code point -> symbol id of it (lowercased if ``lowercase``; 0 outside the
        alphabet). Lowercasing is idempotent, so chunks that Python lowered map the same."""
        idmap = np.zeros(N_CODEPOINTS, dtype=np.int32)
        idmap[self.alphabet_] = np.arange(1, self.alphabet_.shape[0] + 1, dtype=np.int32)
        return idmap[lower_table()] if self.lowercase else idmap

    def _counter(self, chunk, idmap, min_n, max_n, bits):
        """``count(ids, counts, at_end)`` runs ``count_text`` on the chunk."""
        n_sym, n_seg = chunk.size
        wb = self.analyzer == "char_wb"

        def count(ids, counts, at_end):
            return count_text(
                chunk.text,
                chunk.doc_off,
                idmap,
                char_table("space"),
                np.int32(idmap[SPACE]),
                wb,
                min_n,
                max_n,
                bits,
                _DOC_PIECE,
                ids,
                counts,
                at_end,
            )

        return ChunkCounter(n_sym * (max_n - min_n + 1) + n_seg, count)

    def _fit_vocabulary(self, terms, max_n):
        chars = sorted(set("".join(terms)) | {" "})
        self.alphabet_ = np.array([ord(c) for c in chars], dtype=np.int32)
        sym = {c: i + 1 for i, c in enumerate(chars)}
        self._set_vocabulary(terms, [[sym[c] for c in t] for t in terms], len(chars), max_n)

    def _decode_names(self):
        min_n, max_n = self.ngram_range
        codes = decode_keys(self.ngram_keys_, self._bits_, max_n)
        chars = np.concatenate([[0], self.alphabet_]).astype(np.uint32)[codes]
        if self.alphabet_[0] != 0:
            # trailing NULs are padding here: numpy's fixed-width str strips them
            return np.ascontiguousarray(chars).view(f"<U{max_n}").ravel().astype(object)
        lengths = (codes > 0).sum(axis=1)
        return np.array(
            ["".join(map(chr, row[:n])) for row, n in zip(chars, lengths, strict=True)],
            dtype=object,
        )

    def _reference_ngrams(self, doc, min_n, max_n):
        if self.lowercase:  # the kernels lower code points; the reference lowers here
            doc = doc.lower()
        if self.analyzer == "char_wb":
            return char_wb_ngrams(doc, min_n, max_n)
        return char_ngrams(doc, min_n, max_n)


class WordNgrams(NgramCounts):
    """Word n-gram counts with the tokeniser ``TOKEN_PATTERN``, exactly those of
    ``CountVectorizer(analyzer="word", token_pattern=TOKEN_PATTERN, ngram_range, lowercase)``.

    N-grams join tokens with one space, as scikit-learn does. Parameters and attributes are
    those of :class:`CharNgrams` (``analyzer`` is always "word"), with ``tokens_`` (the
    sorted token vocabulary, object array of str) in place of ``alphabet_``.
    """

    _analyzers = ("word",)

    def __init__(
        self,
        ngram_range=(1, 1),
        *,
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
        super().__init__(
            analyzer="word",
            ngram_range=ngram_range,
            lowercase=lowercase,
            min_df=min_df,
            max_df=max_df,
            max_features=max_features,
            vocabulary=vocabulary,
            binary=binary,
            use_idf=use_idf,
            smooth_idf=smooth_idf,
            sublinear_tf=sublinear_tf,
            norm=norm,
            dtype=dtype,
            n_jobs=n_jobs,
        )

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
            self._tokens = np.array(token_strings(self._token_buf), dtype=object)
        return self._tokens

    def _prepare_chunks(self, parts, n_jobs):
        return map_parallel(lambda docs: TokenChunk(docs, self.lowercase), parts, n_jobs)

    def _learn_alphabet(self, chunks, n_jobs):
        buf, off = chunks[0].buf, chunks[0].off
        for c in chunks[1:]:
            buf, off, _, _ = merge_tokens(buf, off, c.buf, c.off)
        self._set_tokens(buf, off)
        return off.shape[0] - 1

    def _set_tokens(self, buf, off):
        self._token_buf = buf
        self._token_off = off
        self._tokens = None

    def _count_context(self):
        return self._token_buf, self._token_off

    def _counter(self, chunk, vocab, min_n, max_n, bits):
        """Token symbols, one segment per document, counted by ``count(ids, counts,
        at_end)`` (``count_segments``)."""
        sym = token_symbols(*vocab, chunk.buf, chunk.off, chunk.order, chunk.ids)
        doc_tok = chunk.doc_tok
        doc_seg = np.arange(doc_tok.shape[0], dtype=np.int64)

        def count(ids, counts, at_end):
            return count_segments(
                sym, doc_tok, doc_seg, min_n, max_n, bits, False, _DOC_PIECE, ids, counts, at_end
            )

        return ChunkCounter(ngram_bound(doc_tok, doc_seg, min_n, max_n), count)

    def _fit_vocabulary(self, terms, max_n):
        split = [t.split(" ") for t in terms]
        # words the tokeniser cannot produce make terms that never occur (no key)
        tokens = sorted({w for ws in split for w in ws if _TOKEN.fullmatch(w)})
        self._set_tokens(*token_buffer(tokens))
        index = {w: i + 1 for i, w in enumerate(tokens)}
        self._set_vocabulary(
            terms,
            [[index[w] for w in ws] if all(w in index for w in ws) else [] for ws in split],
            len(tokens),
            max_n,
        )

    def _decode_names(self):
        min_n, max_n = self.ngram_range
        codes = decode_keys(self.ngram_keys_, self._bits_, max_n)
        toks = np.concatenate([[""], self.tokens_]).astype(object)
        return np.array([" ".join(toks[row[row > 0]]) for row in codes], dtype=object)

    def _reference_ngrams(self, doc, min_n, max_n):
        return word_ngrams(doc.lower() if self.lowercase else doc, min_n, max_n)
