"""The runner: resume, determinism, failure recording, atomic writes, the run_all command."""

import importlib.util
import json
import os

import pandas as pd
import pytest
from experiments_standins import (
    FailingVerification,
    FittingVerification,
    InterruptingVerification,
    ToyRanking,
    ToyVerification,
    toy_grid,
    toy_loader,
)

from baselines.registry import METHODS
from experiments import run_all, runner
from experiments.cells import Cell, CellStore, write_atomic
from experiments.grid import expand
from experiments.report import collect
from experiments.runner import execute_task, run, schedule
from experiments.suite import Suite
from stylo.features import shared_counts as shared_counts_module
from stylo.protocols.base import task_texts

PROTOCOLS = {"toy_verification": ToyVerification(), "toy_ranking": ToyRanking()}
GRID = toy_grid("toy", "missing_x", seeds=[0, 1])


def _cells(protocols=PROTOCOLS):
    return expand(GRID, Suite(protocols, toy_loader)).cells


def test_resume_after_max_cells_recomputes_only_unfinished(tmp_path):
    cells = _cells()
    first = run(cells, tmp_path, Suite(PROTOCOLS, toy_loader), max_cells=3, progress=False)
    assert (first.computed, first.already_done, first.not_run) == (3, 0, len(cells) - 3)
    store = CellStore(tmp_path)
    stamps = {r["key"]: r["finished"] for r in store.records()}
    second = run(cells, tmp_path, Suite(PROTOCOLS, toy_loader), progress=False)
    assert (second.already_done, second.computed, second.not_run) == (3, len(cells) - 3, 0)
    # the three finished cells were not rewritten
    assert {k: r["finished"] for r in store.records() for k in [r["key"]] if k in stamps} == stamps
    third = run(cells, tmp_path, Suite(PROTOCOLS, toy_loader), progress=False)
    assert (third.already_done, third.computed) == (len(cells), 0)


def test_resume_after_keyboard_interrupt(tmp_path):
    interrupting = {**PROTOCOLS, "toy_verification": InterruptingVerification(after=2)}
    cells = _cells(interrupting)
    with pytest.raises(KeyboardInterrupt, match="interrupted at evaluation 3"):
        run(cells, tmp_path, Suite(interrupting, toy_loader), n_jobs=1, progress=False)
    stored = CellStore(tmp_path).records()
    assert len(stored) == 2 and all(r["status"] == "ok" for r in stored)
    assert not [p for p in (tmp_path / "cells").iterdir() if p.name.startswith(".")]
    again = run(cells, tmp_path, Suite(PROTOCOLS, toy_loader), progress=False)
    assert (again.already_done, again.computed) == (2, len(cells) - 2)


def test_same_seed_gives_identical_table_across_backends_and_jobs(tmp_path):
    cells = _cells()
    run(cells, tmp_path / "a", Suite(PROTOCOLS, toy_loader), n_jobs=1, progress=False)
    run(cells, tmp_path / "b", Suite(PROTOCOLS, toy_loader), n_jobs=2, progress=False)
    ta, _ = collect(tmp_path / "a")
    tb, _ = collect(tmp_path / "b")
    assert len(ta) > 0
    cols = [c for c in ta.columns if c != "runtime"]
    pd.testing.assert_frame_equal(ta[cols], tb[cols])
    # a different seed changes the numbers
    other = expand(toy_grid(seeds=[7]), Suite(PROTOCOLS, toy_loader)).cells
    run(other, tmp_path / "c", Suite(PROTOCOLS, toy_loader), progress=False)
    tc, _ = collect(tmp_path / "c")
    assert (
        not ta.loc[ta["seed"] == 0, "value"]
        .reset_index(drop=True)
        .equals(tc["value"].reset_index(drop=True))
    )


def test_scores_are_split_into_their_own_file(tmp_path):
    cells = [c for c in _cells() if c.protocol == "toy_verification"][:1]
    run(cells, tmp_path, Suite(PROTOCOLS, toy_loader), progress=False)
    store = CellStore(tmp_path)
    (rec,) = store.records()
    assert {r["metric"] for r in rec["rows"]} == {"accuracy", "auc"}
    scores = store.scores(rec)
    assert {"y_true", "y_score"} <= set(scores.columns) and len(scores) == 20
    assert scores["y_true"].dtype == bool and scores["y_true"].sum() == 10


