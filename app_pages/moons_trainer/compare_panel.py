"""Two runs side by side: Pin this run, change a setting, train again from the same initial
weights; a comparison link (`vs=`) opens such a pair, and Play trains both.

The pinned run is the learner's TrainingSession itself, kept as it was (nothing trains it again,
unless a comparison link pinned it untrained: then Play trains it beside the learner's run, epoch
by epoch, `workbench.moons_trainer.compare.keep_pace`). What is compared is read from both runs
(`workbench/moons_trainer/compare.py`); the curves overlay the pinned run's (live_canvas.py, curves.js).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch

from components.figures import staged
from app_pages.moons_trainer.live_canvas import RESOLUTION, SentToBrowser
from app_pages.moons_trainer.state import MoonsTrainerState, has_trained, new_session, where
from components.classroom import app_root, lesson_url
from components.code_block import link_block
from components.lesson_link import problem_markdown
from components.plain_text import md
from workbench.common.palette import BLUE, CLASS0_BLUE, CLASS1_AMBER, INK_SOFT, ORANGE, WHITE
from workbench.moons_trainer import compare
from workbench.moons_trainer.codegen import comparison_script
from workbench.moons_trainer.data import plot_extent
from workbench.moons_trainer.settings import TABLE, MoonsSettings
from workbench.moons_trainer.training import TrainingSession

VS = "vs"                       # the link parameter (compare.TABLE)
RERUN = "mt_compare_rerun"      # a pin or unpin from the live view: the whole page follows
CURVE_FIELDS = ("epoch", "train_loss", "val_loss", "train_acc", "val_acc")


# ---------------------------------------------------------------------------------------------
# Pin and unpin.
# ---------------------------------------------------------------------------------------------

REGRESSION_PIN = "Comparisons are for classification runs; this is a regression run. "


def pin_buttons(me: MoonsTrainerState, session: TrainingSession | None,
                stop: Callable[[MoonsTrainerState], None]) -> None:
    """Pin this run (and Unpin), in the playback row; greyed with no run (`session` None)."""
    if st.session_state.pop(RERUN, False):
        st.rerun(scope="app")           # the code panel and the link follow a pin
    replacing = me.pinned is not None
    st.button("Pin this run" if not replacing else "Pin instead", key="mt_pin",
              icon=":material/push_pin:", on_click=pin, args=(me, stop),
              disabled=(session is None or me.running or not has_trained(session)
                        or session.settings.regression),
              help=(REGRESSION_PIN if session is not None and session.settings.regression else "")
              + ("Keep this run as it is and start a fresh run of the same settings from the same "
                    "initial weights: change one setting (the optimizer, say) and press Play to see "
                    "both side by side." + (" The run pinned now is replaced." if replacing else "")))
    if replacing:
        st.button("Unpin", key="mt_unpin", icon=":material/close:", on_click=unpin, args=(me,),
                  help="Leave the comparison: the run on screen stays, and the pinned run is kept "
                       "in memory with a way back to it.")


def pin(me: MoonsTrainerState, stop: Callable[[MoonsTrainerState], None]) -> None:
    stop(me)
    session = me.session
    if session is None or not has_trained(session):
        return
    me.replay = None
    replaced = me.pinned if me.pinned is not None and has_trained(me.pinned) else None
    me.pinned, me.pinned_trains = session, False
    me.compare_problems = []
    me.session = new_session(session.settings, session.device)
    me.sent = SentToBrowser()
    me.reload_check = None
    notice = (f"Pinned the run at {where(session)}. A fresh run of the same settings starts from "
              "the same initial weights and the same data: change a setting (the optimizer, say) "
              "and press Play; the two runs are compared below.")
    if replaced is not None:        # never dropped silently: the notice's button brings it back
        me.previous = replaced
        notice += (f" The run pinned before (at {where(replaced)}) is kept in memory until the "
                   "next new run.")
    # Set, not announced: a toast from a button's callback in the live view's fragment would
    # be drawn at the top of the page (Streamlit warns); the notice above the view says it.
    me.notice, me.notice_kind = notice, ("new" if replaced is not None else "info")
    st.session_state[RERUN] = True


def can_pin_previous(me: MoonsTrainerState) -> bool:
    """Whether the run a new run set aside can be pinned beside it (both classification runs)."""
    previous, session = me.previous, me.session
    return (previous is not None and session is not None and has_trained(previous)
            and not previous.settings.regression and not session.settings.regression)


def pin_previous(me: MoonsTrainerState) -> None:
    """The new-run notice's second way back: the run set aside becomes the pinned run, so the
    fresh run trains beside it (a run pinned before goes back in memory, never dropped)."""
    if not can_pin_previous(me):
        return
    previous = me.previous
    assert previous is not None
    replaced = me.pinned if me.pinned is not None and has_trained(me.pinned) else None
    me.pinned, me.pinned_trains, me.previous = previous, False, replaced
    me.compare_problems = []
    me.replay = None
    me.notice = (f"Pinned the run at {where(previous)} beside the new run: press Play to train "
                 "the new one; the two runs are compared below.")
    if replaced is not None:
        me.notice += (f" The run pinned before (at {where(replaced)}) is kept in memory until "
                      "the next new run.")
    me.notice_kind = "new" if replaced is not None else "info"


def unpin(me: MoonsTrainerState) -> None:
    """Leave the comparison; a trained pinned run stays in memory, with the notice's way back."""
    pinned = me.pinned
    me.pinned, me.pinned_trains = None, False
    me.notice = ""
    if pinned is not None and has_trained(pinned):
        me.previous = pinned
        me.notice = f"Unpinned the run at {where(pinned)}: it is kept in memory until the next new run."
        me.notice_kind = "new"
    st.session_state[RERUN] = True


