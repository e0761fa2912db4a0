"""The moons trainer's controls: the settings column (drawn from the table) and the playback
buttons above the live view."""
from __future__ import annotations

import streamlit as st

from app_pages.moons_trainer.live import start_training, stop_training
from app_pages.moons_trainer.state import (
    MoonsTrainerState,
    back_to_previous,
    publish_shared,
    state,
    where,
)
from components.error_panel import error_panel
from components.settings_form import SettingsForm
from workbench.moons.settings import PRESET, MoonsSettings
from workbench.moons.training import TrainingSession

VIEW_TOGGLES = {
    "mt_show_test": ("Show test points",
                     "The test split is for the final report only; look, but do not tune on it."),
    "mt_show_bayes": ("Best possible boundary",
                      "The Bayes-optimal classifier's boundary, from the known generative process: "
                      "where the two classes' densities are equal. No model can do better on "
                      "average."),
}


def settings_panel(form: SettingsForm[MoonsSettings]) -> MoonsSettings:
    """Draw the settings column; return the settings it describes."""
    st.button("Lesson preset", on_click=form.seed, args=(PRESET,), icon=":material/school:",
              key="mt_preset", width="stretch",
              help=f"make_moons({PRESET.n}, noise={PRESET.noise:g}, random_state={PRESET.seed}), "
                   f"{PRESET.split}, {PRESET.architecture} {PRESET.act}, batch {PRESET.batch}, "
                   f"{PRESET.opt}(lr={PRESET.lr:g}, weight_decay={PRESET.wd:g}), "
                   f"{PRESET.epochs} epochs")
    with st.expander("Data", expanded=True, icon=":material/scatter_plot:"):
        form.draw("dataset", "n", "noise", "split", "seed")
    with st.expander("Model", expanded=True, icon=":material/hub:"):
        form.draw("hidden", "act", "dropout")
    with st.expander("Training", expanded=True, icon=":material/tune:"):
        form.draw("opt", "lr", "wd", "batch", "epochs")
    return form.settings()


def _act(running: bool = False, *, step: bool = False, reset: bool = False) -> None:
    """A playback button was pressed: it is the learner's next action, so the notice goes.

    Play and Step start the run's job in the scheduler at once (Step plays to the end of the
    epoch); Pause and Reset stop it before the page runs on, so the model is still while the
    rest of the page reads it."""
    me = state()
    me.notice = ""
    stop_training(me)
    me.reset_requested = reset
    session = me.session
    if session is None or reset:
        return
    if running or step:
        me.running = True
        me.stop_at_epoch = session.epoch + 1 if step else None
        start_training(me, session)
    else:
        publish_shared(session)


def playback(me: MoonsTrainerState, session: TrainingSession) -> None:
    """Play, Pause, Step, Reset and the figure's toggles, in one wrapping row."""
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.button("Play", on_click=_act, args=(True,), icon=":material/play_arrow:", key="mt_play",
                  type="primary", disabled=me.running or session.done)
        st.button("Pause", on_click=_act, icon=":material/pause:", key="mt_pause",
                  disabled=not me.running)
        st.button("Step", on_click=_act, kwargs={"step": True}, icon=":material/skip_next:",
                  key="mt_step", disabled=session.done or me.running,
                  help="Train one epoch, then stop.")
        st.button("Reset", on_click=_act, kwargs={"reset": True}, icon=":material/restart_alt:",
                  key="mt_reset", help="A fresh model with the same seed: the same run again.")
        for key, (label, help_text) in VIEW_TOGGLES.items():
            # Streamlit drops a widget's state on another page; the learner's choice is kept.
            st.session_state.setdefault(key, me.view.get(key, False))
            me.view[key] = st.toggle(label, key=key, help=help_text)


def notice_panel(me: MoonsTrainerState, form: SettingsForm[MoonsSettings]) -> None:
    """What the last setting change did to the run, and a way back when it started a new one."""
    if me.job_error is not None:
        error_panel(me.job_error, key="mt_job_error")
    if not me.notice:
        return
    if me.notice_kind == "info":
        st.info(me.notice, icon=":material/tune:")
        return
    with st.container(border=True, key="mt_new_run_notice"):
        st.markdown(f":material/restart_alt: {me.notice}")
        previous = me.previous
        if previous is not None:
            st.button(f"Back to the run at {where(previous)}", key="mt_back_to_previous",
                      icon=":material/undo:", on_click=back_to_previous, args=(me, form.seed),
                      help="Its settings come back too: " + previous.describe())
