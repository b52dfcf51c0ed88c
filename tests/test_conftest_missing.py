"""The helpers that decide between a skip and a failure (tests/conftest.py): outside CI a
missing corpus or extra skips; with ``CI=true`` it fails with the same line, except a missing
extra where ``STYLO_EXTRAS_OPTIONAL`` is set (the quick start's bare venv)."""

from __future__ import annotations

import pytest
from conftest import load_or_skip, missing, require_extra

import baselines.registry as registry

OUTCOME = {"skip": pytest.skip.Exception, "fail": pytest.fail.Exception}


@pytest.mark.parametrize(
    ("ci", "optional", "extra", "outcome"),
    [
        ("", "", False, "skip"),
        ("", "", True, "skip"),
        ("true", "", False, "fail"),
        ("true", "", True, "fail"),
        ("true", "1", True, "skip"),
        ("true", "1", False, "fail"),
        ("false", "", False, "skip"),
        ("0", "", True, "skip"),
    ],
)
def test_skip_or_fail(monkeypatch, ci, optional, extra, outcome):
    monkeypatch.setenv("CI", ci)
    monkeypatch.setenv("STYLO_EXTRAS_OPTIONAL", optional)
    with pytest.raises(OUTCOME[outcome], match="thing X is missing"):
        missing("thing X is missing", extra=extra)


def test_missing_corpus_and_extra_name_what_is_missing(monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("STYLO_EXTRAS_OPTIONAL", "")
    monkeypatch.setattr(registry, "EXTRAS", {"llm": ("no_such_module_xyz", "json")})
    with pytest.raises(
        pytest.fail.Exception,
        match=r"extra 'llm' not installed \(missing no_such_module_xyz\): "
        r"pip install 'stylo\[llm\]'",
    ):
        require_extra("llm")
    with pytest.raises(pytest.fail.Exception, match="missing in CI: .*no_such_corpus"):
        load_or_skip("no_such_corpus")
