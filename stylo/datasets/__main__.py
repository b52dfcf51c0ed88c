"""``python -m stylo.datasets``: a table of every registered dataset found on this machine."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from stylo.corpus import Corpus
from stylo.datasets import DatasetNotAvailable, data_roots, load, registry

_COUNTS = ["authors", "texts", "topics", "problems", "same"]


def dataset_table(names=None) -> pd.DataFrame:
    """Authors, texts (or problems), mean length in characters and topics per dataset."""
    rows = []
    for name in names or sorted(registry()):
        entry = registry()[name]
        if entry["kind"] not in ("texts", "pairs"):
            continue
        parts = [name] + [f"{name}/{s}" for s in entry.get("subsets", [])]
        for part in parts:
            try:
                obj = load(part)
            except DatasetNotAvailable as exc:
                rows.append(
                    {
                        "dataset": part,
                        "kind": entry["kind"],
                        "status": "missing",
                        "note": str(exc).split(":")[0],
                    }
                )
                continue
            if isinstance(obj, Corpus):
                s = obj.summary()
                rows.append(
                    {
                        "dataset": part,
                        "kind": "texts",
                        "status": "ok",
                        "authors": s["authors"],
                        "texts": s["texts"],
                        "mean_chars": round(s["mean_chars"], 1),
                        "topics": s["topics"],
                    }
                )
            else:
                s = obj.summary()
                splits = (
                    obj.frame["split"].value_counts().to_dict()
                    if "split" in obj.frame.columns
                    else {}
                )
                rows.append(
                    {
                        "dataset": part,
                        "kind": "pairs",
                        "status": "ok",
                        "problems": s["problems"],
                        "same": s["same"],
                        "mean_known_docs": round(s["mean_known"], 2),
                        "mean_chars": round(s["mean_chars"], 1),
                        "splits": " ".join(f"{k}:{v}" for k, v in sorted(splits.items())),
                    }
                )
    table = pd.DataFrame(rows)
    # a count a row lacks (texts rows have no problems, pairs rows no texts) is NaN, which
    # made the column float (3000.0); counts stay integers and the gaps print empty
    counts = [c for c in _COUNTS if c in table.columns]
    table[counts] = table[counts].astype("Int64")
    return table.astype(object).where(table.notna(), "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m stylo.datasets", description=__doc__)
    ap.add_argument("names", nargs="*", help="datasets to show (default: all)")
    args = ap.parse_args(argv)
    table = dataset_table(args.names or None)
    print("data roots searched:", ", ".join(str(r) for r in data_roots()))
    print(table.to_markdown(index=False) if _has_tabulate() else table.to_string(index=False))
    return 0


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
