"""The neural settings' choice: the rule that picks a candidate, and the registry agreeing
with the candidate chosen."""

import pandas as pd
import pytest

from baselines.registry import make
from benchmarks.choose_neural import BASE, CANDIDATES, CHOSEN, candidate_params, choose


@pytest.mark.parametrize("model", sorted(CHOSEN))
def test_the_registry_holds_the_chosen_candidate(model):
    params = make(model, 0).get_params()
    wanted = candidate_params(model, CHOSEN[model])
    assert {k: params[k] for k in wanted} == wanted
    # every candidate varies the same base, and one of them is the base itself
    assert all(set(c) <= set(BASE[model]) for c in CANDIDATES[model].values())
    assert {} in CANDIDATES[model].values()


def test_choose_takes_the_best_mean_auc_or_the_cheapest_within_the_tie():
    rows = [
        # candidate, dataset, auc, seconds
        ("slow", "a", 0.70, 100.0),
        ("slow", "b", 0.60, 100.0),
        ("cheap", "a", 0.69, 40.0),
        ("cheap", "b", 0.605, 40.0),  # mean 0.6475, within 0.01 of slow's 0.65
        ("bad", "a", 0.50, 10.0),
        ("bad", "b", 0.50, 10.0),
    ]
    table = pd.DataFrame(rows, columns=["candidate", "dataset", "auc", "seconds"]).assign(model="m")
    got = choose(table).set_index("candidate")
    assert got["chosen"].to_dict() == {"slow": False, "cheap": True, "bad": False}
    assert got.loc["slow", "auc"] == pytest.approx(0.65)
    assert got.loc["cheap", "seconds"] == pytest.approx(80.0)
    # beyond the tie the better one wins, however dear
    wide = table.assign(auc=table["auc"].where(table["candidate"] != "cheap", 0.5))
    assert choose(wide).set_index("candidate")["chosen"]["slow"]
