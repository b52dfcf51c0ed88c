"""The fit clock, the cost tables and the report's Cost and entity-mass sections."""

import time

import pandas as pd
import pytest
from experiments_standins import ToyRanking, ToyVerification, toy_grid, toy_loader
from sklearn.base import BaseEstimator

from experiments.cells import CellStore
from experiments.cost import cell_costs, cost_by_kind, neural_costs
from experiments.grid import expand
from experiments.report import collect, summarise, write_report
from experiments.runner import run
from experiments.suite import Suite
from stylo.protocols.base import fit_clone, fit_seconds

PROTOCOLS = {"toy_verification": ToyVerification(), "toy_ranking": ToyRanking()}


class _BusyFit(BaseEstimator):
    def __init__(self, seconds=0.03, fail=False):
        self.seconds = seconds
        self.fail = fail

    def fit(self, X=None, y=None):
        end = time.perf_counter() + self.seconds
        while time.perf_counter() < end:
            pass
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


def _record(key, method, runtime, fit, masking=None):
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
    assert cost_by_kind(costs.iloc[:0]).empty


def test_report_has_a_cost_section_and_includes_the_entity_mass_report(tmp_path):
    cells = expand(toy_grid(seeds=[0]), Suite(PROTOCOLS, toy_loader)).cells
    run(cells, tmp_path, Suite(PROTOCOLS, toy_loader), progress=False)
    table, failures = collect(tmp_path)
    records = CellStore(tmp_path).records()
    # toy protocols fit without fit_clone: the clock says nothing was spent fitting
    assert all(r["fit_seconds"] == 0.0 for r in records)
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
