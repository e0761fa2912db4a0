"""Loss functions on the same logits, BCELoss against BCEWithLogitsLoss at large |z|, and
model(x) against model.forward(x) with a forward hook."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from components.figures import staged
from components.accessible_chart import chart
from components.figures import graph_scale
from workbench.common.palette import BLUE, GREEN, VERMILION
from workbench.moons_trainer.losses import (
    LOSSES,
    confident_losses,
    hook_demo,
    large_logit_rows,
    loss_curves,
    model_losses,
)
from workbench.moons_trainer.training import TrainingSession

_COLOURS = dict(zip(LOSSES, (GREEN, VERMILION, BLUE), strict=True))
# Each loss also has its own dash, so that the three curves differ by more than colour (WCAG 1.4.1).
_DASHES = dict(zip(LOSSES, ("solid", "dash", "dot"), strict=True))


def _curves_figure(target: float) -> go.Figure:
    curves = loss_curves(target)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=(f"loss(z, y={target:g})", "d loss / d z (autograd)"))
    for name in LOSSES:
        line = {"color": _COLOURS[name], "dash": _DASHES[name]}
        fig.add_trace(go.Scatter(x=curves.z, y=curves.values[name], name=name, legendgroup=name,
                                 line=line), row=1, col=1)
        fig.add_trace(go.Scatter(x=curves.z, y=curves.grads[name], name=name, legendgroup=name,
                                 showlegend=False, line=line), row=1, col=2)
    fig.update_xaxes(title_text="logit z")
    return staged(fig, 300).update_layout(margin={"t": 36 * graph_scale()})


def losses_panel(session: TrainingSession) -> None:
    st.markdown("The same logits `z` and the same 0/1 targets go into three losses. "
                "`BCEWithLogitsLoss` reads z as the log-odds of class 1; `MSELoss` and "
                "`HuberLoss` treat z as a number that should equal the target.")
    target = st.radio("Target y", [1.0, 0.0], format_func=lambda v: f"y = {v:g}", horizontal=True,
                      key="mt_loss_target")
    chart(_curves_figure(target), key="mt_loss_curves",
          label=f"{', '.join(LOSSES)} and their gradients against the logit z, for y = {target:g}")
    confident = confident_losses()
    st.markdown(
        f"A confident, correct logit (z = 5 for y = 1) costs "
        f"{confident['BCEWithLogitsLoss']:.4f} with `BCEWithLogitsLoss`, but "
        f"{confident['MSELoss']:g} with `MSELoss` and {confident['HuberLoss (delta=1)']:g} with "
        "`HuberLoss`: the regression losses push correct logits back towards 1, while the "
        "gradient of BCE is `sigmoid(z) - y`, bounded by 1 and vanishing only when the model is "
        "right. Huber grows linearly beyond delta, so its gradient is bounded too, but its "
        "minimum is still at z = y.")
    if session.settings.regression:
        st.caption("This run is regression (targets in [-1, 1], not 0/1 labels): it trains with "
                   "`MSELoss` on the model's output, so the three losses on its test logits are "
                   "shown for classification runs only.")
    else:
        _losses_on_the_test_split(session)
    _large_logits()


def _losses_on_the_test_split(session: TrainingSession) -> None:
    on_test = model_losses(session.model, session.x_test, session.y_test)
    trained = "the trained model" if session.steps else "the untrained model"
    cols = st.columns(len(on_test))
    for col, (name, value) in zip(cols, on_test.items(), strict=True):
        col.metric(name, f"{value:.4f}", help=f"Mean over {len(session.y_test)} test logits of "
                                              f"{trained}.")
    st.caption(f"Each loss on the same {len(session.y_test)} test logits of {trained}: only the "
               "first is a likelihood of the labels.")


def _large_logits() -> None:
    st.markdown("**`BCELoss(sigmoid(z))` against `BCEWithLogitsLoss(z)`**, in float32, next to "
                "the exact loss computed in float64:")
    rows = large_logit_rows()
    st.dataframe(pd.DataFrame([{
        "z": r.z, "y": r.target, "sigmoid(z) (float32)": f"{r.sigmoid:.9g}",
        "BCELoss(sigmoid(z))": f"{r.bce_of_sigmoid:.9g}" + (" (clamped)" if r.clamped else ""),
        "BCEWithLogitsLoss(z)": f"{r.with_logits:.9g}", "exact (float64)": f"{r.exact:.9g}",
        "d/dz via BCELoss": f"{r.grad_bce_of_sigmoid:.4g}",
        "d/dz via BCEWithLogitsLoss": f"{r.grad_with_logits:.4g}",
    } for r in rows]), hide_index=True, width="stretch", key="mt_large_logits")
    saturated = sum(r.saturated for r in rows)
    clamped = sum(r.clamped for r in rows)
    worst = max(rows, key=lambda r: abs(r.bce_of_sigmoid - r.exact))
    st.caption(
        f"In float32 sigmoid(z) becomes exactly 1.0 or 0.0 once |z| is large ({saturated} of "
        f"these {len(rows)} rows). Where the label is the other class ({clamped} of them), "
        "`BCELoss` would then take log(0); PyTorch clamps the log at -100, so it "
        f"returns 100, not inf, whatever the true loss (worst here: {worst.bce_of_sigmoid:g} for a "
        f"true {worst.exact:g} at z = {worst.z:g}), and the gradient through the saturated sigmoid "
        "is 0: the model stops learning from its most wrong predictions. Before that it loses "
        "digits (z = 10). `BCEWithLogitsLoss` works from z with the log-sum-exp trick and keeps "
        "both the value and the gradient.")


def hooks_panel(session: TrainingSession) -> None:
    demo = hook_demo(session.model, session.x_test[:4])
    st.markdown("Two forward hooks, one on the model and one on its first `Linear`, counted "
                "while the model is called both ways on 4 test points (a copy of your model):")
    st.dataframe(pd.DataFrame([{"call": call, **counts} for call, counts in demo.calls.items()]),
                 hide_index=True, width="stretch", key="mt_hook_table")
    st.caption(f"Same output both ways: {demo.same_output}. `model(x)` runs `nn.Module.__call__`, "
               "which runs the hooks around `forward`; `model.forward(x)` skips this module's "
               "hooks, while the layers inside are still called as modules, so their hooks run. "
               "Call the module, not its `forward`.")


def losses_and_hooks(session: TrainingSession) -> None:
    """The "Losses & hooks" tab: the loss functions side by side, and what a forward hook sees."""
    st.subheader("Loss functions: BCE, MSE and Huber on the same logits", anchor=False)
    losses_panel(session)
    st.subheader("`model(x)` or `model.forward(x)`? A forward hook tells", anchor=False)
    hooks_panel(session)
