"""Teaching example: who wrote the 12 disputed Federalist papers? (Delta, dendrogram, PCA)

    python -m experiments.federalist [--out results/federalist] [--n-features 300]

Fits Delta on the undisputed essays of Hamilton, Madison and Jay (the three joint essays 18-20
are left out), attributes the 12 disputed essays (Nos. 49-58, 62, 63) with each Delta variant,
prints a tidy table, and writes two PNGs (needs matplotlib, the ``viz`` extra):

- ``dendrogram.png``: average-linkage clustering of all 82 essays on Burrows' Delta;
- ``pca.png``: the first two principal components of the z-scored word frequencies.

The classical answer (Mosteller & Wallace 1963) is Madison for all twelve.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from baselines.delta import DeltaClassifier
from stylo.datasets import load
from stylo.features import DELTAS

COLOURS = {"Hamilton": "tab:red", "Madison": "tab:blue", "Jay": "tab:green", "disputed": "black"}


def attribute_disputed(n_features: int = 300) -> pd.DataFrame:
    """One row per (disputed essay, delta): the predicted author and the margin to the next."""
    frame = load("federalist").frame
    train = frame[~frame["disputed"] & ~frame["joint"]]
    test = frame[frame["disputed"]]
    rows = []
    for kind in DELTAS:
        clf = DeltaClassifier(kind=kind, n_features=n_features)
        clf.fit(train["text"].tolist(), train["author"].to_numpy())
        scores = clf.decision_function(test["text"].tolist())
        top2 = np.sort(scores, axis=1)[:, -2:]
        for number, pred, margin in zip(
            test["number"], clf.classes_[scores.argmax(axis=1)], top2[:, 1] - top2[:, 0]
        ):
            rows.append(
                {"essay": int(number), "delta": kind, "predicted": pred, "margin": float(margin)}
            )
    return pd.DataFrame(rows)


def plot(out: Path, n_features: int = 300) -> list[Path]:
    """Write the dendrogram and the PCA plot of every non-joint essay; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.cluster.hierarchy import dendrogram, linkage
    from scipy.spatial.distance import squareform

    frame = load("federalist").frame
    essays = frame[~frame["joint"]]
    known = essays[~essays["disputed"]]
    clf = DeltaClassifier(kind="burrows", n_features=n_features)
    clf.fit(known["text"].tolist(), known["author"].to_numpy())
    group = np.where(essays["disputed"], "disputed", essays["author"])
    labels = [
        f"{'?' if d else a[0]}{n}"
        for a, d, n in zip(essays["author"], essays["disputed"], essays["number"])
    ]
    out.mkdir(parents=True, exist_ok=True)

    dist = clf.distance_matrix(essays["text"].tolist())
    np.fill_diagonal(dist, 0.0)
    tree = linkage(squareform((dist + dist.T) / 2.0, checks=False), method="average")
    fig, ax = plt.subplots(figsize=(8, 14))
    dendrogram(tree, labels=labels, orientation="left", ax=ax, leaf_font_size=7)
    for tick in ax.get_yticklabels():
        tick.set_color(COLOURS[group[labels.index(tick.get_text())]])
    ax.set_title(
        f"Federalist papers: Burrows' Delta, {n_features} MFW, average linkage\n"
        f"H = Hamilton, M = Madison, J = Jay, ? = disputed (black)"
    )
    fig.tight_layout()
    paths = [out / "dendrogram.png"]
    fig.savefig(paths[0], dpi=120)
    plt.close(fig)

    z = clf.zscores_.transform(essays["text"].tolist())
    centred = z - z.mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    pcs = u[:, :2] * s[:2]
    explained = s[:2] ** 2 / np.sum(s**2)
    fig, ax = plt.subplots(figsize=(7, 6))
    for name, colour in COLOURS.items():
        sel = group == name
        ax.scatter(
            pcs[sel, 0],
            pcs[sel, 1],
            c=colour,
            label=name,
            marker="x" if name == "disputed" else "o",
            s=40,
        )
    for (x, y), lab, g in zip(pcs, labels, group):
        if g == "disputed":
            ax.annotate(lab[1:], (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(f"PC1 ({explained[0]:.1%})")
    ax.set_ylabel(f"PC2 ({explained[1]:.1%})")
    ax.set_title(f"Federalist papers: PCA of z-scored frequencies of {n_features} MFW")
    ax.legend()
    fig.tight_layout()
    paths.append(out / "pca.png")
    fig.savefig(paths[1], dpi=120)
    plt.close(fig)
    return paths


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/federalist", type=Path)
    parser.add_argument("--n-features", default=300, type=int)
    args = parser.parse_args(argv)
    table = attribute_disputed(args.n_features)
    print(table.pivot(index="essay", columns="delta", values="predicted").to_string())
    print(table.groupby("delta")["predicted"].value_counts().unstack(fill_value=0).to_string())
    for path in plot(args.out, args.n_features):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
