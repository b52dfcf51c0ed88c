"""PAN verification metrics: parity with the official numbers, hand-computed cases,
properties and the drop-in command line."""

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import missing
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss, f1_score, roc_auc_score

from stylo.metrics import pan
from stylo.metrics.pan import align_answers, auc, brier, c_at_1, evaluate_all, f1, f_05_u, main

REPO = Path(__file__).resolve().parents[3]
EXPECTED_KEY = {"pan20": "pan20_official", "pan21": "pan21_evaluator"}


@pytest.fixture(scope="module")
def pan20():
    from stylo.datasets import DatasetNotAvailable, load_pan20_labels

    try:
        labels = load_pan20_labels()
    except DatasetNotAvailable as exc:
        missing(f"dataset 'pan20_av_test_labels' not available: {exc}")
    truth = dict(zip(labels.truth["id"], labels.truth["same"], strict=True))
    systems = {
        name: dict(zip(g["id"], g["value"], strict=True))
        for name, g in labels.answers.groupby("system")
    }
    return truth, systems, labels.expected


# ------------------------------------------------------------------ official parity


@pytest.mark.real_data
def test_all_13_systems_match_official_numbers_both_versions(pan20):
    truth, systems, expected = pan20
    assert len(systems) == 13
    worst = 0.0
    for name, answers in systems.items():
        y_true, y_score, missing = align_answers(truth, answers)
        assert not missing
        for version, key in EXPECTED_KEY.items():
            got = evaluate_all(y_true, y_score, version=version)
            want = expected[name][key]
            assert set(got) == set(want), (name, version)
            for k in want:
                worst = max(worst, abs(got[k] - want[k]))
                assert got[k] == pytest.approx(want[k], abs=1e-9, rel=0), (name, version, k)
    assert worst < 1e-9


def test_pan20_f05u_differs_only_for_systems_with_non_answers(pan20):
    truth, systems, expected = pan20
    for name, answers in systems.items():
        y_true, y_score, _ = align_answers(truth, answers)
        n_u = int((y_score == 0.5).sum())
        assert n_u == expected[name]["n_nonanswers_0.5"]
        same = f_05_u(y_true, y_score, "pan20") == f_05_u(y_true, y_score, "pan21")
        assert same == (n_u == 0), name


# ------------------------------------------------------------------ hand-computed case

Y = [1, 1, 0, 0, 1]
S = [0.9, 0.5, 0.2, 0.7, 0.4]


def test_hand_computed_example():
    # answered: 0.9 (TP), 0.2 (TN), 0.7 (FP), 0.4 (FN); 0.5 is a non-answer on a positive
    assert c_at_1(Y, S) == pytest.approx((2 + 1 * 2 / 5) / 5)
    assert f1(Y, S) == pytest.approx(2 / 4)
    assert f_05_u(Y, S) == pytest.approx(1.25 / (1.25 + 0.25 * 2 + 1))
    # 2020 evaluator: the 0.5 answer on a positive problem became a true positive
    assert f_05_u(Y, S, "pan20") == pytest.approx(2.5 / (2.5 + 0.25 + 1))
    assert auc(Y, S) == pytest.approx(4 / 6)
    assert brier(Y, S) == pytest.approx(1 - (0.01 + 0.25 + 0.04 + 0.49 + 0.36) / 5)
    res = evaluate_all(Y, S)
    assert list(res) == ["auc", "c@1", "F1", "f_05_u", "brier", "overall"]
    assert res["overall"] == pytest.approx(np.mean([res[k] for k in list(res)[:5]]))
    res20 = evaluate_all(Y, S, version="pan20")
    assert list(res20) == ["auc", "c@1", "F1", "f_05_u", "overall"]
    assert res20["overall"] == pytest.approx(np.mean([res20[k] for k in list(res20)[:4]]))


def test_degenerate_inputs_give_documented_zeros():
    for version in pan.VERSIONS:
        res = evaluate_all([], [], version=version)
        assert all(v == 0.0 for v in res.values())
    assert auc([1, 1, 1], [0.2, 0.6, 0.9]) == 0.0  # one class
    assert f1([1, 0], [0.5, 0.5]) == 0.0  # nothing answered
    assert f_05_u([0, 0], [0.1, 0.2]) == 0.0  # zero denominator
    assert c_at_1([1, 0], [0.5, 0.5]) == 0.0  # nothing answered, nothing right
    assert evaluate_all(Y, [0.9, None, 0.2, 0.7, 0.4]) == evaluate_all(Y, S)  # None = missing


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="outside"):
        evaluate_all([1, 0], [0.2, 1.5])
    with pytest.raises(ValueError, match="outside"):
        auc([1, 0], [0.2, float("inf")])
    with pytest.raises(ValueError, match="binary"):
        c_at_1([1, 2], [0.2, 0.7])
    with pytest.raises(ValueError, match="labels"):
        f1([1, 0, 1], [0.2, 0.7])
    with pytest.raises(ValueError, match="version"):
        evaluate_all([1, 0], [0.2, 0.7], version="pan19")


