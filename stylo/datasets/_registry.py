"""The dataset registry: what is registered (``registry.json``), where its files are on this
machine, and whether they are the registered copies."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

import pandas as pd

from stylo.datasets._jsonl import DataError, sha256_of

_REPO_ROOT = Path(__file__).resolve().parents[2]
# package data, so a non-editable install finds it as well as a checkout does
_REGISTRY_PATH = Path(__file__).resolve().with_name("registry.json")


class DatasetNotAvailable(DataError, LookupError):
    """The dataset is registered but its files are not on this machine, or it is unknown."""


@lru_cache(maxsize=1)
def registry() -> dict[str, dict]:
    """The registry entries (file, kind, sha256, citation, license, ...) by dataset name."""
    with open(_REGISTRY_PATH, encoding="utf-8") as fh:
        return json.load(fh)["datasets"]


def data_roots() -> list[Path]:
    """Folders searched for ``<name>/``, in order of precedence."""
    roots = [Path(p) for p in os.environ.get("STYLO_DATA", "").split(os.pathsep) if p]
    roots += [Path("data"), Path("..") / "shared" / "data"]
    # also beside the checkout, so commands run from another folder still find the data
    fallback = _REPO_ROOT.parent / "shared" / "data"
    if fallback.resolve() not in {r.resolve() for r in roots}:
        roots.append(fallback)
    return roots


def split_name(name: str) -> tuple[str, str | None]:
    base, _, sub = name.partition("/")
    reg = registry()
    if base not in reg:
        raise DatasetNotAvailable(
            f"unknown dataset {name!r}; registered: {sorted(reg)}, or the path of a folder "
            f"holding texts.jsonl[.gz] or pairs.jsonl[.gz]"
        )
    subs = reg[base].get("subsets")
    if sub and (not subs or sub not in subs):
        raise DatasetNotAvailable(
            f"dataset {base!r} has no sub-corpus {sub!r}; it has {subs or 'none'}"
        )
    return base, sub or None


def locate(base: str) -> Path:
    entry = registry()[base]
    looked = []
    for root in data_roots():
        path = root / base / entry["file"]
        looked.append(str(path))
        if path.is_file():
            return path
    raise DatasetNotAvailable(
        f"dataset {base!r} is registered but not available on this machine: "
        f"{entry['file']} was not found in any of: {', '.join(looked)}. "
        f"Set $STYLO_DATA to the folder that holds {base}/."
    )


def check_sha256(path: Path, expected: str) -> None:
    got = sha256_of(path)
    if got != expected:
        raise DataError(
            f"{path}: checksum mismatch (sha256 {got}, registry says {expected}); "
            f"the file differs from the registered copy. Pass verify=False to load "
            f"it anyway."
        )


def available() -> pd.DataFrame:
    """One row per registered dataset: name, kind, whether found here, and where."""
    rows = []
    for name, entry in sorted(registry().items()):
        try:
            path, ok = locate(name), True
        except DatasetNotAvailable:
            path, ok = None, False
        rows.append(
            {
                "name": name,
                "kind": entry["kind"],
                "available": ok,
                "path": str(path) if path else "",
                "description": entry["description"],
            }
        )
    return pd.DataFrame(rows)
