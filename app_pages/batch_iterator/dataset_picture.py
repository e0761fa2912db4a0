"""The dataset with the current batch ringed, as an SVG figure drawn on the server.

Not Plotly: Next redraws this picture on every step, and Plotly took about 200 ms of each step
in Chromium to redraw a 200-point scatter (the step's budget is 300 ms). At most 500 points as
SVG circles and squares, one path per class, are inserted in a few milliseconds. Text and rings
take the page's text colour (`currentColor`), so the picture follows the theme. No hover read-out
per point (the Plotly figure had one): the batch's points are numbered, and the grid above names
every index's batch.
"""
from __future__ import annotations

import html
from collections.abc import Sequence

from workbench.batch_iterator.runs import BatchRecord, LoaderRun
from workbench.common.palette import BLUE, ORANGE
from workbench.common.ticks import format_tick, nice_ticks

PICTURE_CLASS = "wb-dataset"
POINT_COLOURS = (BLUE, ORANGE)
WIDTH, HEIGHT = 300, 230
LEFT, RIGHT, TOP, BOTTOM = 38, 8, 14, 34


def _scale(lo: float, hi: float, start: float, end: float):
    span = (hi - lo) or 1.0
    return lambda value: start + (value - lo) / span * (end - start)


def _axes(x_ticks: Sequence[float], y_ticks: Sequence[float], to_x, to_y, x_title: str,
          y_title: str) -> str:
    """Grid lines, tick labels and axis titles, in the text colour."""
    parts = []
    x_step = x_ticks[1] - x_ticks[0] if len(x_ticks) > 1 else 1.0
    y_step = y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 else 1.0
    for tick in y_ticks:
        y = to_y(tick)
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
                     'class="grid"/>'
                     f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f"{format_tick(tick, y_step)}</text>")
    for tick in x_ticks:
        x = to_x(tick)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" '
                     'class="grid"/>'
                     f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 15}" text-anchor="middle">'
                     f"{format_tick(tick, x_step)}</text>")
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 6}" '
                 f'text-anchor="middle">{html.escape(x_title)}</text>'
                 f'<text transform="translate(12 {(TOP + HEIGHT - BOTTOM) / 2}) rotate(-90)" '
                 f'text-anchor="middle">{html.escape(y_title)}</text>')
    return "".join(parts)


def _markers(cls: int, centres: Sequence[tuple[float, float]]) -> str:
    """All of one class's points as one path (one element, not one per point: the browser's
    Markdown reader builds an element for each): class 0 circles, class 1 squares, so that the
    classes differ by shape as well as colour."""
    if cls == 0:
        shapes = "".join(f"M{x - 4:.1f} {y:.1f}a4 4 0 1 0 8 0a4 4 0 1 0 -8 0"
                         for x, y in centres)
    else:
        shapes = "".join(f"M{x - 3.5:.1f} {y - 3.5:.1f}h7v7h-7z" for x, y in centres)
    return f'<path d="{shapes}" fill="{POINT_COLOURS[cls]}"/>' if shapes else ""


