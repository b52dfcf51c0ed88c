"""Report, leaderboard, published figures and plots."""

import json
from math import comb

import numpy as np
import pandas as pd
import pytest
from experiments_standins import ToyRanking, ToyVerification, UpperCased, toy_grid, toy_loader

from experiments.grid import expand
from experiments.leaderboard import leaderboard, load_published, published_items
from experiments.plots import make_plots, masking_bars
from experiments.report import collect, protocol_tables, summarise, write_report
from experiments.runner import run
from experiments.suite import Suite

PROTOCOLS = {"toy_verification": ToyVerification(), "toy_ranking": ToyRanking()}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    cells = expand(toy_grid(seeds=[0, 1]), Suite(PROTOCOLS, toy_loader)).cells
    run(cells, out, Suite(PROTOCOLS, toy_loader), progress=False)
    return out


def test_table_is_tidy_and_summary_is_mean_std_over_groups_and_seeds(finished_run):
    table, failures = collect(finished_run)
    assert failures.empty
    assert list(table.columns) == [
        "dataset",
        "protocol",
        "setting",
        "method",
        "seed",
        "group",
        "metric",
        "value",
        "n",
        "runtime",
        "key",
    ]
    summary = summarise(table)
    one = table[
        (table["protocol"] == "toy_ranking")
        & (table["metric"] == "rank@1")
        & (table["setting"] == '{"n_authors": 2}')
    ]
    assert len(one) == 6  # (2 groups + their "all" row) x 2 seeds
    one = one[one["group"] != "all"]
    row = summary[
        (summary["protocol"] == "toy_ranking")
        & (summary["metric"] == "rank@1")
        & (summary["setting"] == '{"n_authors": 2}')
    ].iloc[0]
    assert row["count"] == 4
    # items per run: the 2 groups' single queries; 2 seeds
    assert (row["n"], row["seeds"]) == (2, 2)
    assert row["mean"] == pytest.approx(one["value"].mean())
    assert row["std"] == pytest.approx(one["value"].std(ddof=1))
    # a protocol without groups: its "all" rows (one per seed) are the replicates
    auc = summary[(summary["metric"] == "auc") & (summary["setting"] == '{"mix": "half"}')]
    assert auc["count"].tolist() == [2]
    tables = protocol_tables(table)
    assert "rank@1" in tables["toy_ranking"] and "± " in tables["toy_ranking"]
    lines = tables["toy_ranking"].splitlines()
    assert lines[0] == "| dataset | setting | method | n | seeds | rank@1 | rank@3 | sample |"
    assert lines[2].startswith("| toy | n_authors=2 | random | 2 | 2 | ")
    assert lines[2].endswith(" | small sample |")


def test_published_random_guess_rows_equal_the_closed_form():
    pub = load_published()
    rows = pub[pub["method"] == "random guess"]
    assert len(rows) == 6
    for r in rows.itertuples():
        n_authors = json.loads(r.setting)["n_authors"]
        k = int(r.metric.split("@")[1])
        cands, relevant = 10 * n_authors - 1, 9
        expected = 1 - comb(cands - relevant, k) / comb(cands, k)
        assert r.value == pytest.approx(100 * expected, abs=0.05)
    assert set(pub.columns) >= {
        "source",
        "table",
        "dataset",
        "protocol",
        "setting",
        "method",
        "metric",
        "value",
        "unit",
        "verified",
    }
    assert (pub["source"] != "").all()


