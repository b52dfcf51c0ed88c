"""Plots: one look per method, heatmaps, figures that would show nothing, missing matplotlib."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from experiments_standins import ToyVerification, toy_grid, toy_loader

from experiments import plot_style, plots
from experiments.grid import expand
from experiments.plots import heatmaps, make_plots, method_styles, rank_at_k_curves
from experiments.report import collect, summarise, write_report
from experiments.runner import run
from experiments.suite import Suite

REPO = Path(__file__).resolve().parents[2]


def _summary(rows):
    base = {"protocol": "aidbench_one_to_many", "std": np.nan, "count": 1, "n": 40, "seeds": 1}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_every_method_looks_different():
    names = [f"method{i:02d}" for i in range(15)]
    styles = method_styles(reversed(names))
    looks = [tuple(styles[m].values()) for m in names]
    assert len(set(looks)) == len(names)
    # sorted names: neighbours differ in colour, line style and marker
    for a, b in zip(looks, looks[1:]):
        assert all(x != y for x, y in zip(a, b))


@pytest.mark.extra("viz")
def test_roc_curves_name_methods_and_settings_as_the_table_does(tmp_path):
    """A language-model method's rows carry its model in the table (``method_label``), and a
    masked cell's setting its masking: the ROC curves read the stored cells by the same names
    (they once looked a model's label up under its bare name and stopped the quick run), and a
    masked cell is a figure of its own, not pooled with the unmasked curve."""
    from experiments.cells import CellStore

    store = CellStore(tmp_path)
    scores = pd.DataFrame(
        {"id": list("abcd"), "y_true": [True, False, True, False], "y_score": [0.9, 0.2, 0.6, 0.7]}
    )
    base = {"dataset": "guardian", "protocol": "rethinking_av", "setting": {"split": "closed"}}
    specs = [
        {**base, "method": "llm-likelihood", "method_options": {"llm_model": "m (local)"}},
        {**base, "method": "naive"},
        {**base, "method": "naive", "masking": "entity_masking"},
    ]
    for i, spec in enumerate(specs):
        rows = [{"metric": "auc", "value": 0.75, "n": 4, "group": "all"}]
        store.write(
            {"key": f"k{i}", "spec": {**spec, "seed": 0}, "status": "ok", "rows": rows}, scores
        )
    table, _ = collect(tmp_path)
    assert "llm-likelihood [m (local)]" in set(table["method"])
    paths = plots.roc_curves(tmp_path, tmp_path / "plots", styles=method_styles(table["method"]))
    assert sorted(p.name for p in paths) == [
        "roc__guardian__rethinking_av___masking_entity_masking_split_closed.png",
        "roc__guardian__rethinking_av___split_closed.png",
    ]


@pytest.mark.extra("viz")
def test_heatmap_per_protocol_of_its_headline_metric(tmp_path):
    summary = _summary(
        [
            {"dataset": d, "setting": s, "method": m, "metric": metric, "mean": v}
            for d, s in [("imdb62", '{"n_authors": 2}'), ("blog", '{"n_authors": 5}')]
            for m, v in [("ppm", 0.6), ("delta", 0.8)]
            for metric in ["rank@1", "mrr"]
        ][:-2]
    )  # delta has no result on blog
    (path,) = heatmaps(summary, tmp_path)
    assert path.name == "heatmap__aidbench_one_to_many__rank_1.png"
    assert path.stat().st_size > 1000


@pytest.mark.extra("viz")
def test_figures_that_show_nothing_are_not_drawn_and_noted(tmp_path):
    summary = _summary(
        [
            {
                "dataset": "mlpapers",
                "setting": '{"n_authors": 2}',
                "method": m,
                "metric": k,
                "mean": 1.0,
            }
            for m in ["ppm", "delta"]
            for k in ["rank@1", "rank@3"]
        ]
    )
    notes = []
    assert rank_at_k_curves(summary, tmp_path, notes=notes) == []
    assert heatmaps(summary, tmp_path, notes=notes) == []
    assert notes == [
        "Rank@k mlpapers · aidbench_one_to_many · n_authors=2: not drawn, every method has "
        "Rank@k 100% at every k",
        "heatmap aidbench_one_to_many: not drawn, every method has rank@1 1",
    ]
    assert not list(tmp_path.iterdir())
    summary.loc[0, "mean"] = 0.5
    (path,) = rank_at_k_curves(summary, tmp_path)
    assert path.is_file()


def test_flat_plot_notes_are_in_the_report(tmp_path):
    empty = pd.DataFrame(columns=["protocol"])
    report = write_report(
        tmp_path,
        empty,
        summarise(empty),
        pd.DataFrame(),
        {},
        published=pd.DataFrame(),
        plot_notes=["Rank@k x: not drawn, every method has Rank@k 100%"],
    )
    assert "- Rank@k x: not drawn, every method has Rank@k 100%" in report.read_text()


class AlwaysFailing(ToyVerification):
    def evaluate(self, method, task):
        raise ConnectionError("stand-in server unreachable")


def test_every_cell_failed_draws_nothing_and_keeps_the_failures(tmp_path):
    protocols = {"toy_verification": AlwaysFailing()}
    cells = expand(toy_grid(), Suite(protocols, toy_loader)).cells
    run(cells, tmp_path, Suite(protocols, toy_loader), progress=False)
    table, failures = collect(tmp_path)
    assert table.empty and len(failures) == len(cells) == 2
    summary = summarise(table)
    assert make_plots(tmp_path, table, summary) == []
    report = write_report(tmp_path, table, summary, failures, {}).read_text()
    assert "## Failed cells" in report and report.count("stand-in server unreachable") == 2


def test_without_matplotlib_no_plot_and_one_line(tmp_path, monkeypatch, capsys):
    # a None entry makes ``import matplotlib`` raise ImportError, as when it is not installed
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    table = pd.DataFrame({"method": ["ppm"]})
    notes = []
    assert make_plots(tmp_path, table, pd.DataFrame(), notes=notes) == []
    err = capsys.readouterr().err
    line = "plots skipped: matplotlib is not installed (pip install 'stylo[viz]')"
    assert err == line + "\n" and notes == [line]


def test_modules_import_without_matplotlib():
    code = (
        "import sys; sys.modules['matplotlib'] = None; "
        "import experiments.plots, experiments.run_all; "
        "assert 'matplotlib.pyplot' not in sys.modules"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "n, seeds, want",
    [
        ([40, 40], [1, 1], "n=40, 1 seed (small sample)"),
        ([200, 180], [3, 3], "n=180–200, 3 seeds"),
    ],
)
def test_titles_give_the_sample(n, seeds, want):
    assert plot_style.sample_text(pd.DataFrame({"n": n, "seeds": seeds})) == want
