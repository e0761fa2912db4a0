"""The class as one experiment, on the teacher's Class page: pick one or two moons trainer
settings and their values, start the sweep (each learner's page opens their own cell), and watch
the heatmap of test accuracy over the grid fill in as runs finish, each cell's validation loss
curve beside it in the same place of a grid of small plots, and the same numbers as a table
(every cell's exact link, an untrained cell said so) for a screen reader.

Built as the challenge board is (challenge_board.py, issue 42): a `run_every` watch compares
the sweep's digest (read once per SHARED_READ_SECONDS for all the class's viewers) with the one
this page drew, and reruns the page only when it moved; the figures and table are built once
per change and class (`drawn_sweep`, a bounded process-wide cache), so 30 viewers do not
rebuild the heatmap every tick.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from components.accessible_chart import chart
from components.class_session import class_store, read_class, send_class
from components.classroom import app_root
from components.figures import graph_scale, presenting, staged
from components.plain_text import md
from workbench.classroom import sweep_store
from workbench.classroom.store import ClassError, StartedClass, StoreUnavailable
from workbench.classroom.sweep import SWEEPABLE, SweepBoard, SweepRefused, make_grid, sweep_digest
from workbench.common.palette import GREY_200, OKABE_ITO
from workbench.moons_trainer.settings import TABLE

WATCH_SECONDS = 1.0              # a finished run reaches the heatmap within about 1-2 s
SHARED_READ_SECONDS = 0.5        # one read of the sweep serves every viewer of its class
MAX_DRAWN = 64
SEEN = "sweep_board_seen"        # session state: the digest this page drew last
JUST_DRAWN = "sweep_board_just_drawn"
NONE = "(none)"
SETTING_LABELS = {name: f"{TABLE[name].label} ({name})" for name in SWEEPABLE}
DEFAULTS = (("lr", "0.003 0.03 0.3"), ("hidden", "4 16 64"))
NOT_TRAINED = "not trained yet"
# Both figures' height (presenter mode draws them 1.5x): the heading, the caption and the
# heatmap fit one 1280x720 projector screen.
HEIGHT = 320
SWEEP_TITLE = "the class sweep: your cell"


# --- what the board shows, built from a SweepBoard ------------------------------------------------
def sweep_frame(board: SweepBoard, root: str = "") -> pd.DataFrame:
    """One row per cell, in cell order: the table a screen reader reads, and the teacher's
    links to each cell's exact run."""
    rows = []
    for result in board.results:
        cell = result.cell
        row = {"cell": f"{cell.number} of {board.grid.size}"}
        row.update({axis.name: value for axis, value in zip(board.grid.axes, cell.values,
                                                            strict=True)})
        final = result.losses[0][-1] if result.losses and result.losses[0] else None
        row.update({
            "test accuracy %": None if result.accuracy is None else round(100 * result.accuracy, 2),
            "state": "trained" if result.trained else NOT_TRAINED,
            "final validation loss": final,
            "learners": result.learners,
            "runs kept": len(result.accuracies),
            "experiment": f"{root}{cell.link}",
        })
        rows.append(row)
    return pd.DataFrame(rows)


def _labels(board: SweepBoard) -> tuple[list[str], list[str]]:
    """The heatmap's row and column labels: the values as the link writes them (the axis
    titles name the settings)."""
    first = [v or "(empty)" for v in board.grid.axes[0].values]
    second = ([v or "(empty)" for v in board.grid.axes[1].values]
              if len(board.grid.axes) > 1 else ["all"])
    return first, second


def _axis_title(board: SweepBoard, number: int) -> str:
    if number >= len(board.grid.axes):
        return ""
    axis = board.grid.axes[number]
    return f"{axis.label} ({axis.name})"


def heatmap(board: SweepBoard) -> go.Figure:
    """Test accuracy (%) over the grid: rows the first setting's values, columns the second's;
    each cell written as its number and accuracy, or "not trained yet"."""
    rows, columns = board.grid.shape
    row_labels, column_labels = _labels(board)
    z: list[list[float | None]] = [[None] * columns for _ in range(rows)]
    text: list[list[str]] = [[""] * columns for _ in range(rows)]
    for result in board.results:
        row, column = divmod(result.cell.index, columns)
        accuracy = result.accuracy
        z[row][column] = None if accuracy is None else round(100 * accuracy, 2)
        text[row][column] = (f"#{result.cell.number}<br>" +
                             ("not<br>trained" if accuracy is None else f"{100 * accuracy:.1f}%"))
    # Positions, not the labels: Plotly reads labels such as "16" or "0.03" as numbers and
    # spaces the cells by their values; the ticks carry the labels.
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(columns)), y=list(range(rows)), customdata=[
            [[row_labels[row], column_labels[column]] for column in range(columns)]
            for row in range(rows)], colorscale="Viridis", zmin=50, zmax=100,
        hoverongaps=False, xgap=3, ygap=3, colorbar={"title": {"text": "%"}, "thickness": 12},
        hovertemplate="%{customdata[0]}, %{customdata[1]}: %{z:.2f}% test accuracy<extra></extra>"))
    for row in range(rows):
        for column in range(columns):
            trained = z[row][column] is not None
            fig.add_annotation(x=column, y=row, text=text[row][column],
                               showarrow=False,
                               font={"color": "white" if trained and z[row][column] < 80
                                     else "black"})
    fig.update_layout(xaxis={"title": _axis_title(board, 1), "tickvals": list(range(columns)),
                             "ticktext": column_labels, "showgrid": False, "zeroline": False},
                      yaxis={"autorange": "reversed", "title": _axis_title(board, 0),
                             "tickvals": list(range(rows)), "ticktext": row_labels,
                             "showgrid": False, "zeroline": False},
                      plot_bgcolor=GREY_200)
    return staged(fig, HEIGHT)


