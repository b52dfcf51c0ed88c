"""The report's "Training parts capped" section, from the task info stored with each cell."""

from experiments.capped_training import capped_training_section
from experiments.cells import CellStore


def _record(key, method, seed, info):
    spec = {
        "dataset": "pan20",
        "protocol": "rethinking_av",
        "setting": {"split": "closed"},
        "method": method,
        "seed": seed,
    }
    return {"key": key, "spec": spec, "status": "ok", "rows": [], "info": info}


def test_one_line_per_capped_task_and_none_when_nothing_was_cut(tmp_path):
    store = CellStore(tmp_path)
    store.write(_record("a", "naive", 0, {"n_train": 474, "n_train_available": 4960}), None)
    store.write(_record("b", "ensemble", 0, {"n_train": 474, "n_train_available": 4960}), None)
    store.write(_record("c", "naive", 1, {"n_train": 500, "n_train_available": 500}), None)
    store.write(_record("d", "naive", 2, {"n_train_texts": 1000}), None)
    lines = capped_training_section(tmp_path, {"a", "b", "c", "d"})
    assert lines[0] == "## Training parts capped"
    assert [ln for ln in lines if ln.startswith("- ")] == [
        "- pan20 / rethinking_av / split=closed / seed 0: 474 of 4960 training problems"
    ]
    assert capped_training_section(tmp_path, {"c", "d"}) == []
