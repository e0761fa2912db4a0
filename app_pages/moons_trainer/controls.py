"""The moons trainer's controls: the settings column (drawn from the table) and the playback
buttons above the live view."""
from __future__ import annotations

import streamlit as st

from app_pages.moons_trainer.state import MoonsTrainerState, publish_shared, state
from components.settings_form import SettingsForm
from components.state import session_id
from workbench.common.jobs import TRAINING
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
    """A playback button was pressed: it is the learner's next action, so the notice goes."""
    me = state()
    me.notice = ""
    me.running, me.step_requested, me.reset_requested = running, step, reset
    if not running:
        TRAINING.release(session_id())
        if me.session is not None and not (step or reset):
            publish_shared(me.session)


def playback(me: MoonsTrainerState, session: TrainingSession) -> None:
    """Play, Pause, Step, Reset and the figure's toggles, in one wrapping row."""
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.button("Play", on_click=_act, args=(True,), icon=":material/play_arrow:", key="mt_play",
                  type="primary", disabled=me.running or session.done)
        st.button("Pause", on_click=_act, icon=":material/pause:", key="mt_pause",
                  disabled=not me.running)
        st.button("Step", on_click=_act, kwargs={"step": True}, icon=":material/skip_next:",
                  key="mt_step", disabled=session.done, help="Train one epoch, then stop.")
        st.button("Reset", on_click=_act, kwargs={"reset": True}, icon=":material/restart_alt:",
                  key="mt_reset", help="A fresh model with the same seed: the same run again.")
        for key, (label, help_text) in VIEW_TOGGLES.items():
            # Streamlit drops a widget's state on another page; the learner's choice is kept.
            st.session_state.setdefault(key, me.view.get(key, False))
            me.view[key] = st.toggle(label, key=key, help=help_text)
