"""Author-profile similarity: two texts are alike when they resemble the same training authors.

A raw similarity compares two texts directly. This verifier compares where each text sits among
the training authors: a text's *profile* is its inner similarity to each training author (the
mean of its scores with that author's training texts), standardised per author by that
author's scores with the training texts of the other authors (so an author whose texts are
close to everything counts no more than one whose texts are not), and then across the authors
of the profile; the pair's score is the Pearson correlation of the two profiles, mapped from
[-1, 1] to [0, 1]: a second-order similarity in the spirit of the impostor methods (Koppel &
Winter, "Determining if two documents are written by the same author", JASIST 65, 2014), with
the training authors as the reference set: two texts of one author lean toward the same
training authors even when their topics share no words.

Two regimes meet here. Where the test texts' authors have texts in the training data (AIDBench
IMDb62 and Guardian, whose tasks keep other texts of the test authors for training), a profile
peaks at the text's own author and the correlation is close to an attribution; where they do
not (Blog, PAN), it still places a text among known writers. On AIDBench one-to-one pairs a
scratch probe of this view (char 1-4-gram TF-IDF cosine, centroid profiles) gave AUC .83-.88 on
IMDb62, .75-.81 on Guardian and .80 on Blog, against .64-.71 for the cosine itself; as a base of
``ensemble`` it was weighed on held-out training authors (``benchmarks/choose_ensemble.py``),
where only the second regime exists, and is not registered: it lifted the stack's held-out AUC
from .835 to .847 (.851 transductive), nearly all of it on PAN15-en's halves (.895 to .946),
whose unconnected problems share real authors, while fitted on one English PAN training set
and scored on another's the stack fell from .793 to .709 (.714): profiles over one genre's
authors do not carry to another's, and the meta-model, which trusts them within a genre,
cannot know that; nor did a closed-set stack (folds by text, this base added where the test
authors have training texts) beat the registered one on held-out texts of known authors (.782
against .790; benchmarks/README.md). It stays for closed-set verification with many texts per
author, where the authors of the scored texts are known to be among the training authors.

The training data give the authors: a Corpus's author labels, or for a PairSet the groups of
texts it ties to one author (:func:`baselines.normalization.author_groups`: a problem's known
texts, with its unknown text when same-author). At least three authors are needed for a
profile to have a shape. Every score is the inner verifier's ``score_cross`` between the scored
texts and the training texts, one call per distinct set of texts.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from baselines.normalization import _MIN_STD, _side_stats, author_groups
from stylo.corpus import Corpus
from stylo.text_input import has_text
from stylo.verifier import Verifier

__all__ = ["AuthorProfile", "profile_correlation_reference"]


def profile_correlation_reference(
    scores_a: list[float],
    scores_b: list[float],
    authors: list[int],
    mean: list[float],
    std: list[float],
) -> float:
    """The pair score from each text's inner scores with the training texts (``authors[j]``
    wrote training text j) and each author's standardisation statistics, one value at a time
    (the vectorised kernel must agree with it)."""
    names = sorted(set(authors))

    def profile(scores):
        raw = [np.mean([s for s, a in zip(scores, authors) if a == k]) for k in names]
        z = [(r - mean[i]) / max(std[i], _MIN_STD) for i, r in enumerate(raw)]
        return (np.asarray(z) - np.mean(z)) / max(float(np.std(z)), _MIN_STD)

    pa, pb = profile(scores_a), profile(scores_b)
    return float((1.0 + np.mean(pa * pb)) / 2.0)


def _column_stats(values: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and floored std (ddof 0) of each column's kept values (each keeps one or more)."""
    return _side_stats(values.T, keep.T)


