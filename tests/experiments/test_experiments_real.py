"""run_all on a real dataset with the registered protocols and the random baseline."""

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
