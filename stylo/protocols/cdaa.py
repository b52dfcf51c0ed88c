"""PAN 2018/2019 cross-domain authorship attribution, run with any method.

Each problem gives a few candidate authors with known texts (7 each) and unknown texts to
attribute. A method attributes an unknown text with ``Verifier.attribute``: a score for every
candidate (a verifier scores the text against each candidate's known texts, one problem per
candidate; an attribution-native method, e.g. ``svm-attribution``, classifies among the
candidates), and the highest score wins. In the open-set edition (PAN 2019, true author
``<UNK>`` for texts by none of the candidates) it answers ``<UNK>`` when even the best score
is below 0.5, i.e. when the method itself says "not this author" for every candidate. In an
open-set corpus a true author with no known texts in the problem counts as ``<UNK>``; such
texts are listed in ``info["truth_outside_candidates"]`` (pan19_cdaa problem00020 has four,
labelled ``candidate00000``).

Metrics per problem: macro precision/recall/F1 over the problem's candidates and accuracy,
with PAN 2019's open-set rule (``stylo.metrics.classification.attribution_scores``); in the
open set also the same four for the best candidate without the rejection (``*_no_reject``):
a verifier's scores may rank the candidates well while its 0.5 sits where nothing passes it.
The ``"all"`` rows average them over problems, as PAN ranked systems. The official problems
are used as they are (the seed is only recorded); a method is fitted on the known texts of
the split's problems, which never include an unknown text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from stylo.corpus import Corpus
from stylo.progress import advance
from stylo.protocols.base import Protocol, ProtocolError, Task, distinct_texts, fit_clone
from stylo.verifier import Verifier

__all__ = ["Attribution", "CrossDomainAttribution", "UNKNOWN", "score_attribution"]

UNKNOWN = "<UNK>"
_COLUMNS = ("problem", "role", "candidate")


@dataclass
class Attribution:
    """Attribution problems: ``known[problem][candidate]`` = that candidate's known texts;
    ``unknown``: one row per unknown text (``id``, ``problem``, ``text``, ``truth``)."""

    known: dict[str, dict[str, list[str]]]
    unknown: pd.DataFrame
    open_set: bool

    def __len__(self) -> int:
        return len(self.unknown)


class CrossDomainAttribution(Protocol):
    """``cdaa_attribution``: one setting per split present (e.g. PAN18 train and test)."""

    name = "cdaa_attribution"
    needs = "attribution problems: a corpus with columns problem, role and candidate (PAN18/19's)"
    #: 2: the training corpus holds each known text once, under one author per person
    revision = 2
    # every text against every candidate (PAN19's development set: 36,459 text-candidate
    # problems): a verifier's cell here took 35 s on average in the reference grid, 25 times
    # its cells elsewhere
    relative_cost = 25.0

    def settings(self, data) -> list[dict]:
        if not isinstance(data, Corpus) or not set(_COLUMNS) <= set(data.frame.columns):
            return []
        if "split" not in data.frame.columns:
            return [{"split": None}]
        return [{"split": s} for s in sorted(data.frame["split"].dropna().unique())]

    def sample(self, data, setting: dict, seed: int) -> Task:
        if not isinstance(data, Corpus) or not set(_COLUMNS) <= set(data.frame.columns):
            raise ProtocolError(
                f"{self.name} needs a corpus with columns {list(_COLUMNS)} (pan18_cdaa, pan19_cdaa)"
            )
        frame = data.frame
        split = setting.get("split")
        mask = (
            np.ones(len(frame), dtype=bool)
            if split is None
            else (frame["split"] == split).to_numpy()
        )
        if not mask.any():
            raise ProtocolError(f"{data.name!r} has no split {split!r}")
        known_mask = mask & (frame["role"] == "known").to_numpy()
        unknown_mask = mask & (frame["role"] == "unknown").to_numpy()
        known: dict[str, dict[str, list[str]]] = {}
        for prob, cand, text in zip(
            frame["problem"][known_mask],
            frame["candidate"][known_mask],
            frame["text"][known_mask],
            strict=True,
        ):
            known.setdefault(str(prob), {}).setdefault(str(cand), []).append(text)
        unk = (
            frame.loc[unknown_mask, ["id", "problem", "text", "candidate"]]
            .rename(columns={"candidate": "truth"})
            .reset_index(drop=True)
        )
        missing = sorted(set(unk["problem"]) - set(known))
        if missing:
            raise ProtocolError(f"{data.name!r}: problems without known texts: {missing[:5]}")
        open_set = bool((unk["truth"] == UNKNOWN).any())
        stray = np.array(
            [
                t != UNKNOWN and t not in known[p]
                for p, t in zip(unk["problem"], unk["truth"], strict=True)
            ],
            dtype=bool,
        )
        if stray.any() and not open_set:
            raise ProtocolError(
                f"{data.name!r}: unknown text {unk['id'][stray].iloc[0]!r} is "
                f"attributed to a candidate with no known texts"
            )
        # open set: a true author outside the candidates is, by definition, an unknown author
        stray_ids = unk.loc[stray, "id"].tolist()
        unk.loc[stray, "truth"] = UNKNOWN
        test = Attribution(known, unk, open_set=open_set)
        # a candidate's known texts recur in every problem it is a candidate of (PAN 2018's test
        # problems of a language share their authors): training sees each text once
        train = distinct_texts(data.filter(known_mask, f"{self.name}:known texts"))
        info = {
            "seed": seed,
            "setting": dict(setting),
            "problems": len(known),
            "unknown_texts": len(unk),
            "known_texts": int(known_mask.sum()),
            "open_set": test.open_set,
            "unknown_author_texts": int((unk["truth"] == UNKNOWN).sum()),
            "truth_outside_candidates": stray_ids,
        }
        return Task(self.name, dict(setting), seed, train, test, info)

    def evaluate(self, method: Verifier, task: Task) -> pd.DataFrame:
        return score_attribution(method, task.train, task.test)


def score_attribution(method: Verifier, train: Corpus | None, test: Attribution) -> pd.DataFrame:
    """Fit a clone of ``method`` on ``train`` and score every problem of ``test``: one row per
    metric and problem, then the ``"all"`` rows (mean over problems, n summed).

    Open set: PAN 2019's metrics with the ``<UNK>`` rule, the same without it
    (``*_no_reject``), and ``unknown_share``, the share of texts answered ``<UNK>``.
    """
    from stylo.metrics import classification

    est = fit_clone(method, train)
    rows = []
    problems = test.unknown.groupby("problem", sort=True)
    for done, (prob, group) in enumerate(problems):
        advance("attribution problems", done, problems.ngroups)
        cands = sorted(test.known[prob])
        scores = est.attribute([test.known[prob][c] for c in cands], group["text"].tolist())
        best = scores.argmax(axis=1)
        closed = [cands[b] for b in best]
        truth = group["truth"].tolist()
        if test.open_set:
            pred = [
                UNKNOWN if scores[i, b] < 0.5 else p
                for i, (b, p) in enumerate(zip(best, closed, strict=True))
            ]
            values = classification.attribution_scores(
                truth, pred, labels=cands, unknown_label=UNKNOWN
            )
            # the same answers without the rejection: how well the scores rank the
            # candidates, apart from where the method puts its 0.5
            values |= {
                f"{k}_no_reject": v
                for k, v in classification.attribution_scores(
                    truth, closed, labels=cands, unknown_label=UNKNOWN
                ).items()
            }
            values["unknown_share"] = float(np.mean([p == UNKNOWN for p in pred]))
        else:
            values = classification.attribution_scores(truth, closed, labels=cands)
        rows += [
            {"metric": k, "value": float(v), "n": len(group), "group": str(prob)}
            for k, v in values.items()
        ]
    advance("attribution problems", problems.ngroups, problems.ngroups)
    table = pd.DataFrame(rows)
    overall = (
        table.groupby("metric", sort=False)
        .agg(value=("value", "mean"), n=("n", "sum"))
        .reset_index()
    )
    overall["group"] = "all"
    return pd.concat([table, overall], ignore_index=True)
