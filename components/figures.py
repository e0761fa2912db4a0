"""One look for every Plotly figure and graphviz graph, in normal and presenter mode.

Two Plotly templates, `workbench` and `workbench_presenter`, hold the fonts, the colourway
(`workbench/common/palette.py`), the margins and the legend; `style_figure` applies the one for
the current mode and scales line and marker sizes. Pages pass each figure through it before
`st.plotly_chart`, and read `graph_scale()` when they build DOT text, so presenter mode reaches
every picture without page-specific code.
"""
from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from workbench.common.palette import OKABE_ITO

PRESENTER_KEY = "presenter_mode"
PRESENTER_SCALE = 1.5


def _template(scale: float) -> go.layout.Template:
    return go.layout.Template(layout={
        "font": {"size": round(14 * scale)},
        "colorway": list(OKABE_ITO),
        "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
        "legend": {"font": {"size": round(13 * scale)}},
        "hoverlabel": {"font": {"size": round(13 * scale)}},
    })


pio.templates["workbench"] = _template(1.0)
pio.templates["workbench_presenter"] = _template(PRESENTER_SCALE)


def presenting() -> bool:
    return bool(st.session_state.get(PRESENTER_KEY, False))


def graph_scale() -> float:
    """How much bigger text and lines are drawn in graphs: 1.0, or 1.5 when presenting."""
    return PRESENTER_SCALE if presenting() else 1.0


def style_figure(fig: go.Figure, *, uirevision: str | None = None) -> go.Figure:
    """Fonts, palette and line/marker sizes for the current mode; `uirevision` keeps zoom."""
    scale = graph_scale()
    name = "workbench_presenter" if presenting() else "workbench"
    # The template's values are also written into the figure's own layout: Streamlit's chart
    # theme fills in every value a figure leaves unset, template values included.
    fig.update_layout(template=name)
    fig.update_layout(pio.templates[name].layout.to_plotly_json())
    if fig.layout.title.text:
        fig.update_layout(margin_t=40 * scale)
    if uirevision is not None:
        fig.update_layout(uirevision=uirevision)
    if scale != 1.0:
        for trace in fig.data:
            if getattr(trace, "line", None) is not None and trace.type in ("scatter", "scattergl"):
                trace.line.width = (trace.line.width or 2) * scale
            if getattr(trace, "marker", None) is not None and trace.type in ("scatter", "scattergl"):
                size = trace.marker.size
                if isinstance(size, int | float):
                    trace.marker.size = size * scale
                elif size is None:
                    trace.marker.size = 6 * scale
    return fig


def styled_figure(data: list[dict[str, Any]], layout: dict[str, Any], *,
                  uirevision: str | None = None) -> go.Figure:
    """The figure `style_figure` makes of these traces and layout, built from plain dicts in
    one go: Plotly checks each property once when the figure is made, while every
    `update_layout` or `update_xaxes` call walks the figure again (a py-spy profile of the tensor
    inspector's Append: building its three charts by updates was two thirds of the server's
    time, and from dicts they take a fifth of that). `layout` wins over the template's values."""
    scale = graph_scale()
    name = "workbench_presenter" if presenting() else "workbench"
    # As in style_figure: the template's values are also written into the figure's own layout.
    merged = _merged(_TEMPLATE_LAYOUTS[name], layout)
    merged["template"] = pio.templates[name]
    if merged.get("title", {}).get("text") and "t" not in layout.get("margin", {}):
        merged["margin"] = {**merged.get("margin", {}), "t": 40 * scale}
    if uirevision is not None:
        merged["uirevision"] = uirevision
    if scale != 1.0:
        data = [_scaled_trace(trace, scale) for trace in data]
    return go.Figure(data=data, layout=merged)


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = (_merged(out[key], value) if isinstance(value, dict)
                    and isinstance(out.get(key), dict) else value)
    return out


def _scaled_trace(trace: dict[str, Any], scale: float) -> dict[str, Any]:
    """style_figure's presenter sizes for a scatter trace's line and markers."""
    if trace.get("type") not in ("scatter", "scattergl"):
        return trace
    trace = dict(trace)
    line, marker = dict(trace.get("line", {})), dict(trace.get("marker", {}))
    line["width"] = (line.get("width") or 2) * scale
    size = marker.get("size")
    if isinstance(size, int | float):
        marker["size"] = size * scale
    elif size is None:
        marker["size"] = 6 * scale
    trace["line"], trace["marker"] = line, marker
    return trace


_TEMPLATE_LAYOUTS = {name: pio.templates[name].layout.to_plotly_json()
                     for name in ("workbench", "workbench_presenter")}


PLOTLY_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


SUBPLOT_TITLE_PX = 16         # make_subplots' own size for the subplot titles


def staged(fig: go.Figure, height: int) -> go.Figure:
    """`style_figure`, then what it leaves at normal size: the figure's height and its subplot
    titles grow with presenter mode's scale (fonts 1.5x in a figure of the same height would
    squeeze the plot), and a horizontal legend goes under the x-axis title.

    Placed as a fraction of the plot's height below the plot (`y=-0.3`), a legend lands on the
    axis title as soon as the fonts need more pixels than that fraction holds; measured from
    the bottom of the whole figure (the container), Plotly makes room for both."""
    scale = graph_scale()
    style_figure(fig)
    fig.update_annotations(font_size=round(SUBPLOT_TITLE_PX * scale))
    fig.update_layout(height=round(height * scale),
                      legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom",
                              "x": 0, "xanchor": "left"})
    return fig
