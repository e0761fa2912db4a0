"""Plotly pictures of the Tensor inspector: logical grid, storage strip, memory walk, shapes.

The grid and the strip share one colour scale: an element keeps its colour wherever a view
moves it, so after a transpose the eye follows the view jumping through memory.
"""
from __future__ import annotations

import functools
import math

import pandas as pd
import plotly.graph_objects as go

from components.figures import graph_scale, style_figure, styled_figure
from workbench.common.palette import (
    CELL_SCALE_COLOURS,
    GREY_150,
    GREY_300,
    GREY_600,
    OKABE_ITO,
    PALE_BLUE,
    PALE_GREEN,
    PALE_SALMON,
    PALE_YELLOW,
    TEXT_ON_LIGHT,
    TRANSPARENT,
)
from workbench.tensors.broadcast import EQUAL, INNER, MISMATCH, Combination, combine_shapes
from workbench.tensors.factory import shape_text
from workbench.tensors.layout import LayoutPicture

# Light tones only, so black cell labels stay readable on every colour; told apart with every
# common colour-vision deficiency (workbench/common/palette.py).
CELL_SCALE = [[k / (len(CELL_SCALE_COLOURS) - 1), colour] for k, colour in enumerate(CELL_SCALE_COLOURS)]
STRIP_WIDTH = 24


def _cell_height() -> int:
    return round(34 * graph_scale())


def cell_width() -> int:
    return round(52 * graph_scale())


MAIN_WIDTH = 900     # about the width of the page's main column on a laptop, in pixels
# The figures' margins at normal scale, in pixels, as Plotly's automargin made them (measured
# in Chromium): room beside an axis for its tick labels, DIGIT_PX a character more, and the
# axis title's where there is one; tick labels on top take TOP_TICKS_PX.
DIGIT_PX, TICKS_PX, TICKS_AND_TITLE_PX, TOP_TICKS_PX, BOTTOM_TICKS_AND_TITLE_PX = (
    7.7, 24, 58, 41, 65)


def _scaled(px: float) -> int:
    return round(px * graph_scale())


def _beside_axis(chars: int, *, titled: bool = False) -> int:
    """The margin that holds tick labels of `chars` characters (and the axis title)."""
    return _scaled((TICKS_AND_TITLE_PX if titled else TICKS_PX) + DIGIT_PX * chars)


def _margins(left: int, top: int, right: int = 10, bottom: int = 10) -> dict[str, int]:
    """Margins worked out here from the labels' lengths, with automargin off on every axis:
    Plotly's automargin draws a figure, measures its labels and then draws it all again, and
    that second drawing was a third of the browser's work for each chart of the inspector (a
    Chromium profile of Append), which draws three charts anew each time."""
    return {"l": left, "t": top, "r": right, "b": bottom}


def _text_size(cells: list[list[str]], base: int, cell_px: float | None = None) -> int:
    """Smaller labels for long numbers, so 5- and 6-digit positions stay inside their cell;
    `cell_px`, the narrowest a cell may be drawn (presenter mode's stage squeezes the grid
    on a small screen), caps the size so that the longest label still fits: a digit is about
    0.6 em wide, and the label keeps 3 px either side."""
    longest = max((len(t) for row in cells for t in row), default=1)
    shrink = 1.0 if longest <= 4 else 0.8 if longest <= 6 else 0.65
    size = base * shrink * graph_scale()
    if cell_px is not None:
        size = min(size, max(8.0, (cell_px - 6) / (0.6 * max(longest, 1))))
    return round(size)


def _index_text(index: tuple[int, ...]) -> str:
    return "x[" + ", ".join(str(i) for i in index) + "]"


def _cell_index(picture: LayoutPicture, lead: tuple[int, ...], r: int, c: int) -> tuple[int, ...]:
    if picture.rank == 0:
        return ()
    if picture.rank == 1:
        return (c,)
    return (*lead, r, c)


def _panel_gap(picture: LayoutPicture) -> int:
    """Pixels between rows of panels, for the slice titles (small multiples only)."""
    return 56 if picture.rank > 2 else 0


