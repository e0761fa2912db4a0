"""Plotly pictures of the Tensor inspector: the memory walk, the broadcast shapes and a dtype's
bits, and the tables a screen reader reads instead of the shapes and the bits.

The logical grid and the storage strip are HTML tables (tables.py): they are redrawn on every
Append and Undo, where a heatmap was slow to paint.
"""
from __future__ import annotations

import functools

import pandas as pd
import plotly.graph_objects as go

from components.figures import graph_scale, style_figure, styled_figure
from workbench.common.palette import (
    GREY_150,
    OKABE_ITO,
    PALE_BLUE,
    PALE_GREEN,
    PALE_SALMON,
    PALE_YELLOW,
    TEXT_ON_LIGHT,
    TRANSPARENT,
)
from workbench.tensor_inspector.broadcast import EQUAL, INNER, MISMATCH, Combination, combine_shapes
from workbench.tensor_inspector.layout import LayoutPicture

# The walk's margins at normal scale, in pixels, as Plotly's automargin made them (measured
# in Chromium): room beside an axis for its tick labels, DIGIT_PX a character more, and the
# axis title's; tick labels below with their title take BOTTOM_TICKS_AND_TITLE_PX.
DIGIT_PX, TICKS_AND_TITLE_PX, BOTTOM_TICKS_AND_TITLE_PX = 7.7, 58, 65


def _scaled(px: float) -> int:
    return round(px * graph_scale())


def _beside_axis(chars: int) -> int:
    """The margin that holds tick labels of `chars` characters and the axis title."""
    return _scaled(TICKS_AND_TITLE_PX + DIGIT_PX * chars)


def _margins(left: int, top: int, right: int = 10, bottom: int = 10) -> dict[str, int]:
    """Margins worked out here from the labels' lengths, with automargin off on every axis:
    Plotly's automargin draws a figure, measures its labels and then draws it all again, and
    that second drawing was a third of the browser's work for the walk (a Chromium profile of
    Append)."""
    return {"l": left, "t": top, "r": right, "b": bottom}


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
              "margin": _margins(_beside_axis(longest), _scaled(14),
                                 bottom=_scaled(BOTTOM_TICKS_AND_TITLE_PX))}
    return styled_figure([trace], layout, uirevision=key)


# Matching sizes, stretched ones, a mismatch, matmul's matrix dimensions and no size: five
# colours told apart with every common colour-vision deficiency (tests/unit/common/test_colour_vision.py;
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
# them in a closed "Data table" expander): built from the same Combination and bit counts,
# and only when a learner opens the table.

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
