"""The moons trainer's pictures: decision boundary, learning curves, activation plot.

Frames are kept small because the boundary redraws several times a second: Plotly sends numpy
arrays as typed binary arrays, so probabilities and coordinates go as float32 (4 bytes each
instead of 8; whole-percent uint8 would be smaller still, but makes the 50% line jagged), and
one contour trace draws both the shading and the 50% line from the same numbers.
"""
from __future__ import annotations

import functools

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components.figures import graph_scale, style_figure
from workbench.common.palette import (
    BLUE,
    CLASS0_BLUE,
    CLASS1_AMBER,
    GREEN,
    INK_SOFT,
    ORANGE,
    VERMILION,
    WHITE,
)
from workbench.moons.data import plot_extent
from workbench.moons.training import History, TrainingSession

CLASS_COLOURS = (BLUE, ORANGE)          # class 0 blue, class 1 orange
# Probability of class 1: blue (0) through white (0.5) to amber (1), matching the points.
PROBABILITY_SCALE = [[0.0, CLASS0_BLUE], [0.5, WHITE], [1.0, CLASS1_AMBER]]
GRID_RESOLUTION = 48
UIREVISION = "moons-trainer"


def _points(fig: go.Figure, x: np.ndarray, y: np.ndarray, split: str, symbol: str, size: float,
            show_legend: bool = True) -> None:
    for label in (0, 1):
        mask = y == label
        fig.add_trace(go.Scatter(
            x=x[mask, 0].astype(np.float32), y=x[mask, 1].astype(np.float32), mode="markers",
            name=f"{split}, class {label}", legendgroup=split, showlegend=show_legend,
            marker={"color": CLASS_COLOURS[label], "size": size, "symbol": symbol, "opacity": 0.8,
                    "line": {"color": INK_SOFT, "width": 0.5}},
            hovertemplate=f"{split} class {label}<br>x=%{{x:.2f}}<br>y=%{{y:.2f}}<extra></extra>"))


def boundary_figure(session: TrainingSession, *, show_test: bool = False, show_bayes: bool = False,
                    resolution: int = GRID_RESOLUTION) -> go.Figure:
    """P(class 1) over the plane, the 0.5 contour, and the train/val (and test) points."""
    x0, x1, y0, y1 = extent = plot_extent(session.data)
    probability = session.grid(resolution).astype(np.float32)
    fig = go.Figure()
    fig.add_trace(go.Contour(
        z=probability, x=np.linspace(x0, x1, resolution, dtype=np.float32),
        y=np.linspace(y0, y1, resolution, dtype=np.float32),
        zmin=0, zmax=1, colorscale=PROBABILITY_SCALE, opacity=0.85,
        contours={"coloring": "heatmap", "start": 0.5, "end": 0.5, "size": 1, "showlabels": False},
        line={"width": 3, "color": INK_SOFT},
        colorbar={"title": {"text": "P(class 1)", "side": "right"}, "thickness": 14, "len": 0.8,
                  "tickvals": [0, 0.25, 0.5, 0.75, 1], "tickformat": ".0%"},
        hovertemplate="x=%{x:.2f}<br>y=%{y:.2f}<br>P(class 1)=%{z:.1%}<extra></extra>",
        name="P(class 1)"))
    if show_bayes:
        fig.add_trace(go.Contour(
            z=session.bayes_grid(resolution).astype(np.float32),
            x=np.linspace(x0, x1, resolution, dtype=np.float32),
            y=np.linspace(y0, y1, resolution, dtype=np.float32),
            contours={"coloring": "none", "start": 0, "end": 0, "size": 1, "showlabels": False},
            line={"width": 3, "color": GREEN, "dash": "dash"}, showscale=False,
            name="best possible boundary (Bayes)", showlegend=True, hoverinfo="skip"))
    split = session.split
    _points(fig, split.x_train, split.y_train, "train", "circle", 4)
    _points(fig, split.x_val, split.y_val, "val", "diamond", 6)
    if show_test:
        _points(fig, split.x_test, split.y_test, "test", "x", 7)
    fig.update_layout(
        height=520, xaxis={"range": list(extent[:2]), "title": "x₁ (raw)", "constrain": "domain"},
        yaxis={"range": list(extent[2:]), "title": "x₂ (raw)", "scaleanchor": "x", "scaleratio": 1},
        legend={"orientation": "h", "y": -0.14, "x": 0},
        title={"text": f"Epoch {session.epoch}: black line = decision boundary (P = 0.5)"})
    return style_figure(fig, uirevision=UIREVISION)


def cached_curves_figure(history: History, epochs: int, bayes_accuracy: float) -> go.Figure:
    """`curves_figure`, built once per process for a run that has not finished an epoch yet:
    a class opening one link all draw the same empty chart (make_subplots alone costs ~40 ms).
    The shared figure is never changed after it is returned."""
    if history.epoch:
        return curves_figure(history, epochs, bayes_accuracy)
    return _empty_curves_figure(epochs, bayes_accuracy, graph_scale())


@functools.lru_cache(maxsize=64)
def _empty_curves_figure(epochs: int, bayes_accuracy: float, scale: float) -> go.Figure:
    del scale                  # part of the cache key: graph_scale() is read inside
    return curves_figure(History(), epochs, bayes_accuracy)


def curves_figure(history: History, epochs: int, bayes_accuracy: float) -> go.Figure:
    """Train/val loss and accuracy per epoch, with the Bayes-optimal accuracy as a ceiling."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Loss (BCE)", "Accuracy"),
                        horizontal_spacing=0.12)
    blue, orange = BLUE, VERMILION
    for values, name, colour, dash, col in (
            (history.train_loss, "train loss", blue, "solid", 1),
            (history.val_loss, "val loss", orange, "dash", 1),
            (history.train_acc, "train accuracy", blue, "solid", 2),
            (history.val_acc, "val accuracy", orange, "dash", 2)):
        fig.add_trace(go.Scatter(x=history.epoch, y=[round(v, 4) for v in values], name=name,
                                 mode="lines", line={"color": colour, "dash": dash, "width": 2}),
                      row=1, col=col)
    fig.add_trace(go.Scatter(x=[0, epochs], y=[bayes_accuracy, bayes_accuracy], mode="lines",
                             name=f"Bayes-optimal (test) {100 * bayes_accuracy:.1f}%",
                             line={"color": GREEN, "dash": "dot", "width": 2}), row=1, col=2)
    low = min([0.5, *history.train_acc, *history.val_acc])
    fig.update_xaxes(range=[0, max(epochs, 1)], title_text="epoch")
    fig.update_yaxes(range=[low - 0.02, 1.005], row=1, col=2, tickformat=".0%")
    fig.update_yaxes(rangemode="tozero", row=1, col=1)
    fig.update_layout(height=300, legend={"orientation": "h", "y": -0.3, "x": 0})
    style_figure(fig, uirevision=UIREVISION + "-curves")
    return fig.update_layout(margin={"t": 36})          # room for the subplot titles


def activation_figure(name: str, x: list[float], y: list[float], dy: list[float]) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=y, name=f"{name}(x)", mode="lines", line={"color": BLUE}))
    fig.add_trace(go.Scatter(x=x, y=dy, name="derivative (autograd)", mode="lines",
                             line={"color": VERMILION, "dash": "dash"}))
    fig.update_layout(height=220, xaxis_title="x", legend={"orientation": "h", "y": -0.35},
                      title={"text": f"{name} and its derivative"})
    return style_figure(fig)