def grid_columns(picture: LayoutPicture, max_width: int = MAIN_WIDTH) -> int:
    """How many panels side by side: as many as fit in `max_width` pixels, at most 4."""
    panels = picture.panels
    panel_width = (panels[0].cols if panels else 1) * cell_width() + 24
    return max(1, min(len(panels), 4, max_width // panel_width))


def grid_size(picture: LayoutPicture, n_cols: int) -> tuple[int, int]:
    """The grid figure's drawn width and height in pixels with `n_cols` panels side by side:
    small tensors keep square-ish cells instead of stretching across the page."""
    panels = picture.panels
    n_rows = max(1, math.ceil(len(panels) / n_cols))
    rows_drawn, cols_drawn = (panels[0].rows, panels[0].cols) if panels else (1, 1)
    height = max(120, n_rows * (rows_drawn * _cell_height() + _panel_gap(picture)) + 60)
    return n_cols * (cols_drawn * cell_width() + 24) + 60, height


def _subplot_axes(n_rows: int, n_cols: int, vertical_spacing: float,
                  horizontal_spacing: float = 0.05) -> list[tuple[str, dict, str, dict]]:
    """The axes of an n_rows x n_cols grid of subplots, row by row from the top, as
    plotly.subplots.make_subplots lays them out: (x axis name, its layout, y axis name, its
    layout) for each cell, their domains in paper coordinates."""
    # Summed as make_subplots sums them, so the domains are the same floats to the last bit.
    widths = [(1.0 - horizontal_spacing * (n_cols - 1)) / n_cols] * n_cols
    heights = [(1.0 - vertical_spacing * (n_rows - 1)) / n_rows] * n_rows
    axes = []
    for number in range(n_rows * n_cols):
        row, col = divmod(number, n_cols)
        from_bottom = n_rows - 1 - row
        left = sum(widths[:col]) + col * horizontal_spacing
        bottom = sum(heights[:from_bottom]) + from_bottom * vertical_spacing
        suffix = str(number + 1) if number else ""
        axes.append((f"xaxis{suffix}", {"anchor": f"y{suffix}", "domain": [left, left + widths[col]]},
                     f"yaxis{suffix}", {"anchor": f"x{suffix}",
                                        "domain": [bottom, bottom + heights[from_bottom]]}))
    return axes


def grid_figure(picture: LayoutPicture, *, label: str, show: str, key: str,
                n_cols: int | None = None, cell_px: float | None = None) -> go.Figure:
    """The logical view: one grid (rank <= 2) or small multiples of 2-D slices (rank 3-5),
    `n_cols` panels side by side (by default as many as fit the main column); `cell_px` is the
    narrowest a cell will be drawn, for the labels' size (`_text_size`)."""
    panels = picture.panels
    n_cols = n_cols or grid_columns(picture)
    n_rows = max(1, math.ceil(len(panels) / n_cols))
    titles = [p.title for p in panels] if picture.rank > 2 else None
    gap = _panel_gap(picture)
    width, height = grid_size(picture, n_cols)
    axes = _subplot_axes(n_rows, n_cols, min(0.3, gap / height) if n_rows > 1 else 0.0)
    traces = []
    for number, panel in enumerate(panels):
        hover, text = [], []
        for r in range(panel.rows):
            hover_row, text_row = [], []
            for c in range(panel.cols):
                index = _cell_index(picture, panel.lead, r, c)
                value = panel.values[r][c] if panel.values is not None else "not materialized"
                position = panel.positions[r][c]
                hover_row.append(f"{label}{_index_text(index)[1:]} = {value}<br>"
                                 f"storage position {position}")
                text_row.append(str(position) if show == "positions" or panel.values is None
                                else panel.values[r][c])
            hover.append(hover_row)
            text.append(text_row)
        suffix = str(number + 1) if number else ""
        traces.append({
            "type": "heatmap", "z": panel.colours, "text": text, "customdata": hover,
            "texttemplate": "%{text}", "hovertemplate": "%{customdata}<extra></extra>",
            "colorscale": CELL_SCALE, "zmin": picture.colour_min, "zmax": picture.colour_max,
            "showscale": False, "xgap": 2, "ygap": 2,
            "textfont": {"color": TEXT_ON_LIGHT, "size": _text_size(text, 13, cell_px)},
            "xaxis": f"x{suffix}", "yaxis": f"y{suffix}"})
    layout: dict = {"height": height, "width": width, "plot_bgcolor": TRANSPARENT}
    for number, (x_name, x_axis, y_name, y_axis) in enumerate(axes):
        # Small multiples: the slice titles say where each panel is; row numbers on the left
        # column only, so labels never run into the neighbouring panel.
        rows_labelled = picture.rank == 2 or (picture.rank > 2 and number % n_cols == 0)
        layout[y_name] = {**y_axis, "autorange": "reversed", "showgrid": False,
                          "zeroline": False, "tickmode": "linear", "dtick": 1,
                          "title": {"text": None}, "automargin": False,
                          **({} if rows_labelled else {"showticklabels": False})}
        layout[x_name] = {**x_axis, "showgrid": False, "zeroline": False, "tickmode": "linear",
                          "dtick": 1, "side": "top", "automargin": False,
                          **({"showticklabels": False} if picture.rank > 2 else {})}
    rows_drawn = max((panel.rows for panel in panels), default=1)
    left = _beside_axis(len(str(rows_drawn - 1))) if picture.rank >= 2 else _scaled(10)
    if titles:
        # The first row's slice titles sit above its panels, in the top margin: room for them.
        title_px = round(14 * graph_scale())
        layout["annotations"] = [
            {"font": {"size": title_px}, "showarrow": False, "text": title,
             "x": sum(x_axis["domain"]) / 2.0, "xanchor": "center",
             "xref": "paper", "y": y_axis["domain"][1], "yanchor": "bottom", "yref": "paper"}
            for title, (_, x_axis, _, y_axis) in zip(titles, axes, strict=False)]
        layout["margin"] = _margins(left, title_px + 14)
    else:
        layout["margin"] = _margins(left, _scaled(TOP_TICKS_PX))
    return styled_figure(traces, layout, uirevision=key)


def strip_figure(picture: LayoutPicture, *, label: str, show: str, key: str) -> go.Figure:
    """The flat storage, wrapped in rows of STRIP_WIDTH; grey cells are not read by this view."""
    n = len(picture.strip_positions)
    width = min(STRIP_WIDTH, max(n, 1))
    n_rows = max(1, math.ceil(n / width))
    z: list[list[float | None]] = [[None] * width for _ in range(n_rows)]
    text = [[""] * width for _ in range(n_rows)]
    hover = [[""] * width for _ in range(n_rows)]
    for p in picture.strip_positions:
        r, c = divmod(p, width)
        colour = picture.strip_colours[p]
        value = picture.strip_values[p] if picture.strip_values is not None else None
        z[r][c] = colour
        text[r][c] = str(p) if show == "positions" or value is None else value
        reader = picture.strip_readers[p]
        if colour is None:
            hover[r][c] = f"storage position {p}<br>value {value}<br>not read by this view"
        else:
            hover[r][c] = (f"storage position {p}" + (f"<br>value {value}" if value else "")
                           + (f"<br>read by {label}{reader}" if reader else ""))
    read = {
        "type": "heatmap", "z": z, "text": text, "customdata": hover, "texttemplate": "%{text}",
        "hoverongaps": False, "hovertemplate": "%{customdata}<extra></extra>",
        "colorscale": CELL_SCALE, "zmin": picture.colour_min, "zmax": picture.colour_max,
        "showscale": False, "xgap": 2, "ygap": 2,
        "textfont": {"color": TEXT_ON_LIGHT, "size": _text_size(text, 12)}}
    # Cells this view does not read stay grey, labelled with their position.
    unread = [[(text[r][c] if z[r][c] is None and r * width + c < n else None)
               for c in range(width)] for r in range(n_rows)]
    not_read = {
        "type": "heatmap",
        "z": [[0 if unread[r][c] is not None else None for c in range(width)] for r in range(n_rows)],
        "text": [[u or "" for u in row] for row in unread], "customdata": hover,
        "texttemplate": "%{text}", "hovertemplate": "%{customdata}<extra></extra>",
        "colorscale": [[0, GREY_300], [1, GREY_300]], "showscale": False, "xgap": 2, "ygap": 2,
        "hoverongaps": False, "textfont": {"color": GREY_600, "size": round(12 * graph_scale())}}
    layout = {
        "yaxis": {"autorange": "reversed", "showgrid": False, "zeroline": False,
                  "tickmode": "array", "tickvals": list(range(n_rows)),
                  "ticktext": [f"{r * width}" for r in range(n_rows)],
                  "title": {"text": "position"}, "automargin": False},
        "xaxis": {"showgrid": False, "zeroline": False, "tickmode": "linear", "dtick": 1,
                  "side": "top", "title": {"text": None}, "automargin": False},
        "height": n_rows * _cell_height() + 70, "width": width * round(44 * graph_scale()) + 90,
        "plot_bgcolor": TRANSPARENT,
        "margin": _margins(_beside_axis(len(str((n_rows - 1) * width)), titled=True),
                           _scaled(TOP_TICKS_PX))}
    return styled_figure([read, not_read], layout, uirevision=key)


def walk_figure(picture: LayoutPicture, *, key: str) -> go.Figure:
    """Storage position of each element in the order the view reads them (row-major)."""
    walk = picture.walk
    trace = {"type": "scatter", "x": list(range(len(walk))), "y": walk, "mode": "lines+markers",
             "line": {"color": OKABE_ITO[0], "width": 2}, "marker": {"size": 5},
             "hovertemplate": "element %{x} in reading order<br>storage position %{y}"
                              "<extra></extra>"}
    # The axis titles stay short: at presenter scale a longer one ran past a half-page
    # column and was cut. The caption above the walk says how it reads the tensor.
    # Plotly writes a large position with an SI suffix ("12.3k"): five characters at most.
    longest = min(len(str(max(walk, default=0))), 5)
    layout = {"height": round(260 * graph_scale()),
              "xaxis": {"title": {"text": "element number (row by row)"}, "automargin": False},
              "yaxis": {"title": {"text": "storage position"}, "automargin": False},
              "margin": _margins(_beside_axis(longest, titled=True), _scaled(14),
                                 bottom=_scaled(BOTTOM_TICKS_AND_TITLE_PX))}
    return styled_figure([trace], layout, uirevision=key)


# Matching sizes, stretched ones, a mismatch, matmul's matrix dimensions and no size: five
# colours told apart with every common colour-vision deficiency (tests/unit/test_colour_vision.py;
# the matrix dimensions were peach, 2.3 from the green of a match for a protanope).
RULE_COLOURS = {EQUAL: PALE_GREEN, INNER: PALE_GREEN, MISMATCH: PALE_SALMON}
STRETCH_COLOUR, MATRIX_COLOUR, EMPTY_COLOUR = PALE_BLUE, PALE_YELLOW, GREY_150


def shapes_figure(combo: Combination, *, key: str) -> go.Figure:
    """The two shapes aligned from the right, and the result, coloured by the rule applied."""
    columns = combo.columns
    rows = ["a", "b", "result"]
    z: list[list[int]] = [[0] * len(columns) for _ in rows]
    text = [[""] * len(columns) for _ in rows]
    hover = [[""] * len(columns) for _ in rows]
    palette = [EMPTY_COLOUR, RULE_COLOURS[EQUAL], STRETCH_COLOUR, RULE_COLOURS[MISMATCH],
               MATRIX_COLOUR]
    for j, col in enumerate(columns):
        code = 3 if col.rule == MISMATCH else 1 if col.rule in (EQUAL, INNER) else \
            4 if col.matrix else 2
        for i, size in enumerate((col.left, col.right, col.result)):
            if size is None:
                text[i][j], z[i][j] = "", 0
            else:
                text[i][j], z[i][j] = str(size), code
            hover[i][j] = f"{rows[i]}: {'-' if size is None else size}<br>{col.rule}"
    n = len(palette) - 1
    scale = [[k / n, c] for k, c in enumerate(palette)]
    fig = go.Figure(go.Heatmap(
        z=z, text=text, customdata=hover, texttemplate="%{text}", zmin=0, zmax=n,
        colorscale=scale, showscale=False, xgap=3, ygap=3,
        hovertemplate="%{customdata}<extra></extra>",
        textfont={"color": TEXT_ON_LIGHT, "size": round(16 * graph_scale())}))
    fig.update_yaxes(autorange="reversed", tickmode="array", tickvals=[0, 1, 2], ticktext=rows,
                     showgrid=False, zeroline=False)
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(columns))),
                     ticktext=[c.rule if c.matrix or combo.combine != "matmul" else f"batch: {c.rule}"
                               for c in columns], side="bottom", showgrid=False,
                     zeroline=False)
    fig.update_layout(height=round(3 * 48 * graph_scale()) + 80, plot_bgcolor=TRANSPARENT)
    return style_figure(fig, uirevision=key)


