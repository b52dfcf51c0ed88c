"""The command lines' errors: one line on stderr naming the flag, file or name, and the exit
code ``--help`` promises (run_all on the small stand-ins, the PAN CLI on synthetic pairs)."""

import sys

import pytest
from baselines_synth import synthetic_pairs
from experiments_standins import ToyRanking, ToyVerification, toy_grid, toy_loader

import baselines.__main__ as pan_cli
from baselines.pan_io import write_pan20_format
from baselines.random_guess import RandomGuess
from baselines.registry import METHODS, MethodSpec
from experiments import run_all
from stylo.datasets import registry
from stylo.protocols import PROTOCOLS as REGISTERED


class NoSettings(ToyRanking):
    """A protocol that applies to no dataset."""

    needs = "what no toy corpus has"

    def settings(self, data) -> list[dict]:
        return []


PROTOCOLS = {
    "toy_verification": ToyVerification(),
    "toy_ranking": ToyRanking(),
    "toy_none": NoSettings(),
}
METHODS_ = {
    "random": METHODS["random"],
    "hosted": MethodSpec(lambda seed, o: RandomGuess(seed), needs_server=True),
}


def _run_all(argv, tmp_path, **kw):
    kw.setdefault(
        "grid", None if any(a.startswith("--datasets") for a in argv) else toy_grid("toy")
    )
    return run_all.main(
        ["--out", str(tmp_path / "out"), "--no-progress", "--no-plots", *argv],
        protocols=PROTOCOLS,
        loader=toy_loader,
        methods=METHODS_,
        **kw,
    )


def _one_line_exit_2(call, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        call()
    assert exc.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["--n-jobs", "0"],
            "run_all: argument --n-jobs: must be at least 1, or -1 for every core, got 0",
        ),
        (
            ["--n-jobs", "-2"],
            "run_all: argument --n-jobs: must be at least 1, or -1 for every core, got -2",
        ),
        (["--n-jobs", "two"], "run_all: argument --n-jobs: invalid int value: 'two'"),
        (["--max-cells", "-1"], "run_all: argument --max-cells: must be at least 0, got -1"),
        (["--seed", "-1"], "run_all: argument --seed: must be at least 0, got -1"),
        (
            ["--scheduler", "tcp://127.0.0.1:8786"],
            "run_all: --scheduler needs --backend dask (loky runs the cells on this machine)",
        ),
        (
            ["--datasets", "toy", "--methods", "nope"],
            "run_all: unknown method(s) ['nope']; registered: ['hosted', 'random']",
        ),
        (
            ["--datasets", "toy", "--protocols", "nope"],
            "run_all: unknown protocol(s) ['nope']; "
            "registered: ['toy_none', 'toy_ranking', 'toy_verification']",
        ),
        (
            ["--datasets", "toy,missing_x"],
            "run_all: --datasets missing_x: DatasetNotAvailable: "
            "dataset 'missing_x' is registered but not available here",
        ),
        (
            ["--datasets", "toy", "--methods", "random,hosted"],
            "run_all: --methods hosted: needs --llm-base-url and --llm-model",
        ),
        (
            ["--datasets", "toy", "--protocols", "toy_ranking,toy_none"],
            "run_all: --protocols toy_none: in no cell: it combines with none of the chosen "
            "datasets, protocols and methods",
        ),
    ],
)
def test_run_all_usage_errors_are_one_line_and_exit_2(tmp_path, capsys, argv, line):
    assert _one_line_exit_2(lambda: _run_all(argv, tmp_path), capsys) == line
    assert not (tmp_path / "out").exists()  # nothing was run


def test_a_dataset_no_protocol_takes_is_told_what_each_protocol_needs(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        _run_all(["--datasets", "toy", "--protocols", "toy_none"], tmp_path)
    assert exc.value.code == 2
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("run_all:")]
    assert lines[0] == (
        "run_all: --datasets toy: no protocol applies to it (6 authors, the most prolific "
        "with 6 texts); toy_none needs what no toy corpus has"
    )
    assert not (tmp_path / "out").exists()


def test_run_all_n_jobs_minus_one_is_one_worker_per_core(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 6)
    assert run_all.build_parser().parse_args(["--n-jobs", "-1"]).n_jobs == 6
    assert run_all.build_parser().parse_args(["--n-jobs", "3"]).n_jobs == 3
    assert run_all.build_parser().parse_args([]).n_jobs == 1


