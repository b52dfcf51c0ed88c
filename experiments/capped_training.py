"""The report's "Training parts capped" lines: tasks whose given training pairs a protocol cut
to its caps (:func:`stylo.protocols.base.capped_pairs`), so that a run on PAN 2020/21-sized
data never drops training problems without saying so."""

from __future__ import annotations

from pathlib import Path

from experiments.cells import CellStore
from experiments.methods import row_identity
from experiments.tables import setting_label

__all__ = ["capped_training_section"]


def capped_training_section(out: Path, keys: set[str]) -> list[str]:
    """One line per task (dataset, protocol, setting, seed; its methods pooled) whose stored
    info has fewer training problems (``n_train``) than it had (``n_train_available``); no
    lines when none was cut. AIDBench's training corpora, capped by design at 1,000 texts, are
    told in its protocol's documentation, not here."""
    tasks = {}
    for rec in CellStore(out).records(keys):
        info = rec.get("info") or {}
        have, used = info.get("n_train_available"), info.get("n_train")
        if have is None or used is None or int(used) >= int(have):
            continue
        spec = row_identity(rec["spec"])
        task = (spec["dataset"], spec["protocol"], setting_label(spec["setting"]), spec["seed"])
        tasks[task] = (int(used), int(have))
    if not tasks:
        return []
    lines = [
        "## Training parts capped",
        "",
        "Tasks whose training pairs were cut to the protocols' caps (8,000 problems and 20 "
        "million characters by default, drawn with the seed in the labels' shares; "
        'benchmarks/README.md, "Training budgets"); every method of the task fitted on the '
        "same cut:",
        "",
    ]
    for (dataset, protocol, setting, seed), (used, have) in sorted(tasks.items()):
        lines.append(
            f"- {dataset} / {protocol} / {setting} / seed {seed}: {used} of {have} training "
            f"problems"
        )
    return [*lines, ""]
