"""The class's moons challenge board, drawn on the Class page: every posted run as a table row
with a link that opens its exact experiment, a scatter of learning rate against test accuracy
coloured by optimizer, and the teacher's challenge (the best test accuracy with at most N
parameters), named in a sentence computed from the rows.

The teacher's board is read with the teacher key, a learner's with their member token (the store
refuses a code alone). It runs again every BOARD_SECONDS by itself, so runs posted on another
replica show up; if the database is out of reach it says so and nothing else on the page stops.
"""
from __future__ import annotations

from dataclasses import replace
from urllib.parse import parse_qsl, urlsplit

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from components.accessible_chart import chart
from components.class_session import class_store, read_class
from components.figures import staged
from components.classroom import app_root
from components.plain_text import md
from workbench.classroom.challenge import best_within, challenge_sentence, within
from workbench.classroom.store import (MAX_CHALLENGE_PARAMETERS, ChallengeBoard, ClassError, RunEntry)
from workbench.common.palette import OKABE_ITO
from workbench.moons_trainer.settings import OPTIMIZERS, TABLE, MoonsSettings

BOARD_SECONDS = 3.0              # runs take tens of seconds to finish: a few seconds' delay is fine
DEFAULT_LIMIT = 1_000            # the first limit offered: the preset's 2,305 parameters are over it
# One colour per optimizer, in the settings table's order, so a colour means the same everywhere.
OPTIMIZER_COLOURS = dict(zip(OPTIMIZERS, OKABE_ITO, strict=False))


HIDDEN_NAME = "a learner"        # what the board says instead of a name the teacher hid


def without_names(board: ChallengeBoard) -> ChallengeBoard:
    """The board with every nickname replaced, for a teacher who hides names from the projector
    (the table, the scatter's hover and the winner sentence all read run.nickname)."""
    return replace(board, runs=[replace(run, nickname=HIDDEN_NAME) for run in board.runs])


def _settings(run: RunEntry) -> MoonsSettings:
    """The run's settings as its link sets them (read through the settings table)."""
    return TABLE.read(dict(parse_qsl(urlsplit(run.link).query, keep_blank_values=True)))[0]


def hidden_layers(run: RunEntry) -> str:
    return ", ".join(map(str, _settings(run).hidden)) or "none (linear)"


def input_features(run: RunEntry) -> str:
    return ", ".join(_settings(run).feature_labels)


def board_frame(board: ChallengeBoard) -> pd.DataFrame:
    """One row per posted run, the best first (the table a teacher projects)."""
    best = best_within(board.runs, board.max_parameters)
    ranked = sorted(board.runs, key=lambda run: (-run.test_accuracy, run.parameter_count, run.posted_at))
    return pd.DataFrame([{
        "nickname": run.nickname,
        "test accuracy %": round(100 * run.test_accuracy, 2),
        "best possible %": round(100 * run.bayes_ceiling, 2),
        "parameters": run.parameter_count,
        "challenge": ("best" if run == best else "competes") if within(run, board.max_parameters)
        else "over the limit",
        "optimizer": run.optimizer,
        "learning rate": run.learning_rate,
        "hidden layers": hidden_layers(run),
        "inputs": input_features(run),
        "experiment": f"{app_root()}{run.link}",
    } for run in ranked])