def test_run_all_out_must_be_a_writable_folder(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, line in [
        (afile, f"run_all: --out {afile} is a file, not a folder"),
        (afile / "sub", f"run_all: --out {afile / 'sub'} cannot be created: {afile} is a file"),
    ]:

        def call(out=out):
            return run_all.main(
                ["--out", str(out)], protocols=PROTOCOLS, loader=toy_loader, grid=toy_grid("toy")
            )

        assert _one_line_exit_2(call, capsys) == line


def test_run_all_dask_backend_without_dask_is_checked_up_front(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # import fails
    line = _one_line_exit_2(lambda: _run_all(["--backend", "dask"], tmp_path), capsys)
    assert line.startswith("run_all: --backend dask needs dask.distributed (")
    assert line.endswith("): pip install 'stylo[dask]'")


def test_run_all_without_protocols_is_a_usage_error(tmp_path, capsys):
    def call():
        return run_all.main(["--out", str(tmp_path)], protocols={}, loader=toy_loader)

    assert _one_line_exit_2(call, capsys) == "run_all: no protocol to run: none was given"


def test_run_all_empty_grid_exits_3(tmp_path, capsys):
    code = _run_all([], tmp_path, grid=toy_grid("missing_a", "missing_b"))
    assert code == 3
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("skipped: dataset missing_a: DatasetNotAvailable")
    assert err[-1] == "run_all: the grid has no cells, nothing to run"
    assert not (tmp_path / "out").exists()


def test_run_all_default_grid_skips_missing_datasets_and_exits_0(tmp_path, capsys):
    assert _run_all([], tmp_path, grid=toy_grid("toy", "missing_x")) == 0
    assert "skipped: dataset missing_x" in capsys.readouterr().err


def test_run_all_help_states_exit_codes_protocols_and_datasets():
    text = run_all.build_parser().format_help()
    for code in [
        "0    every cell",
        "1    some cells failed",
        "2    a usage problem",
        "3    the grid has no cells",
        "130  interrupted",
    ]:
        assert code in text
    assert all(name in text for name in REGISTERED)
    assert all(name in text for name, e in registry().items() if e["kind"] in ("texts", "pairs"))
    assert "pan14_av/en_essays" in text
    assert "toy_none, toy_ranking" in run_all.build_parser(PROTOCOLS).format_help()


# ---- the PAN CLI --------------------------------------------------------------------------


@pytest.fixture()
def pan_input(tmp_path):
    return write_pan20_format(synthetic_pairs(6, seed=1), tmp_path / "test", truth=False)


def test_pan_cli_checks_its_output_folder_before_any_work(tmp_path, pan_input, capsys, monkeypatch):
    def no_work(*args, **kwargs):
        pytest.fail("the data were read before the output folder was checked")

    monkeypatch.setattr(pan_cli, "load_pan20_format", no_work)
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, problem in [
        (afile, "is a file, not a folder"),
        (afile / "out", f"cannot be created: {afile} is a file"),
    ]:
        line = _one_line_exit_2(
            lambda out=out: pan_cli.main(["naive", "-i", str(pan_input), "-o", str(out)]), capsys
        )
        assert line == f"baselines: -o {out} {problem}"


def test_pan_cli_usage_errors_are_one_line(tmp_path, pan_input, capsys):
    line = _one_line_exit_2(
        lambda: pan_cli.main(["ppm", "-i", str(pan_input), "-o", str(tmp_path / "o")]), capsys
    )
    assert line == "baselines: method 'ppm' needs training data: --train TRAIN_DIR"
    line = _one_line_exit_2(
        lambda: pan_cli.main(["naive", "-i", str(tmp_path / "none"), "-o", str(tmp_path / "o")]),
        capsys,
    )
    assert line.startswith(f"baselines: {tmp_path / 'none'}: no pairs.jsonl")


def test_pan_cli_training_pairs_of_one_class_are_one_line(tmp_path, pan_input, capsys):
    pairs = synthetic_pairs(10, seed=0)
    one_class = pairs.subset(pairs.labels)
    train = write_pan20_format(one_class, tmp_path / "train")
    line = _one_line_exit_2(
        lambda: pan_cli.main(
            ["logreg-pair", "-i", str(pan_input), "-o", str(tmp_path / "o"), "--train", str(train)]
        ),
        capsys,
    )
    assert (
        line.startswith(
            f"baselines: --train {train}: logreg-pair cannot be fitted on these pairs: "
        )
        and "different-author" in line
    )
