"""One count of a set of texts, shared by every n-gram extractor fitted inside a context.

A stacked verifier (:mod:`baselines.ensemble`) fits each base once per fold and once on all
its training data, and two of its bases count the same character n-grams of the same texts:
every text was counted about nine times per fit. Inside ``with shared_counts(texts):``, a
:class:`~stylo.features.CharNgrams` or :class:`~stylo.features.WordNgrams` whose ``fit``,
``fit_transform`` or ``transform`` reads only texts among ``texts`` takes its counts from one
unpruned count of all ``texts`` per counting configuration (class, analyzer, n-gram range,
case folding), made on first use:

- a fit keeps the columns its own texts use and prunes them by ``min_df``, ``max_df`` and
  ``max_features`` as a fit on those texts alone would (columns are in n-gram name order
  either way, ties at the cut go to the first name either way);
- a transform by an extractor so fitted, in the same context, selects its columns.

The matrices equal those of counting afresh. What differs is internal: the extractor's
symbols (``alphabet_``, ``tokens_``) are those of all ``texts``, a superset of its own texts'.
A symbol its texts lack is in none of its columns, so transforming any other text, in the
context or after it, gives what a fresh fit would. Texts outside ``texts``, a fixed
``vocabulary`` and counts beyond 63-bit keys are counted the usual way.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from stylo.features._weighting import term_frequencies
from stylo.text_input import check_texts

__all__ = ["SharedCounts", "serving", "shared_counts"]

#: what an extractor counts; its other parameters prune and weigh (their defaults do neither)
_COUNTING = ("analyzer", "ngram_range", "lowercase", "n_jobs")

_ACTIVE: ContextVar[SharedCounts | None] = ContextVar("stylo_shared_counts", default=None)


def active() -> SharedCounts | None:
    """The :class:`SharedCounts` of the innermost ``shared_counts`` context, if any."""
    return _ACTIVE.get()


@contextmanager
def shared_counts(texts):
    """Count ``texts`` once per counting configuration for the extractors fitted and used
    inside the context (see the module docstring). Yields the :class:`SharedCounts`: the
    enclosing context's when it holds every one of ``texts`` (its counts of a superset serve
    them alike: a grid task's cells share one count, and a stacked verifier among them)."""
    outer = _ACTIVE.get()
    if outer is not None and outer.holds(texts):
        yield outer
        return
    with serving(SharedCounts(texts)) as shared:
        yield shared


@contextmanager
def serving(shared: SharedCounts):
    """Make ``shared`` the active :class:`SharedCounts` inside the context (as ``shared_counts``
    does with the one it makes). Yields it."""
    token = _ACTIVE.set(shared)
    try:
        yield shared
    finally:
        _ACTIVE.reset(token)


class SharedCounts:
    """The counts of ``texts`` (distinct, in order), per counting configuration.

    Memory: one count matrix (raw counts, every n-gram of ``texts``) per configuration used,
    for as long as the object lives (the context, unless kept).
    """

    def __init__(self, texts):
        self._row = {t: i for i, t in enumerate(dict.fromkeys(check_texts(texts)))}
        # configuration -> (unpruned extractor fitted on every text, its count matrix)
        self._counts: dict[tuple, tuple | None] = {}
        self._derived: dict = {}  # key -> SharedCounts of the rewritten texts (``derived``)
        self.token = uuid.uuid4().hex  # marks the extractors fitted here (picklable)

    def derived(self, key, rewrite) -> SharedCounts:
        """A :class:`SharedCounts` of ``rewrite(texts)`` (the texts rewritten item for item, e.g.
        masked), made on the first call with ``key`` and kept as long as this object."""
        if key not in self._derived:
            self._derived[key] = SharedCounts(rewrite(list(self._row)))
        return self._derived[key]

    def holds(self, texts) -> bool:
        """Whether every one of ``texts`` is among this object's texts."""
        return all(t in self._row for t in texts)

    def _rows(self, docs: list[str]) -> np.ndarray | None:
        rows = [self._row.get(d) for d in docs]
        if not rows or None in rows:
            return None
        return np.array(rows, dtype=np.intp)

    def _full(self, extractor) -> tuple | None:
        key = (type(extractor), extractor.analyzer, tuple(extractor.ngram_range))
        key += (bool(extractor.lowercase),)
        if key not in self._counts:
            defaults = type(extractor)().get_params()
            full = clone(extractor).set_params(
                **{k: v for k, v in defaults.items() if k not in _COUNTING}
            )
            token = _ACTIVE.set(None)  # this one counts
            try:
                counts = full.fit_transform(list(self._row))
            finally:
                _ACTIVE.reset(token)
            # keys beyond 63 bits: the plain fallback counted; its columns have no keys
            self._counts[key] = (full, counts) if full._packed_ else None
        return self._counts[key]

    def fit(self, extractor, docs: list[str]) -> sp.csr_matrix | None:
        """Fit ``extractor`` (parameters validated) on ``docs`` from the shared counts and
        return their int64 count matrix over its columns; None if they cannot serve."""
        rows = self._rows(docs)
        got = None if rows is None else self._full(extractor)
        if got is None:
            return None
        full, counts = got
        x = counts[rows]
        n_terms = x.shape[1]
        df, tf = term_frequencies(
            [(x.indices, x.data)], [np.arange(n_terms)], n_terms, lambda f, xs: list(map(f, xs))
        )
        used = np.flatnonzero(df)
        if used.shape[0] == 0:
            raise ValueError(
                "empty vocabulary; the documents contain no n-grams of the requested lengths"
            )
        low, high = extractor._df_bounds(len(docs))
        columns = used[extractor._kept(df[used], tf[used], low, high)]
        extractor._adopt(full, columns, self.token)
        return x[:, columns]  # scipy keeps the rows sorted and int64 counts

    def transform(self, extractor, docs: list[str]) -> sp.csr_matrix | None:
        """The int64 counts of ``docs`` over the columns of ``extractor``, fitted by
        :meth:`fit` of this object; None if they cannot serve."""
        if getattr(extractor, "_shared_token", None) != self.token:
            return None
        rows = self._rows(docs)
        if rows is None:
            return None
        _, counts = self._full(extractor)
        return counts[rows][:, extractor._shared_columns]
