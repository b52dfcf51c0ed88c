"""The dask backend: a tiny grid on a LocalCluster bound to loopback gives the loky numbers."""

import pandas as pd
import pytest
from experiments_standins import ToyRanking, ToyVerification, toy_grid, toy_loader

from experiments.grid import expand
from experiments.report import collect
from experiments.runner import run
from experiments.suite import Suite

# a missing extra skips with a line saying so, and fails under CI (conftest)
pytestmark = pytest.mark.extra("dask")

PROTOCOLS = {"toy_verification": ToyVerification(), "toy_ranking": ToyRanking()}


def test_local_cluster_on_loopback_runs_a_tiny_grid(tmp_path):
    grid = toy_grid(max_settings=1)
    cells = expand(grid, Suite(PROTOCOLS, toy_loader)).cells
    summary = run(
        cells,
        tmp_path / "dask",
        Suite(PROTOCOLS, toy_loader),
        backend="dask",
        n_jobs=1,
        progress=False,
    )
    assert (summary.computed, summary.failed) == (len(cells), 0)
    run(cells, tmp_path / "loky", Suite(PROTOCOLS, toy_loader), progress=False)
    td, _ = collect(tmp_path / "dask")
    tl, _ = collect(tmp_path / "loky")
    cols = [c for c in td.columns if c != "runtime"]
    pd.testing.assert_frame_equal(td[cols], tl[cols])
    again = run(
        cells,
        tmp_path / "dask",
        Suite(PROTOCOLS, toy_loader),
        backend="dask",
        n_jobs=1,
        progress=False,
    )
    assert (again.already_done, again.computed) == (len(cells), 0)
