"""The fit and model clocks, the cost tables and the report's Cost and entity-mass sections."""

import time

import pandas as pd
import pytest
from experiments_standins import ToyRanking, ToyVerification, toy_grid, toy_loader
from llm_fakes import ScriptedBackend
from sklearn.base import BaseEstimator

from experiments.cells import CellStore
from experiments.cost import cell_costs, cost_by_kind, neural_costs
from experiments.grid import expand
from experiments.report import collect, summarise, write_report
from experiments.runner import execute_cell, run
from experiments.suite import Suite
from stylo.llm import model_clock
from stylo.protocols.base import fit_clone, fit_seconds

PROTOCOLS = {"toy_verification": ToyVerification(), "toy_ranking": ToyRanking()}


def _busy(seconds: float) -> None:
    """Spend ``seconds`` of this thread's time (a clock must see work, not a sleep)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class _BusyFit(BaseEstimator):
    def __init__(self, seconds=0.03, fail=False):
        self.seconds = seconds
        self.fail = fail

    def fit(self, X=None, y=None):
        _busy(self.seconds)
        if self.fail:
            raise RuntimeError("fit failed")
        return self


def test_fit_clone_adds_its_fit_time_to_the_clock_even_when_fit_fails():
    before = fit_seconds()
    fit_clone(_BusyFit(0.03), [])
    middle = fit_seconds()
    assert middle - before >= 0.03
    with pytest.raises(RuntimeError, match="fit failed"):
        fit_clone(_BusyFit(0.02, fail=True), [])
    assert fit_seconds() - middle >= 0.02


def _slow_answer(seconds):
    def answer(messages):
        _busy(seconds)
        return "yes"

    return answer


class _AsksTheModel:
    """A protocol stand-in whose evaluation asks ``backend`` the same question twice."""

    def __init__(self, backend):
        self.backend = backend

    def evaluate(self, method, task):
        for _ in range(2):
            self.backend.chat([{"role": "user", "content": "Same author?"}])
        return pd.DataFrame([{"metric": "accuracy", "value": 1.0, "n": 1, "group": "all"}])


def test_model_clock_counts_a_cached_answer_at_what_it_first_cost(tmp_path):
    backend = ScriptedBackend(_slow_answer(0.03), cache=tmp_path / "c.sqlite")
    before = model_clock()
    backend.chat([{"role": "user", "content": "Same author?"}])
    backend.chat([{"role": "user", "content": "Same author?"}])  # from the cache, at once
    spent = model_clock() - before
    assert (spent.calls, spent.cached) == (2, 1)
    first = backend.calls[0]["seconds"]
    assert first >= 0.03 and spent.seconds == pytest.approx(2 * first)


def test_a_cell_records_its_model_calls_even_when_the_cache_answers_them(tmp_path):
    suite = Suite(PROTOCOLS, toy_loader)
    cell = expand(toy_grid(seeds=[0]), suite).cells[0]
    backend = ScriptedBackend(_slow_answer(0.03), cache=tmp_path / "c.sqlite")
    fresh, _ = execute_cell(cell, _AsksTheModel(backend), None, suite)
    replay, _ = execute_cell(cell, _AsksTheModel(backend), None, suite)
    assert fresh["status"] == replay["status"] == "ok"
    assert (fresh["model_calls"], fresh["model_cached"]) == (2, 1)
    assert (replay["model_calls"], replay["model_cached"]) == (2, 2)
    # the replay took no model time but says what its answers cost
    assert replay["runtime"] < 0.03 <= fresh["model_seconds"]
    assert replay["model_seconds"] == pytest.approx(fresh["model_seconds"])


def _record(key, method, runtime, fit, masking=None, model=None):
    spec = {
        "dataset": "guardian",
        "protocol": "rethinking_av",
        "setting": {"split": "closed"},
        "method": method,
        "seed": 0,
        **({"masking": masking} if masking else {}),
    }
    return {
        "key": key,
        "spec": spec,
        "status": "ok",
        "rows": [{"metric": "auc", "value": 0.6, "n": 10, "group": "all"}],
        "runtime": runtime,
        "fit_seconds": fit,
        **(model or {}),
    }


def test_cost_tables_sum_worker_time_by_kind_and_list_each_neural_cell(tmp_path):
    store = CellStore(tmp_path)
    for rec in [
        _record("a" * 20, "naive", 3.0, 1.0),
        _record("b" * 20, "naive", 9.0, None),  # a cell stored before the fit clock
        _record("c" * 20, "bert-pair", 120.0, 90.0),
        _record("d" * 20, "bert-pair", 130.0, 95.0, masking="entity_masking"),
        {**_record("e" * 20, "bert-pair", 5.0, 1.0), "status": "failed"},
    ]:
        store.write(rec, None)
    costs = cell_costs(tmp_path)
    assert len(costs) == 4  # the failed cell costs nothing here
    by_kind = cost_by_kind(costs).set_index("kind")
    assert by_kind.loc["classical", "cells"] == 2
    assert by_kind.loc["classical", "cell minutes"] == pytest.approx(12.0 / 60, abs=0.05)
    # one classical cell predates the fit clock: no partial sum passed off as the kind's
    assert pd.isna(by_kind.loc["classical", "fit minutes"])
    assert by_kind.loc["neural", "fit minutes"] == pytest.approx(185.0 / 60, abs=0.05)
    assert by_kind.loc["neural", "longest s"] == 130.0
    assert by_kind.loc["neural", "median s"] == 125.0
    neural = neural_costs(costs)
    # sorted by setting: the masked cell's JSON sorts first
    assert neural["fit s"].tolist() == [95.0, 90.0]
    assert neural["setting"].tolist() == [
        '{"masking": "entity_masking", "split": "closed"}',
        '{"split": "closed"}',
    ]
    # no model was called: no model minutes
    assert by_kind["model minutes"].isna().all() and by_kind["from cache %"].isna().all()
    assert cost_by_kind(costs.iloc[:0]).empty


def test_cost_by_kind_sums_model_minutes_and_the_share_answered_from_the_cache(tmp_path):
    store = CellStore(tmp_path)
    none = {"model_calls": 0, "model_cached": 0, "model_seconds": 0.0}
    for rec in [
        _record("a" * 20, "naive", 3.0, 1.0, model=none),
        _record(
            "b" * 20,
            "llm-prompt",
            0.5,
            0.0,
            model={**none, "model_calls": 10, "model_cached": 10, "model_seconds": 600.0},
        ),
        _record(
            "c" * 20,
            "llm-likelihood",
            900.0,
            0.0,
            model={**none, "model_calls": 30, "model_cached": 0, "model_seconds": 840.0},
        ),
    ]:
        store.write(rec, None)
    by_kind = cost_by_kind(cell_costs(tmp_path)).set_index("kind")
    assert by_kind.loc["llm", "model minutes"] == pytest.approx(24.0)
    assert by_kind.loc["llm", "from cache %"] == pytest.approx(25.0)
    assert by_kind.loc["llm", "cell minutes"] == pytest.approx(900.5 / 60, abs=0.05)
    assert pd.isna(by_kind.loc["classical", "model minutes"])
    # an LLM cell stored before the model clock: no partial sum passed off as the kind's
    store.write(_record("d" * 20, "llm-prompt", 60.0, 0.0), None)
    by_kind = cost_by_kind(cell_costs(tmp_path)).set_index("kind")
    assert pd.isna(by_kind.loc["llm", "model minutes"])
    assert pd.isna(by_kind.loc["llm", "from cache %"])


def test_report_has_a_cost_section_and_includes_the_entity_mass_report(tmp_path):
    cells = expand(toy_grid(seeds=[0]), Suite(PROTOCOLS, toy_loader)).cells
    run(cells, tmp_path, Suite(PROTOCOLS, toy_loader), progress=False)
    table, failures = collect(tmp_path)
    records = CellStore(tmp_path).records()
    # toy protocols fit without fit_clone and call no model: both clocks say nothing was spent
    assert all(r["fit_seconds"] == 0.0 for r in records)
    assert all(r["model_calls"] == 0 and r["model_seconds"] == 0.0 for r in records)
    costs = cell_costs(tmp_path, set(table["key"]))
    assert sorted(costs["key"]) == sorted(r["key"] for r in records)
    assert costs.set_index("key")["runtime"].to_dict() == {r["key"]: r["runtime"] for r in records}
    info = {"summary": {"total": len(cells)}}
    text = write_report(
        tmp_path, table, summarise(table), failures, info, published=pd.DataFrame()
    ).read_text()
    assert "## Cost" in text and f"| classical | {len(cells)} |" in text
    assert "Named entities" not in text
    (tmp_path / "ENTITY_MASS.md").write_text("# Entity attribution mass: guardian\n\n| a |\n")
    text = write_report(
        tmp_path, table, summarise(table), failures, info, published=pd.DataFrame()
    ).read_text()
    assert "## Named entities in the neural verifiers' attributions (guardian)\n\n| a |" in text
