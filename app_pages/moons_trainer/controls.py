"""The moons trainer's settings column (drawn from the table) and the notice of what a setting
change did to the run. The playback buttons are part of the live view (live.py)."""
from __future__ import annotations

import streamlit as st

from app_pages.moons_trainer.state import (
    MoonsTrainerState,
    back_to_previous,
    where,
)
from components.error_panel import error_panel
from components.settings_form import SettingsForm
from workbench.moons.settings import PRESET, MoonsSettings

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
