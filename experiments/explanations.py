"""How much the neural verifiers lean on named entities (issue 16, item 4): Integrated
Gradients on a sample of test pairs, for bert-pair / siamese-pair fitted with and without
entity masking on closed and open Rethinking-AV splits, summarised as the share of absolute
attribution on entity tokens (:mod:`stylo.explain.entity_mass`) beside the share of tokens
that are entity tokens, and a rendering of a few explained pairs.

The fitted verifiers are duck-typed: an object with ``model_`` and ``tokenizer_`` (and
``max_tokens``, the per-text chunk length; 128 without it), the model being a sequence
classifier (``...ForSequenceClassification``: a cross-encoder, explained with
:func:`~stylo.explain.explain_cross`) or a bare encoder (a bi-encoder,
:func:`~stylo.explain.explain_siamese`); or a masking wrapper around one, with the fitted
masker as ``masker_`` and the fitted inner verifier as ``verifier_``
(:class:`~baselines.masked.MaskedVerifier`). A masked model is explained on the masked texts
it saw, and its entity tokens are the placeholders (see :mod:`stylo.explain.entity_mass`).
Each pair is explained on the first chunk of each text (the first ``max_tokens`` tokens).

From the command line, the table of one corpus's Rethinking-AV splits (each model fitted as
the grid fits it, with and without entity masking, on the split's training pairs; the same
seeded test pairs explained for every cell)::

    python -m experiments.explanations [--dataset guardian] [--splits closed,open_unseen_authors]
        [--n-pairs 12] [--n-steps 32] [--seed 0] [--out results/explanations] [--quick]

writes ``entity_mass.csv``, ``ENTITY_MASS.md`` and the renderings ``plots/explained.html`` and
``plots/explained.png`` under ``--out``; ``--quick`` fine-tunes on 8 pairs of 32-token chunks
(the quick grid's sizes), to check the path, not to measure. The renderings show corpus
text: keep them out of commits (``results/`` is ignored).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.report import ENTITY_MASS_FILE
from stylo.corpus import PairSet
from stylo.explain import explain_cross, explain_siamese, summarise_entity_mass
from stylo.explain.render import render_html, render_png

__all__ = [
    "Cell",
    "TABLE_COLUMNS",
    "entity_mass_table",
    "explain_pair",
    "fitted_cells",
    "sample_pairs",
]

#: the tidy table's columns, one row per cell
TABLE_COLUMNS = (
    "model",
    "masking",
    "split",
    "entity_mass_mean",
    "entity_mass_std",
    "n",
    "entity_token_share",
    "n_steps",
    "seconds",
)


@dataclass(frozen=True)
class Cell:
    """One fitted verifier and the test pairs of the split it was fitted on."""

    model: str
    masking: str
    split: str
    verifier: object
    pairs: PairSet


def sample_pairs(pairs: PairSet, n: int, seed: int) -> list[int]:
    """``n`` positions of ``pairs`` (all when fewer), a seeded choice in pair order; the same
    for every cell of one split, so models and maskings are compared on the same pairs."""
    if len(pairs) <= n:
        return list(range(len(pairs)))
    return sorted(np.random.default_rng(seed).choice(len(pairs), size=n, replace=False).tolist())


def explain_pair(verifier, text_a: str, text_b: str, n_steps: int = 32):
    """``(attributions, masker)`` for one pair: the frame of the explainer that fits the
    verifier's model, on the texts as the model sees them; ``masker`` is the verifier's
    fitted masker, None when it does not mask."""
    masker = getattr(verifier, "masker_", None)
    inner = verifier.verifier_ if masker is not None else verifier
    seen_a, seen_b = masker.transform([text_a, text_b]) if masker is not None else (text_a, text_b)
    cross = type(inner.model_).__name__.endswith("ForSequenceClassification")
    explain = explain_cross if cross else explain_siamese
    frame = explain(
        inner.model_,
        inner.tokenizer_,
        seen_a,
        seen_b,
        max_tokens=getattr(inner, "max_tokens", 128),
        n_steps=n_steps,
    )
    return frame, masker


def entity_mass_table(
    cells: Iterable[Cell],
    n_pairs: int = 12,
    n_steps: int = 32,
    seed: int = 0,
    html_path=None,
    png_path=None,
    n_rendered: int = 3,
) -> pd.DataFrame:
    """The entity-mass table (:data:`TABLE_COLUMNS`), one row per cell, over ``n_pairs``
    sampled test pairs of each (``seconds``: the cell's explanation time).

    With ``html_path`` (``png_path``), the first ``n_rendered`` explained pairs of every cell
    (of the first cell only for the PNG, which grows fast) are rendered there.
    """
    rows, rendered, titles = [], [], []
    for cell in cells:
        start = time.perf_counter()
        a, b = cell.pairs.texts_a(), cell.pairs.texts_b()
        labels = cell.pairs.labels
        explained = []
        masker = None
        for i in sample_pairs(cell.pairs, n_pairs, seed):
            frame, masker = explain_pair(cell.verifier, a[i], b[i], n_steps)
            explained.append((frame, a[i], b[i]))
            if len(explained) <= n_rendered:
                rendered.append(frame)
                same = "same author" if labels[i] else "different authors"
                titles.append(f"{cell.model} / {cell.masking} / {cell.split}, pair {i} ({same})")
        summary = summarise_entity_mass(explained, masker)
        rows.append(
            {
                "model": cell.model,
                "masking": cell.masking,
                "split": cell.split,
                **summary,
                "n_steps": n_steps,
                "seconds": time.perf_counter() - start,
            }
        )
    if html_path is not None:
        render_html(rendered, Path(html_path), titles)
    if png_path is not None and rendered:
        first = min(n_rendered, len(rendered))
        render_png(rendered[:first], Path(png_path), titles[:first])
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


#: the models explained, and the grid's quick sizes for ``--quick``
MODELS = ("bert-pair", "siamese-pair")
_QUICK_PARAMS = {"n_train_pairs": 8, "max_tokens": 32, "max_chunks": 1, "epochs": 1}


def fitted_cells(dataset: str, splits: list[str], seed: int = 0, quick: bool = False):
    """A :class:`Cell` per split, model and masking (none, ``entity_masking``), each model
    fitted on the split's training pairs as the grid fits it."""
    from baselines.registry import make
    from experiments.methods import MASKINGS
    from stylo.datasets import load
    from stylo.protocols import PROTOCOLS
    from stylo.protocols.base import fit_clone

    protocol, data = PROTOCOLS["rethinking_av"], load(dataset)
    offered = [s["split"] for s in protocol.settings(data)]
    unknown = [s for s in splits if s not in offered]
    if unknown:
        raise ValueError(f"{dataset}: no Rethinking-AV split(s) {unknown}; it has {offered}")
    for split in splits:
        task = protocol.sample(data, {"split": split}, seed)
        for model in MODELS:
            for masking in ("none", "entity_masking"):
                est = make(model, seed)
                if quick:
                    est.set_params(**_QUICK_PARAMS)
                if masking != "none":
                    est = MASKINGS[masking](est)
                yield Cell(model, masking, split, fit_clone(est, task.train), task.test)


def _markdown(table: pd.DataFrame, dataset: str, args) -> str:
    lines = [
        f"# Entity attribution mass: {dataset}",
        "",
        "Share of absolute Integrated-Gradients attribution on named-entity tokens (the entity "
        "masker's spans, or its placeholders for a masked model) beside the share of tokens "
        f"that are entity tokens; {args.n_pairs} seeded test pairs a split (seed {args.seed}), "
        f"{args.n_steps} IG steps, first chunk of each text."
        + (" Quick sizes: a path check, not a measurement." if args.quick else ""),
        "",
        f"Command: `python -m experiments.explanations {' '.join(args.argv)}`",
        "",
        "| model | masking | split | entity mass | std | n | entity token share | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.model} | {r.masking} | {r.split} | {r.entity_mass_mean:.3f} | "
            f"{r.entity_mass_std:.3f} | {r.n} | {r.entity_token_share:.3f} | {r.seconds:.0f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="guardian")
    ap.add_argument("--splits", default="closed,open_unseen_authors")
    ap.add_argument("--n-pairs", type=int, default=12)
    ap.add_argument("--n-steps", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("results/explanations"))
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    args.argv = argv
    if args.n_pairs < 1:
        ap.error(f"--n-pairs must be >= 1, got {args.n_pairs}")
    splits = [s for s in args.splits.split(",") if s]
    try:
        cells = list(fitted_cells(args.dataset, splits, args.seed, args.quick))
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"explanations: {exc}", file=sys.stderr)
        return 2
    plots = args.out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    table = entity_mass_table(
        cells,
        args.n_pairs,
        args.n_steps,
        args.seed,
        html_path=plots / "explained.html",
        png_path=plots / "explained.png",
    )
    table.to_csv(args.out / "entity_mass.csv", index=False)
    (args.out / ENTITY_MASS_FILE).write_text(_markdown(table, args.dataset, args), encoding="utf-8")
    print(table.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
