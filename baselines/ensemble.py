"""Stacked verifier: base verifiers' out-of-fold scores, a logistic meta-model, a grey zone.

Stacking (Wolpert, "Stacked generalization", Neural Networks 5, 1992) as the PAN 2015 winners'
ensembles use it: the meta-model must learn how far to trust each base verifier on pairs that
base has not been fitted on, or it learns to trust whichever base overfits its training pairs
most. ``fit(X)`` therefore

1. splits the training data into ``n_folds`` groups that share nothing: a Corpus by author
   (every author's texts in one fold; by text, each author's texts dealt round the folds,
   when some fold would lack same- or different-author pairs), a PairSet by connected
   problems (problems sharing any text in one fold), whole groups in a seeded order into the
   smallest fold; when that leaves
   a fold without both labels (PAN14 novels: one unknown text in many problems), a PairSet is
   split by problem (no pair in two folds);
2. for each fold, fits every base on the other folds and scores the fold's pairs with it (a
   Corpus fold: ``n_pairs / n_folds`` pairs drawn within the fold; a PairSet fold: its
   problems), so no base scores a pair it was fitted on, nor (author folds) a pair of its
   training authors;
3. fits a logistic regression on the logits of those out-of-fold scores, its weights held
   non-negative (``positive``: no base is read upside down; on PAN15-en's 100 training
   problems the unconstrained model gave Delta and ``logreg-pair``, near chance out of fold
   there, weights of -1.38 and -0.70), and a grey zone
   (:class:`~baselines.calibration.ScoreCalibrator`, no Platt: the meta-model already gives
   probabilities) on the meta-model's out-of-fold probabilities;
4. refits every base on all of ``X`` for scoring.

The threshold comes from the training data, so it moves when the test texts differ: PAN14's
English novels are 2.5 times longer in the test split, every pair looks more alike, and 80 %
of a balanced test set is answered "same author" (c@1 0.64 at AUC 0.82). Two label-free
corrections of a test batch were tried and left out, as neither holds on every protocol:
shifting the batch's meta-logits until their mean probability is the training share of
same-author pairs (right on PAN, whose splits are both balanced; 0.29 c@1 lost on
Rethinking-AV splits with 11 % same-author test pairs), and shifting them until the median of
*crossed* pairs (one problem's known text against another's unknown) matches the training
data's (PAN14/15 AUC x c@1 up by up to 0.14; recall on Federalist one-to-one from 43 to 12 %,
where three authors make most crossed pairs same-author).

The folds and the refit count the n-grams of one set of texts; they take them from one count
(:mod:`stylo.features.shared_counts`), with the matrices of counting afresh.

Every protocol call goes to the bases' public method of the same name (``score_pairs``,
``score_problems``, ``rank_many``, ``attribute``), so each base keeps its own batching; the
meta-model combines their scores item by item. ``rank``, ``choose`` and ``attribute`` use the
meta-model's probabilities without the grey zone, which would tie candidates inside it at 0.5
(in ``attribute`` the first of them then won: macro-F1 on PAN18's training problems 0.23
with the grey zone and 0.56 without, on its test problems 0.38 and 0.54); the open-set rule
reads them at 0.5 as well.

Registered bases (``baselines.registry``, chosen on held-out training authors by
``benchmarks/choose_ensemble.py``): the char 1-4-gram TF-IDF cosine s-normalised three times in
a row (:mod:`baselines.normalization`), the learned pair model ``logreg-pair``, cosine Delta on
the 300 most frequent words, the compression dissimilarity ``cdm``, LambdaG with five
reference models, and the same s-normalised cosine on the text with every word masked
(:class:`~stylo.features.TextDistortion` with ``k=0``): six views (character n-grams relative to
a background, learned n-gram differences, function-word profiles, shared substrings of any
length, the grammar of text with its topic words masked, punctuation, spacing and word lengths
alone), each a few seconds a task. LambdaG lifts the held-out AUC from 0.816 to 0.822 (0.825
with its default thirty references, which cost the grid more than its 15 minutes allow);
normalising the cosine three times, from 0.824 to 0.835 (two seeds); the word-masked cosine,
from 0.804 to 0.812 on three seeds (Guardian's cross-topic halves .819 to .855). The registered
stack ranks with its scoring meta-model: on held-out training authors (``choose_ensemble
--ranking``, the training pairs and triplets drawn by the test's topic rule) it reaches 0.803
mean one-to-two accuracy, against 0.787 without the word-masked cosine and 0.790 for a pairwise
model with the distorted-text cosine as a rank base.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from baselines._blas import fit_one_thread
from baselines.calibration import ScoreCalibrator
from baselines.nonnegative_logistic import NonNegativeLogisticRegression
from stylo.corpus import Corpus, PairSet
from stylo.features.shared_counts import shared_counts
from stylo.protocols.base import readable_texts
from stylo.training_draws import training_triplets
from stylo.verifier import Verifier, training_pairs

__all__ = ["StackedVerifier", "pair_groups"]

#: how the stack ranks candidates (``ranking``)
_RANKINGS = ("meta", "pairwise")
#: base scores are probabilities; their logits are clipped this far from 0 and 1
_EPS = 1e-6


def pair_groups(pairs: PairSet) -> np.ndarray:
    """A group id per problem: problems sharing any text (known or unknown) share a group."""
    parent = list(range(len(pairs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, (known, unknown) in enumerate(zip(pairs.known, pairs.unknown)):
        for t in (*known, unknown):
            j = first.setdefault(t, i)
            parent[root(i)] = root(j)
    roots = [root(i) for i in range(len(pairs))]
    return np.unique(roots, return_inverse=True)[1]


def _balanced_folds(groups: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """A fold per item: whole groups, in a seeded order, each into the fold with fewest items."""
    sizes = np.bincount(groups)
    order = rng.permutation(len(sizes))
    order = order[np.argsort(-sizes[order], kind="stable")]
    fill, fold_of_group = np.zeros(k, dtype=np.int64), np.empty(len(sizes), dtype=np.int64)
    for g in order:
        fold_of_group[g] = int(np.argmin(fill))
        fill[fold_of_group[g]] += sizes[g]
    return fold_of_group[groups]


def _both_labels_everywhere(fold_of: np.ndarray, labels: np.ndarray, k: int) -> bool:
    """Whether every fold, and every fold's complement, has both labels."""
    return all(
        len(set(labels[fold_of == f])) == 2 and len(set(labels[fold_of != f])) == 2
        for f in range(k)
    )