def scatter(board: ChallengeBoard) -> go.Figure:
    """Learning rate (log scale) against test accuracy, one trace per optimizer; runs over the
    challenge's limit are hollow, so the colour still says the optimizer."""
    fig = go.Figure()
    for optimizer in sorted({run.optimizer for run in board.runs}, key=_optimizer_order):
        runs = [run for run in board.runs if run.optimizer == optimizer]
        fig.add_trace(go.Scatter(
            x=[run.learning_rate for run in runs], y=[100 * run.test_accuracy for run in runs],
            mode="markers", name=optimizer,
            marker={"color": OPTIMIZER_COLOURS.get(optimizer, OKABE_ITO[-1]), "size": 11,
                    "symbol": ["circle" if within(run, board.max_parameters) else "circle-open"
                               for run in runs]},
            customdata=[[run.nickname, run.parameter_count] for run in runs],
            hovertemplate="%{customdata[0]}<br>lr %{x:g}, %{y:.2f}%<br>%{customdata[1]:,} "
                          "parameters<extra></extra>"))
    fig.update_layout(xaxis={"type": "log", "title": "learning rate (log scale)"},
                      yaxis={"title": "test accuracy (%)"}, legend_title_text="optimizer")
    return staged(fig, 380)


def _optimizer_order(name: str) -> int:
    return OPTIMIZERS.index(name) if name in OPTIMIZERS else len(OPTIMIZERS)


def _set_challenge(code: str, teacher_key: str, limited: bool) -> None:
    """The form's callback: it runs before the board is read again, so the board shows the
    challenge just set."""
    limit = int(st.session_state["challenge_limit"]) if limited else None
    try:
        class_store().set_challenge(code, teacher_key, limit)
    except ClassError as exc:
        st.session_state["challenge_notice"] = str(exc)


def _challenge_form(code: str, teacher_key: str, board: ChallengeBoard) -> None:
    with st.form("challenge_form", border=False):
        st.number_input("Challenge: at most this many parameters", min_value=1,
                        max_value=MAX_CHALLENGE_PARAMETERS, step=100,
                        value=board.max_parameters or DEFAULT_LIMIT, key="challenge_limit",
                        help="The best test accuracy among the runs with at most this many "
                        "parameters wins; bigger runs stay on the board, marked over the limit.")
        left, right = st.columns(2)
        left.form_submit_button("Set the challenge", icon=":material/flag:", on_click=_set_challenge,
                                args=(code, teacher_key, True))
        right.form_submit_button("No limit", disabled=board.max_parameters is None,
                                 on_click=_set_challenge, args=(code, teacher_key, False))


@st.fragment(run_every=BOARD_SECONDS)
def challenge_board(code: str, *, teacher_key: str = "", token: str = "") -> None:
    """The board for the class's teacher (`teacher_key`: with the challenge's form) or for one
    of its learners (`token`)."""
    st.subheader(":material/leaderboard: Challenge board", anchor=False)
    board = read_class(lambda: class_store().challenge_board(code, teacher_key=teacher_key,
                                                           token=token))
    if board is None:
        return
    if board.hide_names:
        board = without_names(board)
        st.caption("Names are hidden on this board: the teacher chose to show no names.")
    if teacher_key:
        _challenge_form(code, teacher_key, board)
        notice = st.session_state.pop("challenge_notice", "")
        if notice:
            st.error(md(notice), icon=":material/error:")
    st.markdown(f"**{md(challenge_sentence(board.runs, board.max_parameters))}**")
    if not board.runs:
        st.caption("Every moons trainer run a learner in the class finishes is posted here with its "
                   "settings, its test accuracy and its parameter count.")
        return
    st.dataframe(board_frame(board), hide_index=True, key="challenge_table", column_config={
        "experiment": st.column_config.LinkColumn("experiment", display_text="Open",
                                                  help="Opens this run's exact experiment"),
        "learning rate": st.column_config.NumberColumn(format="%g"),
        "parameters": st.column_config.NumberColumn(format="localized"),
    })
    chart(scatter(board), key="challenge_scatter",
          label="Posted runs: learning rate (log scale) against test accuracy, by optimizer",
          table=lambda: scatter_table(board))


def scatter_table(board: ChallengeBoard) -> pd.DataFrame:
    """The scatter's numbers for its data table, an st.table, which renders Markdown: the
    nicknames are escaped there (st.dataframe above shows text as it is)."""
    frame = board_frame(board).drop(columns=["experiment"])
    return frame.assign(nickname=frame["nickname"].map(md))
