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


def test_cli_caps_training_pairs_and_says_so(pan_dirs, capsys):
    train, test, out = pan_dirs
    args = ["naive", "-i", str(test), "-o", str(out), "--train", str(train)]
    assert main([*args, "--max-train", "10"]) == 0
    capped = (out / "answers.jsonl").read_text()
    assert "fitting on 10 of 30 training pairs (--max-train 10," in capsys.readouterr().err
    size = sum(map(len, load_pan20_format(train).texts_a() + load_pan20_format(train).unknown))
    assert main([*args, "--max-train-chars", str(size // 3)]) == 0
    err = capsys.readouterr().err
    kept = int(err.split("fitting on ")[1].split()[0])
    assert 2 <= kept < 30 and f"--max-train-chars {size // 3};" in err
    assert main([*args, "--max-train", "all", "--max-train-chars", "all"]) == 0
    assert "training pairs (--max-train" not in capsys.readouterr().err
    # the default caps (8,000 pairs, 20 million characters) leave these 30 pairs whole
    whole = (out / "answers.jsonl").read_text()
    assert main(args) == 0
    assert (out / "answers.jsonl").read_text() == whole != capped
    for flag, bad, least in (
        ("--max-train", "1", 2),
        ("--max-train", "many", 2),
        ("--max-train-chars", "0", 1),
    ):
        with pytest.raises(SystemExit, match="^2$"):
            main([*args, flag, bad])
        assert f"expected an int >= {least} or 'all'" in capsys.readouterr().err