# ------------------------------------------------------------------ properties

scores = st.one_of(
    st.just(0.5), st.sampled_from([0.0, 1.0, 0.25, 0.75]), st.floats(0.0, 1.0, allow_nan=False)
)
problems = st.lists(st.tuples(st.booleans(), scores), max_size=40)


def _split(probs):
    y = np.array([p[0] for p in probs], dtype=bool)
    s = np.array([p[1] for p in probs], dtype=float)
    return y, s


@settings(max_examples=60, deadline=None)
@given(problems)
def test_bounds_and_no_nan(probs):
    y, s = _split(probs)
    for version in pan.VERSIONS:
        for key, value in evaluate_all(y, s, version=version).items():
            assert isinstance(value, float), key
            assert not math.isnan(value), key
            assert 0.0 <= value <= 1.0, (key, value)


@settings(max_examples=60, deadline=None)
@given(problems)
def test_agrees_with_scikit_learn(probs):
    y, s = _split(probs)
    if y.any() and not y.all():
        assert auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    if len(y):
        assert brier(y, s) == pytest.approx(1 - brier_score_loss(y, s, pos_label=True), abs=1e-12)
    answered = s != 0.5
    if answered.any():
        ref = f1_score(y[answered], s[answered] > 0.5, zero_division=0.0)
        assert f1(y, s) == pytest.approx(ref, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(problems)
def test_c_at_1_is_accuracy_without_non_answers(probs):
    y, s = _split(probs)
    s = np.where(s == 0.5, 0.75, s)
    assume(len(y) > 0)
    assert c_at_1(y, s) == pytest.approx(np.mean((s > 0.5) == y))
    assert f_05_u(y, s, "pan20") == f_05_u(y, s, "pan21")


@settings(max_examples=60, deadline=None)
@given(problems, st.data())
def test_c_at_1_rises_when_a_wrong_answer_becomes_a_non_answer(probs, data):
    y, s = _split(probs + [(True, 0.1)])  # at least one wrong answer
    wrong = np.flatnonzero((s != 0.5) & ((s > 0.5) != y))
    i = data.draw(st.sampled_from(list(wrong)))
    before = c_at_1(y, s)
    s2 = s.copy()
    s2[i] = 0.5
    after = c_at_1(y, s2)
    n_correct = int(((s > 0.5) == y)[s != 0.5].sum())
    assert after == pytest.approx(before + n_correct / len(y) ** 2)
    assert after >= before
    if n_correct:
        assert after > before


@settings(max_examples=60, deadline=None)
@given(problems, st.data())
def test_missing_answers_are_non_answers(probs, data):
    y, s = _split(probs)
    drop = data.draw(st.lists(st.booleans(), min_size=len(y), max_size=len(y)))
    drop = np.array(drop, dtype=bool)
    as_half = np.where(drop, 0.5, s)
    as_nan = np.where(drop, np.nan, s)
    truth = {f"p{i}": bool(t) for i, t in enumerate(y)}
    answers = {f"p{i}": float(v) for i, v in enumerate(s) if not drop[i]}
    y_al, s_al, missing = align_answers(truth, answers)
    assert missing == [f"p{i}" for i in np.flatnonzero(drop)]
    for version in pan.VERSIONS:
        ref = evaluate_all(y, as_half, version=version)
        assert evaluate_all(y, as_nan, version=version) == ref
        assert evaluate_all(y_al, s_al, version=version) == ref


# ------------------------------------------------------------------ command line


def _write_jsonl(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")


def test_cli_end_to_end_matches_expected(pan20, tmp_path, capsys):
    truth, systems, expected = pan20
    name = "boenninghoff20-large"  # has 648 non-answers: exercises both F0.5u variants
    _write_jsonl(
        tmp_path / "truth" / "truth.jsonl",
        [{"id": i, "same": bool(v), "authors": ["a", "b"]} for i, v in truth.items()],
    )
    _write_jsonl(
        tmp_path / "answers" / "answers.jsonl",
        [{"id": i, "value": v} for i, v in systems[name].items()],
    )
    for version, key in EXPECTED_KEY.items():
        out = tmp_path / f"out-{version}"
        rc = main(
            [
                "-i",
                str(tmp_path / "truth"),
                "-a",
                str(tmp_path / "answers"),
                "-o",
                str(out),
                "--version",
                version,
            ]
        )
        assert rc == 0
        got = json.loads((out / "out.json").read_text())
        want = expected[name][key]
        assert set(got) == set(want)
        for k in want:
            assert got[k] == pytest.approx(want[k], abs=1e-9, rel=0), (version, k)
    assert "14311 problems in ground truth" in capsys.readouterr().out


def test_cli_as_module_with_missing_answers_and_rounding(tmp_path):
    y = [True, True, False, False, True, False]
    s = [0.9, 0.5, 0.2, 0.7, 0.4, 0.3]
    _write_jsonl(
        tmp_path / "t" / "truth.jsonl", [{"id": f"p{i}", "same": v} for i, v in enumerate(y)]
    )
    # p5 has no answer: it must count as 0.5
    _write_jsonl(
        tmp_path / "a" / "answers.jsonl", [{"id": f"p{i}", "value": v} for i, v in enumerate(s[:5])]
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "stylo.metrics.pan",
            "-i",
            str(tmp_path / "t"),
            "-a",
            str(tmp_path / "a"),
            "-o",
            str(tmp_path / "o"),
            "--round",
            "3",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "1 of 6 problems have no answer" in proc.stderr
    got = json.loads((tmp_path / "o" / "out.json").read_text())
    want = evaluate_all(y, s[:5] + [0.5])
    assert got == {k: round(v, 3) for k, v in want.items()}
    assert list(got) == sorted(got)


def test_cli_as_module_emits_no_warning(tmp_path):
    # the package used to import stylo.metrics.pan before runpy executed it as __main__
    _write_jsonl(
        tmp_path / "t" / "truth.jsonl", [{"id": "p0", "same": True}, {"id": "p1", "same": False}]
    )
    _write_jsonl(
        tmp_path / "a" / "answers.jsonl", [{"id": "p0", "value": 0.9}, {"id": "p1", "value": 0.2}]
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-W",
            "error",
            "-m",
            "stylo.metrics.pan",
            "-i",
            str(tmp_path / "t"),
            "-a",
            str(tmp_path / "a"),
            "-o",
            str(tmp_path / "o"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr
    assert json.loads((tmp_path / "o" / "out.json").read_text())["auc"] == 1.0


def test_package_exports_the_pan_functions():
    import stylo.metrics
    from stylo.metrics import evaluate_all as exported

    assert exported is evaluate_all and stylo.metrics.auc is auc
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        stylo.metrics.nope  # noqa: B018


@pytest.mark.parametrize(
    "answer_lines, message",
    [
        (['{"id": "p0", "value": 0.9}', '{"id": "p1", "value": 0.2'], "answers.jsonl:2: malformed"),
        (['{"id": "p0", "value": 0.9}', '{"id": "zz", "value": 0.2}'], "answers.jsonl:2: id 'zz'"),
        (
            ['{"id": "p0", "value": 0.9}', '{"id": "p0", "value": 0.2}'],
            "answers.jsonl:2: second answer for id 'p0' \\(first on line 1\\)",
        ),
        (['{"id": "p0", "value": [0.9]}'], "answers.jsonl:1: 'value' must be a number"),
        (['{"id": "p0", "value": 1.2}'], "answers.jsonl:1: 'value' 1.2 is outside"),
        (['{"id": "p0"}'], "answers.jsonl:1: missing field"),
    ],
)
def test_cli_errors_name_file_and_line(tmp_path, capsys, answer_lines, message):
    _write_jsonl(
        tmp_path / "t" / "truth.jsonl", [{"id": "p0", "same": True}, {"id": "p1", "same": False}]
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "answers.jsonl").write_text("\n".join(answer_lines) + "\n")
    rc = main(["-i", str(tmp_path / "t"), "-a", str(tmp_path / "a"), "-o", str(tmp_path / "o")])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert re.search(message, err), err
    assert not (tmp_path / "o" / "out.json").exists()


def test_truth_errors_name_file_and_line(tmp_path):
    path = tmp_path / "truth.jsonl"
    path.write_text('{"id": "p0", "same": true}\n{"id": "p0", "same": false}\n')
    with pytest.raises(pan.DataError, match=r"truth.jsonl:2: duplicate id 'p0'"):
        pan.read_truth(tmp_path)
    path.write_text('{"id": "p0", "same": "yes"}\n')
    with pytest.raises(pan.DataError, match=r"truth.jsonl:1: 'same' must be true/false"):
        pan.read_truth(path)
