"""A tiny corpus in the PAN18/19 cross-domain attribution layout, for the protocol and
pan-code layout tests (no corpus text)."""

from __future__ import annotations

import pandas as pd

from stylo.corpus import Corpus


def cdaa_corpus(open_set: bool, stray: bool = False) -> Corpus:
    """Two problems, 3 candidates x 2 known texts, 4 unknown texts each (one by <UNK>)."""
    rows = []
    for prob in ("p1", "p2"):
        for c in ("c1", "c2", "c3"):
            rows += [
                {
                    "id": f"{prob}-{c}-k{k}",
                    "text": f"{prob}{c} known {k}",
                    "author": f"{prob}{c}",
                    "candidate": c,
                    "role": "known",
                    "problem": prob,
                }
                for k in range(2)
            ]
        truths = ["c1", "c2", "c3", "<UNK>" if open_set else "c1"]
        if stray:
            truths[0] = "c0"
        rows += [
            {
                "id": f"{prob}-u{i}",
                "text": f"{prob}{t if t != '<UNK>' else 'x'} unknown",
                "author": f"{prob}{t}",
                "candidate": t,
                "role": "unknown",
                "problem": prob,
            }
            for i, t in enumerate(truths)
        ]
    return Corpus(pd.DataFrame(rows), name="cdaa")


def attribution_problem(
    n_candidates: int = 4, n_known: int = 4, n_unknown: int = 2, n_words: int = 120, seed: int = 0
) -> tuple[list[list[str]], list[str], list[int]]:
    """One closed-set attribution problem from synthetic authors (word preferences and a
    punctuation habit each): the candidates' known texts, the texts to attribute and the index
    of each one's true candidate."""
    from baselines_synth import synthetic_corpus

    corpus = synthetic_corpus(n_candidates, n_known + n_unknown, n_words, seed)
    by_author = corpus.by_author()
    names = sorted(by_author)
    known = [[corpus.texts[i] for i in by_author[a][:n_known]] for a in names]
    texts, truth = [], []
    for j, a in enumerate(names):
        texts += [corpus.texts[i] for i in by_author[a][n_known:]]
        truth += [j] * n_unknown
    return known, texts, truth
