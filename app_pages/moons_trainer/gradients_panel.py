"""The "Weights & gradients" tab: per Linear layer, the distribution of its weights and of its
gradient magnitudes over the epochs (workbench/moons_trainer/layer_history.py records them while the
run trains), and one sentence, computed from the numbers, on whether the gradient vanishes."""
from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from components.figures import staged
from components.accessible_chart import chart
from components.figures import graph_scale
from workbench.moons_trainer import layer_history as lh
from workbench.moons_trainer.layer_history import LayerHistory, gradient_verdict, verdict_sentence
from workbench.moons_trainer.training import TrainingSession

# Viridis runs from dark to light with rising lightness, so a count reads without hue
# (colour vision) and in greyscale on a projector.
COUNT_SCALE = "Viridis"
WEIGHT_CENTRES = lh.bin_centres(lh.WEIGHT_LOW, lh.WEIGHT_HIGH, lh.WEIGHT_BINS)
GRADIENT_CENTRES = lh.bin_centres(lh.GRADIENT_LOW, lh.GRADIENT_HIGH, lh.GRADIENT_BINS)


def layer_name(history: LayerHistory, layer: int) -> str:
    out_features, in_features = history.layer_shapes[layer]
    name = f"Linear {layer + 1} ({in_features} -> {out_features})"
    if layer == 0:
        return name + ", the first layer"
    return name + (", the output layer" if layer == history.layers - 1 else "")


def power_of_ten(exponent: float) -> str:
    """10 ** exponent as an axis reads it: 1e-6, 3e-5 (not Python's 1e-06)."""
    mantissa, power = f"{10 ** exponent:.0e}".split("e")
    return f"{mantissa}e{int(power)}"


def _occupied(counts: np.ndarray) -> slice:
    """The rows (bins) any kept epoch uses, one bin of margin each side: the picture shows where
    the values are, not the whole fixed range."""
    used = np.flatnonzero(counts.sum(axis=1))
    if used.size == 0:
        return slice(0, counts.shape[0])
    return slice(max(int(used[0]) - 1, 0), min(int(used[-1]) + 2, counts.shape[0]))


def layer_figure(history: LayerHistory, layer: int) -> go.Figure:
    """Weights (left) and log10 |gradient| (right) of one layer: epochs on x, bins on y."""
    epochs = list(history.epochs)
    weights, gradients = history.weight_counts(layer), history.gradient_counts(layer)
    w_rows, g_rows = _occupied(weights), _occupied(gradients)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14,
                        subplot_titles=("weight values", "|gradient| (log scale)"))
    fig.add_trace(go.Heatmap(x=epochs, y=np.round(WEIGHT_CENTRES[w_rows], 3), z=weights[w_rows],
                             coloraxis="coloraxis", name="weights",
                             hovertemplate="epoch %{x}<br>weight near %{y}<br>%{z} weights"
                                           "<extra></extra>"), row=1, col=1)
    exponents = GRADIENT_CENTRES[g_rows]
    fig.add_trace(go.Heatmap(x=epochs, y=np.round(exponents, 3), z=gradients[g_rows],
                             coloraxis="coloraxis", name="|gradient|",
                             customdata=np.repeat([[f"{10 ** e:.1e}"] for e in exponents],
                                                  len(epochs), axis=1),
                             hovertemplate="epoch %{x}<br>|gradient| near %{customdata}<br>"
                                           "%{z} weights<extra></extra>"), row=1, col=2)
    # Ticks at whole decades (1e-6, 1e-5, ...); a range narrower than two decades gets a tick
    # at every other bin instead, so the axis is never unlabelled.
    ticks = np.arange(np.ceil(exponents[0]), np.floor(exponents[-1]) + 1)
    if ticks.size < 2:
        ticks = np.round(exponents[::2], 3)
    fig.update_yaxes(title_text="weight", row=1, col=1)
    fig.update_yaxes(title_text="|gradient|", tickvals=ticks.tolist(),
                     ticktext=[power_of_ten(t) for t in ticks], row=1, col=2)
    fig.update_xaxes(title_text="epoch")
    fig.update_layout(coloraxis={"colorscale": COUNT_SCALE,
                                 "colorbar": {"title": {"text": "weights"}, "thickness": 12}})
    # The layer's name is written above the chart (the page's markdown): a figure title and
    # the subplot titles would share the same top margin.
    return staged(fig, 260).update_layout(margin={"t": 36 * graph_scale()})


