"""The memory walk (an SVG line) and the broadcast shapes (an HTML table), drawn without Plotly.

Both are on the page when it opens (the walk under the step's pictures, the shapes in the first
tab), and a Plotly chart makes the browser load and compile Plotly's 4.7 MB bundle first: the
tensor inspector was the only page whose first screen paid it, 3-10x slower than the other
pages (bench/page_open.py; a Chromium trace showed the main thread blocked 2.8 s while
`PlotlyChart.js` was evaluated, and 6.2 s of script time against 1.4 s on the moons trainer).
The batch iterator left Plotly for the same reason (commit 807f29c). Plotly stays for the figures
a learner opens (the dtype bits, in their own tab).

The data tables a screen reader reads are unchanged (components/accessible_chart.py's
`data_table`, from the same numbers).
"""
from __future__ import annotations

import html

from app_pages.tensor_inspector.figures import (
    EMPTY_COLOUR,
    MATRIX_COLOUR,
    RULE_COLOURS,
    STRETCH_COLOUR,
)
from components.accessible_theme import SCROLL_X_CLASS
from workbench.common.palette import OKABE_ITO, TEXT_ON_LIGHT, WHITE
from workbench.tensor_inspector.broadcast import EQUAL, INNER, MISMATCH, Combination

WALK_CLASS, SHAPES_CLASS = "wb-walk", "wb-shapes"
X_TITLE, Y_TITLE = "element number (row by row)", "storage position"
# The walk's drawing, in SVG user units (it scales to the column's width).
WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 84, 14, 14, 60
FONT_PX = 18
MARKERS_UP_TO = 160             # dots on the points while they stay apart


def _ticks(top: int) -> list[int]:
    """0, the end, and up to three round values between."""
    if top <= 0:
        return [0]
    step = max(1, round(top / 4))
    values = list(range(0, top, step))
    if top - values[-1] < step / 2 and len(values) > 1:
        values.pop()
    return [*values, top]


def _walk_points(walk: list[int], x, y) -> list[tuple[float, float]]:
    """The line's points; a walk longer than the plot is wide keeps, per pixel column, its first,
    lowest, highest and last position, so the drawn line is the same as the full one."""
    n = len(walk)
    columns = WIDTH - LEFT - RIGHT
    if n <= 2 * columns:
        return [(x(i), y(p)) for i, p in enumerate(walk)]
    points: list[tuple[float, float]] = []
    for c in range(columns):
        lo, hi = c * n // columns, (c + 1) * n // columns
        part = walk[lo:hi]
        if not part:
            continue
        for value in (part[0], min(part), max(part), part[-1]):
            points.append((x(lo), y(value)))
    return points


def walk_svg(walk: list[int], *, label: str) -> str:
    """The storage position of each element in the order the view reads them, as a line (an
    SVG document for `st.image`)."""
    n, top = len(walk), max(walk, default=0)
    span_x, span_y = max(n - 1, 1), max(top, 1)

    def x(i: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * i / span_x

    def y(p: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (1 - p / span_y)

    points = _walk_points(walk, x, y)
    line = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
    colour = OKABE_ITO[0]
    parts = [f'<title>{html.escape(label)}</title>',
             f'<line class="axis" x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" '
             f'y2="{HEIGHT - BOTTOM}"/>',
             f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}"/>']
    for value in _ticks(n - 1):
        # A long last label (99,999) centred on its tick would run past the right edge.
        half = 0.6 * FONT_PX * len(f"{value:,}") / 2
        anchor, at = ("end", WIDTH - 2) if x(value) + half > WIDTH - 2 else ("middle", x(value))
        parts.append(f'<text x="{at:.1f}" y="{HEIGHT - BOTTOM + 22}" '
                     f'text-anchor="{anchor}">{value:,}</text>')
    for value in _ticks(top):
        parts.append(f'<line class="grid" x1="{LEFT}" y1="{y(value):.1f}" x2="{WIDTH - RIGHT}" '
                     f'y2="{y(value):.1f}"/>')
        parts.append(f'<text x="{LEFT - 8}" y="{y(value) + 6:.1f}" text-anchor="end">{value:,}</text>')
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" y="{HEIGHT - 8}" '
                 f'text-anchor="middle">{X_TITLE}</text>')
    parts.append(f'<text transform="translate(20 {(TOP + HEIGHT - BOTTOM) / 2:.0f}) rotate(-90)" '
                 f'text-anchor="middle">{Y_TITLE}</text>')
    if points:
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                     f'stroke-linejoin="round" points="{line}"/>')
    if n <= MARKERS_UP_TO:
        parts.extend(f'<circle cx="{x(i):.1f}" cy="{y(p):.1f}" r="3" fill="{colour}"/>'
                     for i, p in enumerate(walk))
    # An image of its own (st.html drops <svg>): on a white card, so the dark text reads in
    # both themes, as the QR code's does.
    style = (f"<style>text {{ font: {FONT_PX}px sans-serif; fill: {TEXT_ON_LIGHT}; }}"
             f".axis {{ stroke: {TEXT_ON_LIGHT}; stroke-width: 1; }}"
             f".grid {{ stroke: {TEXT_ON_LIGHT}; stroke-opacity: 0.15; }}</style>")
    walk_data = ",".join(map(str, walk)) if n <= 4096 else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{WALK_CLASS}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
            f'aria-label="{html.escape(label)}" data-walk="{walk_data}">{style}'
            f'<rect width="{WIDTH}" height="{HEIGHT}" rx="6" fill="{WHITE}"/>{"".join(parts)}</svg>')