# ---------------------------------------------------------------------------------------------
# The link: `vs=` opens a comparison; the address bar names the one on screen.
# ---------------------------------------------------------------------------------------------

def open_comparison_link(me: MoonsTrainerState, settings: MoonsSettings, device: torch.device,
                         stop: Callable[[MoonsTrainerState], None]) -> None:
    """A `vs=` the page has not applied yet: pin an untrained run of the link's settings with
    these overridden (Play trains it beside the learner's), and start the learner's run again
    from epoch 0, so both start from the same initial weights. A bad value is named and ignored."""
    raw = st.query_params.get(VS)
    if raw is not None and raw != me.compare_link:
        me.compare_link = raw
        comparison, me.compare_problems = compare.TABLE.read({VS: raw})
        if comparison.vs:
            stop(me)
            me.pinned = TrainingSession(compare.pinned_settings(settings, comparison.vs), device)
            me.pinned_trains = True
            me.fresh_run_for = "a comparison link starts both runs at epoch 0"
    for problem in me.compare_problems:
        st.warning(problem_markdown(problem, default_used=False)
                   + " The page opens without a comparison.", icon=":material/link_off:")


def comparison_params(me: MoonsTrainerState, settings: MoonsSettings) -> dict[str, str]:
    """The `vs=` naming the comparison on screen ({} without one). Settings that do not differ
    still make a comparison: the optimizer is named then, with its own value."""
    if me.pinned is None:
        return {}
    overrides = compare.overrides_between(me.pinned.settings, settings) or (("opt", settings.opt),)
    return compare.TABLE.write(compare.Comparison(overrides))


def publish_comparison(me: MoonsTrainerState, settings: MoonsSettings) -> None:
    """Keep `vs=` in the address bar as the comparison on screen (none: no `vs=`)."""
    wanted = comparison_params(me, settings).get(VS)
    if wanted is None:
        if VS in st.query_params:
            del st.query_params[VS]
        return
    if st.query_params.get(VS) != wanted:
        st.query_params[VS] = wanted
    me.compare_link = wanted


# ---------------------------------------------------------------------------------------------
# What the live view overlays, and the panel below it.
# ---------------------------------------------------------------------------------------------

def pinned_curves(me: MoonsTrainerState, session: TrainingSession) -> dict | None:
    """The pinned run's curves and both runs' names, for the live view (None: not comparing)."""
    pinned = me.pinned
    if pinned is None or compare.not_comparable(pinned.settings, session.settings):
        return None
    label, now_label = compare.labels(pinned.settings, session.settings)
    h = pinned.history
    # Read while the pinned run may train in the scheduler: its lists only grow, an epoch's
    # entries one after the other, so the shortest says how many epochs are complete.
    upto = min(len(getattr(h, name)) for name in CURVE_FIELDS)
    return {"label": label, "now_label": now_label,
            "history": {name: [round(v, 5) if isinstance(v, float) else v
                               for v in getattr(h, name)[:upto]] for name in CURVE_FIELDS}}


def boundary_figure(session: TrainingSession, title: str) -> go.Figure:
    """A run's boundary as it is now: P(class 1) over the plane, its 0.5 contour and the training
    points, in the live view's colours, on the same axes for both runs."""
    with session.lock:
        grid, _ = session.live_probabilities(RESOLUTION, with_test=False)
    x0, x1, y0, y1 = plot_extent(session.data)
    xs, ys = np.linspace(x0, x1, RESOLUTION), np.linspace(y0, y1, RESOLUTION)
    probability = grid.reshape(RESOLUTION, RESOLUTION) / 255
    split = session.split
    fig = go.Figure()
    fig.add_trace(go.Heatmap(x=xs, y=ys, z=probability, zmin=0, zmax=1, showscale=False,
                             colorscale=[[0, CLASS0_BLUE], [0.5, WHITE], [1, CLASS1_AMBER]],
                             hovertemplate="x₁ %{x:.2f}, x₂ %{y:.2f}: P(class 1) %{z:.2f}<extra></extra>"))
    fig.add_trace(go.Contour(x=xs, y=ys, z=probability, contours={"start": 0.5, "end": 0.5, "size": 1,
                                                                   "coloring": "none"},
                             line={"color": INK_SOFT, "width": 2}, showscale=False, hoverinfo="skip",
                             name="boundary (P = 0.5)"))
    for label, colour, symbol in ((0, BLUE, "circle"), (1, ORANGE, "square")):
        chosen = split.y_train == label
        fig.add_trace(go.Scattergl(x=split.x_train[chosen, 0], y=split.x_train[chosen, 1], mode="markers",
                                   marker={"color": colour, "symbol": symbol, "size": 4,
                                           "line": {"color": INK_SOFT, "width": 0.5}},
                                   name=f"class {label}", hoverinfo="skip"))
    fig.update_layout(title={"text": title}, showlegend=False, margin={"l": 40, "r": 10, "t": 40, "b": 30},
                      xaxis={"range": [x0, x1], "title": "x₁"},
                      yaxis={"range": [y0, y1], "title": "x₂", "scaleanchor": "x"})
    return staged(fig, 320)


