"""The Tensor inspector's one Plotly picture, a dtype's bits (in the Dtypes tab), the colours of
the broadcast shapes, and the tables a screen reader reads instead of the shapes and the bits.

The logical grid and the storage strip are HTML tables (tables.py): they are redrawn on every
Append and Undo, where a heatmap was slow to paint. The memory walk and the broadcast shapes are
drawn without Plotly (light_figures.py): on the page as it opens, Plotly's bundle made its
first screen the slowest of all pages.
"""
from __future__ import annotations


import pandas as pd
import plotly.graph_objects as go

from components.figures import graph_scale, style_figure
from workbench.common.palette import (
    GREY_150,
    OKABE_ITO,
    PALE_BLUE,
    PALE_GREEN,
    PALE_SALMON,
    PALE_YELLOW,
)
from workbench.tensor_inspector.broadcast import EQUAL, INNER, MISMATCH, Combination

# Matching sizes, stretched ones, a mismatch, matmul's matrix dimensions and no size: five
# colours told apart with every common colour-vision deficiency (tests/unit/common/test_colour_vision.py;
# the matrix dimensions were peach, 2.3 from the green of a match for a protanope).
RULE_COLOURS = {EQUAL: PALE_GREEN, INNER: PALE_GREEN, MISMATCH: PALE_SALMON}
STRETCH_COLOUR, MATRIX_COLOUR, EMPTY_COLOUR = PALE_BLUE, PALE_YELLOW, GREY_150


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
