"""Whether the verifiers that standardise against other texts use the scored ones: training data
only.

Usage::

    python -m benchmarks.choose_transductive [--methods cosine-norm,naive-norm,delta,ensemble]
        [--parts cross,halves,ranking,attribution] [--seeds 0,1,2] [--rounds N] [--csv out.csv]

:class:`~baselines.normalization.BackgroundNormalized` standardises a raw similarity against a
pool of other texts, :class:`~baselines.delta.DeltaVerifier` z-scores word frequencies against
the mean and spread of other texts. Drawn from the training texts, the reference describes the
training domain; with ``transductive=True`` it is the texts of the call being scored, so that a
test set of another genre or length is measured against texts like its own. Each registered
method (``ensemble``: every base that has the switch) is fitted both ways and scored where no
test item is read:

- ``cross``: domain shift inside training data: fitted on one English PAN training set
  (PAN13, PAN14 essays, PAN14 novels, PAN15) and scored on another's training problems;
- ``halves``: no shift: fitted on half of a training set's authors (AIDBench corpora: the grid
  task's training texts) or problems (PAN) and scored on 600 pairs of the other half (a PAN
  half: its own problems), as ``choose_ensemble`` does, seeds 0-2;
- ``ranking``: one-to-two accuracy on up to 300 triplets of held-out training authors of
  IMDb62, Enron, Blog and Guardian, drawn as ``choose_ensemble --ranking`` draws them;
- ``attribution``: PAN18's training problems with a third of each problem's candidates removed
  (their texts' truth ``<UNK>``), as ``choose_attribution`` simulates the open set: macro-F1
  with PAN19's rule (every candidate below 0.5: unknown) and without it.

``--rounds N`` sets every s-normalised part's ``rounds`` (s-norms in a row) in both variants;
run with ``--rounds 1`` and ``--rounds 3`` it is the evidence ``cosine-norm`` and
``naive-norm`` are registered with three rounds on (benchmarks/README.md).

The figures are PAN's AUC x c@1 and overall for the first two parts (each method's grey zone is
fitted for overall), one row per method, part, fit set, scored set and seed, and each method's
means per part.
"""

from __future__ import annotations

import argparse
import itertools

import pandas as pd
from sklearn.base import clone

from baselines.registry import make
from benchmarks.choose_attribution import open_set_task, pan18_train_task
from benchmarks.choose_ensemble import (
    _halves,
    author_halves,
    held_accuracy,
    held_triplets,
    training_part,
)
from stylo.datasets import load
from stylo.metrics.pan import evaluate_all
from stylo.protocols.cdaa import score_attribution

_ENGLISH = ("pan13_av_en", "pan14_av/en_essays", "pan14_av/en_novels", "pan15_av_en")
_PARTS = ("cross", "halves", "ranking", "attribution")
_RANKING = ("imdb62", "enron", "blog", "guardian")
_HALVES = (
    "pan15_av_en",
    "pan14_av/du_essays",
    "pan14_av/gr_articles",
    "pan14_av/sp_articles",
    "imdb62",
    "enron",
    "blog",
    "guardian",
)


def _switch_keys(est, name: str) -> list[str]:
    """``est``'s parameter keys, nested ones included (a wrapper's verifier), that set ``name``."""
    return [k for k in est.get_params(deep=True) if k == name or k.endswith(f"__{name}")]


def built(method: str, transductive: bool, rounds: int | None = None):
    """The registered ``method`` with every part that can read the scored texts (an
    s-normalised verifier's pool, Delta's z-scores), wrapped parts included, set to
    ``transductive``, and every s-normalised part's ``rounds`` set, if given."""
    est = make(method, 0)

    def switched(part):
        part = clone(part)
        update = dict.fromkeys(_switch_keys(part, "transductive"), transductive)
        if rounds is not None:
            update |= dict.fromkeys(_switch_keys(part, "rounds"), rounds)
        return part.set_params(**update)

    if not hasattr(est, "bases"):
        return switched(est)
    return est.set_params(bases=tuple(switched(b) for b in est.bases))