def _loss(value: float | None) -> str:
    return "—" if value is None else f"{value:.6f}"


def comparison_table(runs: list[compare.RunSummary]) -> pd.DataFrame:
    rows = {}
    for run in runs:
        rows[run.label] = {
            "epochs trained": str(run.epoch),
            "val loss before training": _loss(run.initial_val_loss),
            "val loss now": _loss(run.val_loss),
            "lowest val loss": _loss(run.best_val_loss),
            "test accuracy": f"{100 * run.test_accuracy:.2f}%" if run.trained else "—",
            "best possible (Bayes)": f"{100 * run.bayes_accuracy:.2f}%",
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def comparison_panel(me: MoonsTrainerState, session: TrainingSession, url_path: str) -> None:
    """Below the live view while paused: both boundaries side by side, both runs' numbers next
    to the Bayes ceiling, what differs and what came of it, and the link that opens it again."""
    pinned = me.pinned
    if pinned is None:
        return
    refused = compare.not_comparable(pinned.settings, session.settings)
    if refused:
        with st.container(border=True, key="mt_compare"):
            st.info(refused, icon=":material/info:")
        return
    pinned_label, now_label = compare.labels(pinned.settings, session.settings)
    with pinned.lock:
        first = compare.summarise(pinned, pinned_label)
    with session.lock:
        second = compare.summarise(session, now_label)
    said = compare.comparison_sentences(
        first, second, same_init=compare.same_initial_weights(pinned, session),
        same_points=compare.same_data(pinned, session),
        differ=compare.differences(pinned.settings, session.settings),
        init_reason=compare.why_different_start(pinned, session))
    with st.container(border=True, key="mt_compare"):
        st.subheader("Two runs side by side", anchor=False)
        if me.pinned_trains and not pinned.done:
            st.caption(f"The pinned run is at {where(pinned)} of {pinned.settings.epochs}: Play "
                       "trains it beside this run, epoch by epoch.")
        for sentence in said:
            st.markdown(md(sentence))
        left, right = st.columns(2)
        with left:
            st.plotly_chart(boundary_figure(pinned, f"{pinned_label} · epoch {pinned.epoch}"),
                            key="mt_compare_pinned", config={"displayModeBar": False})
        with right:
            st.plotly_chart(boundary_figure(session, f"{now_label} · epoch {session.epoch}"),
                            key="mt_compare_now", config={"displayModeBar": False})
        st.table(comparison_table([first, second]))
        st.caption("This link opens the comparison: `vs=` names the pinned run's settings that "
                   "differ, the rest are this run's, and Play trains both from the start.")
        params = {**TABLE.write(session.settings), **comparison_params(me, session.settings)}
        link_block(lesson_url(url_path, params, root=app_root()))


# ---------------------------------------------------------------------------------------------
# The code panel: both runs.
# ---------------------------------------------------------------------------------------------

def comparison_code(me: MoonsTrainerState, session: TrainingSession, device: str) -> str | None:
    """The script that trains both runs of the comparison on screen; None without one."""
    pinned = me.pinned
    if pinned is None or compare.not_comparable(pinned.settings, session.settings):
        return None
    pinned_label, now_label = compare.labels(pinned.settings, session.settings)
    return comparison_script([(pinned_label, pinned.settings, pinned.changes),
                              (now_label, session.settings, session.changes)], device)


def comparison_caption(me: MoonsTrainerState) -> str | None:
    """What the comparison's script reproduces; None without a comparison."""
    pinned = me.pinned
    if pinned is None or me.session is None or compare.not_comparable(pinned.settings, me.session.settings):
        return None
    uploaded = [name for name, run in (("the pinned run", pinned), ("this run", me.session))
                if run is not None and run.loaded is not None]
    if uploaded:
        return (f"Both runs, each from its seed's initial weights: {' and '.join(uploaded)} started "
                "from uploaded weights, which no script can retrace.")
    return ("Both runs of the comparison: the same definitions, then `train(...)` called with each "
            "run's settings (and any change made while it trained, at the same step). Run as is, "
            "it prints each run's validation loss before any step, its final validation loss and "
            "its test accuracy, as this page shows them.")