def test_failing_cell_is_recorded_and_run_goes_on(tmp_path):
    failing = {"toy_verification": FailingVerification(), "toy_ranking": ToyRanking()}
    cells = _cells(failing)
    summary = run(cells, tmp_path, Suite(failing, toy_loader), progress=False)
    assert summary.computed == len(cells)
    table, failures = collect(tmp_path)
    assert len(failures) == 2  # the "quarter" setting, two seeds
    assert failures["error"].str.startswith("ConnectionError: stand-in server").all()
    assert failures["traceback"].str.contains("FailingVerification|evaluate").all()
    assert set(table["protocol"]) == {"toy_verification", "toy_ranking"}
    # a rerun retries the failed cells only
    again = run(cells, tmp_path, Suite(failing, toy_loader), progress=False)
    assert (again.already_done, again.computed, again.failed) == (len(cells) - 2, 2, 2)


def test_run_all_exit_code_and_outputs(tmp_path, capsys):
    failing = {"toy_verification": FailingVerification(), "toy_ranking": ToyRanking()}
    out = tmp_path / "res"
    code = run_all.main(
        ["--out", str(out), "--no-progress", "--no-plots"],
        protocols=failing,
        loader=toy_loader,
        grid=GRID,
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "missing_x" in err and "not available" in err and "2 cell(s) failed" in err
    # results.parquet needs the parquet extra (pyarrow); the plain install writes the csv
    parquet = ["results.parquet"] if importlib.util.find_spec("pyarrow") else []
    for name in ["results.csv", *parquet, "manifest.json", "REPORT.md"]:
        assert (out / name).is_file(), name
    assert (out / "results.parquet").is_file() == bool(parquet)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"][-4:] == ["--out", str(out), "--no-progress", "--no-plots"]
    assert manifest["packages"]["pandas"] == pd.__version__
    assert manifest["summary"]["failed"] == 2
    report = (out / "REPORT.md").read_text()
    assert "## Failed cells" in report and "ConnectionError" in report
    assert _run_all(tmp_path / "ok", PROTOCOLS, GRID) == 0


def _run_all(out, protocols, grid) -> int:
    """``run_all``'s exit code on the stand-in protocols and loader."""
    argv = ["--out", str(out), "--no-progress", "--no-plots"]
    return run_all.main(argv, protocols=protocols, loader=toy_loader, grid=grid)


def test_a_method_that_must_be_fitted_on_a_task_without_training_data_does_not_apply(
    tmp_path, capsys
):
    fitting = {"toy_verification": FittingVerification()}
    grid = toy_grid("toy", seeds=[0], methods=("random", "naive"))
    cells = expand(grid, Suite(fitting, toy_loader)).cells
    summary = run(cells, tmp_path / "run", Suite(fitting, toy_loader), progress=False)
    assert (summary.computed, summary.failed, summary.inapplicable) == (4, 0, 2)
    assert "(0 failed, 2 not applicable)" in str(summary)
    table, failures = collect(tmp_path / "run")
    assert set(table["method"]) == {"random"}
    assert list(failures["status"]) == ["inapplicable"] * 2 and set(failures["method"]) == {"naive"}
    assert failures["error"].str.fullmatch("NaiveDistance needs training data but .*").all()
    # done: a rerun computes nothing
    again = run(cells, tmp_path / "run", Suite(fitting, toy_loader), progress=False)
    assert (again.already_done, again.computed) == (4, 0)
    out = tmp_path / "res"
    assert _run_all(out, fitting, grid) == 0
    report = (out / "REPORT.md").read_text()
    assert "0 failed, 2 not applicable." in report and "## Failed cells" not in report
    assert "## Cells that do not apply" in report
    assert "- toy / toy_verification / mix=half / seed 0: naive" in report
    # nothing applies: not a success
    assert _run_all(tmp_path / "none", fitting, toy_grid("toy", methods=("naive",))) == 1
    assert "none of the 2 cell(s) applies" in capsys.readouterr().err


def test_write_atomic_never_leaves_a_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "cells" / "k.json"
    write_atomic(target, b'{"old": true}')

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, b'{"new": true, "long": "' + b"x" * 10000 + b'"}')
    monkeypatch.undo()
    assert target.read_bytes() == b'{"old": true}'
    assert [p.name for p in target.parent.iterdir()] == ["k.json"]
    # a temporary file that a killed writer left behind is never read as a cell
    (target.parent / ".x.json.abc.tmp").write_text("{partial")
    assert [r for r in CellStore(tmp_path).records()] == [{"old": True}]


