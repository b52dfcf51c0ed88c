"""Plots: an empty table and a missing matplotlib draw nothing, without failing."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
from experiments_standins import ToyVerification, toy_grid, toy_loader

from experiments.grid import expand
from experiments.plots import make_plots
from experiments.report import collect, write_report
from experiments.runner import run

REPO = Path(__file__).resolve().parents[1]


class AlwaysFailing(ToyVerification):
    def evaluate(self, method, task):
        raise ConnectionError("stand-in server unreachable")


def test_every_cell_failed_draws_nothing_and_keeps_the_failures(tmp_path):
    protocols = {"toy_verification": AlwaysFailing()}
    cells = expand(toy_grid(), protocols, toy_loader).cells
    run(cells, tmp_path, protocols=protocols, loader=toy_loader, progress=False)
    table, failures = collect(tmp_path)
    assert table.empty and len(failures) == len(cells) == 2
    assert make_plots(tmp_path, table) == []
    report = write_report(tmp_path, table, failures, {}).read_text()
    assert "## Failed cells" in report and report.count("stand-in server unreachable") == 2


def test_without_matplotlib_no_plot_and_one_line(tmp_path, monkeypatch, capsys):
    # a None entry makes ``import matplotlib`` raise ImportError, as when it is not installed
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    table = pd.DataFrame({"method": ["ppm"]})
    assert make_plots(tmp_path, table) == []
    err = capsys.readouterr().err
    assert err == "plots skipped: matplotlib is not installed (pip install 'stylo[viz]')\n"


def test_modules_import_without_matplotlib():
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "import experiments.plots, experiments.run_all; "
            "assert 'matplotlib.pyplot' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