def test_leaderboard_puts_stylo_beside_published_rows():
    summary = pd.DataFrame(
        {
            "dataset": ["mlpapers", "mlpapers", "imdb62"],
            "protocol": ["aidbench_one_to_many"] * 2 + ["aidbench_one_to_two"],
            "setting": [
                '{"first_author": false, "n_authors": 2, "n_groups": 10}',
                '{"first_author": false, "n_authors": 5, "n_groups": 10}',
                '{"cross_topic": false}',
            ],
            "method": ["random"] * 3,
            "metric": ["rank@1", "rank@1", "accuracy"],
            "mean": [0.48, 0.19, 0.51],
            "std": [0.1, 0.05, 0.02],
            "count": [30, 30, 3],
            "n": [300, 300, 40],
            "seeds": [3, 3, 3],
        }
    )
    board = leaderboard(summary, load_published())
    two = board[
        (board["dataset"] == "mlpapers")
        & (board["metric"] == "rank@1")
        & board["setting"].str.startswith("first_author=False, n_authors=2")
    ]
    systems = list(two["system"])
    # AIDBench's research papers (Tables 3-5, 8: every model, both prompt families, the
    # searching baseline) beside ours, best first, with the printed std
    assert two.loc[two["system"] == "Searching", "value"].tolist() == [70.0]
    ours = two[
        two["system"] == "stylo: random [first_author=False, n_authors=2, n_groups=10]"
    ].iloc[0]
    assert ours["value"] == pytest.approx(48.0)
    assert (ours["n"], ours["seeds"], ours["note"]) == (300, 3, "")
    gpt4 = two[two["system"] == "GPT-4-turbo (general prompt)"].iloc[0]
    assert gpt4["source"].endswith("Table 5") and not pd.isna(gpt4["std"])
    assert {
        "Random guess",
        "GPT-4-turbo (topic-ignored prompt)",
        "Kimi (general prompt)",
        "Qwen1.5-72B-Chat (general prompt)",
    } <= set(systems)
    assert list(two["value"]) == sorted(two["value"], reverse=True)
    # the curated closed-form random guess has no first_author key: it stands beside both
    curated = board[(board["system"] == "random guess") & (board["metric"] == "rank@1")]
    assert set(curated["value"]) == {47.4, 18.4}
    imdb = board[(board["dataset"] == "imdb62")]
    assert list(imdb["system"]) == [
        "GPT-4-turbo",
        "GPT-3.5-turbo",
        "Kimi",
        "Baichuan2-turbo-192k",
        "stylo: random [cross_topic=False]",
    ]
    # 40 triplets x 3 seeds against the paper's 200 x 3: flagged twice, and the paper's sample
    # size is in its note
    ours, paper = imdb.iloc[4], imdb.iloc[0]
    assert (ours["n"], ours["seeds"]) == (40, 3)
    assert ours["note"] == (
        "small sample (n < 100); fewer items than the published rows (120 vs 600)"
    )
    assert pd.isna(paper["n"]) and "200 examples" in paper["note"]
    assert (paper["value"], paper["std"]) == (75.8, 3.8)


def test_a_row_on_fewer_items_than_the_published_ones_is_flagged():
    row = {
        "dataset": "imdb62",
        "protocol": "aidbench_one_to_two",
        "setting": '{"cross_topic": false}',
        "method": "llm-prompt",
        "metric": "accuracy",
        "mean": 0.5,
        "std": 0.0,
        "count": 1,
        "n": 200,
    }
    for seeds, note in [(1, "fewer items than the published rows (200 vs 600)"), (3, "")]:
        board = leaderboard(pd.DataFrame([{**row, "seeds": seeds}]), load_published())
        ours = board[board["system"].str.startswith("stylo: llm-prompt")].iloc[0]
        assert ours["note"] == note
    assert published_items("over 3 random seeds; 200 text pairs per run") == 600
    assert published_items("across 10 random author groups, each evaluated 3 times") == 30
    assert published_items("std as printed") is None


def test_published_names_become_stylo_names():
    pub = load_published()
    assert not (pub["protocol"] == "aidbench_ablation").any()
    assert set(pub["dataset"]) >= {"mlpapers", "imdb62", "enron", "blog", "guardian"}
    rag = pub[(pub["table"] == "Table 9")]
    assert set(rag["setting"]) == {
        '{"first_author": false, "keep": 10, "pool_size": 50}',
        '{"first_author": false, "keep": 50, "pool_size": 200}',
    }
    mixes = {
        json.loads(s)["mix"] for s in pub.loc[pub["protocol"] == "aidbench_one_to_one", "setting"]
    }
    assert mixes == {"150/50", "100/100", "50/150"}
    assert {"precision@1", "precision@3", "precision@5"} <= set(pub["metric"])


def test_leaderboard_puts_the_best_complement_of_brier_first():
    # PAN's "brier" is 1 - Brier score: higher is better, like every other metric
    summary = pd.DataFrame(
        {
            "dataset": ["pan15_av_en"] * 2,
            "protocol": ["pan_verification"] * 2,
            "setting": ["{}"] * 2,
            "method": ["good", "bad"],
            "metric": ["brier"] * 2,
            "mean": [0.9, 0.6],
            "std": [np.nan] * 2,
            "count": [1, 1],
            "n": [500, 500],
            "seeds": [1, 1],
        }
    )
    board = leaderboard(summary, load_published())
    assert list(board["system"]) == ["stylo: good", "PAN baseline cngdist", "stylo: bad"]


@pytest.mark.extra("viz")
def test_report_and_plots(finished_run):
    table, failures = collect(finished_run)
    summary = summarise(table)
    plots = make_plots(finished_run, table, summary)
    names = sorted(p.name.split("__")[0] for p in plots)
    # ROC for both toy_verification settings, Rank@k for both toy_ranking settings, one
    # accuracy-vs-authors figure and a heatmap per protocol; no masking data, so no masking plot
    assert names == ["heatmap", "heatmap", "rank_at_k", "rank_at_k", "roc", "roc", "vs_authors"]
    assert all(p.stat().st_size > 1000 for p in plots)
    info = {
        "command": ["python", "-m", "experiments.run_all"],
        "summary": {"total": 16},
        "skipped": ["dataset missing: not available"],
    }
    report = write_report(finished_run, table, summary, failures, info, plots=plots).read_text()
    assert "## toy_ranking" in report and "## Leaderboard" in report
    assert "dataset missing: not available" in report and "(plots/roc__" in report
    # drawn by two worker processes: the same files, bytes, order and notes
    drawn = {p.name: p.read_bytes() for p in plots}
    notes, parallel_notes = [], []
    assert make_plots(finished_run, table, summary, notes=notes) == plots
    assert make_plots(finished_run, table, summary, notes=parallel_notes, n_jobs=2) == plots
    assert parallel_notes == notes and {p.name: p.read_bytes() for p in plots} == drawn


