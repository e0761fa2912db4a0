"""The moons trainer's Plotly pictures. The live boundary and curves are drawn in the browser
(live_canvas.py, static/moons_live.js); what is drawn once is here."""
from __future__ import annotations

import plotly.graph_objects as go

from components.figures import style_figure
from workbench.common.palette import BLUE, VERMILION


def activation_figure(name: str, x: list[float], y: list[float], dy: list[float]) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=y, name=f"{name}(x)", mode="lines", line={"color": BLUE}))
    fig.add_trace(go.Scatter(x=x, y=dy, name="derivative (autograd)", mode="lines",
                             line={"color": VERMILION, "dash": "dash"}))
    fig.update_layout(height=220, xaxis_title="x", legend={"orientation": "h", "y": -0.35},
                      title={"text": f"{name} and its derivative"})
    return style_figure(fig)
