"""One look for every Plotly figure and graphviz graph, in normal and presenter mode.

Pages pass each figure through `style_figure` before `st.plotly_chart`, and read `graph_scale()`
when they build DOT text, so presenter mode (bigger text, thicker lines, bigger markers, a
colour-blind-safe palette) reaches every picture without page-specific code.
"""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

# Okabe & Ito's palette: distinguishable with every common colour-vision deficiency.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
PRESENTER_KEY = "presenter_mode"


def presenting() -> bool:
    return bool(st.session_state.get(PRESENTER_KEY, False))


def graph_scale() -> float:
    """How much bigger text and lines are drawn in graphs: 1.0, or 1.5 when presenting."""
    return 1.5 if presenting() else 1.0


def style_figure(fig: go.Figure, *, uirevision: str | None = None) -> go.Figure:
    """Fonts, palette and line/marker sizes for the current mode; `uirevision` keeps zoom."""
    scale = graph_scale()
    fig.update_layout(
        font={"size": round(14 * scale)},
        colorway=list(OKABE_ITO),
        margin={"l": 10, "r": 10, "t": 40 if fig.layout.title.text else 10, "b": 10},
        legend={"font": {"size": round(13 * scale)}},
    )
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


PLOTLY_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


def prose(markdown: str, *, label: str = "About this page") -> None:
    """Explanatory text: shown as is, or folded into an expander in presenter mode so that the
    projected screen is given to the pictures and the teacher does the explaining."""
    if presenting():
        with st.expander(label, icon=":material/info:"):
            st.markdown(markdown)
    else:
        st.markdown(markdown)
