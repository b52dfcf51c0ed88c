"""The entity-mass table and renderings over duck-typed fitted verifiers (tiny BERTs)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from explain_models import tiny_cross, tiny_encoder, tiny_tokenizer

from experiments.explanations import TABLE_COLUMNS, Cell, entity_mass_table, sample_pairs
from stylo.corpus import PairSet
from stylo.features.masking import EntityMasker

pytestmark = pytest.mark.extra("neural")

PAIRS = PairSet.from_lists(
    [
        "the cat sat on the mat, said Anna Smith.",
        "so the dog sat.",
        "at 10 the cat met NASA.",
        "the table of Smith.",
    ],
    ["a dog said so to Paris.", "the mat, said Smith.", "the cat sat on 3 mats.", "so it was."],
    same=[True, False, True, False],
    name="tiny",
)


@pytest.fixture(scope="module")
def verifiers(tmp_path_factory):
    tokenizer = tiny_tokenizer(tmp_path_factory.mktemp("vocab"))
    cross = SimpleNamespace(model_=tiny_cross(tokenizer), tokenizer_=tokenizer, max_tokens=12)
    siamese = SimpleNamespace(model_=tiny_encoder(tokenizer), tokenizer_=tokenizer, max_tokens=12)
    masked = SimpleNamespace(masker_=EntityMasker().fit([]), verifier_=cross)
    return cross, siamese, masked


def test_table_rows_per_cell_with_shares_and_renderings(verifiers, tmp_path):
    cross, siamese, masked = verifiers
    cells = [
        Cell("bert-pair", "none", "closed", cross, PAIRS),
        Cell("siamese-pair", "none", "closed", siamese, PAIRS),
        Cell("bert-pair", "entity_masking", "closed", masked, PAIRS),
    ]
    html, png = tmp_path / "pairs.html", tmp_path / "pairs.png"
    table = entity_mass_table(cells, n_pairs=3, n_steps=4, html_path=html, png_path=png)
    assert tuple(table.columns) == TABLE_COLUMNS
    assert list(table["model"]) == ["bert-pair", "siamese-pair", "bert-pair"]
    assert (table["n"] == 3).all() and (table["n_steps"] == 4).all()
    assert table["entity_mass_mean"].between(0, 1).all()
    # the same three pairs in every cell: the unmasked cells share the entity-token share,
    # and the masked one counts placeholders (one "@" per name, fewer tokens than the names)
    shares = table["entity_token_share"].to_numpy()
    assert shares[0] == shares[1] > 0 and 0 < shares[2] != shares[0]
    page = html.read_text(encoding="utf-8")
    first = sample_pairs(PAIRS, 3, seed=0)[0]
    same = "same author" if PAIRS.labels[first] else "different authors"
    assert page.count("<table>") == 9
    assert f"bert-pair / entity_masking / closed, pair {first} ({same})" in page
    assert "@" in page and "Smith" in page  # masked and unmasked texts
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_sample_is_seeded_and_shared_by_every_cell_of_a_split():
    assert sample_pairs(PAIRS, 10, seed=0) == [0, 1, 2, 3]
    picks = sample_pairs(PAIRS, 2, seed=5)
    assert picks == sample_pairs(PAIRS, 2, seed=5) and picks == sorted(picks) and len(picks) == 2
    assert len({tuple(sample_pairs(PAIRS, 2, seed=s)) for s in range(10)}) > 1
    assert np.all(np.diff(sample_pairs(PAIRS, 3, seed=1)) > 0)


@pytest.mark.real_data
def test_command_line_writes_the_table_and_renderings(tmp_path):
    from conftest import load_or_skip

    from experiments.explanations import main

    load_or_skip("guardian")
    out = tmp_path / "expl"
    args = ["--quick", "--splits", "closed", "--n-pairs", "2", "--n-steps", "4", "--out", str(out)]
    assert main(args) == 0
    table = pd.read_csv(out / "entity_mass.csv")
    assert len(table) == 4 and set(table["masking"]) == {"none", "entity_masking"}
    assert ((table["entity_mass_mean"] >= 0) & (table["entity_mass_mean"] <= 1)).all()
    assert (out / "ENTITY_MASS.md").read_text().count("| closed |") == 4
    assert (out / "plots" / "explained.html").stat().st_size > 0


@pytest.mark.real_data
def test_command_line_names_an_unknown_split(tmp_path, capsys):
    from conftest import load_or_skip

    from experiments.explanations import main

    load_or_skip("guardian")

    assert main(["--dataset", "guardian", "--splits", "nope", "--out", str(tmp_path)]) == 2
    assert "nope" in capsys.readouterr().err