def scatter_svg(points: Sequence[tuple[float, float]], labels: Sequence[int],
                chosen: Sequence[int]) -> str:
    """Two features per point, by class; the indices in `chosen` ringed and numbered."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    pad_x, pad_y = 0.05 * ((max(xs) - min(xs)) or 1), 0.08 * ((max(ys) - min(ys)) or 1)
    x_ticks = nice_ticks(min(xs) - pad_x, max(xs) + pad_x, 5)
    y_ticks = nice_ticks(min(ys) - pad_y, max(ys) + pad_y, 4)
    to_x = _scale(min(xs) - pad_x, max(xs) + pad_x, LEFT, WIDTH - RIGHT)
    to_y = _scale(min(ys) - pad_y, max(ys) + pad_y, HEIGHT - BOTTOM, TOP)
    marks = [_markers(cls, [(to_x(x), to_y(y)) for (x, y), label in zip(points, labels,
                                                                        strict=True)
                            if label == cls]) for cls in (0, 1)]
    rings = [f'<circle cx="{to_x(points[i][0]):.1f}" cy="{to_y(points[i][1]):.1f}" r="8" '
             'class="ring"/>'
             f'<text x="{to_x(points[i][0]):.1f}" y="{to_y(points[i][1]) - 11:.1f}" '
             f'text-anchor="middle" class="label">{i}</text>' for i in chosen]
    return (_axes(x_ticks, y_ticks, to_x, to_y, "x[0]", "x[1]")
            + "".join(marks) + "".join(rings))


def lengths_svg(lengths: Sequence[int], labels: Sequence[int], chosen: Sequence[int]) -> str:
    """One bar per index, as tall as its sequence; the batch's bars in the text colour."""
    n, top = len(lengths), max(max(lengths), 1)
    to_y = _scale(0, top, HEIGHT - BOTTOM, TOP)
    slot = (WIDTH - RIGHT - LEFT) / n
    picked = set(chosen)
    paths = {0: [], 1: [], "batch": []}
    for index, (length, cls) in enumerate(zip(lengths, labels, strict=True)):
        paths["batch" if index in picked else cls].append(
            f"M{LEFT + index * slot + slot * 0.1:.1f} {to_y(0):.1f}"
            f"V{to_y(length):.1f}h{slot * 0.8:.2f}V{to_y(0):.1f}z")
    bars = [f'<path d="{"".join(paths[cls])}" fill="{POINT_COLOURS[cls]}"/>' for cls in (0, 1)]
    bars.append(f'<path d="{"".join(paths["batch"])}" class="ring-fill"/>')
    to_x = _scale(-0.5, n - 0.5, LEFT, WIDTH - RIGHT)
    x_ticks = [t for t in nice_ticks(0, n - 1, 6) if float(t).is_integer()]
    return _axes(x_ticks, nice_ticks(0, top, 4), to_x, to_y, "dataset index", "length of x") \
        + "".join(bars)


def _css(scale: float) -> str:
    return (f"<style>.{PICTURE_CLASS} {{ margin: 0; }} "
            f".{PICTURE_CLASS} svg {{ width: 100%; height: auto; display: block; }} "
            f".{PICTURE_CLASS} text {{ fill: currentColor; font-size: {12 * scale:.0f}px; }} "
            f".{PICTURE_CLASS} .grid {{ stroke: currentColor; stroke-opacity: 0.15; }} "
            f".{PICTURE_CLASS} .ring {{ fill: none; stroke: currentColor; stroke-width: 2; }} "
            f".{PICTURE_CLASS} .ring-fill {{ fill: currentColor; }} "
            f".{PICTURE_CLASS} .label {{ font-weight: 700; }} "
            f".{PICTURE_CLASS} figcaption {{ font-size: {0.8 * scale:.2f}rem; }}</style>")


def dataset_picture(run: LoaderRun, features, current: BatchRecord | None,
                    scale: float = 1.0) -> str:
    """The dataset (points by class, or sequence lengths) with the current batch marked, as one
    `<figure>` with a caption that says what the marks are; `features` is the dataset's (n, 2)
    tensor, or None for sequences."""
    chosen = sorted(set(current.indices)) if current is not None else []
    labels = list(run.labels)
    if features is not None and features.dim() == 2 and features.shape[1] == 2:
        body = scatter_svg([(float(x), float(y)) for x, y in features.tolist()], labels, chosen)
        legend = (f'<span style="color:{BLUE}">●</span> class 0 · '
                  f'<span style="color:{ORANGE}">■</span> class 1 · ◯ this batch, numbered')
        what = "The dataset's points by class"
    else:
        body = lengths_svg(list(run.lengths), labels, chosen)
        legend = (f'<span style="color:{BLUE}">▮</span> class 0 · '
                  f'<span style="color:{ORANGE}">▮</span> class 1 · ▮ this batch (text colour)')
        what = "Each sequence's length by dataset index"
    summary = (f"{what}; this batch holds indices {', '.join(map(str, chosen))}"
               if chosen else what)
    return (f'{_css(scale)}<figure class="{PICTURE_CLASS}">'
            f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{html.escape(summary)}">'
            f"{body}</svg><figcaption>{legend}</figcaption></figure>")
