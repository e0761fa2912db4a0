"""The class's moons challenge board, drawn on the Class page: every posted run as a table row
with a link that opens its exact experiment and the data it trained on, a scatter of learning
rate against test accuracy coloured by optimizer, and the teacher's challenge (the best test
accuracy with at most N parameters on the challenge's data), named in a sentence computed from
the rows. A challenge is one problem: runs on other data are listed in a table of their own,
never ranked against the challenge's.

The teacher's board is read with the teacher key, a learner's with their member token (the store
refuses a code alone). Runs posted on another replica must show up, so each viewer's page asks
the store every BOARD_SECONDS; but with 300 posted runs, rebuilding the table and the chart and
sending them to each of 30 viewers every 3 s cost five times the server CPU of an empty board
(issue 42). So:

- a tiny `run_every` fragment (`_watch`) compares the board's digest (every field of every run,
  and the challenge; read once a second for all the class's viewers) with the one this
  viewer's page drew; only when it moved does it rerun the page (`st.rerun(scope="app")`:
  Streamlit 1.67 lets only a widget callback rerun another fragment by key), so an unchanged
  board is not sent again;
- the board itself is a plain fragment (the teacher's challenge form reruns it alone), and its
  table, chart and sentence are built once per change and class (`drawn_board`: a bounded,
  process-wide cache keyed by the class, the digest, the app's root and presenter mode), then
  shared by every viewer of the class.

If the database is out of reach the board says so and nothing else on the page stops.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, urlsplit

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from components.accessible_chart import chart
from components.class_session import class_store, read_class
from components.figures import presenting, staged
from components.classroom import app_root
from components.plain_text import md
from workbench.classroom.challenge import (best_within, board_digest, challenge_sentence, on_data,
                                           within)
from workbench.classroom.store import (MAX_CHALLENGE_PARAMETERS, ChallengeBoard, ClassError, RunEntry,
                                       StoreUnavailable)
from workbench.common.palette import OKABE_ITO
from workbench.moons_trainer.challenge import data_from_link
from workbench.moons_trainer.settings import OPTIMIZERS, TABLE, MoonsSettings

BOARD_SECONDS = 3.0              # runs take tens of seconds to finish: a few seconds' delay is fine
SUGGESTED_LIMIT = 1_000          # the box's hint: the preset's 2,305 parameters are over it
SHARED_READ_SECONDS = 1.0        # a board read serves every viewer of its class this long
MAX_DRAWN_BOARDS = 64            # boards kept built: a class or two per teacher on one server
LIMIT_SHOWN = "challenge_limit_shown"   # session state: the class's limit the box was set to
SEEN = "challenge_board_seen"    # session state: the digest of the board this page drew last
JUST_DRAWN = "challenge_board_just_drawn"    # the board ran in this run: the watch need not read
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


OTHER_DATA = "other data"       # the challenge column of a run on other data than the challenge's
FRAME_COLUMNS = ["nickname", "test accuracy %", "best possible %", "parameters", "challenge", "data",
                 "optimizer", "learning rate", "hidden layers", "inputs", "experiment"]


def _status(run: RunEntry, board: ChallengeBoard, best: RunEntry | None) -> str:
    if not on_data(run, board.data_settings):
        return OTHER_DATA
    if not within(run, board.max_parameters):
        return "over the limit"
    return "best" if run == best else "competes"


def board_frame(board: ChallengeBoard, root: str | None = None) -> pd.DataFrame:
    """One row per posted run: the runs on the challenge's data first, the best first (the
    table a teacher projects), then the runs on other data, grouped by their data. `root`: the
    app's address before each run's link (default: this page's, `app_root()`)."""
    root = app_root() if root is None else root
    best = best_within(board)
    ranked = sorted(board.runs, key=lambda run: (
        not on_data(run, board.data_settings), run.data_settings, -run.test_accuracy,
        run.parameter_count, run.posted_at))
    return pd.DataFrame([{
        "nickname": run.nickname,
        "test accuracy %": round(100 * run.test_accuracy, 2),
        "best possible %": round(100 * run.bayes_ceiling, 2),
        "parameters": run.parameter_count,
        "challenge": _status(run, board, best),
        "data": run.data_settings,
        "optimizer": run.optimizer,
        "learning rate": run.learning_rate,
        "hidden layers": hidden_layers(run),
        "inputs": input_features(run),
        "experiment": f"{root}{run.link}",
    } for run in ranked], columns=FRAME_COLUMNS)


def split_frame(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The board's rows on the challenge's data, and those on other data (listed apart)."""
    apart = frame["challenge"] == OTHER_DATA
    return frame[~apart].reset_index(drop=True), frame[apart].reset_index(drop=True)


def scatter(board: ChallengeBoard) -> go.Figure:
    """Learning rate (log scale) against test accuracy of the runs on the challenge's data, one
    trace per optimizer; runs over the challenge's limit are hollow, so the colour still says
    the optimizer. Runs on other data are left out: their accuracy answers another question."""
    fig = go.Figure()
    mine = [run for run in board.runs if on_data(run, board.data_settings)]
    for optimizer in sorted({run.optimizer for run in mine}, key=_optimizer_order):
        runs = [run for run in mine if run.optimizer == optimizer]
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
    typed = st.session_state.get("challenge_limit")
    link = (st.session_state.get("challenge_data_link") or "").strip()
    if limited and typed is None and not link:
        st.session_state["challenge_notice"] = (
            f"Type the most parameters a run may have (1 to {MAX_CHALLENGE_PARAMETERS:,}), or "
            "the lesson link of the challenge's data, then set the challenge.")
        return
    limit = int(typed) if limited and typed is not None else None
    data = None                               # an empty box keeps the challenge's data
    if link:
        data, problem = data_from_link(link)
        if data is None:
            st.session_state["challenge_notice"] = (
                f"The challenge was not changed: its data could not be read from that link "
                f"({problem}).")
            return
    try:
        class_store().set_challenge(code, teacher_key, limit, data)
    except ClassError as exc:
        st.session_state["challenge_notice"] = str(exc)
        return
    st.session_state["challenge_data_link"] = ""


def _challenge_form(code: str, teacher_key: str, board: ChallengeBoard) -> None:
    # The box shows the limit in force, and is empty while there is none: a number there would
    # read as a limit. Set whenever the class's limit changed (here, by *No limit*, or on the
    # teacher's other device); a widget's `value=` would be ignored once it has a state.
    if st.session_state.get(LIMIT_SHOWN, "none drawn") != board.max_parameters:
        st.session_state["challenge_limit"] = st.session_state[LIMIT_SHOWN] = board.max_parameters
    with st.form("challenge_form", border=False):
        st.number_input("Challenge: at most this many parameters", min_value=1,
                        max_value=MAX_CHALLENGE_PARAMETERS, step=100, key="challenge_limit",
                        placeholder=f"no limit yet (try {SUGGESTED_LIMIT:,})",
                        help="The best test accuracy among the runs with at most this many "
                        "parameters wins; bigger runs stay on the board, marked over the limit.")
        st.text_input("Challenge data: the lesson link you gave the class", key="challenge_data_link",
                      max_chars=4000, placeholder=f"empty: keep {board.data_settings}",
                      help="Only runs on the same data (dataset, points, noise, seed and split, "
                           "read from this link; a setting it leaves out takes its default) "
                           "compete: a challenge is one problem. Runs on other data are listed "
                           "apart, not ranked against it.")
        left, right = st.columns(2)
        left.form_submit_button("Set the challenge", icon=":material/flag:", on_click=_set_challenge,
                                args=(code, teacher_key, True))
        right.form_submit_button("No limit", disabled=board.max_parameters is None,
                                 on_click=_set_challenge, args=(code, teacher_key, False))


# --- the board, built once per change and class --------------------------------------------------
@dataclass(frozen=True)
class DrawnBoard:
    """What every viewer of one class's board is sent, built once: the sentence, the table and
    the scatter (None without runs). Shared between sessions, so never changed after building."""
    sentence: str
    frame: pd.DataFrame           # the runs on the challenge's data, ranked
    other: pd.DataFrame           # the runs on other data, listed apart
    figure: go.Figure | None      # None: no run on the challenge's data


_DRAWN: OrderedDict[tuple[str, str, str, bool], DrawnBoard] = OrderedDict()
_DRAWN_LOCK = threading.Lock()


def drawn_board(code: str, board: ChallengeBoard) -> DrawnBoard:
    """The board's sentence, table and scatter, from the cache when this class's board was built
    with the same rows and challenge (for the same app root and presenter scale) before. Two
    viewers arriving together may both build it once; the cache keeps the last MAX_DRAWN_BOARDS
    used. Process-wide rather than st.cache_data: no pickling of the frame and figure per hit, and
    a visitor's cache clear cannot make every board be built again."""
    key = (code, board_digest(board), app_root(), presenting())
    with _DRAWN_LOCK:
        found = _DRAWN.get(key)
        if found is not None:
            _DRAWN.move_to_end(key)
            return found
    mine, other = split_frame(board_frame(board, key[2]))
    built = DrawnBoard(md(challenge_sentence(board)), mine, other,
                       scatter(board) if len(mine) else None)
    with _DRAWN_LOCK:
        _DRAWN[key] = built
        while len(_DRAWN) > MAX_DRAWN_BOARDS:
            _DRAWN.popitem(last=False)
    return built


def _read_board(code: str, teacher_key: str, token: str) -> tuple[ChallengeBoard | None, str]:
    """The board and what this viewer's page would show: its digest, or "away" / "refused"."""
    try:
        board = class_store().challenge_board(code, teacher_key=teacher_key, token=token)
    except StoreUnavailable:
        return None, "away"
    except ClassError:
        return None, "refused"
    return board, board_digest(board)


def challenge_board(code: str, *, teacher_key: str = "", token: str = "") -> None:
    """The board for the class's teacher (`teacher_key`: with the challenge's form) or for one
    of its learners (`token`), and the watch that redraws it when it changed."""
    _board(code, teacher_key, token)
    _watch(code, teacher_key, token)


@st.fragment
def _board(code: str, teacher_key: str, token: str) -> None:
    st.subheader(":material/leaderboard: Challenge board", anchor=False)
    st.session_state[JUST_DRAWN] = True
    board, st.session_state[SEEN] = _read_board(code, teacher_key, token)
    if board is None:            # read again, to say why (the watch keeps quiet until it changes)
        read_class(lambda: class_store().challenge_board(code, teacher_key=teacher_key, token=token))
        return
    if board.hide_names:
        board = without_names(board)
        st.caption("Names are hidden on this board: the teacher chose to show no names.")
    if teacher_key:
        _challenge_form(code, teacher_key, board)
        notice = st.session_state.pop("challenge_notice", "")
        if notice:
            st.error(md(notice), icon=":material/error:")
    drawn = drawn_board(code, board)
    st.markdown(f"**{drawn.sentence}**")
    if not board.runs:
        st.caption("Every moons trainer run a learner in the class finishes is posted here with its "
                   "settings, its data, its test accuracy and its parameter count.")
        return
    if drawn.figure is not None:
        st.dataframe(drawn.frame, hide_index=True, key="challenge_table", column_config=_COLUMNS)
        chart(drawn.figure, key="challenge_scatter",
              label="Posted runs on the challenge's data: learning rate (log scale) against test "
                    "accuracy, by optimizer",
              table=lambda: _table_of(drawn.frame))
    if len(drawn.other):
        st.markdown(f"**Runs on other data**, not ranked against the challenge's "
                    f"({md(board.data_settings)}): their accuracy answers another question.")
        st.dataframe(drawn.other, hide_index=True, key="challenge_other_table", column_config=_COLUMNS)


_COLUMNS = {
    "experiment": st.column_config.LinkColumn("experiment", display_text="Open",
                                              help="Opens this run's exact experiment"),
    "learning rate": st.column_config.NumberColumn(format="%g"),
    "parameters": st.column_config.NumberColumn(format="localized"),
    "data": st.column_config.TextColumn("data", help="The data the run trained on: dataset, "
                                        "points, noise, seed and train/validation/test split"),
}


_LATEST: dict[str, tuple[float, str]] = {}   # class code -> (when read, digest)
_LATEST_LOCK = threading.Lock()


def latest_digest(code: str, teacher_key: str, token: str) -> str:
    """The board's digest as read at most SHARED_READ_SECONDS ago by any viewer of the class:
    30 viewers cost about one read of the 300 rows a second, not ten. Shared without checking
    this viewer's key: a digest shows nothing, and only makes the page run again, whose read of
    the board checks the key (a removed learner then reads why). A refused or failed read is
    this viewer's own and is not shared."""
    now = time.monotonic()
    with _LATEST_LOCK:
        found = _LATEST.get(code)
    if found is not None and now - found[0] < SHARED_READ_SECONDS:
        return found[1]
    board, digest = _read_board(code, teacher_key, token)
    if board is not None:
        with _LATEST_LOCK:
            _LATEST[code] = (now, digest)
            while len(_LATEST) > MAX_DRAWN_BOARDS:
                _LATEST.pop(next(iter(_LATEST)))
    return digest


@st.fragment(run_every=BOARD_SECONDS)
def _watch(code: str, teacher_key: str, token: str) -> None:
    """Every BOARD_SECONDS: the board's digest (latest_digest); the page runs again only when
    the board changed (a run posted, a name changed, the challenge set, the database away or
    back), so an unchanged board sends no element to its viewers."""
    if st.session_state.pop(JUST_DRAWN, False):
        return                                   # the page's run drew the board a moment ago
    if latest_digest(code, teacher_key, token) != st.session_state.get(SEEN):
        st.rerun(scope="app")
def scatter_table(board: ChallengeBoard) -> pd.DataFrame:
    """The scatter's numbers for its data table (the runs on the challenge's data), an st.table,
    which renders Markdown: the nicknames are escaped there (st.dataframe above shows text as it
    is)."""
    return _table_of(split_frame(board_frame(board))[0])


def _table_of(frame: pd.DataFrame) -> pd.DataFrame:
    """scatter_table from the board's frame (a shared one: copied, never changed)."""
    frame = frame.drop(columns=["experiment"])
    return frame.assign(nickname=frame["nickname"].map(md))
