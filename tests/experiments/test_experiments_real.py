"""run_all on a real dataset with the registered protocols and the random baseline."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import load_or_skip

from experiments import run_all


def test_run_all_on_pan15_with_registered_protocols(tmp_path, capsys):
    load_or_skip("pan15_av_en")
    argv = [
        "--out",
        str(tmp_path),
        "--datasets",
        "pan15_av_en",
        "--protocols",
        "pan_verification",
        "--methods",
        "random",
        "--no-progress",
        "--no-plots",
    ]
    # a dataset asked for by name that is not there is an error, not a skipped line
    with pytest.raises(SystemExit) as exc:
        run_all.main([*argv, "--datasets", "pan15_av_en", "missing_corpus"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith(
        "run_all: --datasets missing_corpus: DatasetNotAvailable: unknown dataset"
    )
    assert run_all.main(argv) == 0
    err = capsys.readouterr().err
    # PAN's official problems are fixed: the reference grid runs them with one seed
    assert "1 computed (0 failed)" in err
    table = pd.read_csv(tmp_path / "results.csv")
    score = table[table["metric"] == "auc*c@1"]
    assert list(score["seed"]) == [0] and (score["n"] == 500).all()
    # random guessing on balanced PAN15 pairs: AUC near 0.5
    auc = table.loc[table["metric"] == "auc", "value"]
    assert ((auc > 0.4) & (auc < 0.6)).all()
    assert run_all.main(argv) == 0
    assert "1 already done, 0 computed" in capsys.readouterr().err
    assert "pan15_av_en" in (tmp_path / "REPORT.md").read_text()


def test_run_all_on_a_corpus_folder_of_ones_own(tmp_path, capsys):
    # twenty authors, eight texts each, on three topics, each author with words of their own
    rng = np.random.default_rng(0)
    vocab = np.array([f"w{i}" for i in range(200)])
    folder = tmp_path / "mine"
    folder.mkdir()
    with open(folder / "texts.jsonl", "w", encoding="utf-8") as fh:
        for a in range(20):
            p = rng.dirichlet(np.full(len(vocab), 0.2))
            for t in range(8):
                text = " ".join(rng.choice(vocab, size=120, p=p))
                row = {"id": f"{a}-{t}", "author": f"a{a}", "text": text, "topic": f"t{t % 3}"}
                fh.write(json.dumps(row) + "\n")
    out = tmp_path / "out"
    argv = ["--quick", "--datasets", str(folder), "--methods", "naive", "svm-attribution"]
    argv += ["--out", str(out), "--no-progress", "--no-plots"]
    assert run_all.main(argv) == 0
    table = pd.read_csv(out / "results.csv")
    assert set(table["dataset"]) == {str(folder)}
    by_method = table.groupby("method")["protocol"].agg(set)
    # the verifier runs every protocol that applies; the attributor only where texts are
    # attributed among candidates, so that no cell fails
    assert {"aidbench_one_to_two", "closed_attribution"} <= by_method["naive"]
    assert by_method["svm-attribution"] == {"closed_attribution"}
    assert "0 failed" in capsys.readouterr().err


def test_run_all_on_a_pairs_folder_with_splits_verifies_train_to_test(tmp_path):
    rng = np.random.default_rng(1)
    vocab = np.array([f"w{i}" for i in range(200)])
    profiles = [rng.dirichlet(np.full(len(vocab), 0.2)) for _ in range(20)]
    folder = tmp_path / "pairs"
    folder.mkdir()
    with open(folder / "pairs.jsonl", "w", encoding="utf-8") as fh:
        for i in range(80):
            a, same = i % 20, i % 2 == 0
            b = a if same else (a + 1) % 20
            pair = [" ".join(rng.choice(vocab, size=100, p=profiles[x])) for x in (a, b)]
            row = {"id": str(i), "pair": pair, "same": same, "split": "train" if i < 40 else "test"}
            fh.write(json.dumps(row) + "\n")
    out = tmp_path / "out"
    argv = ["--quick", "--datasets", str(folder), "--methods", "naive", "--out", str(out)]
    assert run_all.main([*argv, "--no-progress", "--no-plots"]) == 0
    table = pd.read_csv(out / "results.csv")
    assert set(table["protocol"]) == {"pan_verification"}
    assert table.loc[table["metric"] == "auc", "value"].item() > 0.8