@pytest.mark.parametrize("content", ['{"key": "trunc', "[1, 2]", "\xff\xfe"])
def test_corrupt_cell_file_is_reported_by_path_and_recomputed(tmp_path, capsys, content):
    cells = [c for c in _cells() if c.protocol == "toy_verification"][:2]
    run(cells, tmp_path, Suite(PROTOCOLS, toy_loader), progress=False)
    store = CellStore(tmp_path)
    bad = store.record_path(cells[0].key)
    bad.write_bytes(content.encode("latin-1"))
    capsys.readouterr()
    # collect skips it, naming the file
    table, _ = collect(tmp_path)
    assert set(table["key"]) == {cells[1].key}
    err = capsys.readouterr().err
    assert f"run_all: corrupt cell file {bad} (" in err and err.rstrip().endswith("; skipped")
    # a rerun recomputes it and only it
    again = run(cells, tmp_path, Suite(PROTOCOLS, toy_loader), progress=False)
    assert (again.already_done, again.computed) == (1, 1)
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"run_all: corrupt cell file {bad} (") and line.endswith(
        "); recomputing"
    )
    assert store.is_done(cells[0].key)


class _CountingVerification(ToyVerification):
    samples = 0

    def sample(self, data, setting, seed):
        type(self).samples += 1
        return super().sample(data, setting, seed)


def test_a_worker_task_loads_and_samples_once_and_a_lost_corpus_fails_its_cells(tmp_path):
    loads = []

    def loader(name, **options):
        loads.append(name)
        if name.startswith("vanishing") and len(loads) > 1:
            raise FileNotFoundError("corpus gone")
        return toy_loader(name, **options)

    protocols = {"toy_verification": _CountingVerification()}
    methods = {name: METHODS["random"] for name in ("a", "b", "c")}
    suite = Suite(protocols, loader, methods=methods)
    grid = toy_grid("once-toy", max_settings=1, methods=tuple(methods))
    cells = expand(grid, suite).cells
    assert len(cells) == 3 and len({c.task_key for c in cells}) == 1
    _CountingVerification.samples = 0
    results = execute_task(suite, cells)
    # the listing's load is reused in this process; the task is sampled once for three cells
    assert loads == ["once-toy"] and _CountingVerification.samples == 1
    assert [r["status"] for r, _ in results] == ["ok"] * 3
    assert results[0][0]["task_seconds"] >= 0 and results[1][0]["task_seconds"] == 0
    # a corpus that listed its settings but cannot be loaded again fails each cell, loudly
    loads.clear()
    cells = expand(toy_grid("vanishing-toy", max_settings=1, methods=tuple(methods)), suite).cells
    expand(toy_grid("other-toy", max_settings=1, methods=("a",)), suite)  # evicts it
    results = execute_task(suite, cells, store_dir=str(tmp_path))
    assert [r["status"] for r, _ in results] == ["failed"] * 3
    assert all(r["error"] == "FileNotFoundError: corpus gone" for r, _ in results)
    assert len(CellStore(tmp_path).records()) == 3


class _TrainedOnTheCorpus(ToyVerification):
    def sample(self, data, setting, seed):
        task = super().sample(data, setting, seed)
        task.train = data  # a part whose texts task_texts finds
        return task


def test_a_tasks_cells_share_one_count_of_its_texts(monkeypatch):
    # every cell of the task runs inside one shared_counts context over the task's texts
    seen = []
    real = runner.execute_cell

    def spy(cell, protocol, task, *args):
        seen.append((shared_counts_module.active(), set(task_texts(task))))
        return real(cell, protocol, task, *args)

    monkeypatch.setattr(runner, "execute_cell", spy)
    methods = {name: METHODS["random"] for name in ("a", "b")}
    suite = Suite({"toy_verification": _TrainedOnTheCorpus()}, toy_loader, methods=methods)
    cells = expand(toy_grid("shared-toy", max_settings=1, methods=tuple(methods)), suite).cells
    results = execute_task(suite, cells)
    assert [r["status"] for r, _ in results] == ["ok"] * 2
    (first, texts), (second, _) = seen
    assert texts and first is not None and first is second and first.holds(texts)
    assert shared_counts_module.active() is None
    # a task above the size bound runs without one
    monkeypatch.setattr(runner, "_SHARED_COUNT_CHARS", 0)
    seen.clear()
    execute_task(suite, cells)
    assert [active for active, _ in seen] == [None, None]


