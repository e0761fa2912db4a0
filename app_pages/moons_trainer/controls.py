"""The moons trainer's settings (drawn from the table) and the notice of what a setting
change did to the run. The playback buttons are part of the live view (live.py)."""
from __future__ import annotations

import contextlib
import dataclasses

import streamlit as st

from app_pages.moons_trainer.compare_panel import can_pin_previous, pin_previous
from app_pages.moons_trainer.live import stop_training
from app_pages.moons_trainer.state import (
    MoonsTrainerState,
    back_to_previous,
    where,
)
from components.classroom import visible
from components.error_panel import error_panel
from components.settings_form import SettingsForm
from workbench.moons_trainer.data import as_drawing
from workbench.moons_trainer.settings import MAX_DRAWN, PRESET, REGRESSION, MoonsSettings


def settings_panel(form: SettingsForm[MoonsSettings], me: MoonsTrainerState, *,
                   side_by_side: bool = False) -> MoonsSettings:
    """Draw the settings; return the settings they describe. Stacked in one column, or with
    `side_by_side` (presenter mode, below the live view) the three groups in a row."""
    st.button("Lesson preset", on_click=start_lesson_preset, args=(me, form), icon=":material/school:",
              key="mt_preset", width="content" if side_by_side else "stretch",
              help=f"A fresh run of the lesson's assignment from epoch 0 (a trained run is kept, "
                   f"with a way back): make_moons({PRESET.n}, noise={PRESET.noise:g}, "
                   f"random_state={PRESET.seed}), {PRESET.split}, {PRESET.architecture} {PRESET.act}, "
                   f"batch {PRESET.batch}, {PRESET.opt}(lr={PRESET.lr:g}, weight_decay={PRESET.wd:g}), "
                   f"{PRESET.epochs} epochs")
    groups = (("Data", ":material/scatter_plot:", ("dataset", "n", "noise", "split", "seed")),
              ("Model", ":material/hub:", ("features", "hidden", "act", "dropout", "net", "discrete")),
              ("Training", ":material/tune:", ("opt", "lr", "wd", "reg", "reg_rate", "batch", "epochs",
                                                 "speed")))
    places = st.columns(len(groups), gap="medium") if side_by_side else \
        [contextlib.nullcontext() for _ in groups]
    drawn: dict[str, object] = {}
    for place, (label, icon, names) in zip(places, groups, strict=True):
        with place, st.expander(label, expanded=True, icon=icon):
            for name in names:
                if name == "epochs":
                    form.value(name, on_change=refuse_epochs_below_the_run, args=(me, form))
                elif name == "reg_rate":        # a rate without a penalty does nothing
                    form.value(name, disabled=drawn.get("reg") == "none")
                elif name in ("n", "noise"):    # drawn points: as many as drawn, no noise added
                    form.value(name, disabled=drawn.get("dataset") == "drawn")
                elif name == "dataset":
                    drawn[name] = form.value(name)
                    if drawn[name] not in ("drawn", *REGRESSION) and visible("dataset") \
                            and visible("points"):
                        st.button("Draw on these points", key="mt_draw_these", icon=":material/draw:",
                                  on_click=draw_on_these, args=(me, form),
                                  width="content" if side_by_side else "stretch",
                                  help=f"Your own points, starting from up to {MAX_DRAWN} of this "
                                       "dataset's points (rounded onto the drawing's grid): add, "
                                       "remove, and train on them.")
                else:
                    drawn[name] = form.value(name)
    return form.settings()


def start_lesson_preset(me: MoonsTrainerState, form: SettingsForm[MoonsSettings]) -> None:
    """The preset button: the assignment's settings, and a new run from fresh weights at epoch 0
    even where only settings a run carries on with differ (a finished 80-epoch run would
    otherwise read "Epoch 80 / 50"). The run it replaces is kept, with a way back."""
    stop_training(me)
    # The learner's drawing is theirs, not the lesson's: it stays (unused by the preset's moons),
    # so picking Your own points again brings it back.
    form.seed(dataclasses.replace(PRESET, points=form.held("points")))
    me.fresh_run_for = "the lesson preset starts at epoch 0"


def draw_on_these(me: MoonsTrainerState, form: SettingsForm[MoonsSettings]) -> None:
    """The button under Dataset: the run's generated points become a drawing to edit, as in a
    TensorFlow Playground where the data could be changed by hand."""
    session = me.session
    if session is None or session.settings.drawn or session.settings.regression:
        return
    stop_training(me)
    form.change({"dataset": "drawn", "points": as_drawing(session.data)})


def refuse_epochs_below_the_run(me: MoonsTrainerState, form: SettingsForm[MoonsSettings]) -> None:
    """Epochs lowered below the epochs the run has trained: the widget goes back, and the
    notice says why and how to train a shorter run."""
    session, key = me.session, form.key("epochs")
    wanted = st.session_state.get(key)
    if me.notice_kind == "refused":
        me.notice = ""                  # an earlier refusal: this change is the next one
    if session is None or not isinstance(wanted, int) or wanted >= session.epoch:
        return
    st.session_state[key] = session.settings.epochs
    me.notice = epochs_refusal(wanted, session.epoch, session.settings.epochs)
    me.notice_kind = "refused"


def epochs_refusal(wanted: int, trained: int, kept: int) -> str:
    return (f"Epochs cannot go below the {trained} epochs this run has trained: {wanted} was "
            f"refused and Epochs stays at {kept}. For a shorter run, press Reset (a fresh model "
            "at epoch 0), then lower Epochs.")


def notice_panel(me: MoonsTrainerState, form: SettingsForm[MoonsSettings]) -> None:
    """What the last setting change did to the run, and a way back when it started a new one."""
    if me.job_error is not None:
        error_panel(me.job_error, key="mt_job_error")
    if not me.notice:
        return
    if me.notice_kind == "info":
        st.info(me.notice, icon=":material/tune:")
        return
    if me.notice_kind == "refused":
        st.warning(me.notice, icon=":material/block:")
        return
    with st.container(border=True, key="mt_new_run_notice"):
        st.markdown(f":material/restart_alt: {me.notice}")
        previous = me.previous
        if previous is not None:
            with st.container(horizontal=True, vertical_alignment="center"):
                st.button(f"Back to the run at {where(previous)}", key="mt_back_to_previous",
                          icon=":material/undo:", on_click=back_to_previous, args=(me, form.seed),
                          help="Its settings come back too: " + previous.describe())
                if can_pin_previous(me):
                    st.button("Pin it beside this run", key="mt_pin_previous",
                              icon=":material/push_pin:", on_click=pin_previous, args=(me,),
                              help="Keep it on screen as the pinned run and train the new run "
                                   "beside it: the two are compared below the view.")
