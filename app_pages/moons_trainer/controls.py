"""The moons trainer's settings (drawn from the table) and the notice of what a setting
change did to the run. The playback buttons are part of the live view (live.py)."""
from __future__ import annotations

import contextlib

import streamlit as st

from app_pages.moons_trainer.state import (
    MoonsTrainerState,
    back_to_previous,
    where,
)
from components.error_panel import error_panel
from components.settings_form import SettingsForm
from workbench.moons.settings import PRESET, MoonsSettings


def settings_panel(form: SettingsForm[MoonsSettings], *, side_by_side: bool = False) -> MoonsSettings:
    """Draw the settings; return the settings they describe. Stacked in one column, or with
    `side_by_side` (presenter mode, below the live view) the three groups in a row."""
    st.button("Lesson preset", on_click=form.seed, args=(PRESET,), icon=":material/school:",
              key="mt_preset", width="content" if side_by_side else "stretch",
              help=f"make_moons({PRESET.n}, noise={PRESET.noise:g}, random_state={PRESET.seed}), "
                   f"{PRESET.split}, {PRESET.architecture} {PRESET.act}, batch {PRESET.batch}, "
                   f"{PRESET.opt}(lr={PRESET.lr:g}, weight_decay={PRESET.wd:g}), "
                   f"{PRESET.epochs} epochs")
    groups = (("Data", ":material/scatter_plot:", ("dataset", "n", "noise", "split", "seed")),
              ("Model", ":material/hub:", ("hidden", "act", "dropout")),
              ("Training", ":material/tune:", ("opt", "lr", "wd", "batch", "epochs")))
    places = st.columns(len(groups), gap="medium") if side_by_side else \
        [contextlib.nullcontext() for _ in groups]
    for place, (label, icon, names) in zip(places, groups, strict=True):
        with place, st.expander(label, expanded=True, icon=icon):
            form.draw(*names)
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
