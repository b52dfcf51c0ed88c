"""LambdaG: the likelihood ratio of the known author's grammar model to reference models.

Source: A. Nini, O. Halvani, L. Graner, V. Gherardi & S. Ishihara, "Authorship Verification based
on the Likelihood Ratio of Grammar Models" (arXiv 2403.08462, 2024; published as "Grammar as a
behavioral biometric", Humanities and Social Sciences Communications 13, 2026).

For one problem (known texts K, unknown text U):

1. Text distortion stands in for the paper's POSNoise (which needs a part-of-speech tagger):
   :class:`stylo.features.TextDistortion` keeps the ``n_words`` most frequent words of the
   training texts and masks every other word (``"dv_ma"``: one ``*`` per letter, so word
   length survives as a coarse word class; ``"dv_sa"``: one ``*`` per word) and every digit.
   It is fitted on the training texts of any language, where a function-word list would
   need one per language (stylo ships English only). Texts are lower-cased, split into
   sentences (after ``.``, ``!``, ``?``, their CJK forms and at line breaks) and into tokens
   (letter runs, ``*`` runs, ``#`` runs, single other characters, each Han ideograph or kana
   alone); a token the training texts never had becomes one shared "other" token.
2. The grammar model of K: an interpolated Kneser-Ney model of order ``order`` on K's
   sentences (NLTK's ``KneserNeyInterpolated``, computed by :mod:`baselines._kneser_ney`).
3. ``n_references`` reference models, each on random sentences of the reference pool (the
   training texts), drawn until they hold as many tokens as K does, so that the known and the
   reference models see the same amount of text (the paper draws as many sentences as K has;
   tokens are steadier where sentence splitting fails).
4. lambda = sum over U's sentences of log P(s | K) - mean over references of log P(s | ref).
5. A logistic regression on the lambdas of the training problems maps lambda to P(same
   author); with ``grey_zone`` a band of non-answers (0.5) is fitted for PAN's metrics
   (:class:`baselines.calibration.ScoreCalibrator`). ``rank`` uses the probabilities.

Speed, where the paper's package fits a new model per reference per problem: each reference r
is one random order of the pool's sentences, and the reference model for a problem is the
shortest prefix of that order with enough tokens; problems are visited by known size and the
model grows between them, so each reference is fitted once for all problems of a call. Known
models are fitted once per distinct known text set. The pool is the training texts only.

Training lambdas (for the calibration) are cross-fitted: the training problems are split into
``n_folds`` folds (by author when ``fit`` gets a Corpus with enough authors, else by text
within each author), and a fold's references are drawn
only from texts outside it, so that no reference holds the problem's own texts, as at test
time. The references used after ``fit`` draw from all training texts.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score

from baselines._kneser_ney import known_model_totals, reference_model_totals
from baselines._sentence_tokens import SentenceTokens
from baselines.calibration import ScoreCalibrator
from stylo._threads import kernel_threads
from stylo.corpus import Corpus, PairSet
from stylo.features import TextDistortion
from stylo.text_input import has_text
from stylo.verifier import NO_ANSWER, Verifier, attribution_problems, training_pairs

__all__ = ["LambdaG"]

_OTHER = 2  # id of every token outside the training vocabulary; 0/1 pad sentences


class LambdaG(Verifier):
    """LambdaG verifier (module docstring).

    Parameters
    ----------
    order : n-gram order of the Kneser-Ney models (>= 2).
    discount : Kneser-Ney discount in (0, 1).
    n_references : reference models averaged per problem.
    n_words, distortion : kept words and masking of :class:`~stylo.features.TextDistortion`.
    eps : weight of a uniform distribution over the token alphabet mixed into every token
        probability, so that a token one model never saw costs log(eps / alphabet) instead of
        an infinite penalty.
    grey_zone : fit a band of non-answers on the training lambdas.
    n_folds : folds of the cross-fitted training lambdas.
    n_pairs : training pairs drawn when ``fit`` gets a Corpus (a PairSet is used as given).
    random_state : seed of the folds, the training pairs and the reference samples.
    n_jobs : threads of the Kneser-Ney kernels (None: every core, ``NUMBA_NUM_THREADS``;
        negative: joblib's convention).

    The defaults were chosen on training problems only: the mean AUC of the cross-fitted
    training lambdas over the seven PAN14/PAN15 training sets (``benchmarks/bench_lambdag.py
    --study``; one change at a time, a few rounds) was flat in the order (3: .819, 5: .819,
    10: .817), higher with single-asterisk masking (+.011 over ``dv_ma``) and 1000 kept words
    (+.023 over 300), with eps 0.1 (0.03: -.007, 0.3: -.009; 0.01 at the paper's discount 0.75:
    -.016) and discount 0.3 (0.1 ties with 1000 words but loses .021 with 300; 0.5: -.007);
    100 references gave +.004 over 30 at three times the cost, so 30 keep PAN14 within a
    minute.

    Attributes: ``distortion_``, ``vocabulary_`` (token -> id), ``reference_orders_``
    ((n_references, n_pool_sentences) pool sentence ids), ``calibrator_``, ``train_lambdas_``,
    ``train_labels_`` and ``train_auc_`` (the cross-fitted training lambdas, their labels and
    AUC: the training-data evidence for choosing parameters).
    """

    def __init__(
        self,
        order: int = 3,
        discount: float = 0.3,
        n_references: int = 30,
        n_words: int = 1000,
        distortion: str = "dv_sa",
        eps: float = 0.1,
        grey_zone: bool = True,
        n_folds: int = 2,
        n_pairs: int = 200,
        random_state: int = 0,
        n_jobs: int | None = None,
    ):
        self.order = order
        self.discount = discount
        self.n_references = n_references
        self.n_words = n_words
        self.distortion = distortion
        self.eps = eps
        self.grey_zone = grey_zone
        self.n_folds = n_folds
        self.n_pairs = n_pairs
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- fitting ---------------------------------------------------------------------------
    def _validate(self) -> None:
        kernel_threads(self.n_jobs)  # a bad n_jobs is refused at fit, in one line
        if int(self.order) != self.order or self.order < 2:
            raise ValueError(f"order must be an int >= 2, got {self.order!r}")
        if not 0.0 < self.discount < 1.0:
            raise ValueError(f"discount must be in (0, 1), got {self.discount!r}")
        if int(self.n_references) != self.n_references or self.n_references < 1:
            raise ValueError(f"n_references must be an int >= 1, got {self.n_references!r}")
        if not 0.0 < self.eps < 1.0:
            raise ValueError(f"eps must be in (0, 1), got {self.eps!r}")
        if int(self.n_folds) != self.n_folds or self.n_folds < 2:
            raise ValueError(f"n_folds must be an int >= 2, got {self.n_folds!r}")

    def _fit_impl(self, X, y) -> None:
        self._validate()
        rng = np.random.default_rng(self.random_state)
        if isinstance(X, Corpus):
            texts = list(X.texts)
        else:
            texts = [t for ks in X.known for t in ks] + list(X.unknown)
        texts = list(dict.fromkeys(t for t in texts if has_text(t)))
        if not texts:
            raise ValueError("fit needs at least one non-empty text")
        self.distortion_ = TextDistortion(k=self.n_words, method=self.distortion).fit(texts)
        tokens = SentenceTokens(self.distortion_.transform(texts))
        words = sorted(tokens.distinct())
        self.vocabulary_ = {w: i for i, w in enumerate(words, start=_OTHER + 1)}
        per_text = tokens.ids(self.vocabulary_, _OTHER)
        self.pool_tokens_, self.pool_starts_ = _stored(per_text)
        text_of_sentence = np.repeat(np.arange(len(texts)), [len(n) for _, n in per_text])

        # the folds' pairs are fit texts: their token ids are known already
        fitted_ids = dict(zip(texts, per_text))
        lambdas, labels = [], []
        for pairs, held_out in self._folds(X, {t: i for i, t in enumerate(texts)}, rng):
            allowed = np.flatnonzero(~np.isin(text_of_sentence, held_out))
            if allowed.size == 0:
                raise ValueError("a fold's references would have no text: give more texts")
            orders = self._orders(rng, allowed)
            lambdas.append(self._lambdas(pairs.known, pairs.unknown, orders, fitted_ids))
            labels.append(pairs.labels)
        lam, lab = np.concatenate(lambdas), np.concatenate(labels)
        ok = np.isfinite(lam)
        self.train_lambdas_, self.train_labels_ = lam[ok], lab[ok]
        self.train_auc_ = float(roc_auc_score(self.train_labels_, self.train_lambdas_))
        self.calibrator_ = ScoreCalibrator(platt=True, grey_zone=self.grey_zone).fit(
            self.train_lambdas_, self.train_labels_
        )
        self.reference_orders_ = self._orders(rng, np.arange(len(text_of_sentence)))

    def _folds(self, X, index: dict[str, int], rng) -> list[tuple[PairSet, list[int]]]:
        """Per fold: its training pairs and the pool texts (indices) its references avoid:
        all texts of the fold's authors when a Corpus has enough authors for author-disjoint
        folds, else (a Corpus) the fold's share of every author's texts, else the texts of the
        fold's own problems, or, when those would be every text, the fold's share of the texts
        with the problems that lie wholly inside it."""
        if isinstance(X, Corpus):
            for folds in (self._author_folds, self._text_folds):
                try:
                    return folds(X, index, rng)
                except ValueError:
                    pass
            X = training_pairs(X, n_pairs=self.n_pairs, seed=int(rng.integers(2**31)))
        pairs = training_pairs(X)
        order = rng.permutation(len(pairs))
        out = []
        for f in range(self.n_folds):
            part = pairs.subset(np.sort(order[f :: self.n_folds]))
            if part.labels.all() or not part.labels.any():
                raise ValueError(
                    f"fold {f} of {self.n_folds} lacks same- or different-author "
                    f"problems: give more training problems or fewer folds"
                )
            held = [t for ks in part.known for t in ks] + list(part.unknown)
            out.append((part, [index[t] for t in held if t in index]))
        if any(set(held) >= set(index.values()) for _, held in out):
            return self._pair_text_folds(pairs, index, rng)
        return out

    def _pair_text_folds(self, pairs: PairSet, index: dict[str, int], rng):
        # many problems over few texts (pairs drawn densely from a small corpus): a fold of
        # problems then touches every text and would leave its references none. Deal the
        # texts round the folds instead; a fold keeps the problems all of whose texts it holds
        ids = rng.permutation(sorted(index.values()))
        fold_of = {int(t): k % self.n_folds for k, t in enumerate(ids)}
        sides = [
            {fold_of.get(index.get(t, -1), -1) for t in (*known, unknown)}
            for known, unknown in zip(pairs.known, pairs.unknown, strict=True)
        ]
        out = []
        for f in range(self.n_folds):
            part = pairs.subset(np.flatnonzero([s == {f} for s in sides]))
            if len(part) == 0 or part.labels.all() or not part.labels.any():
                raise ValueError(
                    f"the training problems share their texts so widely that no fold of "
                    f"{self.n_folds} keeps both same- and different-author problems apart from "
                    f"other texts: give more texts or fewer folds"
                )
            out.append((part, [t for t, k in fold_of.items() if k == f]))
        return out

    def _author_folds(self, X: Corpus, index: dict[str, int], rng):
        by_author = X.by_author()
        authors = rng.permutation(sorted(by_author))
        return self._corpus_folds(
            X,
            index,
            rng,
            [
                np.concatenate([by_author[a] for a in authors[f :: self.n_folds]])
                for f in range(self.n_folds)
            ],
        )

    def _text_folds(self, X: Corpus, index: dict[str, int], rng):
        # too few authors for author folds (a small training corpus, or an ensemble's fold of
        # one): the texts dealt round the folds author by author, the deal running on across
        # authors so that no fold is always the short one; each fold keeps same-author pairs
        # and its references still exclude all of its texts
        rows, dealt = [[] for _ in range(self.n_folds)], 0
        for a in sorted(X.by_author()):
            for r in rng.permutation(X.by_author()[a]):
                rows[dealt % self.n_folds].append(r)
                dealt += 1
        return self._corpus_folds(X, index, rng, [np.asarray(r, dtype=np.int64) for r in rows])

    def _corpus_folds(self, X: Corpus, index: dict[str, int], rng, fold_rows):
        out = []
        for f, rows in enumerate(fold_rows):
            part = X.subset(np.sort(rows), name=f"{X.name}:fold{f}")
            pairs = training_pairs(
                part, n_pairs=max(2, self.n_pairs // self.n_folds), seed=int(rng.integers(2**31))
            )
            out.append((pairs, [index[t] for t in part.texts if t in index]))
        return out

    def _orders(self, rng, sentence_ids: np.ndarray) -> np.ndarray:
        return np.stack([rng.permutation(sentence_ids) for _ in range(self.n_references)])

    # -- text to token ids -----------------------------------------------------------------
    def _token_ids(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text, its token ids, sentence after sentence, and the lengths of its sentences
        that have a token (``SentenceTokens.ids`` of the distorted text)."""
        return SentenceTokens(self.distortion_.transform(texts)).ids(self.vocabulary_, _OTHER)

    @property
    def _n_symbols(self) -> int:
        return len(self.vocabulary_) + _OTHER + 1

    # -- scoring ---------------------------------------------------------------------------
    def _lambdas(
        self,
        known_lists: list[list[str]],
        unknowns: list[str],
        orders: np.ndarray,
        known_ids: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> np.ndarray:
        """Raw lambda of each problem (known texts, unknown text) against the references
        ``orders`` (rows of pool sentence ids); NaN where the known or unknown side has no
        text. ``known_ids``: texts whose token ids and sentence lengths (``_token_ids``) are known
        already (not distorted and tokenised again)."""
        known_lists = [[t for t in ks if has_text(t)] for ks in known_lists]
        out = np.full(len(unknowns), np.nan)
        ok = [p for p, (ks, u) in enumerate(zip(known_lists, unknowns)) if ks and has_text(u)]
        if not ok:
            return out
        known_lists = [known_lists[p] for p in ok]
        unknowns = [unknowns[p] for p in ok]
        texts = list(dict.fromkeys([t for ks in known_lists for t in ks] + unknowns))
        index = {t: i for i, t in enumerate(texts)}
        known_ids = known_ids or {}
        new = [t for t in texts if t not in known_ids]
        new_ids = dict(zip(new, self._token_ids(new)))
        per_text = [known_ids[t] if t in known_ids else new_ids[t] for t in texts]
        tok, starts = _stored(per_text)
        first = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(n) for _, n in per_text], out=first[1:])

        groups: dict[tuple[int, ...], list[int]] = {}
        for p, ks in enumerate(known_lists):
            groups.setdefault(tuple(sorted({index[t] for t in ks})), []).append(p)
        model_sentences = [
            np.concatenate([np.arange(first[t], first[t + 1]) for t in key]) for key in groups
        ]
        ranges = [(int(first[index[u]]), int(first[index[u] + 1])) for u in unknowns]
        n_threads = kernel_threads(self.n_jobs)
        sums = known_model_totals(
            tok,
            starts,
            model_sentences,
            [[ranges[p] for p in m] for m in groups.values()],
            self.order,
            self._n_symbols,
            self.discount,
            self.eps,
            n_threads,
        )
        known = np.empty(len(unknowns))
        sizes = np.empty(len(unknowns), dtype=np.int64)
        n_tokens = np.diff(starts)
        for sentences, m, total in zip(model_sentences, groups.values(), sums):
            known[m] = total
            sizes[m] = n_tokens[sentences].sum()
        refs = reference_model_totals(
            self.pool_tokens_,
            self.pool_starts_,
            orders,
            sizes,
            tok,
            starts,
            ranges,
            self.order,
            self._n_symbols,
            self.discount,
            self.eps,
            n_threads,
        )
        out[ok] = known - refs.mean(axis=1)
        return out

    def _answers(self, raw: np.ndarray, grey_zone: bool = True) -> np.ndarray:
        out = np.full(raw.shape, NO_ANSWER)
        ok = np.isfinite(raw)
        if ok.any():
            calibrate = self.calibrator_.transform if grey_zone else self.calibrator_.probabilities
            out[ok] = calibrate(raw[ok])
        return out

    def _score_impl(self, texts_a, texts_b):
        return self._answers(
            self._lambdas([[a] for a in texts_a], list(texts_b), self.reference_orders_)
        )

    def _rank_many_impl(self, queries, candidate_lists):
        # probabilities without the grey zone, so that candidates inside it are not tied
        raw = self._lambdas(
            [[q] for q, c in zip(queries, candidate_lists) for _ in c],
            [x for c in candidate_lists for x in c],
            self.reference_orders_,
        )
        flat = self._answers(raw, grey_zone=False)
        return np.split(flat, np.cumsum([len(c) for c in candidate_lists])[:-1])

    def _rank_impl(self, query, candidates):
        return self._rank_many_impl([query], [candidates])[0]

    def _attribute_impl(self, candidates, texts):
        # without the grey zone too, which would tie the candidates inside it at 0.5
        raw = self._lambdas(*attribution_problems(candidates, texts), self.reference_orders_)
        return self._answers(raw, grey_zone=False).reshape(len(texts), len(candidates))

    def raw_scores(self, pairs: PairSet) -> np.ndarray:
        """Uncalibrated lambdas of a PairSet's problems (all known texts of a problem form
        its known model)."""
        self._check_fitted()
        return self._lambdas(pairs.known, pairs.unknown, self.reference_orders_)


def _stored(per_text: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """``_token_ids``' texts as one sentence store (``baselines._kneser_ney.sentence_store``'s
    layout): all token ids, and the start of each sentence (n_sentences + 1,)."""
    lengths = [n for _, n in per_text]
    starts = np.zeros(sum(map(len, lengths)) + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.concatenate(lengths), out=starts[1:])
    tok = np.concatenate([ids for ids, _ in per_text]) if per_text else np.zeros(0, np.int64)
    return tok, starts