def loss_curves(board: SweepBoard) -> go.Figure:
    """Each cell's validation loss per epoch, in the cell's place of the grid (one small plot
    per cell, the same axes), every run the cell kept drawn."""
    rows, columns = board.grid.shape
    titles = [f"#{r.cell.number}" + ("" if r.trained else ": not trained")
              for r in board.results]
    fig = make_subplots(rows=rows, cols=columns, shared_xaxes=True, shared_yaxes=True,
                        subplot_titles=titles, horizontal_spacing=0.04, vertical_spacing=0.12)
    for result in board.results:
        row, column = divmod(result.cell.index, columns)
        for curve in result.losses:
            fig.add_trace(go.Scatter(
                x=list(range(1, len(curve) + 1)), y=list(curve), mode="lines", showlegend=False,
                line={"color": OKABE_ITO[0]},
                name=f"#{result.cell.number} " + ", ".join(
                    f"{axis.name} {value}" for axis, value in zip(board.grid.axes,
                                                                  result.cell.values, strict=True)),
                hovertemplate="epoch %{x}: %{y:.4f}<extra>%{fullData.name}</extra>"),
                row=row + 1, col=column + 1)
    fig.update_yaxes(rangemode="tozero")
    staged(fig, HEIGHT)
    # Room above the first row for its subplot titles (the template's top margin is 10 px).
    return fig.update_layout(margin_t=round(30 * graph_scale()))


@dataclass(frozen=True)
class DrawnSweep:
    caption: str
    frame: pd.DataFrame
    heatmap: go.Figure
    losses: go.Figure


_DRAWN: OrderedDict[tuple[str, str, str, bool], DrawnSweep] = OrderedDict()
_DRAWN_LOCK = threading.Lock()


def caption(board: SweepBoard) -> str:
    learners = sum(r.learners for r in board.results)
    names = " x ".join(a.label for a in board.grid.axes)
    kept = sum(len(r.accuracies) for r in board.results)
    return (f"Sweep {board.number}: {names}, {board.grid.size} cells; {board.trained} of "
            f"{board.grid.size} trained; {kept} run(s) kept; {learners} learner(s) hold a cell.")


def drawn_sweep(code: str, board: SweepBoard) -> DrawnSweep:
    """The sweep's caption, table and figures, built once per change and class."""
    key = (code, sweep_digest(board), app_root(), presenting())
    with _DRAWN_LOCK:
        found = _DRAWN.get(key)
        if found is not None:
            _DRAWN.move_to_end(key)
            return found
    built = DrawnSweep(caption(board), sweep_frame(board, key[2]), heatmap(board),
                       loss_curves(board))
    with _DRAWN_LOCK:
        _DRAWN[key] = built
        while len(_DRAWN) > MAX_DRAWN:
            _DRAWN.popitem(last=False)
    return built


# --- reading, shared between the class's viewers ----------------------------------------------------
_LATEST: dict[str, tuple[float, str]] = {}
_LATEST_LOCK = threading.Lock()


def _read(code: str, teacher_key: str) -> tuple[SweepBoard | None, str]:
    try:
        board = sweep_store.sweep_board(class_store(), code, teacher_key=teacher_key)
    except StoreUnavailable:
        return None, "away"
    except ClassError:
        return None, "refused"
    return board, sweep_digest(board)


def latest_digest(code: str, teacher_key: str) -> str:
    """The sweep's digest as read at most SHARED_READ_SECONDS ago by any viewer of the class
    (a digest shows nothing; the page's own read checks the key)."""
    now = time.monotonic()
    with _LATEST_LOCK:
        found = _LATEST.get(code)
    if found is not None and now - found[0] < SHARED_READ_SECONDS:
        return found[1]
    board, digest = _read(code, teacher_key)
    if digest not in ("away", "refused"):
        with _LATEST_LOCK:
            _LATEST[code] = (now, digest)
            while len(_LATEST) > MAX_DRAWN:
                _LATEST.pop(next(iter(_LATEST)))
    return digest


def forget(code: str) -> None:
    with _LATEST_LOCK:
        _LATEST.pop(code, None)


