"""Cross-domain attribution the way the PAN 2018/2019 winners did it: several views, one
linear model each, their scores combined, and an open-set rejection fitted on training data.

Sources: J. E. Custodio and I. Paraboni, "EACH-USP ensemble cross-domain authorship
attribution", PAN 2018 (char n-grams, text-distorted char n-grams and word n-grams, one
classifier each, max-abs scaled TF-IDF, soft voting); B. Muttenthaler, G. Lucas and J. Amann,
"Authorship attribution in fan-fictional texts given variable length character and word
n-grams", PAN 2019 (char 2-5, distorted char 1-3 and word 1-3 TF-IDF, soft-voting linear
classifiers, "unknown author" when the two most probable candidates are close);
E. Stamatatos, "Authorship attribution using text distortion", EACL 2017.

For each problem (the candidates' known texts and the texts to attribute):

1. the ``views``, each sublinear TF-IDF: by default character 2-5-grams, character 1-3-grams of the
   text distorted to its 100 most frequent words (:class:`TextDistortion`, the letters of all other
   words masked, so topic words leave only their shape), word 1-3-grams, and character 1-4-grams of
   the text with every word masked (punctuation, spacing, digits and word lengths alone: the
   punctuation n-grams that carry across topics in U. Sapkota et al., "Not all character n-grams
   are created equal", NAACL 2015). The vocabulary, idf and
   scaling are fitted on all the problem's texts, known and unknown (no labels are read; PAN's
   problems give the unknown texts up front). ``scaling="l2-maxabs"`` normalises rows (texts of any
   length alike) and then divides each column by its largest value (EACH-USP's max-abs scaling:
   rare and frequent n-grams weigh alike); ``"maxabs"`` and ``"l2"`` do one of the two. A tuple of
   scalings (the default: both) fits every view under each of them, as more voters: max-abs scaling
   carries the cross-domain gain but costs accuracy on short in-domain texts, where plain L2 rows
   do better;
2. per view a one-vs-rest linear SVM on the known texts. ``combination="zscore"`` standardises
   each text's decision values over the candidates within a view before the views are
   averaged: the views' margins differ in scale (a view with more n-grams separates the known
   texts by more), and unscaled the widest view outvotes the others; ``"mean"`` averages the
   raw values. (The winners averaged probabilities; an SVM on the same rows trains 20x faster
   than a logistic regression with all n-grams and its decision values keep the ranking.)
3. the views' votes are weighed by how well each attributes the problem's own known texts:
   every candidate's known texts are cut into three folds, each view's model is fitted on two
   and attributes the third, and a view's weight is its accuracy over the folds above chance
   (1 / candidates), the weights summing to one (equal where no view is above chance;
   ``weighting="equal"``: always equal). Which views carry a problem differs: topic words help
   where an author keeps to a subject (machine-learning papers) and mislead across topics,
   where the distorted and masked views hold. Under ``weighting="topic"`` (the default) the
   folds mimic a change of topic: all known texts are placed on their first principal axis
   in the first word view (topic words; the first view if there is none) and each
   candidate's texts are cut into three runs along it, so a view is weighed by how it
   attributes a candidate's texts on the side of the axis it was not fitted on;
   ``"cv"`` deals each candidate's texts round the folds in order. Chosen on training data
   (``benchmarks/choose_attribution``: closed-set sub-splits of training texts, mlpapers
   0.667 -> 0.700 for the dealt folds, the criterion 0.774 -> 0.781 -> 0.785 for the runs
   along the axis);
4. self-training (transductive, no truth read; Yarowsky's bootstrapping, ACL 1995): every
   candidate takes the same number of the texts it wins by the largest lead (``self_training``
   sets how many, at most as many as the candidate winning fewest has) as extra known texts,
   and every view's model is fitted again. It moves the models toward the domain of the texts
   to attribute. The equal number matters: the texts to attribute share a domain, and a
   candidate given more of them than the others draws every text of that domain to itself
   (taking the most confident quarter of all texts instead lowered PAN18-train macro-F1 from
   0.745 to 0.667);
5. candidate j scores ``0.5 + (d_j - max_{k != j} d_k - reject_margin_) / 2``: the best
   candidate reaches 0.5 exactly when its lead over the second reaches the margin, so the
   protocol's "every candidate below 0.5 -> unknown author" is PAN19's rule.

The defaults were chosen on PAN18's training problems and closed-set sub-splits of training
texts only (``python -m benchmarks.choose_attribution``).

``fit`` learns the margin from training problems alone (a Corpus with ``problem``,
``candidate`` and ``role`` columns, as :mod:`stylo.protocols.cdaa` passes the known texts): in
each problem up to ``n_simulated`` candidates, drawn with the seed, play the unknown author in
turn (all their texts are to be attributed and their answer is "unknown") while one known text
of each other candidate is held out; the margin maximising the mean macro-F1 over these
simulated problems is kept. No text whose author is to be found is read for it.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MaxAbsScaler
from sklearn.svm import LinearSVC

from baselines._row_space import first_axis, gram_factor, span_coordinates
from baselines.svm import lead_scores, top2_margin
from stylo.features import CharNgrams, EmptyVocabularyError, TextDistortion, WordNgrams, gram
from stylo.metrics.classification import attribution_scores
from stylo.progress import advance
from stylo.verifier import Attributor

__all__ = ["EnsembleAttributor"]

_UNKNOWN = "<UNK>"
#: margins tried when fitting the rejection (leads of the combined decision values; z-scores
#: of a text over its candidates rarely lead by more than 3)
_MARGINS = np.round(np.arange(0.0, 3.001, 0.025), 3)
_VIEW_KINDS = ("char", "distorted", "masked", "word")
_SCALINGS = ("l2-maxabs", "maxabs", "l2")
_COMBINATIONS = ("zscore", "mean")
_WEIGHTINGS = ("equal", "cv", "topic")
#: folds of the known texts that weigh the views under ``weighting="cv"`` or ``"topic"``
_CV_FOLDS = 3
#: problems with more texts than this are fitted on the sparse rows: the Gram matrix's
#: eigendecomposition grows with the cube of the texts
_GRAM_MAX_ROWS = 2000


class EnsembleAttributor(Attributor):
    """Soft-voting ensemble of per-view linear models with a fitted open-set margin; for
    ``attribute`` only (see the module docstring).

    Parameters
    ----------
    views : tuple of (kind, (min_n, max_n))
        The feature views, kind ``"char"`` (character n-grams), ``"distorted"`` (character
        n-grams of the distorted text), ``"masked"`` (character n-grams of the text with every
        word masked: punctuation, spacing, digits and word lengths) or ``"word"`` (word
        n-grams); at least one.
    scaling : {"l2-maxabs", "maxabs", "l2"} or tuple of them
        L2-normalised rows then column max-abs scaling of the TF-IDF, or only one of them; a
        tuple fits one model per view and scaling, all voting.
    combination : {"zscore", "mean"}
        Views' decision values standardised per text before averaging, or averaged raw.
    weighting : {"topic", "cv", "equal"}
        Each view's weight in the average: its accuracy above chance on held-out folds of the
        problem's known texts, cut along their topic axis or dealt in order (see the module
        docstring), or equal weights.
    C : float
        Inverse regularisation of each view's linear SVM.
    distortion_k : int
        Words kept by the text distortion.
    min_df : int
        Minimum document frequency of an n-gram within a problem.
    max_features : int or None
        The most frequent n-grams kept per view (bounds each problem's model size).
    reject_margin : float or None
        Lead over the second candidate below which a text is "unknown author"; None fits it
        on the training problems given to ``fit`` (0.0 without them: closed set).
    n_simulated : int
        Candidates per training problem that play the unknown author when fitting the margin.
    self_training : float in [0, 1]
        Texts per candidate that join its known texts in self-training, as a share of the
        texts to attribute over the candidates (1.0: ``len(texts) // n_candidates``, capped
        by the fewest texts a candidate wins; 0: no self-training).
    self_training_rounds : int
        Rounds of self-training (each picks its share afresh from the latest decisions).
    random_state : int
        Seed of the simulated problems (who plays the unknown author, which texts are held
        out) and of the SVMs.

    Fitted attributes: ``reject_margin_``, ``margin_scores_`` (mean macro-F1 of each tried
    margin on the simulated problems; empty when the margin was given).
    """

    requires_fit = False

    def __init__(
        self,
        views: tuple = (
            ("char", (2, 5)),
            ("distorted", (1, 3)),
            ("word", (1, 3)),
            ("masked", (1, 4)),
        ),
        scaling: str | tuple = ("l2", "l2-maxabs"),
        combination: str = "zscore",
        weighting: str = "topic",
        C: float = 1.0,
        distortion_k: int = 100,
        min_df: int = 2,
        max_features: int | None = None,
        reject_margin: float | None = None,
        n_simulated: int = 3,
        self_training: float = 1.0,
        self_training_rounds: int = 1,
        random_state: int = 0,
    ):
        self.views = views
        self.scaling = scaling
        self.combination = combination
        self.weighting = weighting
        self.C = C
        self.distortion_k = distortion_k
        self.min_df = min_df
        self.max_features = max_features
        self.reject_margin = reject_margin
        self.n_simulated = n_simulated
        self.self_training = self_training
        self.self_training_rounds = self_training_rounds
        self.random_state = random_state

    # -- fitting ---------------------------------------------------------------------------
    def _fit_impl(self, X, y) -> None:
        _check_views(self.views)
        scalings = _scalings(self.scaling)
        if not scalings or any(s not in _SCALINGS for s in scalings):
            raise ValueError(
                f"scaling must be one of {_SCALINGS} or a non-empty tuple of them, "
                f"got {self.scaling!r}"
            )
        if self.combination not in _COMBINATIONS:
            raise ValueError(
                f"combination must be one of {_COMBINATIONS}, got {self.combination!r}"
            )
        if self.weighting not in _WEIGHTINGS:
            raise ValueError(f"weighting must be one of {_WEIGHTINGS}, got {self.weighting!r}")
        if not float(self.C) > 0:
            raise ValueError(f"C must be > 0, got {self.C!r}")
        if (
            isinstance(self.n_simulated, bool)
            or not isinstance(self.n_simulated, int)
            or self.n_simulated < 1
        ):
            raise ValueError(f"n_simulated must be an int >= 1, got {self.n_simulated!r}")
        if not 0.0 <= float(self.self_training) <= 1.0:
            raise ValueError(f"self_training must be in [0, 1], got {self.self_training!r}")
        rounds = self.self_training_rounds
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
            raise ValueError(f"self_training_rounds must be an int >= 0, got {rounds!r}")
        if self.reject_margin is not None:
            if not float(self.reject_margin) >= 0.0:
                raise ValueError(f"reject_margin must be >= 0, got {self.reject_margin!r}")
            self.reject_margin_, self.margin_scores_ = float(self.reject_margin), {}
            return
        problems = _training_problems(X)
        if not problems:
            self.reject_margin_, self.margin_scores_ = 0.0, {}
            return
        rng = np.random.default_rng(self.random_state)
        simulated = []  # (decision values, candidate names, truths) per simulated problem
        for done, candidates in enumerate(problems.values(), start=1):
            names = sorted(candidates)
            outs = rng.choice(names, size=min(self.n_simulated, len(names)), replace=False)
            # a problem's simulated problems hold the same texts, in other orders: their views
            # are computed once
            views: dict[tuple, list] = {}
            for out in outs:
                known, texts, truth = [], [], []
                for name in names:
                    docs = candidates[name]
                    if name == out:
                        texts += docs
                        truth += [_UNKNOWN] * len(docs)
                        continue
                    held = int(rng.integers(len(docs)))
                    known.append([d for i, d in enumerate(docs) if i != held])
                    texts.append(docs[held])
                    truth.append(name)
                kept = [n for n in names if n != out]
                simulated.append((self._decisions(known, texts, views), kept, truth))
            advance("simulated open-set problems", done, len(problems))
        self.margin_scores_ = {}
        for margin in _MARGINS:
            f1 = [
                attribution_scores(
                    truth, _answers(p, kept, margin), labels=kept, unknown_label=_UNKNOWN
                )["macro_f1"]
                for p, kept, truth in simulated
            ]
            self.margin_scores_[float(margin)] = float(np.mean(f1))
        self.reject_margin_ = max(self.margin_scores_, key=lambda m: (self.margin_scores_[m], -m))

    # -- attribution -----------------------------------------------------------------------
    def _attribute_impl(self, candidates, texts):
        if len(candidates) < 2:
            raise ValueError(f"{type(self).__name__} needs at least two candidates")
        return lead_scores(self._decisions(candidates, texts), self.reject_margin_)

    def _decisions(
        self, candidates: list[list[str]], texts: list[str], views: dict | None = None
    ) -> np.ndarray:
        """Combined decision values of the views, shape (len(texts), len(candidates)); with
        ``self_training``, after each round every candidate's most confidently won texts (the
        same number for each) join its known texts and every view's model is fitted again.
        ``views``: the views of earlier calls, by their texts (see ``_view_matrices``)."""
        known = [t for c in candidates for t in c]
        labels = np.repeat(np.arange(len(candidates)), [len(c) for c in candidates])
        matrices, kinds = self._view_matrices(known + list(texts), len(known), views)
        axis = None
        if self.weighting == "topic":
            axis = first_axis(matrices[kinds.index("word") if "word" in kinds else 0][0])
        weights = self._view_weights(matrices, labels, axis)
        d = self._combined(matrices, labels, np.zeros(len(texts), dtype=bool), labels[:0], weights)
        for _ in range(int(self.self_training_rounds) if self.self_training > 0 else 0):
            chosen = _balanced_confident(d, float(self.self_training))
            d = self._combined(matrices, labels, chosen, d.argmax(axis=1)[chosen], weights)
        return d

    def _view_weights(self, matrices, labels, axis=None) -> np.ndarray:
        """Each view's weight in the vote, summing to 1: equal, or its accuracy above chance
        when its model, fitted on all but one fold of the known texts (``_CV_FOLDS`` folds),
        attributes the fold left out; equal where no view is above chance. Every candidate's
        texts are dealt round the folds in order, or, given each known text's place on an
        ``axis``, cut into runs along it (ties in order)."""
        n = len(matrices)
        if self.weighting == "equal" or n == 1:
            return np.full(n, 1.0 / n)
        fold = np.empty(len(labels), dtype=np.int64)
        for c in np.unique(labels):
            mine = np.flatnonzero(labels == c)
            if axis is None:
                fold[mine] = np.arange(len(mine)) % _CV_FOLDS
            else:
                run = mine[np.argsort(axis[mine], kind="stable")]
                fold[run] = np.arange(len(mine)) * _CV_FOLDS // len(mine)
        n_classes = len(np.unique(labels))
        score = np.zeros(n)
        for f in range(_CV_FOLDS):
            held, kept = fold == f, fold != f
            if not held.any() or len(np.unique(labels[kept])) < n_classes:
                continue
            for v, (x_known, _) in enumerate(matrices):
                got = self._view_decisions(x_known[kept], labels[kept], x_known[held])
                score[v] += np.sum(got.argmax(axis=1) == labels[held])
        above = np.clip(score / len(labels) - 1.0 / n_classes, 0.0, None)
        return above / above.sum() if above.sum() > 0 else np.full(n, 1.0 / n)

    def _view_matrices(
        self, everything: list[str], n_known: int, views: dict | None = None
    ) -> tuple[list[tuple], list[str]]:
        """(known rows, rows to attribute) of every view and scaling, in a fixed order, and
        the kind of each (see ``_views_of``).

        Every step before the Gram matrix's factor depends on the set of texts only, row by row
        (vocabulary, idf, column maxima, each row's weights and norm; each inner product sums
        over columns in their order), so the views are computed for the texts in sorted order,
        kept in ``views`` under that order when given, and their rows (and a Gram matrix's
        rows and columns) put in the order of ``everything``: the same arrays, bit for bit,
        as computed in that order, whose factor is then taken."""
        order = sorted(range(len(everything)), key=everything.__getitem__)
        key = tuple(everything[i] for i in order)
        canonical = None if views is None else views.get(key)
        if canonical is None:
            canonical = self._views_of(list(key))
            if views is not None:
                views[key] = canonical
        where = np.empty(len(order), dtype=np.int64)
        where[order] = np.arange(len(order))
        out = []
        for _, x in canonical:
            x = gram_factor(x[np.ix_(where, where)]) if isinstance(x, np.ndarray) else x[where]
            out.append((x[:n_known], x[n_known:]))
        return out, [kind for kind, _ in canonical]

    def _views_of(self, everything: list[str]) -> list[tuple]:
        """(kind, TF-IDF rows of ``everything``, rows in its order) of every view and scaling
        in a fixed order (their Gram matrix where there are at most ``_GRAM_MAX_ROWS`` texts).

        A view with no n-gram in at least ``min_df`` of the texts is left out, with a warning
        (text written without spaces, as Chinese or Japanese is, makes each text one word, so
        the word view has none); with no view left, a ValueError."""
        tfidf = {
            "lowercase": False,
            "min_df": min(int(self.min_df), len(everything)),
            "max_features": self.max_features,
            "use_idf": True,
            "sublinear_tf": True,
            "dtype": np.float64,
        }
        rewritten, out, skipped = {}, [], []  # distortion's k -> the texts distorted
        for kind, ngram_range in self.views:
            docs = everything
            if kind in ("distorted", "masked"):
                k = self.distortion_k if kind == "distorted" else 0
                if k not in rewritten:
                    distortion = TextDistortion(k=k, method="dv_ma")
                    rewritten[k] = distortion.fit(everything).transform(everything)
                docs = rewritten[k]
            ngrams = WordNgrams if kind == "word" else CharNgrams
            rows = {}  # row norm -> TF-IDF, vectorised once for the scalings sharing it
            for scaling in _scalings(self.scaling):
                norm = None if scaling == "maxabs" else "l2"
                if norm not in rows:
                    vectorizer = ngrams(tuple(ngram_range), norm=norm, **tfidf)
                    try:
                        rows[norm] = vectorizer.fit_transform(docs)
                    except EmptyVocabularyError:
                        skipped.append(f"{kind} {tuple(ngram_range)}")
                        break
                x = rows[norm]
                if scaling.endswith("maxabs"):
                    x = MaxAbsScaler().fit_transform(x)
                out.append((kind, gram(x) if x.shape[0] <= _GRAM_MAX_ROWS else sp.csr_matrix(x)))
        if not out:
            raise ValueError(
                f"{type(self).__name__}: none of its views {list(self.views)} finds an n-gram "
                f"in {tfidf['min_df']} or more of the {len(everything)} texts"
            )
        if skipped:
            warnings.warn(
                f"{type(self).__name__}: views without an n-gram in {tfidf['min_df']} or more "
                f"of the {len(everything)} texts left out: {', '.join(skipped)}",
                stacklevel=2,
            )
        return out

    def _combined(self, matrices, labels, chosen, chosen_labels, weights) -> np.ndarray:
        """Weighted mean of the views' decision values, each view's model fitted on the known
        rows and the ``chosen`` rows to attribute with their ``chosen_labels``."""
        fit_labels = np.concatenate([labels, chosen_labels])
        d = 0.0
        for (x_known, x_texts), w in zip(matrices, weights, strict=True):
            if w == 0.0:
                continue
            x_fit = x_known
            if chosen.any():
                dense = isinstance(x_known, np.ndarray)
                x_fit = (np.vstack if dense else sp.vstack)([x_known, x_texts[chosen]])
            got = self._view_decisions(x_fit, fit_labels, x_texts)
            d = d + (got if self.weighting == "equal" else w * got)
        # equal weights: the sum over the views divided once, as the plain mean is
        return d / len(matrices) if self.weighting == "equal" else d

    def _view_decisions(self, x_known, labels, x_texts) -> np.ndarray:
        """One view's linear SVM decision values for the texts, (n_texts, n_candidates),
        z-scored per text under ``combination="zscore"``."""
        if isinstance(x_known, np.ndarray) and x_known.shape[1] > x_known.shape[0]:
            x_known, x_texts = span_coordinates(x_known, x_texts)
        # the dual solver always (``dual="auto"`` would take the primal one for as many
        # columns as rows): it reads the rows through their inner products alone
        model = LinearSVC(C=float(self.C), dual=True, random_state=self.random_state)
        with warnings.catch_warnings():
            # liblinear's 1,000 iterations end a few fits before its tolerance (33 of PAN18's
            # 960 test-split fits); the answers are those fits', and the warning, once per fit,
            # filled a grid run's log with 137 copies
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x_known, labels)
        got = model.decision_function(x_texts)
        # scikit-learn gives one column for two classes: the second class's side
        got = np.column_stack([-got, got]) if got.ndim == 1 else got
        if self.combination == "zscore":
            spread = got.std(axis=1, keepdims=True)
            got = (got - got.mean(axis=1, keepdims=True)) / np.where(spread > 0, spread, 1.0)
        return got


def _balanced_confident(d: np.ndarray, share: float) -> np.ndarray:
    """A mask of texts to self-train on: the same number m for every candidate, each
    candidate's m texts it wins by the largest lead; m is the share of the texts over the
    candidates, at most the fewest texts any candidate wins. Equal numbers matter: texts to
    attribute share their domain, and a candidate given more of them than the others would
    draw every text of that domain to itself."""
    best, lead = d.argmax(axis=1), top2_margin(d)
    won = np.bincount(best, minlength=d.shape[1])
    m = min(int(share * len(d) / d.shape[1]), int(won.min()))
    chosen = np.zeros(len(d), dtype=bool)
    for j in range(d.shape[1]) if m > 0 else ():
        mine = np.flatnonzero(best == j)
        chosen[mine[np.argsort(-lead[mine], kind="stable")[:m]]] = True
    return chosen


def _scalings(scaling) -> tuple:
    """``scaling`` as a tuple of scalings (a single name is a tuple of one; anything else
    but a tuple or list, none)."""
    if isinstance(scaling, str):
        return (scaling,)
    return tuple(scaling) if isinstance(scaling, (tuple, list)) else ()


def _check_views(views) -> None:
    ok = isinstance(views, (tuple, list)) and len(views) > 0
    for view in views if ok else ():
        try:
            kind, (lo, hi) = view
        except (TypeError, ValueError):
            ok = False
            break
        ok = ok and kind in _VIEW_KINDS and isinstance(lo, int) and isinstance(hi, int)
        ok = ok and 1 <= lo <= hi
    if not ok:
        raise ValueError(
            f"views must be a non-empty tuple of (kind, (min_n, max_n)) with kind in "
            f"{_VIEW_KINDS} and 1 <= min_n <= max_n, got {views!r}"
        )


def _answers(p: np.ndarray, names: list[str], margin: float) -> list[str]:
    """The best candidate of each row, or unknown where its lead is below ``margin``."""
    best = p.argmax(axis=1)
    return [
        _UNKNOWN if lead < margin else names[b]
        for b, lead in zip(best, top2_margin(p), strict=True)
    ]


def _training_problems(X) -> dict[str, dict[str, list[str]]]:
    """problem -> candidate -> known texts, for problems whose candidates all have two or more
    known texts and that have three or more candidates (one can play the unknown author)."""
    frame = getattr(X, "frame", None)
    if frame is None or not {"problem", "candidate"} <= set(frame.columns):
        return {}
    if "role" in frame.columns:
        frame = frame[frame["role"] == "known"]
    out: dict[str, dict[str, list[str]]] = {}
    for prob, cand, text in zip(frame["problem"], frame["candidate"], frame["text"], strict=True):
        out.setdefault(str(prob), {}).setdefault(str(cand), []).append(text)
    return {p: c for p, c in out.items() if len(c) >= 3 and min(len(v) for v in c.values()) >= 2}
