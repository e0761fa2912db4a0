"""The moons trainer's Plotly pictures. The live boundary and curves are drawn in the browser
(live_canvas.py, static/live/); what is drawn once is here."""
from __future__ import annotations

import plotly.graph_objects as go

from components.figures import graph_scale, style_figure
from workbench.common.palette import BLUE, VERMILION


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


def activation_figure(name: str, x: list[float], y: list[float], dy: list[float]) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=y, name=f"{name}(x)", mode="lines", line={"color": BLUE}))
    fig.add_trace(go.Scatter(x=x, y=dy, name="derivative (autograd)", mode="lines",
                             line={"color": VERMILION, "dash": "dash"}))
    fig.update_layout(xaxis_title="x", title={"text": f"{name} and its derivative"})
    return staged(fig, 220)
