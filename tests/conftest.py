"""Shared test helpers: real datasets are used when present and skipped with a reason if not."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from stylo.datasets import DatasetNotAvailable, load

# CI explores the same examples on every run, so a submission's result is reproducible;
# locally hypothesis keeps searching with fresh random examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def load_or_skip(name: str, **options):
    """Load a registered dataset, or skip the test saying which dataset is missing."""
    try:
        return load(name, **options)
    except DatasetNotAvailable as exc:
        pytest.skip(f"dataset {name!r} not available: {exc}")


@pytest.fixture(scope="session")
def dataset():
    """``dataset(name, **options)`` loads a real corpus or skips the test."""
    cache = {}

    def _get(name, **options):
        key = (name, tuple(sorted(options.items())))
        if key not in cache:
            cache[key] = load_or_skip(name, **options)
        return cache[key]

    return _get