class AuthorProfile(Verifier):
    """Similarity of two texts' profiles over the training authors (see the module docstring).

    Parameters
    ----------
    verifier : the unfitted inner similarity verifier (higher = more similar); a clone is
        fitted on the training data as ``verifier_`` and scores texts against the training
        texts through its ``score_cross``.
    max_texts : at most this many training texts a profile is read from (drawn with
        ``random_state``, every author keeping at least one), which bounds the cost of a call
        at ``n_texts x max_texts`` inner scores.
    transductive : after ``fit``, standardise each author's column by its statistics over the
        texts of the call being scored (up to ``n_background`` of them, drawn with
        ``random_state``; the reference texts top the pool up when the call holds fewer), as
        :class:`~baselines.normalization.BackgroundNormalized` does: texts of another genre
        than the training texts sit far from every training author, and only their spread
        among themselves tells the authors apart.
    random_state : seed of those draws.

    Attributes: ``verifier_``, ``texts_`` (the reference training texts, n_ref),
    ``author_index_`` (n_ref,: each reference text's author, 0..n_authors-1), ``mean_`` and
    ``std_`` (n_authors,: each author's mean score with the reference texts of the other
    authors, and their spread), ``reference_means_`` (n_ref, n_authors: the reference texts'
    own rows).
    """

    def __init__(
        self,
        verifier: Verifier,
        max_texts: int = 1000,
        transductive: bool = False,
        n_background: int = 100,
        random_state: int = 0,
    ):
        self.verifier = verifier
        self.max_texts = max_texts
        self.transductive = transductive
        self.n_background = n_background
        self.random_state = random_state

    def _fit_impl(self, X, y) -> None:
        if not isinstance(self.verifier, Verifier):
            raise TypeError(f"verifier must be a Verifier, got {type(self.verifier).__name__}")
        for name in ("max_texts", "n_background"):
            value = getattr(self, name)
            if not isinstance(value, int | np.integer) or value < 3:
                raise ValueError(f"{name} must be an integer >= 3, got {value!r}")
        groups = author_groups(X)
        # a blank text has no inner score to place it: as in every reference pool, it is none
        texts = [t for t in groups if has_text(t)]
        owner = np.unique([groups[t] for t in texts], return_inverse=True)[1]
        n_authors = int(owner.max()) + 1 if len(owner) else 0
        if n_authors < 3:
            name = X.name if isinstance(X, Corpus) else "the training pairs"
            raise ValueError(
                f"{type(self).__name__} needs texts of at least 3 authors in {name}, "
                f"got {n_authors}"
            )
        keep = self._reference(owner, int(self.max_texts))
        self.texts_ = [texts[i] for i in keep]
        self.author_index_ = owner[keep]
        self.verifier_ = clone(self.verifier).fit(X)
        raw = self._author_means(self.verifier_.score_cross(self.texts_, self.texts_), n_authors)
        # each author's statistics over the reference texts of the other authors
        self.reference_means_ = raw
        self.mean_, self.std_ = _column_stats(raw, self._other_authors())

    def _other_authors(self) -> np.ndarray:
        """(n_ref, n_authors): whether reference text i is by another author than column k."""
        return self.author_index_[:, None] != np.arange(len(self.reference_means_[0]))[None, :]

    def _reference(self, owner: np.ndarray, cap: int) -> np.ndarray:
        """Indices of the reference texts: all of them, or ``cap`` drawn with the seed, every
        author's first drawn text kept."""
        if len(owner) <= cap:
            return np.arange(len(owner))
        order = np.random.default_rng(self.random_state).permutation(len(owner))
        first = order[np.unique(owner[order], return_index=True)[1]]
        taken = set(first.tolist())
        rest = [i for i in order.tolist() if i not in taken][: max(cap - len(first), 0)]
        return np.sort(np.concatenate([first, np.array(rest, dtype=np.intp)]))

    def _author_means(self, scores: np.ndarray, n_authors: int) -> np.ndarray:
        """(n, n_ref) inner scores -> (n, n_authors) means per author of the reference texts."""
        onehot = np.zeros((len(self.author_index_), n_authors))
        onehot[np.arange(len(self.author_index_)), self.author_index_] = 1.0
        return (scores @ onehot) / onehot.sum(axis=0)

    def profiles(self, texts: list[str]) -> np.ndarray:
        """(n, n_authors) standardised profiles of ``texts`` (each row mean 0, std 1)."""
        scores = self.verifier_.score_cross(texts, self.texts_)
        raw = self._author_means(scores, len(self.mean_))
        mean, std = self._call_stats(raw) if self.transductive else (self.mean_, self.std_)
        z = (raw - mean) / std
        z = z - z.mean(axis=1, keepdims=True)
        return z / np.maximum(z.std(axis=1, keepdims=True), _MIN_STD)

    def _call_stats(self, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each author's statistics over up to ``n_background`` of the call's texts (drawn
        with ``random_state``), topped up from the reference texts (each leaving out its own
        author's column) when the call has fewer."""
        n = int(self.n_background)
        rng = np.random.default_rng(self.random_state)
        rows = raw if len(raw) <= n else raw[np.sort(rng.choice(len(raw), n, replace=False))]
        extra = rng.permutation(len(self.reference_means_))[: max(n - len(rows), 0)]
        keep = np.vstack([np.ones(rows.shape, dtype=bool), self._other_authors()[extra]])
        return _column_stats(np.vstack([rows, self.reference_means_[extra]]), keep)

    def _distinct_profiles(self, texts_a, texts_b):
        distinct = list(dict.fromkeys([*texts_a, *texts_b]))
        where = {t: i for i, t in enumerate(distinct)}
        p = self.profiles(distinct)
        return p[[where[t] for t in texts_a]], p[[where[t] for t in texts_b]]

    def _score_impl(self, texts_a, texts_b):
        pa, pb = self._distinct_profiles(texts_a, texts_b)
        return (1.0 + (pa * pb).mean(axis=1)) / 2.0

    def _cross_impl(self, texts_a, texts_b):
        pa, pb = self._distinct_profiles(texts_a, texts_b)
        return (1.0 + pa @ pb.T / pa.shape[1]) / 2.0