def layer_table(history: LayerHistory, layer: int) -> pd.DataFrame:
    """The figure in words, one row per kept epoch: where the weights are, where most gradient
    magnitudes are, and their mean (all from the record)."""
    rows = []
    for k, epoch in enumerate(history.epochs):
        weights, gradients = history.weights[layer][k], history.gradients[layer][k]
        used = np.flatnonzero(weights)
        width = (lh.WEIGHT_HIGH - lh.WEIGHT_LOW) / lh.WEIGHT_BINS
        rows.append({
            "epoch": epoch,
            "weights from": f"{lh.WEIGHT_LOW + width * used[0]:.3g}",
            "weights to": f"{lh.WEIGHT_LOW + width * (used[-1] + 1):.3g}",
            "most weights near": f"{WEIGHT_CENTRES[int(weights.argmax())]:.3g}",
            "most |gradient| near": f"{10 ** GRADIENT_CENTRES[int(gradients.argmax())]:.1e}",
            "mean |gradient|": f"{history.mean_gradient[layer][k]:.2e}",
        })
        if any(history.penalised):
            rows[-1]["mean |data loss's gradient|"] = f"{history.mean_data_gradient[layer][k]:.2e}"
    return pd.DataFrame(rows)


def gradients_panel(session: TrainingSession) -> None:
    st.subheader("Weights and gradients over time", anchor=False)
    with session.lock:             # the scheduler may be training: read one consistent copy
        history = copy.deepcopy(session.layer_history)
        optimizer = session.settings.opt
    st.markdown(
        "One picture per `nn.Linear` layer, first layer on top. Left: how the layer's weights "
        "are spread, epoch by epoch. Right: the size of their gradients, `|weight.grad|`, on a "
        "log scale, taken at the **last batch of each epoch** (what `.grad` holds after the "
        "epoch's last `backward()`). Brighter means more weights in that bin. Bins are fixed, "
        f"and a long run keeps at most {lh.MAX_KEPT} epochs, evenly spaced. The pictures are "
        "drawn when the page runs (opening this tab, Pause, Step), not frame by frame while the "
        "run plays.")
    if any(history.penalised):
        st.markdown(
            "With L1 or L2 on, `.grad` is the gradient of the data loss **plus** the penalty's "
            "(rate × sign(w) for L1, rate × w for L2): each weight's own, never passed back through the "
            "layers, so it would hide a vanishing gradient. The pictures show `.grad` (what the "
            "optimizer steps on); the sentence and the table's last column judge the **data "
            "loss's gradient alone**, from a separate `backward()` on the epoch's last batch.")
    if not history.epochs:
        st.info("Nothing recorded yet: train at least one epoch (Play or Step), then come back.",
                icon=":material/hourglass_empty:")
        return
    verdict = gradient_verdict(history)
    if verdict is None:
        st.caption("A linear model has one layer: there is no first and last layer to compare.")
    else:
        sentence = verdict_sentence(verdict, optimizer)
        if verdict.vanishing:
            st.warning(sentence, icon=":material/trending_down:")
        else:
            st.success(sentence, icon=":material/check_circle:")
    if history.stride > 1:
        st.caption(f"Every {history.stride}th epoch is kept, so the record stays bounded.")
    for layer in range(history.layers):
        st.markdown(f"**{layer_name(history, layer)}**")
        chart(layer_figure(history, layer), key=f"mt_wg_layer{layer}",
              label=(f"{layer_name(history, layer)}: weight values and gradient magnitudes per "
                     f"epoch, epochs {history.epochs[0]} to {history.epochs[-1]}"),
              table=lambda layer=layer: layer_table(history, layer))