def test_loky_workers_allow_the_model_cells_memory(monkeypatch):
    from joblib.externals.loky import process_executor

    from experiments import runner

    monkeypatch.setattr(process_executor, "_MAX_MEMORY_LEAK_SIZE", int(3e8))
    monkeypatch.setattr(runner, "execute_task", lambda *payload: list(payload))
    assert runner._loky_task("suite", ["cell"]) == ["suite", ["cell"]]
    assert process_executor._MAX_MEMORY_LEAK_SIZE == runner.WORKER_MEMORY_GROWTH > int(3e8)
    # a limit set higher by the user stays
    monkeypatch.setattr(process_executor, "_MAX_MEMORY_LEAK_SIZE", 2**40)
    runner._loky_task()
    assert process_executor._MAX_MEMORY_LEAK_SIZE == 2**40


class _CostlyVerification(ToyVerification):
    name = "costly"
    relative_cost = 25.0


def test_the_schedule_starts_the_costliest_cells_first_and_keeps_a_tasks_shared_cells_together():
    protocols = {"toy_verification": ToyVerification(), "costly": _CostlyVerification()}
    suite = Suite(protocols, toy_loader)

    def cell(method, protocol="toy_verification", seed=0):
        return Cell("toy", {}, protocol, {"mix": "half"}, method, {}, seed)

    cells = [
        cell("naive"),
        cell("llm-prompt"),
        cell("bert-pair"),
        cell("naive", "costly"),
        cell("cdm", "costly"),
        cell("llm-prompt-both-orders"),
        cell("embedding", seed=1),
        cell("embedding"),
        cell("delta"),
        cell("cdm-cal"),
        cell("ppm"),
        cell("ensemble"),
        cell("ppm", "costly"),
        cell("ensemble", "costly"),
        cell("cdm"),
        cell("cdm", seed=1),
    ]
    order = [[(c.method, c.protocol, c.seed) for c in group] for group in schedule(cells, suite)]
    assert order == [
        # one task's LLM and embedding cells in one worker task, in the grid's order, so that
        # both-orders finds llm-prompt's answers cached and the embedding model loads once
        [
            ("llm-prompt", "toy_verification", 0),
            ("llm-prompt-both-orders", "toy_verification", 0),
            ("embedding", "toy_verification", 0),
        ],
        [("bert-pair", "toy_verification", 0)],
        # a costly protocol's methods measuring pairs through one compression memo, together
        # (equal costs keep the grid's order)
        [("cdm", "costly", 0), ("ensemble", "costly", 0)],
        [("embedding", "toy_verification", 1)],  # another task: its own
        [("naive", "costly", 0)],
        [("ppm", "costly", 0)],
        # a task's cheap cells in one worker task, which samples the task once for them all
        # (the memo's cells among them)
        [
            ("naive", "toy_verification", 0),
            ("delta", "toy_verification", 0),
            ("cdm-cal", "toy_verification", 0),
            ("ppm", "toy_verification", 0),
            ("ensemble", "toy_verification", 0),
            ("cdm", "toy_verification", 0),
        ],
        [("cdm", "toy_verification", 1)],  # another task
    ]
    assert sorted(c.key for g in schedule(cells, suite) for c in g) == sorted(c.key for c in cells)


def test_a_process_samples_a_task_once_for_the_cells_of_its_key():
    suite = Suite({"toy_verification": _CountingVerification()}, toy_loader)
    cells = expand(
        toy_grid("cached-toy", max_settings=1, methods=("random",), seeds=[0, 1]), suite
    ).cells
    _CountingVerification.samples = 0
    first = suite.task(cells[0])[1]
    assert suite.task(cells[0])[1] is first and _CountingVerification.samples == 1
    # another seed is another task; the same key under a differently configured protocol too
    assert suite.task(cells[1])[1] is not first and _CountingVerification.samples == 2
    other = Suite({"toy_verification": _CountingVerification(n_pairs=6)}, toy_loader)
    assert len(other.task(cells[0])[1].a) == 6 and len(first.a) == 20
