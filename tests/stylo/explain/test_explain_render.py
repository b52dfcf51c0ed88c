"""HTML and PNG renderings of hand-made attribution frames."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest

from stylo.explain import COLUMNS, render_html, render_png

TEXT_A = 'He wrote <script>alert("x")</script> & left.'
TEXT_B = "A calm\nreply, cut here and never seen"


def _frame():
    rows = [
        (side, i, text[s:e], s, e, value)
        for side, text, values in (("a", TEXT_A, [0.5, -1.0, 2.0, 0.0]), ("b", TEXT_B, [1.0, -0.5]))
        for i, ((s, e), value) in enumerate(
            zip([m.span() for m in re.finditer(r"\S+", text)], values)
        )
    ]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame.attrs.update(
        method="cross",
        score=0.75,
        delta=1e-4,
        text_a=TEXT_A,
        text_b=TEXT_B,
        truncated=True,
        truncated_sides=("b",),
    )
    return frame


def _cells(page):
    return re.findall(r"<td><pre>(.*?)</pre></td>", page, flags=re.S)


def test_html_escapes_markup_in_texts_and_titles(tmp_path):
    path = render_html([_frame()], tmp_path / "pairs.html", titles=["<b>pair</b>"])
    page = path.read_text(encoding="utf-8")
    assert "<script>" not in page and "<b>pair" not in page
    assert "&lt;script&gt;" in page and "&lt;b&gt;pair&lt;/b&gt;" in page


def test_html_shows_both_whole_texts_with_signed_colours(tmp_path):
    page = render_html([_frame(), _frame()], tmp_path / "pairs.html").read_text(encoding="utf-8")
    cells = _cells(page)
    assert len(cells) == 4  # two pairs, side by side
    for cell, text in zip(cells, [TEXT_A, TEXT_B] * 2):
        assert html.unescape(re.sub(r"<[^>]+>", "", cell)) == text
    a, b = cells[:2]
    # opacity is |value| over the pair's largest |value| (2.0); red up, blue down
    assert 'rgba(214,39,40,0.250)" title="+0.5">He<' in a
    assert 'rgba(31,119,180,0.500)" title="-1">wrote<' in a
    assert 'rgba(214,39,40,1.000)" title="+2">&lt;script&gt;alert' in a
    assert '<span class="unseen">\nreply, cut here and never seen</span>' in b


def test_titles_must_match_the_pairs(tmp_path):
    with pytest.raises(ValueError, match="titles"):
        render_html([_frame()], tmp_path / "x.html", titles=["one", "two"])
    bare = _frame()
    bare.attrs.clear()
    with pytest.raises(ValueError, match="text_a"):
        render_html([bare], tmp_path / "x.html")


@pytest.mark.extra("viz")
def test_png_is_written(tmp_path):
    path = render_png([_frame(), _frame()], tmp_path / "pairs.png", width=20, max_chars=30)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
