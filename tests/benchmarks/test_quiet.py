"""The quiet-machine timing helper every speed benchmark uses (benchmarks/quiet.py)."""

from __future__ import annotations

import io

import pytest

from benchmarks import quiet


def test_wait_returns_at_once_when_quiet(monkeypatch):
    monkeypatch.setattr(quiet, "_load", lambda: 0.1)
    assert quiet.wait_for_quiet(max_load=0.5, timeout=0, stream=io.StringIO())


def test_wait_gives_up_and_says_so(monkeypatch):
    monkeypatch.setattr(quiet, "_load", lambda: 3.0)
    out = io.StringIO()
    assert not quiet.wait_for_quiet(max_load=0.5, timeout=0, poll=0.01, stream=out)
    assert "still >= 0.5" in out.getvalue()


def test_wait_waits_until_the_load_falls(monkeypatch):
    loads = iter([2.0, 1.0, 0.2])
    monkeypatch.setattr(quiet, "_load", lambda: next(loads))
    monkeypatch.setattr(quiet.time, "sleep", lambda s: None)
    assert quiet.wait_for_quiet(max_load=0.5, timeout=60, stream=io.StringIO())


def test_alternate_runs_round_robin():
    calls = []
    runs = {"a": lambda: calls.append("a") or 1.0, "b": lambda: calls.append("b") or 2.0}
    times = quiet.alternate(runs, repeats=3)
    assert calls == ["a", "b"] * 3
    assert times == {"a": [1.0] * 3, "b": [2.0] * 3}


def test_spread_and_record(monkeypatch):
    assert quiet.spread([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0, "runs": 3}
    monkeypatch.setattr(quiet, "_load", lambda: 0.25)
    rec = quiet.LoadRecord(quiet=False).close()
    assert rec.label() == "LOADED: load average 0.25 before, 0.25 after"


@pytest.mark.parametrize("bad", [dict(max_load=0), dict(timeout=-1), dict(poll=0)])
def test_rejects_bad_arguments(bad):
    with pytest.raises(ValueError):
        quiet.wait_for_quiet(**bad)


def test_rejects_no_runs():
    with pytest.raises(ValueError):
        quiet.alternate({"a": lambda: 1.0}, repeats=0)
    with pytest.raises(ValueError):
        quiet.spread([])


def test_repeated_keeps_every_row_and_spreads_their_seconds():
    seconds = iter([3.0, 1.0, 2.0])
    rows, took = quiet.repeated(lambda: {"s": next(seconds), "auc": 0.5}, repeats=3, seconds="s")
    assert [r["s"] for r in rows] == [3.0, 1.0, 2.0]
    assert took == {"median": 2.0, "min": 1.0, "max": 3.0, "runs": 3}
