"""The PAN18/19 attribution layout written for pan-code's baselines, and how their answers are
scored: an oracle's answer files score 1, a constant answer what the protocol gives it."""

import json

import pytest
from attribution_synth import cdaa_corpus

from benchmarks.pancode_cdaa_baselines import score_answers, write_collection
from stylo.protocols import PROTOCOLS


@pytest.mark.parametrize("open_set", [False, True])
def test_layout_and_scoring_agree_with_the_protocol(tmp_path, open_set):
    protocol = PROTOCOLS["cdaa_attribution"]
    task = protocol.sample(cdaa_corpus(open_set), {"split": None}, seed=0)
    task.train.frame["language"] = "en"
    truths = write_collection(task, tmp_path / "in")
    info = json.loads((tmp_path / "in" / "collection-info.json").read_text())
    assert [p["problem-name"] for p in info] == ["p1", "p2"]
    problem = json.loads((tmp_path / "in" / "p1" / "problem-info.json").read_text())
    assert [c["author-name"] for c in problem["candidate-authors"]] == ["c1", "c2", "c3"]
    assert (tmp_path / "in" / "p1" / "c2" / "known00002.txt").read_text() == "p1c2 known 1"
    unknown = sorted(p.name for p in (tmp_path / "in" / "p1" / "unknown").iterdir())
    assert unknown == sorted(truths["p1"]) and len(unknown) == 4

    def answer(folder, pick):
        folder.mkdir()
        for p, truth in truths.items():
            (folder / f"answers-{p}.json").write_text(
                json.dumps(
                    [{"unknown-text": n, "predicted-author": pick(t)} for n, t in truth.items()]
                )
            )
        return folder

    assert score_answers(task, truths, answer(tmp_path / "oracle", lambda t: t)) == {
        "macro_precision": 1.0,
        "macro_recall": 1.0,
        "macro_f1": 1.0,
        "accuracy": 1.0,
    }
    constant = score_answers(task, truths, answer(tmp_path / "c1", lambda t: "c1"))
    assert constant["accuracy"] == pytest.approx(0.5 if not open_set else 0.25)
    with pytest.raises(RuntimeError, match="no answer"):
        (tmp_path / "c1" / "answers-p2.json").write_text("[]")
        score_answers(task, truths, tmp_path / "c1")