def _pairable(authors: np.ndarray) -> bool:
    """Whether texts of these authors give same- and different-author pairs."""
    names, counts = np.unique(authors, return_counts=True)
    return len(names) >= 2 and bool((counts >= 2).any())


def _text_folds(authors: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """A fold per text: each author's texts dealt round the folds, the deal running on across
    authors. For corpora with too few authors for author folds (the Federalist papers' three):
    a fold's base models then know its authors, but never its texts."""
    fold, dealt = np.empty(len(authors), dtype=np.int64), 0
    for a in np.unique(authors):
        for i in rng.permutation(np.flatnonzero(authors == a)):
            fold[i] = dealt % k
            dealt += 1
    return fold


def _without_grey_zone(base: Verifier) -> Verifier:
    """An unfitted clone of ``base`` with every ``grey_zone`` parameter off, its own and its
    wrapped verifiers'. A base's grey zone answers a band of pairs 0.5, a flat step the
    meta-model reads as one value whatever the evidence, and the ranking calls answer without
    it, so a ranking model fitted on zoned scores would read other scores than it ranks with
    (LambdaG, a rank base while it had its zone: 0.7985 held-out one-to-two accuracy with it,
    0.7962 without, ``benchmarks/choose_ensemble.py --ranking``; as a scoring base 0.8250 and
    0.8254 held-out AUC)."""
    names = [k for k in base.get_params(deep=True) if k.rsplit("__", 1)[-1] == "grey_zone"]
    return clone(base).set_params(**dict.fromkeys(names, False))


def _logits(columns: list[np.ndarray]) -> np.ndarray:
    p = np.clip(np.column_stack(columns), _EPS, 1 - _EPS)
    return np.log(p / (1 - p))


class StackedVerifier(Verifier):
    """Base verifiers stacked by a logistic meta-model (see the module docstring).

    Parameters
    ----------
    bases : unfitted verifiers whose scores are probabilities; clones are fitted per fold and
        on all data, with their grey zones off (:func:`_without_grey_zone`).
    n_folds : out-of-fold groups of the training data.
    n_pairs : out-of-fold training pairs drawn from a Corpus (``n_pairs / n_folds`` per fold).
    C : inverse regularisation of the meta-model.
    objective : what the grey zone maximises on the out-of-fold pairs (PAN 2021 overall).
    random_state : seed of the fold assignment and of the pair draws.
    rank_bases : more unfitted verifiers, used only to rank candidates (``rank``, ``choose``,
        ``rank_many``) beside ``bases``.
    ranking : how candidates are ranked. ``"meta"``: the meta-model's probabilities, with
        ``rank_bases`` a second meta-model fitted on the out-of-fold scores of ``bases`` and
        ``rank_bases`` together (the same folds and pairs). ``"pairwise"``: a logistic
        regression without intercept on the differences of the bases' logits (``bases`` and
        ``rank_bases``) between a query's same-author and other-author text, fitted on
        ``n_pairs / 2`` out-of-fold triplets drawn from the held folds by the corpus's pair
        rule (:func:`stylo.training_draws.training_triplets`): the objective of a ranking
        task. Training pairs without authors (a PairSet) rank as ``"meta"``. Either ranking
        model is fitted at the first ranking call from the training data ``fit`` keeps, so a
        protocol that never ranks (verification; attribution, whose open-set rule reads the
        first meta-model) never fits it.
    positive : hold the meta-model's weights non-negative
        (:class:`~baselines.nonnegative_logistic.NonNegativeLogisticRegression`; Breiman's
        stacking constraint): a base's higher score means "same author", so no base is read
        upside down however noisy its out-of-fold scores. Also the ``"meta"`` ranking model's.

    Attributes: ``bases_`` (fitted on all data), ``meta_`` (the meta-model: its ``coef_``
    are the bases' weights),
    ``calibrator_``, ``oof_auc_`` (each base's AUC on the out-of-fold pairs, the evidence for
    its weight), ``oof_scores_`` (n_pairs, n_bases), ``oof_labels_`` and ``training_data_``
    (``X`` when ranking needs more than ``bases_`` and ``meta_``, else None), ``fold_bases_``
    (for the pairwise ranking, the bases fitted on each fold, else None); after the first
    ranking call that needs them, ``rank_bases_`` and ``rank_meta_`` (the pairwise model's
    ``coef_`` are its weights).
    """

    def __init__(
        self,
        bases: tuple[Verifier, ...] = (),
        n_folds: int = 3,
        n_pairs: int = 600,
        C: float = 1.0,
        objective: str = "pan21",
        random_state: int = 0,
        rank_bases: tuple[Verifier, ...] = (),
        ranking: str = "meta",
        positive: bool = True,
    ):
        self.bases = bases
        self.n_folds = n_folds
        self.n_pairs = n_pairs
        self.C = C
        self.objective = objective
        self.random_state = random_state
        self.rank_bases = rank_bases
        self.ranking = ranking
        self.positive = positive

    # -- fitting ---------------------------------------------------------------------------
    def _fit_impl(self, X, y) -> None:
        if not self.bases or not all(isinstance(b, Verifier) for b in self.bases):
            raise ValueError("bases must be a non-empty sequence of Verifiers")
        if not all(isinstance(b, Verifier) for b in self.rank_bases):
            raise ValueError("rank_bases must be a sequence of Verifiers")
        if int(self.n_folds) < 2:
            raise ValueError(f"n_folds must be >= 2, got {self.n_folds!r}")
        if self.ranking not in _RANKINGS:
            raise ValueError(f"ranking must be one of {_RANKINGS}, got {self.ranking!r}")
        pairwise = self.ranking == "pairwise" and isinstance(X, Corpus)
        s, t, self.bases_, folds = self._stacked(X, self.bases)
        # the pairwise ranking model scores triplets with the same fold fits
        self.fold_bases_ = folds if pairwise else None
        if t.all() or not t.any():
            raise ValueError("the out-of-fold pairs need same- and different-author pairs")
        self.oof_scores_, self.oof_labels_ = s, t
        # kept only for the ranking model: a fitted stack need not carry its training texts
        self.training_data_ = X if self.rank_bases or pairwise else None
        self.rank_bases_ = self.rank_meta_ = None
        self.oof_auc_ = np.array([roc_auc_score(t, s[:, j]) for j in range(s.shape[1])])
        logits = _logits(list(s.T))
        self.meta_ = self._meta_model(logits, t)
        meta = self.meta_.predict_proba(logits)[:, 1]
        self.calibrator_ = ScoreCalibrator(
            platt=False, grey_zone=True, objective=self.objective
        ).fit(meta, t)

    def _meta_model(self, logits: np.ndarray, labels: np.ndarray):
        """A logistic meta-model (weights >= 0 with ``positive``) fitted on bases' logits."""
        model = NonNegativeLogisticRegression if self.positive else LogisticRegression
        return fit_one_thread(model(C=self.C), logits, labels)

    def _stacked(self, X: Corpus | PairSet, bases) -> tuple[np.ndarray, np.ndarray, list, list]:
        """``bases``' out-of-fold scores of the folds' held-out pairs (n_pairs, n_kept), those
        pairs' labels, the kept bases fitted on all of ``X`` and those fitted on each fold (see
        :meth:`_base_fits`)."""
        # the folds and the final fit count the n-grams of the same texts: once, here
        with shared_counts(readable_texts(X)):
            parts = list(self._folds(X))
            folds, whole = self._base_fits(bases, [train for train, _ in parts], X, "stack")
            if not whole:
                raise ValueError(f"{type(self).__name__}: none of its bases could be fitted")
            scores = [
                np.column_stack([b.score_problems(held) for b in fits])
                for fits, (_, held) in zip(folds, parts, strict=True)
            ]
            labels = [held.labels for _, held in parts]
            return np.vstack(scores), np.concatenate(labels), whole, folds

    def _fold_parts(self, X: Corpus | PairSet):
        """(training data, held-out data) of each fold: Corpus parts by author (or text), or
        PairSet parts by connected problems (or problem)."""
        k = int(self.n_folds)
        rng = np.random.default_rng([self.random_state, 7])
        if isinstance(X, PairSet):
            labels = training_pairs(X).labels  # a PairSet without labels cannot be stacked
            fold_of = _balanced_folds(pair_groups(X), k, rng)
            if not _both_labels_everywhere(fold_of, labels, k):
                # texts shared so widely that whole folds lack a label (PAN14 en_novels: one
                # unknown text in many problems): folds of problems, no pair in two folds
                fold_of = _balanced_folds(np.arange(len(X)), k, rng)
            for f in range(k):
                yield X.subset(fold_of != f), X.subset(fold_of == f)
            return
        if not isinstance(X, Corpus):
            raise TypeError(f"expected a PairSet or a Corpus, got {type(X).__name__}")
        authors = np.asarray(X.authors)
        names = np.unique(authors)
        fold_of = dict(zip(names, rng.permutation(np.arange(len(names)) % k)))
        fold = np.array([fold_of[a] for a in authors])
        if not all(_pairable(authors[fold == f]) for f in range(k)):
            fold = _text_folds(authors, k, rng)
        if not all(_pairable(authors[fold == f]) for f in range(k)):
            per_author = np.unique(authors, return_counts=True)[1]
            raise ValueError(
                f"{type(self).__name__}: corpus {X.name!r} is too small to stack in {k} folds: "
                f"each fold's held-out texts need two authors and one of them with two texts "
                f"(it has {len(per_author)} authors, the most prolific with "
                f"{per_author.max()} texts)"
            )
        for f in range(k):
            held = X.subset(fold == f, name=f"{X.name}:fold{f}")
            yield X.subset(fold != f, name=f"{X.name}:train{f}"), held

    def _folds(self, X: Corpus | PairSet):
        """(training data, held-out labelled pairs) of each fold."""
        k = int(self.n_folds)
        for f, (train, held) in enumerate(self._fold_parts(X)):
            if isinstance(held, Corpus):
                held = training_pairs(
                    held, n_pairs=int(self.n_pairs) // k, seed=self.random_state + f
                )
            yield train, held

    # -- scoring ---------------------------------------------------------------------------
    def _meta(self, columns: list[np.ndarray], ranking: bool) -> np.ndarray:
        p = self.meta_.predict_proba(_logits(columns))[:, 1]
        return p if ranking else self.calibrator_.transform(p)

    def _score_impl(self, texts_a, texts_b):
        return self._meta([b.score_pairs(texts_a, texts_b) for b in self.bases_], False)

    def _problem_impl(self, known_lists, unknowns):
        pairs = PairSet.from_lists(known_lists, unknowns)
        return self._meta([b.score_problems(pairs) for b in self.bases_], False)

    def _rank_many_impl(self, queries, candidate_lists):
        bases, meta = self._ranking_model()
        ranked = [np.concatenate(b.rank_many(queries, candidate_lists)) for b in bases]
        out = meta.predict_proba(_logits(ranked))[:, 1]
        return np.split(out, np.cumsum([len(c) for c in candidate_lists])[:-1])

    def _ranking_model(self) -> tuple[list[Verifier], LogisticRegression]:
        """(fitted bases, model) that rank candidates: ``bases_`` and ``meta_``; with
        ``rank_bases``, those as well, fitted on the folds of ``fit`` (the same pairs, so their
        out-of-fold scores join ``oof_scores_`` row for row) and on all the training data, and a
        meta-model on all the columns; or the pairwise model (``ranking="pairwise"``). Fitted
        at the first call."""
        if self.training_data_ is None:
            return self.bases_, self.meta_
        if self.rank_meta_ is None and self.ranking == "pairwise":
            self.rank_meta_, self.rank_bases_ = self._pairwise_model(self.training_data_)
        if self.rank_meta_ is None:
            scores, _, rank_bases, _ = self._stacked(self.training_data_, self.rank_bases)
            s = np.hstack([self.oof_scores_, scores])
            logits = _logits(list(s.T))
            self.rank_meta_ = self._meta_model(logits, self.oof_labels_)
            self.rank_bases_ = rank_bases
        return [*self.bases_, *self.rank_bases_], self.rank_meta_

    def _pairwise_model(self, X: Corpus) -> tuple[LogisticRegression, list[Verifier]]:
        """The pairwise ranking model (see ``ranking``) and ``rank_bases`` fitted on ``X``."""
        k = int(self.n_folds)
        diffs = []
        with shared_counts(readable_texts(X)):
            parts = list(self._fold_parts(X))
            fold_rank_bases, rank_bases = self._base_fits(
                self.rank_bases, [t for t, _ in parts], X, "ranking"
            )
            for f, (_, held) in enumerate(parts):
                queries, same, other = training_triplets(
                    held, int(self.n_pairs) // (2 * k), seed=self.random_state + f
                )
                pairs = PairSet.from_lists([[q] for q in queries * 2], same + other)
                bases = [*self.fold_bases_[f], *fold_rank_bases[f]]
                logits = _logits([b.score_problems(pairs) for b in bases])
                diffs.append(logits[: len(queries)] - logits[len(queries) :])
        d = np.vstack(diffs)
        model = fit_one_thread(
            LogisticRegression(C=self.C, fit_intercept=False),
            np.vstack([d, -d]),
            np.r_[np.ones(len(d)), np.zeros(len(d))],
        )
        return model, rank_bases

    def _base_fits(self, bases, trains, X, role: str) -> tuple[list[list], list[Verifier]]:
        """``bases`` fitted on each of ``trains`` (the folds' training parts) and on ``X``, in
        the order of ``bases``. A base that cannot be fitted on one of them (a ValueError:
        Delta on texts without a word, LambdaG needing folds of its own inside a fold's
        training texts, which a small corpus of one's own may not give) is left out of the
        ``role`` (the stack, the ranking), with a warning, rather than failing it."""
        per_fold, whole = [[] for _ in trains], []
        for base in bases:
            try:
                fits = [_without_grey_zone(base).fit(t) for t in [*trains, X]]
            except ValueError as exc:
                warnings.warn(
                    f"{type(self).__name__}: base {type(base).__name__} left out of the "
                    f"{role}: {exc}",
                    stacklevel=5,
                )
                continue
            for fold, fit in zip(per_fold, fits[:-1], strict=True):
                fold.append(fit)
            whole.append(fits[-1])
        return per_fold, whole

    def _attribute_impl(self, candidates, texts):
        got = [b.attribute(candidates, texts) for b in self.bases_]
        return self._meta([g.ravel() for g in got], True).reshape(got[0].shape)
