"""Entity mass on hand-made attributions, and the masker's span finder against transform."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stylo.explain import COLUMNS, entity_mass, entity_tokens, summarise_entity_mass
from stylo.features.masking import EntityMasker

TEXT_A = "Then Anna Smith met NASA at 10:30."
TEXT_B = "We left."


def _words(side, text, values):
    """One row per whitespace/punctuation-free run, attributions ``values`` in order."""
    spans = [m.span() for m in re.finditer(r"\w+|[^\w\s]", text)]
    assert len(spans) == len(values)
    return [(side, i, text[s:e], s, e, v) for i, ((s, e), v) in enumerate(zip(spans, values))]


def _frame(rows, **attrs):
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame.attrs.update(attrs)
    return frame


# Then Anna Smith met NASA at 10 : 30 .   /   We left .
VALUES_A = [1.0, 1.0, -4.0, 1.0, 2.0, 0.0, 0.5, 0.0, 0.5, 0.0]
VALUES_B = [-2.0, 1.0, 1.0]


def test_entity_mass_is_the_share_of_absolute_attribution_on_replaced_spans():
    frame = _frame(_words("a", TEXT_A, VALUES_A) + _words("b", TEXT_B, VALUES_B))
    # Anna (1), Smith (4), NASA (2), the number 10:30 (0.5 + 0 + 0.5) of 10 + 4
    assert entity_mass(frame, TEXT_A, TEXT_B) == pytest.approx(8.0 / 14.0)
    flags = entity_tokens(frame, TEXT_A, TEXT_B)
    assert list(frame.loc[flags, "token"]) == ["Anna", "Smith", "NASA", "10", ":", "30"]


def test_offsets_into_the_masked_text_count_the_placeholders():
    masker = EntityMasker(entity_token="<ENT>", number_token="<NUM>")
    seen = masker.fit([TEXT_A]).transform([TEXT_A])[0]
    assert seen == "Then <ENT> <ENT> met <ENT> at <NUM>."
    rows = [
        ("a", i, seen[s:e], s, e, v)
        for i, ((s, e), v) in enumerate(
            zip([m.span() for m in re.finditer(r"<\w+>|\w+|\.", seen)], [1, 1, 3, 1, 2, 1, 2, 1])
        )
    ]
    frame = _frame(rows + _words("b", TEXT_B, VALUES_B), text_a=seen, text_b=TEXT_B)
    assert list(frame.loc[entity_tokens(frame, TEXT_A, TEXT_B, masker), "token"]) == [
        "<ENT>",
        "<ENT>",
        "<ENT>",
        "<NUM>",
    ]
    assert entity_mass(frame, TEXT_A, TEXT_B, masker) == pytest.approx(8.0 / 16.0)


def test_a_frame_about_another_text_is_refused():
    frame = _frame(_words("b", TEXT_B, VALUES_B), text_a="something else", text_b=TEXT_B)
    with pytest.raises(ValueError, match="neither the given text"):
        entity_mass(frame, TEXT_A, TEXT_B)


def test_summary_over_pairs_with_the_token_baseline():
    entity_heavy = _frame(_words("a", TEXT_A, VALUES_A) + _words("b", TEXT_B, VALUES_B))
    only_b = _frame(_words("a", TEXT_A, [0.0] * 10) + _words("b", TEXT_B, VALUES_B))
    silent = _frame(_words("a", TEXT_A, [0.0] * 10) + _words("b", TEXT_B, [0.0] * 3))
    assert math.isnan(entity_mass(silent, TEXT_A, TEXT_B))
    pairs = [(entity_heavy, TEXT_A, TEXT_B), (only_b, TEXT_A, TEXT_B), (silent, TEXT_A, TEXT_B)]
    summary = summarise_entity_mass(pairs)
    assert summary["n"] == 2  # the all-zero pair has no share
    assert summary["entity_mass_mean"] == pytest.approx(4.0 / 14.0)
    assert summary["entity_mass_std"] == pytest.approx(np.std([8.0 / 14.0, 0.0], ddof=1))
    assert summary["entity_token_share"] == pytest.approx(6 / 13)
    one = summarise_entity_mass(pairs[:1])
    assert one["n"] == 1 and math.isnan(one["entity_mass_std"])
    assert summarise_entity_mass([])["n"] == 0


def test_replaced_spans_on_a_known_text():
    masker = EntityMasker().fit([TEXT_A])
    spans = masker.replaced_spans([TEXT_A, "see www.x.org or mail a@b.cd", "Hi Mr. Smith"])
    assert [(TEXT_A[s:e], kind) for s, e, kind in spans[0]] == [
        ("Anna", "entity"),
        ("Smith", "entity"),
        ("NASA", "entity"),
        ("10:30", "number"),
    ]
    assert [kind for *_, kind in spans[1]] == ["entity", "entity"]
    assert [(s, e) for s, e, _ in spans[2]] == [(3, 5)]  # "Mr"; "Smith" follows a full stop


_PIECES = st.sampled_from(
    [
        "Anna",
        "NASA",
        "I",
        "The",
        "the",
        "O'Brien",
        "Jean-Luc",
        "42",
        "3.14",
        "1,000",
        "www.a.b",
        "http://x.y/z",
        "a@b.cd",
        "Mr",
        ".",
        "!",
        "?",
        "\u2026",
        "\n",
        " ",
        " ",
        ",",
        '"',
        "\u2019",
        "é",
        "Éa",
        "x1",
        "_",
    ]
)


@given(st.lists(_PIECES, max_size=30).map("".join), st.sampled_from(["@", "", "<ENT>"]))
def test_transform_replaces_exactly_the_spans_the_finder_reports(doc, entity_token):
    # placeholders that cannot occur in the texts, so each one marks a replaced span
    masker = EntityMasker(entity_token=entity_token + "\ue000", number_token="\ue001").fit([doc])
    spans = masker.replaced_spans([doc])[0]
    masked = masker.transform([doc])[0]
    kept = re.split("\ue000|\ue001", masked.replace(entity_token + "\ue000", "\ue000"))
    bounds = [0, *(x for s, e, _ in spans for x in (s, e)), len(doc)]
    assert kept == [doc[bounds[i] : bounds[i + 1]] for i in range(0, len(bounds), 2)]
    kinds = re.findall("\ue000|\ue001", masked)
    assert kinds == [{"entity": "\ue000", "number": "\ue001"}[k] for *_, k in spans]
    assert all(s < e for s, e, _ in spans)


@given(st.lists(_PIECES, max_size=30).map("".join))
def test_placeholder_spans_cover_exactly_the_placeholders(doc):
    masker = EntityMasker(entity_token="\ue000\ue000", number_token="\ue001")
    seen = masker.fit([doc]).transform([doc])[0]
    rows = [("a", i, c, i, i + 1, 1.0) for i, c in enumerate(seen)]  # one token per character
    frame = _frame(rows, text_a=seen, text_b="")
    flags = entity_tokens(frame, doc, "", masker)
    if seen == doc:  # nothing replaced: there is nothing to flag either way
        assert not flags.any()
    else:
        assert list(flags) == [c in "\ue000\ue001" for c in seen]


def test_importing_stylo_explain_does_not_import_torch():
    code = "import sys, stylo.explain; print(sorted({'torch', 'captum'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