@functools.lru_cache(maxsize=128)
def broadcast_figure(left: tuple[int, ...], right: tuple[int, ...], combine: str, scale: float,
                     key: str) -> go.Figure:
    """`shapes_figure` of `combine_shapes(left, right, combine)`, built once per process for the
    same shapes and presenter scale: most reruns of the page change nothing here. The figure is
    shared by every session, so nothing may change it after it is returned."""
    del scale                     # part of the cache key: graph_scale() is read inside
    return shapes_figure(combine_shapes(left, right, combine), key=key)


def bits_figure(sign: int, exponent: int, mantissa: int, *, key: str) -> go.Figure:
    """The bit layout of a floating-point dtype: sign, exponent, mantissa."""
    fig = go.Figure()
    for name, bits, colour in (("sign", sign, OKABE_ITO[3]), ("exponent (range)", exponent,
                                                               OKABE_ITO[1]),
                               ("mantissa (precision)", mantissa, OKABE_ITO[0])):
        fig.add_trace(go.Bar(x=[bits], y=["bits"], orientation="h", name=f"{name}: {bits}",
                             marker_color=colour, text=[f"{name}: {bits}"],
                             textposition="inside", hovertemplate=f"{name}: {bits} bits"
                             "<extra></extra>"))
    fig.update_layout(barmode="stack", height=round(130 * graph_scale()), showlegend=False,
                      xaxis_title="bits", yaxis_visible=False)
    return style_figure(fig, uirevision=key)


