"""Renderings of a few explained pairs: both texts side by side, each token's background
coloured by its signed attribution (red pushes towards "same author", blue away; opacity is
the share of the pair's largest absolute attribution).

Both renderers take attribution frames from :mod:`stylo.explain.integrated_gradients`, whose
``attrs`` carry the texts the offsets refer to, and write to the path the caller chooses. The
part of a text beyond the model's token budget is shown greyed out. matplotlib (for the PNG)
is imported on use only.
"""

from __future__ import annotations

import html
from pathlib import Path

__all__ = ["render_html", "render_png"]

_POSITIVE = (214, 39, 40)
_NEGATIVE = (31, 119, 180)


def render_html(explanations, path, titles=None) -> Path:
    """Write an HTML page of the pairs ``explanations`` (attribution frames) to ``path``.

    ``titles`` (one str per pair) head the pairs; every text is HTML-escaped, so a text
    holding markup shows it rather than running it. Returns the path written.
    """
    explanations, titles = _check(explanations, titles)
    blocks = []
    for frame, title in zip(explanations, titles):
        scale = _scale(frame)
        cells = []
        for side in ("a", "b"):
            spans = []
            for text, value in _segments(frame, side):
                if value is None:
                    spans.append(html.escape(text))
                elif value == "unseen":
                    spans.append(f'<span class="unseen">{html.escape(text)}</span>')
                else:
                    r, g, b, alpha = _colour(value, scale)
                    spans.append(
                        f'<span style="background:rgba({r},{g},{b},{alpha:.3f})" '
                        f'title="{value:+.4g}">{html.escape(text)}</span>'
                    )
            cells.append(f"<td><pre>{''.join(spans)}</pre></td>")
        caption = html.escape(f"{title}: {_caption(frame)}")
        blocks.append(f"<h2>{caption}</h2>\n<table><tr>{''.join(cells)}</tr></table>")
    page = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>attributions</title>\n'
        "<style>td{vertical-align:top;width:50%;padding:0 1em}"
        "pre{white-space:pre-wrap;font-size:13px}.unseen{color:#999}</style></head><body>\n"
        "<p>Integrated Gradients per token: red raises the same-author score, blue lowers it;"
        " grey text is beyond the token budget.</p>\n" + "\n".join(blocks) + "\n</body></html>\n"
    )
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path


def render_png(explanations, path, titles=None, width=60, max_chars=600, dpi=120) -> Path:
    """Write the pairs as a text-as-image PNG to ``path`` (needs matplotlib).

    Each text is laid out in a monospace grid ``width`` characters wide and cut after
    ``max_chars`` characters (the HTML shows everything). Returns the path written.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    explanations, titles = _check(explanations, titles)
    gap, font = 4, 9
    blocks = []
    for frame, title in zip(explanations, titles):
        sides = [_layout(_cut(_segments(frame, side), max_chars), width) for side in ("a", "b")]
        height = 1 + max((run[0] for runs in sides for run in runs), default=0)
        blocks.append((f"{title}: {_caption(frame)}", _scale(frame), sides, height))
    n_lines = sum(2 + height for *_, height in blocks)
    n_cols = 2 * width + gap
    # a monospace advance is 0.6 em; lines 1.35 em apart
    size = (n_cols * 0.6 * font / 72 + 0.2, n_lines * 1.35 * font / 72 + 0.2)
    figure = Figure(figsize=size)
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.5, n_cols + 0.5)
    ax.set_ylim(n_lines, 0)
    ax.axis("off")
    style = {"family": "monospace", "fontsize": font, "va": "center"}
    top = 0
    for header, scale, sides, height in blocks:
        ax.text(0, top + 0.5, header, weight="bold", **style)
        top += 1
        for column, runs in zip((0, width + gap), sides):
            for line, col, text, value in runs:
                if value not in (None, "unseen"):
                    r, g, b, alpha = _colour(value, scale)
                    ax.add_patch(
                        Rectangle(
                            (column + col, top + line),
                            len(text),
                            1,
                            lw=0,
                            facecolor=(r / 255, g / 255, b / 255, alpha),
                        )
                    )
                colour = "#999999" if value == "unseen" else "black"
                ax.text(column + col, top + line + 0.5, text, color=colour, **style)
        top += 1 + height
    path = Path(path)
    figure.savefig(path, dpi=dpi)
    return path


def _check(explanations, titles):
    explanations = list(explanations)
    titles = [f"pair {i + 1}" for i in range(len(explanations))] if titles is None else list(titles)
    if len(titles) != len(explanations):
        raise ValueError(f"{len(titles)} titles for {len(explanations)} pairs")
    for frame in explanations:
        if "text_a" not in frame.attrs or "text_b" not in frame.attrs:
            raise ValueError("attribution frames need attrs['text_a'] and attrs['text_b']")
    return explanations, titles


def _caption(frame):
    attrs = frame.attrs
    return (
        f"{attrs.get('method', '?')} score {attrs.get('score', float('nan')):.3f}, "
        f"IG convergence delta {attrs.get('delta', float('nan')):.2g}"
    )


def _scale(frame):
    """The pair's largest absolute attribution (1 when all are 0, leaving them uncoloured)."""
    largest = frame["attribution"].abs().max() if len(frame) else 0.0
    return float(largest) if largest > 0 else 1.0


def _colour(value, scale):
    r, g, b = _POSITIVE if value >= 0 else _NEGATIVE
    return r, g, b, min(abs(value) / scale, 1.0)


def _segments(frame, side):
    """The whole text of ``side`` as ``(text, value)`` pieces in order: ``value`` is a
    token's attribution, None between tokens, ``"unseen"`` for the part past the budget.

    Tokens sharing a span (a character split into several byte-level tokens) are summed;
    a token overlapping the previous one keeps only its new characters.
    """
    text = frame.attrs[f"text_{side}"]
    rows = frame[frame["side"] == side]
    summed = rows.groupby(["start", "end"], sort=True)["attribution"].sum()
    pieces, cursor = [], 0
    for (start, end), value in summed.items():
        start = max(int(start), cursor)
        if end <= start:
            continue
        if start > cursor:
            pieces.append((text[cursor:start], None))
        pieces.append((text[start:end], float(value)))
        cursor = int(end)
    if cursor < len(text):
        unseen = side in frame.attrs.get("truncated_sides", ())
        pieces.append((text[cursor:], "unseen" if unseen else None))
    return pieces


def _cut(pieces, max_chars):
    out, used = [], 0
    for text, value in pieces:
        if used + len(text) > max_chars:
            out.append((text[: max_chars - used] + "\u2026", value))
            break
        out.append((text, value))
        used += len(text)
    return out


def _layout(pieces, width):
    """``(line, column, text, value)`` runs of the pieces wrapped ``width`` wide; a line
    break starts a new line and other whitespace control characters become spaces."""
    runs, line, col = [], 0, 0
    for text, value in pieces:
        for k, part in enumerate(text.split("\n")):
            if k:
                line, col = line + 1, 0
            part = "".join(" " if c.isspace() else c for c in part)
            while part:
                if col == width:
                    line, col = line + 1, 0
                take = part[: width - col]
                runs.append((line, col, take, value))
                col += len(take)
                part = part[len(take) :]
    return runs
