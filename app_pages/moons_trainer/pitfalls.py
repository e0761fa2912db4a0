"""The pitfall lab: pick a mistake from the lesson's table, run it next to the correct loop."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch
from plotly.subplots import make_subplots

from components.figures import staged
from components.error_panel import error_panel
from components.accessible_chart import chart
from components.figures import graph_scale
from workbench.common.jobs import SCHEDULER
from workbench.common.palette import GREEN, VERMILION
from workbench.moons_trainer.pitfalls import (
    LAB_SETTINGS,
    PITFALLS,
    ZERO_GRAD_OPTIMIZERS,
    PitfallResult,
    run_pitfall,
)

_LABELS = {p.key: p.label for p in PITFALLS}
_OPTIMIZER_WORDS = {
    "SGD": f"SGD (momentum 0.9, lr {ZERO_GRAD_OPTIMIZERS['SGD']:g}): the lesson's exploding loss",
    "AdamW": f"AdamW (lr {ZERO_GRAD_OPTIMIZERS['AdamW']:g}): bounded steps, the loss oscillates",
}


def _figure(result: PitfallResult) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Train loss", "Validation accuracy"),
                        horizontal_spacing=0.12)
    for run, colour, dash in ((result.correct, GREEN, "solid"), (result.broken, VERMILION, "dash")):
        epochs = list(range(1, len(run.train_loss) + 1))
        fig.add_trace(go.Scatter(x=epochs, y=[round(v, 4) for v in run.train_loss], name=run.label,
                                 legendgroup=run.label, line={"color": colour, "dash": dash}), row=1, col=1)
        fig.add_trace(go.Scatter(x=epochs, y=[round(v, 4) for v in run.val_acc], name=run.label,
                                 legendgroup=run.label, showlegend=False,
                                 line={"color": colour, "dash": dash}), row=1, col=2)
    losses = [v for run in (result.correct, result.broken) for v in run.train_loss if v > 0]
    if losses and max(losses) > 100 * min(losses):     # an exploding loss: a log axis shows both
        fig.update_yaxes(type="log", row=1, col=1)
    fig.update_xaxes(title_text="epoch")
    fig.update_yaxes(tickformat=".0%", row=1, col=2)
    return staged(fig, 280).update_layout(margin={"t": 36 * graph_scale()})


@st.cache_resource(max_entries=4 * len(PITFALLS), show_spinner=False)
def _shared_run(key: str, device: str, optimizer: str) -> PitfallResult:
    """Every run is seeded (data, weights, batches, dropout masks), so a pitfall's result on a
    device is the same for every learner: trained once, when the first learner asks (a class
    pressing Run together waits for that one training, Streamlit locks the key), and shared,
    read-only, from then on. Its turn in the scheduler every learner's live training shares:
    waits, never refused."""
    with SCHEDULER.turn():
        return run_pitfall(key, torch.device(device), optimizer=optimizer)


def pitfall_lab(state, device: torch.device) -> None:
    st.markdown(f"The lesson's table lists {len(PITFALLS)} pitfalls; each entry here, numbered as "
                "there, breaks the training loop in that one way. The lab trains the same model "
                "from the same seed twice, correctly and broken "
                f"({LAB_SETTINGS.dataset}, n={LAB_SETTINGS.n}, {LAB_SETTINGS.epochs} epochs, "
                f"batch {LAB_SETTINGS.batch}), and shows both.")
    key = st.radio("Pitfall", list(_LABELS), format_func=_LABELS.get, key="mt_pitfall", horizontal=True)
    pitfall = next(p for p in PITFALLS if p.key == key)
    st.markdown(pitfall.symptom)
    optimizer = "SGD"
    if key == "no_zero_grad":
        optimizer = st.radio("Optimizer for this pitfall", list(_OPTIMIZER_WORDS),
                             format_func=_OPTIMIZER_WORDS.get, key="mt_pitfall_opt")
    slot = f"{key}:{optimizer}" if key == "no_zero_grad" else key
    cols = st.columns(2)
    cols[0].markdown("**Correct**")
    cols[0].code(pitfall.correct_code, language="python")
    cols[1].markdown("**Broken**")
    cols[1].code(pitfall.broken_code, language="python")
    if st.button("Run both side by side", key="mt_pitfall_run", icon=":material/science:", type="primary"):
        with st.spinner("Training twice..."):
            state.pitfalls[slot] = _shared_run(key, str(device), optimizer)
    result: PitfallResult | None = state.pitfalls.get(slot)
    if result is None:
        return
    st.markdown(f"**What happened.** {result.finding}")
    if result.broken.error is not None:
        error_panel(result.broken.error, key="mt_pitfall_error")
    if result.third is not None and result.third.error is not None:
        st.markdown(f"**The same change under `torch.no_grad()`** ({result.third.label}): the "
                    "version counter moved, and `backward()` refuses.")
        error_panel(result.third.error, key="mt_pitfall_third_error")
    if result.correct.train_loss and (result.broken.train_loss or result.broken.error is None):
        chart(_figure(result), key="mt_pitfall_figure",
              label=f"Train loss and validation accuracy per epoch, {result.correct.label} "
                    f"and {result.broken.label}")
    facts = list(result.pitfall.facts)
    if not facts:
        return
    table = pd.DataFrame({"fact": facts,
                          "correct": [result.correct.facts.get(f, "") for f in facts],
                          "broken": [result.broken.facts.get(f, "—") for f in facts]})
    st.dataframe(table, hide_index=True, width="stretch")
