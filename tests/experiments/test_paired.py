"""Paired differences of the report: the vectorised AUC x c@1 against stylo.metrics.pan, the
bootstrap interval, and the table read from stored rows and per-item scores."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.cells import CellStore
from experiments.paired import (
    auc_c1_rows,
    auc_rows,
    bootstrap_mean,
    choice_accuracy_rows,
    mean_points_rows,
    model_rivals,
    paired_differences,
)
from stylo.metrics import pan

_SCORES = st.sampled_from([0.0, 0.1, 0.5, 0.5, 0.6, 0.9, 1.0])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), _SCORES, st.integers(0, 3), st.integers(0, 3)),
        min_size=1,
        max_size=30,
    )
)
def test_auc_c1_rows_agrees_with_the_pan_metrics(items):
    # each row of weights counts the items as a bootstrap resample does: the metrics must be
    # the pan metrics of the items repeated that often (once each in the first row)
    t = np.array([i[0] for i in items])
    s = np.array([i[1] for i in items])
    weights = np.array([[1] * len(items), [i[2] for i in items], [i[3] for i in items]])
    weights[1:, 0] += 1  # no row empty
    got = auc_c1_rows(t, s, weights)
    auc = auc_rows(t, s, weights)
    for row, w in enumerate(weights):
        tr, sr = np.repeat(t, w), np.repeat(s, w)
        want = pan.auc(tr, sr) * pan.c_at_1(tr, sr)
        assert got[row] == pytest.approx(want, abs=1e-12)
        assert auc[row] == pytest.approx(pan.auc(tr, sr), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=1, max_size=25))
def test_bootstrap_interval_holds_the_resampled_means_and_repeats(diffs):
    lo, hi = bootstrap_mean(diffs)
    assert min(diffs) - 1e-12 <= lo <= hi <= max(diffs) + 1e-12
    assert (lo, hi) == bootstrap_mean(diffs)


def test_bootstrap_interval_of_a_constant_is_that_constant():
    assert bootstrap_mean([0.25] * 7) == pytest.approx((0.25, 0.25))


def _row(protocol, method, seed, group, metric, value, key="", setting="{}"):
    return {
        "dataset": "d",
        "protocol": protocol,
        "setting": setting,
        "method": method,
        "seed": seed,
        "group": group,
        "metric": metric,
        "value": value,
        "n": 5,
        "runtime": 1.0,
        "key": key,
    }


def test_attribution_differences_are_per_problem_and_antisymmetric(tmp_path):
    a = [0.5, 0.7, 0.4, 0.9]
    b = [0.4, 0.7, 0.6, 0.5]
    rows = []
    for method, values in (("m", a), ("r", b)):
        for i, v in enumerate(values):
            rows.append(
                _row("closed_attribution", method, i // 2, f"problem{i % 2}", "accuracy", v)
            )
        rows.append(_row("closed_attribution", method, 0, "all", "accuracy", np.mean(values)))
    table = pd.DataFrame(rows)
    out = paired_differences(tmp_path, table, pairs=(("m", "r"), ("r", "m")))
    mr, rm = out[out["method"] == "m"].iloc[0], out[out["method"] == "r"].iloc[0]
    assert mr["difference"] == pytest.approx(np.mean(np.subtract(a, b)), abs=1e-3)
    assert mr["items"] == "4 problems"
    assert mr["won / tied / lost"] == "2 / 1 / 1"
    assert rm["difference"] == -mr["difference"]
    assert mr["low"] <= mr["difference"] <= mr["high"]


def test_verification_differences_read_the_stored_scores(tmp_path):
    store = CellStore(tmp_path)
    y = [True, False, True, False, True, False]
    good = [0.9, 0.1, 0.8, 0.2, 0.7, 0.3]  # every problem right: AUC x c@1 = 1
    bad = [0.4, 0.6, 0.3, 0.7, 0.5, 0.5]  # every answer wrong or missing
    rows = []
    for key, method, s in (("k1", "m", good), ("k2", "r", bad), ("k3", "same", good)):
        frame = pd.DataFrame({"id": list("abcdef"), "y_true": y, "y_score": s, "group": "all"})
        store.write({"key": key, "status": "ok", "rows": []}, frame.sample(frac=1, random_state=1))
        rows.append(_row("pan_verification", method, 0, "all", "auc*c@1", 0.0, key))
    table = pd.DataFrame(rows)
    out = paired_differences(tmp_path, table, pairs=(("m", "r"), ("m", "same")))
    vs_bad = out[out["rival"] == "r"].iloc[0]
    want = 1.0 - pan.auc(y, bad) * pan.c_at_1(y, bad)
    assert vs_bad["difference"] == pytest.approx(want, abs=1e-3)
    assert vs_bad["items"] == "6 problems x 1 seed(s)"
    same = out[out["rival"] == "same"].iloc[0]
    assert (same["difference"], same["low"], same["high"]) == (0.0, 0.0, 0.0)


def test_the_fixed_verifier_meets_every_language_model_row_on_the_same_triplets(tmp_path):
    store = CellStore(tmp_path)
    truth = [1, 0, 1, 1, 0, 0, 1, 0]
    right = [0.9 if t else 0.1 for t in truth]  # every triplet right
    half = [0.5] * len(truth)  # every triplet tied: half a point each
    rows = []
    for key, name, label, score in (
        ("k1", "ensemble", "ensemble", right),
        ("k2", "llm-prompt", "llm-prompt [some model]", half),
        ("k3", "llm-likelihood", "llm-likelihood [another model]", right),
        ("k4", "cdm", "cdm", half),  # classical: not a model rival
    ):
        frame = pd.DataFrame({"id": [str(i) for i in range(8)], "y_true": truth, "y_score": score})
        store.write({"key": key, "status": "ok", "rows": [], "spec": {"method": name}}, frame)
        rows.append(_row("aidbench_one_to_two", label, 0, "all", "accuracy", 0.0, key))
    table = pd.DataFrame(rows)
    assert model_rivals(store, table) == [
        ("ensemble", "llm-prompt [some model]"),
        ("ensemble", "llm-likelihood [another model]"),
    ]
    assert model_rivals(store, table[table["method"] != "ensemble"]) == []
    out = paired_differences(tmp_path, table).set_index("rival")
    assert out.loc["llm-prompt [some model]", "difference"] == pytest.approx(50.0)
    assert out.loc["llm-likelihood [another model]", "difference"] == pytest.approx(0.0)
    assert "cdm" not in out.index and out["items"].eq("8 triplets x 1 seed(s)").all()


def test_no_pair_ran_gives_an_empty_table(tmp_path):
    table = pd.DataFrame([_row("closed_attribution", "m", 0, "all", "accuracy", 0.5)])
    assert paired_differences(tmp_path, table).empty


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from([0.1, 0.5, 0.7]), st.sampled_from([0.1, 0.5])),
        min_size=1,
        max_size=30,
    )
)
def test_stored_choices_give_back_the_one_to_two_accuracy(items):
    from stylo.protocols._scoring import choice_table

    answer = [i[0] for i in items]
    table = choice_table(answer, [[i[1], i[2]] for i in items])
    stored = table.attrs["scores"]
    accuracy = table.loc[table["metric"] == "accuracy", "value"].iloc[0]
    got = choice_accuracy_rows(
        stored["y_true"].to_numpy(), stored["y_score"].to_numpy(), np.ones((1, len(stored)))
    )
    assert got[0] == pytest.approx(100 * accuracy, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.sampled_from([0.1, 0.5, 0.9]), st.booleans()), min_size=2, max_size=6
        ),
        min_size=1,
        max_size=12,
    )
)
def test_stored_queries_give_back_the_one_to_many_rank_at_1(queries):
    from stylo.protocols._scoring import ranking_table

    queries = [q if any(r for _, r in q) else [(q[0][0], True), *q[1:]] for q in queries]
    scores = [np.array([s for s, _ in q]) for q in queries]
    relevant = [np.array([r for _, r in q]) for q in queries]
    table = ranking_table(scores, relevant, np.zeros(len(queries), dtype=int))
    stored = table.attrs["scores"]
    want = table.loc[(table["group"] == "all") & (table["metric"] == "rank@1"), "value"].iloc[0]
    got = mean_points_rows(None, stored["rank@1"].to_numpy(), np.ones((1, len(stored))))[0]
    assert got == pytest.approx(100 * want, abs=1e-9)
    assert list(stored["id"]) == [str(i) for i in range(len(queries))]
