"""Progress inside long cells: the listener, its throttle, the methods that report, and the
files through which grid workers tell the progress bar."""

from __future__ import annotations

import json
import time

import numpy as np
from experiments_standins import ToyVerification, toy_loader

import baselines.impostors as impostors
from baselines.registry import MethodSpec
from experiments.cells import Cell
from experiments.grid import expand
from experiments.runner import _showing_progress, execute_cell, run
from experiments.suite import Suite
from stylo import progress
from stylo.corpus import PairSet
from stylo.verifier import Verifier, rank_each_query


def test_advance_without_listener_does_nothing_and_listening_restores():
    progress.advance("nobody", 1, 2)
    seen = []
    with progress.listening(lambda *a: seen.append(a), every=0.0):
        progress.advance("outer", 1, 3)
        with progress.listening(lambda *a: seen.append(("inner", *a)), every=0.0):
            progress.advance("x", 1, 2)
        progress.advance("outer", 2, 3)
    progress.advance("after", 1, 2)
    assert seen == [("outer", 1, 3), ("inner", "x", 1, 2), ("outer", 2, 3)]


def test_throttle_keeps_the_first_and_the_finishing_call_and_one_unit_says_nothing():
    seen = []
    with progress.listening(lambda *a: seen.append(a), every=3600):
        for i in range(1, 101):
            progress.advance("loop", i, 100)
            progress.advance("one call", 1, 1)
    assert seen == [("loop", 1, 100), ("loop", 100, 100)]


def test_rankings_one_query_at_a_time_report_their_queries():
    class _PerQuery(Verifier):
        requires_fit = False

        def _rank_many_impl(self, queries, candidate_lists):
            return rank_each_query(lambda q, c: np.zeros(len(c)), queries, candidate_lists)

    seen = []
    with progress.listening(lambda *a: seen.append(a), every=0.0):
        _PerQuery().fit().rank_many(["q1", "q2", "q3"], [["a"], ["b", "c"], ["d"]])
    assert seen == [("queries", 1, 3), ("queries", 2, 3), ("queries", 3, 3)]


def _gi_pairs():
    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(80)]
    texts = [
        " ".join(rng.choice(words[a * 7 : a * 7 + 25], size=60)) for a in range(6) for _ in range(4)
    ]
    known = texts[0::2]
    unknown = texts[1::2]
    same = [True, False] * (len(known) // 2)
    unknown = [
        u if s else unknown[(i + 3) % len(unknown)] for i, (u, s) in enumerate(zip(unknown, same))
    ]
    return PairSet.from_lists(known, unknown, same=same)


def test_impostors_in_slices_equal_one_call_and_report_both_directions(monkeypatch):
    pairs = _gi_pairs()
    gi = impostors.GeneralImpostors(n_iter=20, n_candidates=6, n_impostors=3, random_state=1)
    gi.fit(pairs)
    whole = gi.raw_scores(pairs)
    monkeypatch.setattr(impostors, "_PROGRESS_CHUNK", 5)
    seen = []
    with progress.listening(lambda *a: seen.append(a), every=0.0):
        sliced = gi.raw_scores(pairs)
    np.testing.assert_array_equal(sliced, whole)
    n = len(pairs)
    assert [d for _, d, _ in seen] == [*range(5, n, 5), n, *range(n + 5, 2 * n, 5), 2 * n]
    assert {t for _, _, t in seen} == {2 * n}


class _Watching(Verifier):
    """Reports progress, and records what the worker's progress file says meanwhile."""

    requires_fit = False

    def __init__(self, folder=None):
        self.folder = folder

    def _score_impl(self, texts_a, texts_b):
        progress.advance("pairs", len(texts_a), len(texts_a))
        (path,) = list(self.folder.glob("*.json"))
        type(self).seen = json.loads(path.read_text())
        return np.full(len(texts_a), 0.7)


def test_worker_writes_progress_for_the_bar_and_removes_it(tmp_path):
    protocol = ToyVerification(n_pairs=8)
    cell = Cell("toy", {}, "toy_verification", {"mix": "half"}, "watching", {}, 0)
    suite = Suite(
        {"toy_verification": protocol},
        toy_loader,
        methods={"watching": MethodSpec(lambda seed, o: _Watching(tmp_path))},
    )
    record, _ = execute_cell(cell, *suite.task(cell), suite, progress_dir=str(tmp_path))
    assert record["status"] == "ok", record.get("error")
    assert _Watching.seen == {"cell": "watching on toy", "stage": "pairs", "done": 8, "total": 8}
    assert not list(tmp_path.glob("*.json"))


class _Bar:
    def __init__(self):
        self.postfix = []

    def set_postfix_str(self, text, refresh=True):
        self.postfix.append(text)


def test_bar_shows_what_the_workers_say(tmp_path):
    (tmp_path / "11.json").write_text(
        json.dumps(
            {"cell": "impostors on pan19_cdaa", "stage": "problems", "done": 12000, "total": 36459}
        )
    )
    (tmp_path / "12.json").write_text(
        json.dumps({"cell": "naive on blog", "stage": "", "done": 0, "total": 0})
    )
    (tmp_path / ".13.json.tmp").write_text("half a file")
    bar = _Bar()
    with _showing_progress(bar, str(tmp_path), every=0.01):
        deadline = time.monotonic() + 10
        while not bar.postfix and time.monotonic() < deadline:
            time.sleep(0.01)
    assert bar.postfix[0] == "impostors on pan19_cdaa problems 12,000/36,459; naive on blog"
    assert not tmp_path.exists()  # the run's progress folder goes with the run


class _LooksForStaleNotes(Verifier):
    """Records, while it scores, whether a killed run's progress note is still there."""

    requires_fit = False
    seen: list = []

    def __init__(self, note=None):
        self.note = note

    def _score_impl(self, texts_a, texts_b):
        type(self).seen.append(self.note.exists())
        return np.full(len(texts_a), 0.5)


def test_a_killed_runs_progress_notes_are_not_shown(tmp_path):
    from experiments_standins import toy_grid

    stale = tmp_path / "cells" / ".progress" / "999999.json"
    stale.parent.mkdir(parents=True)
    stale.write_text(
        json.dumps({"cell": "llm-prompt on imdb62", "stage": "model calls", "done": 1, "total": 9})
    )
    protocols = {"toy_verification": ToyVerification(n_pairs=8)}
    methods = {"probe": MethodSpec(lambda seed, o: _LooksForStaleNotes(stale))}
    suite = Suite(protocols, toy_loader, methods=methods)
    cells = expand(toy_grid(max_settings=1, methods=("probe",)), suite).cells
    _LooksForStaleNotes.seen = []
    run(cells, tmp_path, suite, progress=True)
    assert _LooksForStaleNotes.seen == [False] * len(cells) and cells
    assert not stale.parent.exists()