# --- the panel -------------------------------------------------------------------------------------
def _start(started: StartedClass) -> None:
    """The form's callback: read the grid through the settings table, start the sweep, and send
    the class to it (each follower opens their own cell)."""
    state = st.session_state
    axes = [(state["sweep_setting_1"], state.get("sweep_values_1", ""))]
    if state.get("sweep_setting_2", NONE) != NONE:
        axes.append((state["sweep_setting_2"], state.get("sweep_values_2", "")))
    try:
        grid = make_grid(state.get("sweep_base", ""), axes)
        number = sweep_store.start_sweep(class_store(), started.code, started.teacher_key, grid)
    except (SweepRefused, ClassError) as exc:
        state["sweep_notice"] = str(exc)
        return
    forget(started.code)
    state["sweep_to_send"] = number            # sent by the panel's run (a toast says so there)


def _end(started: StartedClass) -> None:
    try:
        sweep_store.end_sweep(class_store(), started.code, started.teacher_key)
    except ClassError as exc:
        st.session_state["sweep_notice"] = str(exc)
    forget(started.code)


def _form(started: StartedClass, running: bool) -> None:
    for number, (name, values) in enumerate(DEFAULTS, 1):
        st.session_state.setdefault(f"sweep_setting_{number}", name)
        st.session_state.setdefault(f"sweep_values_{number}", values)
    with st.form("sweep_form", border=False):
        st.text_input("Base experiment (a moons trainer link; empty: the preset)", key="sweep_base",
                      help="Every cell trains these settings, with the swept ones changed. Copy it "
                      "from the trainer's Share this experiment.")
        first, second = st.columns(2)
        first.selectbox("First setting (rows)", list(SWEEPABLE), key="sweep_setting_1",
                        format_func=SETTING_LABELS.get)
        first.text_input("Its values, separated by spaces", key="sweep_values_1")
        second.selectbox("Second setting (columns)", [NONE, *SWEEPABLE], key="sweep_setting_2",
                         format_func=lambda name: SETTING_LABELS.get(name, name))
        second.text_input("Its values, separated by spaces", key="sweep_values_2")
        st.form_submit_button("Start a new sweep" if running else "Start the sweep",
                              icon=":material/grid_view:", on_click=_start, args=(started,),
                              help="Every learner present gets a cell, round-robin by seat; "
                              "their page opens the cell's exact link. A new sweep replaces "
                              "the one before.")


def sweep_panel(started: StartedClass) -> None:
    """The teacher's sweep: the form, and the heatmap once a sweep runs; its watch."""
    _panel(started)
    _watch(started.code, started.teacher_key)


@st.fragment
def _panel(started: StartedClass) -> None:
    st.subheader(":material/grid_view: The class as one experiment", anchor=False)
    st.session_state[JUST_DRAWN] = True
    board, st.session_state[SEEN] = _read(started.code, started.teacher_key)
    if board is None and st.session_state[SEEN] != sweep_digest(None):
        read_class(lambda: sweep_store.sweep_board(class_store(), started.code,
                                                   teacher_key=started.teacher_key))
        return
    with st.expander("Set up a sweep" if board is None else "Set up a new sweep",
                     expanded=board is None, icon=":material/tune:"):
        st.markdown("Pick one or two moons trainer settings and a few values of each: every "
                    "learner trains one cell of the grid, and the heatmap below fills in as "
                    "their runs finish.")
        _form(started, board is not None)
    number = st.session_state.pop("sweep_to_send", None)
    if number is not None:
        send_class(sweep_store.sweep_send_link(number), SWEEP_TITLE)
    notice = st.session_state.pop("sweep_notice", "")
    if notice:
        st.error(md(notice), icon=":material/error:")
    if board is None:
        return
    drawn = drawn_sweep(started.code, board)
    st.markdown(f"**{md(drawn.caption)}**")
    left, right = st.columns(2)
    with left:
        st.markdown("**Test accuracy over the grid**")
        chart(drawn.heatmap, key="sweep_heatmap",
              label="Class sweep: test accuracy over the grid", table=lambda: _table(drawn.frame))
    with right:
        st.markdown("**Validation loss per epoch, each cell in its place**")
        chart(drawn.losses, key="sweep_losses", label="Class sweep: validation loss per cell",
              table=lambda: _table(drawn.frame), table_below=False)
    st.dataframe(drawn.frame, hide_index=True, key="sweep_table", column_config={
        "experiment": st.column_config.LinkColumn("experiment", display_text="Open",
                                                  help="Opens this cell's exact experiment"),
    })
    st.button("End the sweep", key="sweep_end", icon=":material/stop_circle:", on_click=_end,
              args=(started,), help="Deletes the sweep's cells and kept runs; the challenge "
              "board keeps every posted run.")


def _table(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=["experiment"])


@st.fragment(run_every=WATCH_SECONDS)
def _watch(code: str, teacher_key: str) -> None:
    """Every WATCH_SECONDS: the page runs again only when the sweep changed."""
    if st.session_state.pop(JUST_DRAWN, False):
        return
    if latest_digest(code, teacher_key) != st.session_state.get(SEEN):
        st.rerun(scope="app")