def _pair(method, part, fitted_on, scored, seed, n, measure, rounds=None) -> list[dict]:
    """Both variants' rows of one fit/score pair, ``measure(est)`` giving each one's figures
    (a dict of metric -> value), printed side by side."""
    rows = [
        dict(
            method=method,
            part=part,
            fitted_on=fitted_on,
            scored=scored,
            seed=seed,
            transductive=transductive,
            n=n,
            **measure(built(method, transductive, rounds)),
        )
        for transductive in (False, True)
    ]
    a, b = rows
    figures = "  ".join(
        f"{k} {a[k]:.3f} -> {b[k]:.3f}" for k in a if k in _METRICS and not pd.isna(a[k])
    )
    print(
        f"{method:12s} {part:11s} {fitted_on:20s} -> {scored:20s} seed {seed}  n {n:4d}  {figures}",
        flush=True,
    )
    return rows


_METRICS = ("auc_c1", "overall", "accuracy", "macro_f1", "macro_f1_no_reject")


def _verification(fit, held):
    def measure(est):
        r = evaluate_all(held.labels.astype(float), est.fit(fit).score_problems(held))
        return {"auc_c1": r["auc"] * r["c@1"], "overall": r["overall"]}

    return measure


def _ranking(fit, queries, pairs):
    def measure(est):
        return {"accuracy": held_accuracy(est.fit(fit).rank_many(queries, pairs))}

    return measure


def _attribution(train, test):
    def measure(est):
        table = score_attribution(est, train, test)
        every = table[table["group"] == "all"].set_index("metric")["value"]
        return {k: float(every[k]) for k in ("macro_f1", "macro_f1_no_reject") if k in every}

    return measure


def verification_splits(parts, seeds) -> list[tuple]:
    """(part, fitted on, scored, seed, fit data, held-out pairs) of the ``cross`` and
    ``halves`` parts among ``parts``, in that order."""
    out = []
    if "cross" in parts:
        train = {n: load(n, split="train") for n in _ENGLISH}
        for a, b in itertools.permutations(train, 2):
            out.append(("cross", a, b, 0, train[a], train[b]))
    for name in _HALVES if "halves" in parts else ():
        for seed in seeds:
            data = load(name, split="train") if name.startswith("pan") else None
            fit, held = _halves(data or training_part(name, seed), seed)
            out.append(("halves", name, name, seed, fit, held))
    return out


def ranking_splits(seeds) -> list[tuple]:
    """(corpus, seed, n, measure) of the ``ranking`` part: ``measure(est)`` fits ``est`` on
    half a corpus's training authors and gives its one-to-two accuracy on up to 300 triplets
    of the other half."""
    out = []
    for name in _RANKING:
        for seed in seeds:
            fit, held = author_halves(training_part(name, seed), seed)
            queries, pairs = held_triplets(name, held, seed)
            out.append((name, seed, len(queries), _ranking(fit, queries, pairs)))
    return out


def study(methods, parts, seeds, rounds: int | None = None) -> pd.DataFrame:
    rows = []
    splits = verification_splits(parts, seeds)
    ranking = ranking_splits(seeds) if "ranking" in parts else []
    open_set = open_set_task(pan18_train_task()) if "attribution" in parts else None
    for method in methods:
        for part, fitted_on, scored, seed, fit, held in splits:
            measure = _verification(fit, held)
            rows += _pair(method, part, fitted_on, scored, seed, len(held), measure, rounds)
        for name, seed, n, measure in ranking:
            rows += _pair(method, "ranking", name, name, seed, n, measure, rounds)
        if open_set is not None:
            fit, test = open_set
            measure = _attribution(fit, test)
            rows += _pair(
                method, "attribution", "pan18_cdaa", "pan18_cdaa", 0, len(test), measure, rounds
            )
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="cosine-norm,naive-norm,delta,ensemble")
    ap.add_argument("--parts", default="cross,halves,ranking,attribution")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument(
        "--rounds", type=int, help="s-norm rounds of every normalised part (default: registered)"
    )
    ap.add_argument("--csv")
    args = ap.parse_args(argv)
    if args.rounds is not None and args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    parts = {p for p in args.parts.split(",") if p}
    if not parts or parts - set(_PARTS):
        ap.error(f"--parts takes some of {', '.join(_PARTS)}, got {args.parts!r}")
    table = study(
        [m for m in args.methods.split(",") if m],
        parts,
        [int(s) for s in args.seeds.split(",")],
        args.rounds,
    )
    if args.csv:
        table.to_csv(args.csv, index=False)
    values = [m for m in _METRICS if m in table]
    means = table.pivot_table(index=["method", "part"], columns="transductive", values=values)
    print(means.round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