# ------------------------------------------------------- the same pictures as tables
# What a screen reader reads instead of the pictures (components/accessible_chart.py shows
# them in a closed "Data table" expander): built from the same LayoutPicture and Combination,
# and only when a learner opens the table.

def grid_label(name: str, shape: tuple[int, ...]) -> str:
    """The logical view's accessible name (and its table's title)."""
    return f"Logical view of {name}, shape {shape_text(shape)}"


def strip_label(name: str, whose: str) -> str:
    return f"Storage of {name}: {whose}"


def grid_table(picture: LayoutPicture) -> pd.DataFrame:
    """The logical view as a table of the same rows and columns: each cell "value (position
    p)", or "position p" for a tensor that has no values (meta). A tensor of rank 3-5 has a
    row per row of each drawn slice, the slice named in the first column."""
    records = []
    for panel in picture.panels:
        for r in range(panel.rows):
            record: dict[str, object] = {"slice": panel.title} if picture.rank > 2 else {}
            record["row"] = "" if picture.rank < 2 else r
            for c in range(panel.cols):
                position = panel.positions[r][c]
                record[f"column {c}"] = (f"position {position}" if panel.values is None
                                         else f"{panel.values[r][c]} (position {position})")
            records.append(record)
    return pd.DataFrame(records)


