"""The PAN-compatible command line, end to end on a temporary PAN20-format folder."""

import json

import pytest
from baselines_synth import synthetic_pairs

from baselines.__main__ import main
from baselines.pan_io import write_pan20_format
from baselines.registry import make, methods
from stylo.datasets import load_pan20_format


@pytest.fixture()
def pan_dirs(tmp_path):
    train = write_pan20_format(synthetic_pairs(30, seed=0), tmp_path / "train")
    test = write_pan20_format(synthetic_pairs(12, seed=1), tmp_path / "test", truth=False)
    return train, test, tmp_path / "out"


def test_pan20_format_round_trip(tmp_path):
    pairs = synthetic_pairs(6)
    back = load_pan20_format(write_pan20_format(pairs, tmp_path / "p"))
    assert back.unknown == pairs.unknown and back.known_joined == pairs.known_joined
    assert (back.labels == pairs.labels).all()


@pytest.mark.parametrize("method", ["naive", "ppm", "ensemble", "cosine-norm"])
def test_cli_writes_answers(pan_dirs, method, capsys):
    train, test, out = pan_dirs
    assert (
        main([method, "-i", str(test), "-o", str(out), "--train", str(train), "--seed", "3"]) == 0
    )
    lines = [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines()]
    ids = [json.loads(x)["id"] for x in (test / "pairs.jsonl").read_text().splitlines()]
    assert [r["id"] for r in lines] == ids
    assert all(0.0 <= r["value"] <= 1.0 for r in lines)


def test_cli_list_and_errors(pan_dirs, capsys):
    train, test, out = pan_dirs
    assert main(["--list"]) == 0
    listed = capsys.readouterr().out
    assert all(m in listed for m in methods())
    with pytest.raises(SystemExit, match="^2$"):
        main(["ppm", "-i", str(test), "-o", str(out)])  # needs --train
    assert "needs training data" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="^2$"):
        main(["no-such-method", "-i", str(test), "-o", str(out)])
    with pytest.raises(SystemExit, match="^2$"):
        main(["svm-attribution", "-i", str(test), "-o", str(out)])
    assert "no answer for a verification pair" in capsys.readouterr().err


def test_cli_list_fits_100_columns(capsys):
    assert main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 100
    # one line per method starts with its name; wrapped descriptions continue indented
    starts = [ln.split()[0] for ln in lines[1:] if not ln.startswith(" ")]
    assert starts == methods()
    assert lines[0].split() == ["method", "kind", "description"]


def test_every_registered_method_builds_with_a_seed():
    for name in methods():
        est = make(name, seed=7)
        if "random_state" in est.get_params():
            assert est.get_params()["random_state"] == 7
