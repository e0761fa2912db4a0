"""The moons trainer's Plotly pictures. The live boundary and curves are drawn in the browser
(live_canvas.py, static/live/); what is drawn once is here."""
from __future__ import annotations

import plotly.graph_objects as go

from components.figures import staged
from workbench.common.palette import BLUE, VERMILION


def activation_figure(name: str, x: list[float], y: list[float], dy: list[float]) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=y, name=f"{name}(x)", mode="lines", line={"color": BLUE}))
    fig.add_trace(go.Scatter(x=x, y=dy, name="derivative (autograd)", mode="lines",
                             line={"color": VERMILION, "dash": "dash"}))
    fig.update_layout(xaxis_title="x", title={"text": f"{name} and its derivative"})
    return staged(fig, 220)