def _shape_colour(combo: Combination, index: int) -> str:
    column = combo.columns[index]
    if column.rule == MISMATCH:
        return RULE_COLOURS[MISMATCH]
    if column.rule in (EQUAL, INNER):
        return RULE_COLOURS[EQUAL]
    return MATRIX_COLOUR if column.matrix else STRETCH_COLOUR


def shapes_html(combo: Combination, *, label: str) -> str:
    """The two shapes aligned from the right, and the result, coloured by the rule applied."""
    columns = combo.columns
    rules = [c.rule if c.matrix or combo.combine != "matmul" else f"batch: {c.rule}"
             for c in columns]
    body = []
    for name, sizes in (("a", [c.left for c in columns]), ("b", [c.right for c in columns]),
                        ("result", [c.result for c in columns])):
        cells = []
        for j, size in enumerate(sizes):
            background = EMPTY_COLOUR if size is None else _shape_colour(combo, j)
            text = "" if size is None else str(size)
            title = html.escape(f"{name}: {text or '-'} · {rules[j]}")
            cells.append(f'<td style="background:{background};color:{TEXT_ON_LIGHT}" '
                         f'title="{title}">{html.escape(text)}</td>')
        body.append(f'<tr><th scope="row">{name}</th>{"".join(cells)}</tr>')
    foot = "".join(f"<td>{html.escape(rule)}</td>" for rule in rules)
    style = (f"<style>table.{SHAPES_CLASS} {{ border-collapse: separate; border-spacing: 3px; "
             f"margin: 0.3rem 0 0.6rem; font-variant-numeric: tabular-nums; }}"
             f"table.{SHAPES_CLASS} caption {{ caption-side: top; text-align: left; "
             f"font-size: 0.8rem; padding-bottom: 0.2rem; }}"
             f"table.{SHAPES_CLASS} td, table.{SHAPES_CLASS} th {{ border: none; "
             f"padding: 0.35rem 0.9rem; text-align: center; min-width: 3.5rem; }}"
             f"table.{SHAPES_CLASS} tbody td {{ font-size: 1.05rem; }}"
             f"table.{SHAPES_CLASS} tfoot td {{ font-size: 0.75rem; padding-top: 0.1rem; }}"
             f"table.{SHAPES_CLASS} th {{ font-weight: normal; text-align: right; }}"
             # A phone's column (about 360 px) holds four sizes and the row names.
             f"@media (max-width: 640px) {{ table.{SHAPES_CLASS} td, table.{SHAPES_CLASS} th "
             f"{{ padding: 0.3rem 0.4rem; min-width: 2.4rem; }} }}</style>")
    # Six or more sizes are still wider than a phone: the box scrolls, not the page.
    return (f'{style}<div class="{SCROLL_X_CLASS}"><table class="{SHAPES_CLASS}">'
            f'<caption>{html.escape(label)}</caption>'
            f'<tbody>{"".join(body)}</tbody><tfoot><tr><th scope="row">rule</th>{foot}</tr>'
            f"</tfoot></table></div>")
