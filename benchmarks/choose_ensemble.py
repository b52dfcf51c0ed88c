"""The training-only evidence ``ensemble``'s settings are chosen on.

Usage::

    python -m benchmarks.choose_ensemble [--datasets imdb62,enron,blog,guardian,pan15_av_en]
        [--seeds 0,1,2] [--candidates NAME,...] [--csv out.csv] [--ranking | --cross]

For every corpus and seed the grid's own task is sampled (AIDBench one-to-two for the AIDBench
corpora, the official training problems for PAN), and only its *training* part is read. That
part is split in two with the seed: by author for a Corpus (half the authors each), by
connected problems for a PairSet (:func:`baselines.ensemble.pair_groups`). Each candidate stack
is fitted on one half and scored on labelled pairs of the other (600 pairs drawn from a
Corpus half; a PairSet half's own problems), so the figure is a held-out-author AUC that no
test item enters. The table prints each candidate's AUC per corpus, the mean over corpora and
seeds, and its fit + score time; the rule prints as ``chosen`` the candidate with the best mean
AUC, the cheaper one when two are within 0.005. The registered ``ensemble`` is the candidate
``3f-small+cdm+lambdag-r5p100-sn3+mask0`` (a test checks it): the five bases of
``3f-small+cdm+lambdag-r5p100-sn3``, its cosine s-normalised three times in a row (``-sn2``,
``-sn4``: twice, four times; the candidates without a suffix normalise once, as every stack
did before ``rounds`` existed; ``-sn3-delta`` and the like wrap other bases in the same
normalisation), and that cosine on word-masked text as a sixth (``+mask0``; its tie with
``+mask0sa`` is told in benchmarks/README.md). Before ``rounds``, the rule preferred
``3f-small+cdm+lambdag-r5p100+dist300`` by 0.0054, but that stack fits its sixth base in every
grid cell and took the grid's 172 ``ensemble`` cells from 538 to 781 worker-seconds, past the
reference grid's 15 minutes, a cost these small halves do not show (benchmarks/README.md).
Beside ``-free`` the rule printed the five-base stack it frees, whose meta-model costs a few
milliseconds less: the sign constraint is read by ``--cross`` below.

Candidates differ in the number of folds, the size of the ``logreg-pair`` base, the base
pool (the meta-model weighs the bases on out-of-fold scores, so a larger pool is chosen only if
the meta-model makes use of it on held-out authors; ``-sn3+gi``, ``+ppm``, ``+c25``, ``+mask0``
offer a sixth) and the out-of-fold pairs the meta-model is fitted on (``-sn3-n1200``: 1,200 of a
Corpus, 600 registered); ``-free`` lets the meta-model's weights take either sign, as they did
before the stack held them non-negative.

``--cross`` reads the same candidates across genres, where the halves above share one: each is
fitted on one English PAN training set and scored on another's training problems (PAN13, PAN14
essays, PAN14 novels, PAN15; 12 ordered pairs), AUC. A candidate that changes how the stack
generalises rather than what it sees (the meta-model's sign constraint) replaces the registered
one if its halves mean is within 0.005 of it and its cross mean at least 0.01 above.

``--ranking`` chooses how the stack ranks candidates (``rank_bases``, and a pairwise meta-model
as the alternative) on the AIDBench corpora: the fit half as above, and one-to-two triplets drawn
from the held half by the grid task's own rule (cross-topic on Guardian), up to 300; the figure
is held-out one-to-two accuracy, the rule the same (best mean, the cheaper within 0.005). Beside
it, and not read by the rule, a many-candidate figure: rank@1 of 300 held-out queries each
against one same-author text and four texts of four other authors (ties at their expectation),
what one-to-many asks with fewer candidates.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from baselines.author_profile import AuthorProfile
from baselines.ensemble import StackedVerifier, pair_groups
from baselines.masked import MaskedVerifier
from baselines.normalization import BackgroundNormalized
from baselines.registry import Construct, make
from stylo.corpus import Corpus, PairSet
from stylo.datasets import load
from stylo.features import TextDistortion
from stylo.protocols import PROTOCOLS
from stylo.protocols._sampling import PairRules
from stylo.protocols.aidbench import _n_triplets
from stylo.verifier import training_pairs

_AIDBENCH = ("imdb62", "enron", "blog", "guardian")
_PAN = ("pan15_av_en",)
#: the English PAN training sets of ``--cross``
_ENGLISH = ("pan13_av_en", "pan14_av/en_essays", "pan14_av/en_novels", "pan15_av_en")
#: within this AUC the cheaper candidate is preferred
_TIE = 0.005
#: held-out pairs drawn from a Corpus half
_N_VAL_PAIRS = 600
#: candidates of the ranking study's many-candidate figure
_MANY = 5


def _logreg(**params):
    return Construct("baselines.pair_logistic:LogisticPairVerifier", params)


def _lambdag(n_references: int, n_pairs: int):
    """LambdaG with fewer reference models and calibration pairs than its defaults (30, 200):
    the stack fits it once per fold and once on all data."""
    return Construct(
        "baselines.lambdag:LambdaG", {"n_references": n_references, "n_pairs": n_pairs}
    )


def _distorted(norm, k: int, method: str = "dv_ma") -> MaskedVerifier:
    """The s-normalised cosine ``norm`` on text distorted to its ``k`` most frequent words
    (Stamatatos 2017; ``method`` as :class:`~stylo.features.TextDistortion`'s): a view of the
    texts with the topic words masked, for cross-topic and cross-genre pairs."""
    return MaskedVerifier(clone(norm), TextDistortion(k=k, method=method))


def _built(base):
    return base.build() if isinstance(base, Construct) else clone(base)


def _snormed(base):
    """``base``'s raw score s-normalised three times against the scored texts, as the stack's
    cosine is."""
    return BackgroundNormalized(_built(base), grey_zone=False, transductive=True, rounds=3)


def _bases_by_class(stack: StackedVerifier) -> dict:
    """Class name -> base of ``stack`` (the registered stack has one base of each class)."""
    return {type(b).__name__: b for b in stack.bases}


def _candidates() -> dict[str, StackedVerifier]:
    """Name -> unfitted stack; ``small`` is the registered stack's own base pool."""
    registered = make("ensemble", 0)
    parts = _bases_by_class(registered)
    delta = parts["DeltaVerifier"]
    # the candidates of the studies before ``rounds`` existed s-normalise once
    norm = clone(parts["BackgroundNormalized"]).set_params(rounds=1)
    small = _logreg(n_pairs=400, max_features=5000)
    full = _logreg()
    lambdag = Construct("baselines.lambdag:LambdaG")
    cdm = Construct("baselines.compression:CompressionVerifier", {"measure": "cdm"})
    # General Impostors' raw impostor margin, without its score shifting (a base's score
    # feeds the meta-model, which does the calibration)
    gi = Construct("baselines.impostors:GeneralImpostors", {"shift": False})
    dist100, dist300 = (_distorted(norm, k) for k in (100, 300))
    ppm = Construct("baselines.compression:CompressionVerifier", {"measure": "ppm"})

    # the registered stack's first five bases but its cosine, which the candidates below vary
    r5 = "3f-small+cdm+lambdag-r5p100"
    thrice = clone(norm).set_params(rounds=3)
    rest = (small, delta, cdm, _lambdag(5, 100))
    sn3 = (thrice, *rest)
    c25 = clone(thrice).set_params(
        verifier=clone(thrice.verifier).set_params(min_n=2, ngram_size=5, max_features=50_000)
    )

    def stack(bases, n_folds):
        built = tuple(_built(b) for b in bases)
        return clone(registered).set_params(bases=built, n_folds=n_folds)

    return {
        "2f-small": stack((norm, small, delta), 2),
        "3f-small": stack((norm, small, delta), 3),
        "2f-full": stack((norm, full, delta), 2),
        "3f-full": stack((norm, full, delta), 3),
        "2f-small+lambdag": stack((norm, small, delta, lambdag), 2),
        "2f-small+cdm": stack((norm, small, delta, cdm), 2),
        "3f-small+cdm": stack((norm, small, delta, cdm), 3),
        "2f-small+lambdag+cdm": stack((norm, small, delta, lambdag, cdm), 2),
        "3f-full+lambdag+cdm": stack((norm, full, delta, lambdag, cdm), 3),
        "3f-small+cdm+lambdag": stack((norm, small, delta, cdm, lambdag), 3),
        **{
            f"3f-small+cdm+lambdag-r{r}p{p}": stack((norm, small, delta, cdm, _lambdag(r, p)), 3)
            for r, p in ((10, 200), (10, 100), (10, 50), (5, 100))
        },
        "3f-small+cdm+lambdag-r5p100+dist300": stack(
            (norm, small, delta, cdm, _lambdag(5, 100), dist300), 3
        ),
        # the meta-model's weights free of sign (before they were held non-negative)
        "3f-small+cdm+lambdag-r5p100-free": stack(
            (norm, small, delta, cdm, _lambdag(5, 100)), 3
        ).set_params(positive=False),
        # the s-norm applied 2-4 times in a row (BackgroundNormalized's ``rounds``)
        **{f"{r5}-sn{r}": stack((clone(norm).set_params(rounds=r), *rest), 3) for r in (2, 3, 4)},
        # the cosine on distorted text as a sixth scoring base, both cosines normalised thrice
        f"{r5}-sn3+dist300": stack((*sn3, _distorted(thrice, 300)), 3),
        # more sixth bases: General Impostors' raw margin, order-5 PPM's cross-entropy, and the
        # cosine of case-kept char 2-5-grams (50,000 of them) s-normalised thrice
        f"{r5}-sn3+gi": stack((*sn3, gi), 3),
        f"{r5}-sn3+ppm": stack((*sn3, ppm), 3),
        f"{r5}-sn3+c25": stack((*sn3, c25), 3),
        # the cosine of the text with every word masked (TextDistortion k = 0: punctuation,
        # spacing, digits and word lengths), s-normalised thrice, as a sixth base; ``sa``: each
        # word one ``*`` (its length gone); ``+dist300``: the distorted-text cosine as a seventh
        f"{r5}-sn3+mask0": stack((*sn3, _distorted(thrice, 0)), 3),
        f"{r5}-sn3+mask0sa": stack((*sn3, _distorted(thrice, 0, "dv_sa")), 3),
        f"{r5}-sn3+mask0+dist300": stack((*sn3, _distorted(thrice, 0), _distorted(thrice, 300)), 3),
        # the pool the cosine is normalised against thrice: 50 or 200 texts (100 registered)
        **{
            f"{r5}-sn3-pool{n}": stack((clone(thrice).set_params(n_background=n), *rest), 3)
            for n in (50, 200)
        },
        # the meta-model's regularisation, read again with the cosine normalised thrice
        **{f"{r5}-sn3-C{c:g}": stack(sn3, 3).set_params(C=c) for c in (0.1, 10.0)},
        # out-of-fold pairs the meta-model is fitted on (600 registered)
        **{f"{r5}-sn3-n{n}": stack(sn3, 3).set_params(n_pairs=n) for n in (900, 1200, 1800, 2400)},
        # the cosine's profile over the training authors as a sixth base
        f"{r5}-sn3+profile": stack((*sn3, AuthorProfile(clone(norm.verifier))), 3),
        f"{r5}-sn3+profile-t": stack(
            (*sn3, AuthorProfile(clone(norm.verifier), transductive=True)), 3
        ),
        # other bases s-normalised three times as well (their raw scores wrapped)
        **{
            f"{r5}-sn3-{name}": stack(
                tuple(_snormed(b) if type(_built(b)).__name__ in wrap else _built(b) for b in sn3),
                3,
            )
            for name, wrap in (
                ("delta", {"DeltaVerifier"}),
                ("logreg", {"LogisticPairVerifier"}),
                ("cdm", {"CompressionVerifier"}),
                ("all3", {"DeltaVerifier", "LogisticPairVerifier", "CompressionVerifier"}),
            )
        },
        "3f-small+gi": stack((norm, small, delta, gi), 3),
        "3f-small+cdm+gi": stack((norm, small, delta, cdm, gi), 3),
        "3f-small+cdm+dist100": stack((norm, small, delta, cdm, dist100), 3),
        "3f-small+cdm+dist300": stack((norm, small, delta, cdm, dist300), 3),
    }


def _ranking_candidates() -> dict[str, StackedVerifier]:
    """Name -> unfitted stack ranking candidates: the registered stack's first five bases
    (``bases``: all but the word-masked cosine) under its scoring meta-model or a pairwise one,
    without LambdaG, and with or without the distorted s-normalised cosine (k = 300) as a rank
    base; and the scoring meta-model with the word-masked cosine (k = 0, either masking) as a
    sixth base, ``bases + mask0`` being the registered stack."""
    registered = make("ensemble", 0)
    five = tuple(b for b in registered.bases if type(b).__name__ != "MaskedVerifier")
    bare = clone(registered).set_params(bases=five, rank_bases=(), ranking="pairwise")
    meta = clone(bare).set_params(ranking="meta")
    four = tuple(b for b in five if type(b).__name__ != "LambdaG")
    cosine = _bases_by_class(registered)["BackgroundNormalized"]
    dist300 = (_distorted(cosine, 300),)
    return {
        "bases": meta,
        "bases + dist300": clone(meta).set_params(rank_bases=dist300),
        # the AUC study's ``-sn3+mask0`` and ``-sn3+mask0sa``: the word-masked cosine as a
        # sixth scoring base
        "bases + mask0": clone(meta).set_params(bases=(*five, _distorted(cosine, 0))),
        "bases + mask0sa": clone(meta).set_params(bases=(*five, _distorted(cosine, 0, "dv_sa"))),
        "pairwise": bare,
        "pairwise without lambdag": clone(bare).set_params(bases=four),
        "pairwise + dist300": clone(bare).set_params(rank_bases=dist300),
    }


def held_triplets(name: str, held: Corpus, seed: int):
    """(queries, [same-author text, other text] per query): one-to-two triplets of ``held``
    drawn by the grid task's rule on ``name``, at most 300."""
    proto = PROTOCOLS["aidbench_one_to_two"]
    setting = proto.settings(load(name))[0]
    # the protocol's own draw (private: a task's test draw without its training split), so
    # that the held-out triplets follow the test's rule exactly
    n = min(300, _n_triplets(PairRules(held, setting["cross_topic"])))
    test, _, _ = proto._draw(held, {**setting, "n_triplets": n}, 100 + seed)
    frame = test.frame
    pairs = [
        [a, b] if answer == 0 else [b, a]
        for a, b, answer in zip(frame["a"], frame["b"], frame["answer"], strict=True)
    ]
    return frame["query"].tolist(), pairs


def held_one_of_k(held: Corpus, k: int, m: int, seed: int) -> tuple[list, list]:
    """(queries, candidates per query): ``m`` queries of ``held``, each with a text by its own
    author first and ``k - 1`` texts of as many other authors, drawn with ``seed``."""
    rng = np.random.default_rng([seed, 7])
    groups = held.by_author()
    names = list(groups)
    multi = [a for a in names if len(groups[a]) >= 2]
    texts, queries, candidates = held.texts, [], []
    for _ in range(m):
        a = multi[rng.integers(len(multi))]
        i, j = rng.choice(groups[a], size=2, replace=False)
        others = rng.choice([b for b in names if b != a], size=k - 1, replace=False)
        queries.append(texts[i])
        candidates.append([texts[j], *(texts[rng.choice(groups[b])] for b in others)])
    return queries, candidates


def held_rank_at_1(ranked: list[np.ndarray]) -> float:
    """Mean rank@1 of ``ranked`` (the right candidate first in each), ties at their
    expectation: 1 / (candidates sharing the top score) when the right one is among them."""
    return float(np.mean([(r[0] == r.max()) / np.sum(r == r.max()) for r in ranked]))


def held_accuracy(ranked: list[np.ndarray]) -> float:
    """One-to-two accuracy of ``rank_many``'s answers on ``held_triplets`` (the same-author
    text first in each pair; ties count one half)."""
    return float(np.mean([(r[0] > r[1]) + 0.5 * (r[0] == r[1]) for r in ranked]))


def study_ranking(datasets, seeds) -> pd.DataFrame:
    rows = []
    for name in datasets:
        for seed in seeds:
            fit_half, held = author_halves(training_part(name, seed), seed)
            queries, pairs = held_triplets(name, held, seed)
            many_q, many_c = held_one_of_k(held, _MANY, 300, seed)
            for cand, est in _ranking_candidates().items():
                t0 = time.perf_counter()
                fitted = clone(est).set_params(random_state=seed).fit(fit_half)
                # one-to-two accuracy, in the column ``choose`` reads
                right = held_accuracy(fitted.rank_many(queries, pairs))
                rows.append(_row(name, seed, cand, right, len(queries), t0, "accuracy"))
                t0 = time.perf_counter()
                top = held_rank_at_1(fitted.rank_many(many_q, many_c))
                rows.append(_row(name, seed, cand, top, len(many_q), t0, f"one-of-{_MANY} rank@1"))
    return pd.DataFrame(rows)


def _row(name: str, seed: int, cand: str, value: float, n: int, t0: float, label: str) -> dict:
    """A table row of one candidate's held-out figure (column ``auc``; ``figure``: which),
    printed."""
    row = dict(
        dataset=name,
        seed=seed,
        candidate=cand,
        figure=label,
        auc=value,
        n=n,
        seconds=time.perf_counter() - t0,
    )
    print(
        f"{name:12s} seed {seed} {cand:18s} {label} {value:.4f} n {n}  {row['seconds']:.1f} s",
        flush=True,
    )
    return row


def _halves(train: Corpus | PairSet, seed: int):
    """(fit half, labelled held-out pairs) of a task's training data."""
    rng = np.random.default_rng([seed, 11])
    if isinstance(train, PairSet):
        groups = pair_groups(train)
        side = rng.permutation(groups.max() + 1) % 2
        fold = side[groups]
        return train.subset(fold == 0), train.subset(fold == 1)
    fit, held = author_halves(train, seed)
    return fit, training_pairs(held, n_pairs=_N_VAL_PAIRS, seed=seed)


def author_halves(train: Corpus, seed: int) -> tuple[Corpus, Corpus]:
    """(fit half, held half) of a Corpus, half its authors each, drawn with ``seed``."""
    rng = np.random.default_rng([seed, 11])
    names = np.unique(train.authors)
    side = dict(zip(names, rng.permutation(len(names)) % 2))
    fold = np.array([side[a] for a in train.authors])
    return (
        train.subset(fold == 0, name=f"{train.name}:fit"),
        train.subset(fold == 1, name=f"{train.name}:held"),
    )


def training_part(name: str, seed: int) -> Corpus | PairSet:
    """The training part of the grid's task on ``name`` (PAN's official training problems;
    AIDBench one-to-two's training texts, first setting, ``seed``)."""
    if name in _PAN:
        return load(name, split="train")
    protocol = PROTOCOLS["aidbench_one_to_two"]
    data = load(name)
    setting = protocol.settings(data)[0]
    return protocol.sample(data, setting, seed).train


def study_cross(names) -> pd.DataFrame:
    """Each candidate fitted on one English PAN training set and scored on another's training
    problems (the 12 ordered pairs of ``_ENGLISH``: a shift of genre and length no half of one
    set shows), as ``choose_transductive``'s cross part; AUC."""
    train = {n: load(n, split="train") for n in _ENGLISH}
    chosen = {c: est for c, est in _candidates().items() if not names or c in names}
    rows = []
    for fit_on, scored in itertools.permutations(_ENGLISH, 2):
        held = train[scored]
        for cand, est in chosen.items():
            t0 = time.perf_counter()
            scores = clone(est).fit(train[fit_on]).score_problems(held)
            auc = float(roc_auc_score(held.labels, scores))
            rows.append(_row(f"{fit_on}>{scored}", 0, cand, auc, len(held), t0, "cross-genre AUC"))
    return pd.DataFrame(rows)


def study(datasets, seeds, names) -> pd.DataFrame:
    rows = []
    for name in datasets:
        for seed in seeds:
            fit_half, held = _halves(training_part(name, seed), seed)
            for cand, est in _candidates().items():
                if names and cand not in names:
                    continue
                t0 = time.perf_counter()
                scores = clone(est).set_params(random_state=seed).fit(fit_half).score_problems(held)
                auc = float(roc_auc_score(held.labels, scores))
                rows.append(_row(name, seed, cand, auc, len(held), t0, "AUC"))
    return pd.DataFrame(rows)


def choose(table: pd.DataFrame) -> str:
    """The best mean AUC (ranking: one-to-two accuracy); the cheapest candidate within
    ``_TIE`` of it."""
    table = table[table["figure"].isin(["AUC", "accuracy"])]
    means = table.groupby("candidate").agg(auc=("auc", "mean"), seconds=("seconds", "median"))
    close = means[means.auc >= means.auc.max() - _TIE]
    return str(close.seconds.idxmin())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(_AIDBENCH + _PAN))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--candidates", default="", help="of the AUC study (not --ranking)")
    ap.add_argument("--csv")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--ranking", action="store_true", help="choose how candidates are ranked")
    which.add_argument(
        "--cross", action="store_true", help="the AUC study across English PAN training sets"
    )
    args = ap.parse_args(argv)
    names = [c for c in args.candidates.split(",") if c]
    unknown = sorted(set(names) - set(_candidates()))
    if unknown:
        ap.error(f"unknown candidate(s) {unknown}; known: {sorted(_candidates())}")
    datasets = [d for d in args.datasets.split(",") if d]
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.ranking:
        table = study_ranking([d for d in datasets if d in _AIDBENCH], seeds)
    elif args.cross:
        table = study_cross(names)
    else:
        table = study(datasets, seeds, names)
    if args.csv:
        table.to_csv(args.csv, index=False)
    for figure, part in table.groupby("figure", sort=False):
        wide = part.pivot_table(index="candidate", columns="dataset", values="auc", aggfunc="mean")
        wide["mean"] = part.groupby("candidate").auc.mean()
        wide["median s"] = part.groupby("candidate").seconds.median()
        print(f"\n{figure}:\n{wide.round(4).sort_values('mean', ascending=False).to_string()}")
    if args.cross:  # a second reading of the AUC study's candidates, not the rule's figure
        print("chosen: by the AUC study without --cross; see benchmarks/README.md")
    else:
        print(f"chosen: {choose(table)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