@pytest.mark.extra("viz")
def test_masking_bars_drawn_only_with_masking_settings(tmp_path):
    base = {
        "dataset": "g",
        "protocol": "rethinking_av",
        "method": "m",
        "metric": "overall",
        "std": 0.0,
        "count": 1,
    }
    summary = pd.DataFrame([{**base, "setting": '{"split": "closed"}', "mean": 0.6}])
    assert masking_bars(summary, tmp_path) == []
    summary = pd.DataFrame(
        [
            {**base, "setting": '{"masking": "none", "split": "closed"}', "mean": 0.6},
            {**base, "setting": '{"masking": "ne", "split": "closed"}', "mean": 0.7},
        ]
    )
    (path,) = masking_bars(summary, tmp_path)
    assert path.is_file()
    # methods that ran only unmasked add no bars (and no width): the same figure as without
    from matplotlib.image import imread

    alone = imread(path).shape
    others = pd.DataFrame(
        [
            {**base, "method": f"unmasked{i}", "mean": 0.5, "setting": f'{{"split": "{split}"}}'}
            for i in range(12)
            for split in ("closed", "open_all")
        ]
    )
    (path,) = masking_bars(pd.concat([summary, others]), tmp_path)
    assert imread(path).shape == alone


@pytest.mark.extra("viz")
def test_masking_cells_show_as_a_setting_and_get_bars(tmp_path):
    grid = toy_grid(maskings=["upper"], masking_protocols=["toy_verification"])
    maskings = {"upper": UpperCased}
    cells = expand(grid, Suite(PROTOCOLS, toy_loader, maskings=maskings)).cells
    plain = expand(toy_grid(), Suite(PROTOCOLS, toy_loader)).cells
    # one masked cell beside each toy_verification cell; unmasked keys are unchanged
    assert len(cells) == len(plain) + 2
    assert {c.key for c in plain} < {c.key for c in cells}
    run(cells, tmp_path, Suite(PROTOCOLS, toy_loader, maskings=maskings), progress=False)
    table, failures = collect(tmp_path)
    assert failures.empty
    auc = table[(table["metric"] == "auc") & table["setting"].str.contains('"mix": "half"')]
    assert sorted(auc["setting"]) == ['{"masking": "upper", "mix": "half"}', '{"mix": "half"}']
    assert auc["value"].nunique() == 2  # the masked verifier saw other texts
    (path,) = masking_bars(summarise(table), tmp_path / "plots")
    assert path.name.startswith("masking__toy__toy_verification")


def test_position_bias_table_shows_first_slot_share_and_ties():
    from experiments.report import position_bias

    rows = {"first_slot_rate": [1.0, 0.45], "tie_rate": [0.0, 0.3], "accuracy": [0.5, 0.6]}
    summary = pd.DataFrame(
        [
            {
                "dataset": "imdb62",
                "protocol": "aidbench_one_to_two",
                "setting": "{}",
                "method": m,
                "metric": metric,
                "mean": v[i],
                "std": np.nan,
                "count": 1,
                "n": 200,
                "seeds": 1,
            }
            for metric, v in rows.items()
            for i, m in enumerate(["llm-prompt", "both-orders"])
        ]
    )
    bias = position_bias(summary)
    assert bias[["method", "first candidate %", "ties %", "n"]].values.tolist() == [
        ["llm-prompt", 100.0, 0.0, 200],
        ["both-orders", 45.0, 30.0, 200],
    ]
    assert position_bias(summary[summary["metric"] == "accuracy"]).empty


def test_report_header_says_how_many_cells_did_not_run(tmp_path):
    from experiments.report import write_report

    empty = pd.DataFrame(
        columns=[
            "dataset",
            "protocol",
            "setting",
            "method",
            "seed",
            "group",
            "metric",
            "value",
            "n",
            "runtime",
            "key",
        ]
    )
    info = {"summary": {"total": 10, "already_done": 7, "computed": 0, "not_run": 3}}
    text = write_report(
        tmp_path, empty, summarise(empty), pd.DataFrame(), info, published=pd.DataFrame()
    ).read_text()
    assert (
        "10 in the grid, 7 reused, 0 computed, 0 failed, 3 not run (the run was stopped "
        "early; rerun it to resume)." in text
    )
    info["summary"]["not_run"] = 0
    text = write_report(
        tmp_path, empty, summarise(empty), pd.DataFrame(), info, published=pd.DataFrame()
    ).read_text()
    assert "0 computed, 0 failed.\n" in text.replace("  \n", "\n")