def strip_table(picture: LayoutPicture, *, label: str) -> pd.DataFrame:
    """The storage strip as one row per drawn storage position: its value and the first
    index of the view that reads it, or that the view does not read it (a tensor on the meta
    device has no values: its strip is the positions alone)."""
    values = picture.strip_values
    if values is None:
        return pd.DataFrame({"storage position": picture.strip_positions})
    return pd.DataFrame([{
        "storage position": p, "value": values[p],
        "read by": f"{label}{picture.strip_readers[p]}" if picture.strip_readers[p]
        else "not read by this view",
    } for p in picture.strip_positions])


def shapes_table(combo: Combination) -> pd.DataFrame:
    """The aligned shapes: one row per dimension, counted from the right as broadcasting
    aligns them, with the rule applied."""
    n = len(combo.columns)

    def size(value: int | None) -> str:
        return "-" if value is None else str(value)

    return pd.DataFrame([{"dimension": j - n, "a": size(col.left), "b": size(col.right),
                          "result": size(col.result),
                          "rule": col.rule if col.matrix or combo.combine != "matmul"
                          else f"batch: {col.rule}"}
                         for j, col in enumerate(combo.columns)])


def bits_table(sign: int, exponent: int, mantissa: int) -> pd.DataFrame:
    return pd.DataFrame({"part": ["sign", "exponent (range)", "mantissa (precision)"],
                         "bits": [sign, exponent, mantissa]})
