"""The learner's cell of the class sweep, on the moons trainer (workbench/classroom/sweep.py).

While the teacher runs a sweep, the page says which cell is this learner's ("Your cell: lr 0.1
x hidden 16 (3 of 9)") and whether the settings on screen are the cell's; a finished run is
offered to the cell, which keeps it only when it trained exactly the cell's settings. Whatever
the store answers, the run itself is untouched.
"""
from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import streamlit as st

from components.class_session import class_store, seat
from components.plain_text import md
from workbench.classroom import sweep_store
from workbench.classroom.store import ClassError, RunEntry, StoreUnavailable
from workbench.classroom.sweep import same_run
from workbench.moons_trainer.settings import MoonsSettings
from workbench.moons_trainer.training import TrainingSession
from workbench.tools import MOONS_TRAINER

CELL_NOTICE_KEY = "mt_sweep_cell"
OPEN_CELL_KEY = "mt_sweep_open_cell"


def cell_notice(settings: MoonsSettings) -> None:
    """"Your cell: …" for a learner in a class running a sweep; nothing otherwise (a database
    out of reach says nothing here: the sidebar's class panel says it)."""
    membership = seat().membership
    if membership is None:
        return
    try:
        mine = sweep_store.my_cell(class_store(), membership.code, membership.token)
    except ClassError:
        return
    if mine is None:
        return
    with st.container(key=CELL_NOTICE_KEY):
        if same_run(settings, mine.cell.settings):
            st.info(f"**{md(f'Your cell: {mine.words}.')}** Press Play: your run fills this cell of "
                    "the class's heatmap.", icon=":material/grid_view:")
            return
        st.warning(f"**{md(f'Your cell: {mine.words}.')}** The settings on screen are not your "
                   "cell's: a run of them is your own (the challenge board still shows it), "
                   "not the cell's.", icon=":material/grid_view:")
        if st.button("Open your cell's settings", key=OPEN_CELL_KEY, icon=":material/grid_view:"):
            query = dict(parse_qsl(urlsplit(mine.cell.link).query, keep_blank_values=True))
            st.switch_page(MOONS_TRAINER.script, query_params=query)


def offer_to_cell(session: TrainingSession, entry: RunEntry) -> str:
    """Offer a finished, posted run to the learner's cell; the sentence the trainer adds to its
    post note ("" when the class runs no sweep)."""
    membership = seat().membership
    if membership is None:
        return ""
    try:
        kept, mine = sweep_store.keep_run(class_store(), membership.code, membership.token,
                                          entry.link, entry.test_accuracy,
                                          list(session.history.val_loss))
    except StoreUnavailable:
        return "Your sweep cell could not be told: the class database cannot be reached."
    except ClassError as exc:
        return f"Not kept for your sweep cell: {exc}"
    if mine is None:
        return ""
    return {
        "kept": f"Kept for your sweep cell, {mine.words}: it is on the teacher's heatmap.",
        "kept before": f"Your sweep cell, {mine.words}, has your run already.",
        "other settings": f"Not kept for your sweep cell, {mine.words}: these settings are not "
                          "the cell's, so this run is your own.",
    }.get(kept, "")
