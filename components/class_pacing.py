"""The teacher's pacing of the class's knowledge checks: open or close a check, give it a timer,
reset it; and, on the board's cards, each check's state and who has not answered yet.

The controls are a plain fragment, not the board's timed one: a timer's redraw every
BOARD_SECONDS would close the check list while the teacher picks from it. The state they set lives
in the class store (workbench/classroom/pacing.py); learners' pages learn it through their follow
fragment (the class's pacing number) and draw their checks again.
"""
from __future__ import annotations

import time

import streamlit as st

from components.class_session import class_store, read_class
from components.countdown import countdown
from components.plain_text import md
from workbench.classroom.catalog import all_checks
from workbench.classroom.pacing import TIMER_CHOICES, CheckPace, Pacing
from workbench.classroom.store import ClassError, StartedClass

PICKED = "class_pace_check"
NOTICE = "class_pace_notice"


def timer_label(seconds: int) -> str:
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min"


def state_line(pace: CheckPace, now: float, key: str) -> None:
    """The check's state as the board and the controls say it: open, closed, or its timer."""
    left = pace.seconds_left(now)
    if pace.closed:
        st.markdown(":material/lock: **Closed**: answers are not taken.")
    elif left is not None and left > 0:
        countdown(left, key=key, label="Open: answers close in",
                  ended="Time is up: answers are not taken.")
    elif left == 0:
        st.markdown(":material/timer_off: **Time is up**: answers are not taken.")


def waiting_line(names: list[str], hide_names: bool) -> None:
    """Who of the learners present has not answered yet (a count only while names are hidden)."""
    if not names:
        st.caption("Everyone present has answered.")
    elif hide_names:
        st.caption(f"**{len(names)}** present learner(s) have not answered yet.")
    else:
        shown = ", ".join(md(name) for name in names[:30])
        more = f" and {len(names) - 30} more" if len(names) > 30 else ""
        st.caption(f"Not answered yet ({len(names)}): {shown}{more}.")


def pacing_panel(started: StartedClass) -> None:
    """Pick any check of the workbench (before anyone answered it, too) and pace it."""
    with st.expander("Pace a check: open, close, timer, reset", icon=":material/timer:"):
        _controls(started)


@st.fragment
def _controls(started: StartedClass) -> None:
    checks = all_checks()
    notice = st.session_state.pop(NOTICE, None)
    if notice:
        message, ok = notice
        (st.success if ok else st.error)(md(message), icon=":material/timer:")
    picked = st.selectbox("Check", list(checks), index=None, key=PICKED,
                          format_func=lambda key: checks[key].question,
                          placeholder="Pick a knowledge check",
                          help="Any check of the workbench: close it before you send the class "
                          "to it, open it when you are ready, or give it a timer.")
    if picked is None:
        st.caption("A check is open until you close it. A closed check takes no answers, and "
                   "learners' pages say so; a timer closes it by itself. Resetting a check "
                   "deletes the class's answers to it, so the class answers it again.")
        return
    read = read_class(lambda: (class_store().pacing(started.code),
                               class_store().not_answered(started.code, started.teacher_key, [picked]),
                               class_store().find_class(started.code).hide_names))
    if read is None:
        return
    pacing, waiting, hide_names = read
    pace = pacing.of(picked)
    state_line(pace, time.time(), key=f"class_pace_countdown_{picked}")
    if pace.is_open(time.time()) and pace.closes_at is None:
        st.markdown(":material/lock_open: **Open**: answers are taken.")
    waiting_line(waiting.get(picked, []), hide_names)
    code, key = started.code, started.teacher_key
    with st.container(horizontal=True, key="class_pace_actions"):
        if pace.is_open(time.time()):
            st.button("Close answers", key="class_pace_close", icon=":material/lock:",
                      on_click=_pace, args=(code, key, picked, True, None))
        else:
            st.button("Open answers", key="class_pace_open", icon=":material/lock_open:",
                      on_click=_pace, args=(code, key, picked, False, None))
    with st.container(horizontal=True, vertical_alignment="bottom", key="class_pace_timer"):
        seconds = st.selectbox("Timer", TIMER_CHOICES, index=1, key="class_pace_seconds",
                               format_func=timer_label, width=140)
        st.button("Open with this timer", key="class_pace_timed", icon=":material/timer:",
                  on_click=_pace, args=(code, key, picked, False, seconds),
                  help="Open the check now; it closes by itself when the time is up. Learners "
                  "see the time left.")
    st.checkbox("Yes, delete the class's answers to this check", key="class_pace_reset_sure")
    st.button("Reset this check", key="class_pace_reset", icon=":material/restart_alt:",
              on_click=_reset, args=(code, key, picked),
              help="Deletes every answer to it (download the report first to keep them), opens "
              "it, and asks learners to answer again.")


def _pace(code: str, key: str, check_key: str, closed: bool, seconds: int | None) -> None:
    try:
        class_store().pace_check(code, key, check_key, closed=closed, timer_seconds=seconds)
        said = ("Closed: answers are not taken." if closed else
                f"Open for {timer_label(seconds)}." if seconds else "Open: answers are taken.")
        st.session_state[NOTICE] = (said, True)
    except ClassError as exc:
        st.session_state[NOTICE] = (str(exc), False)


def _reset(code: str, key: str, check_key: str) -> None:
    if not st.session_state.get("class_pace_reset_sure"):
        st.session_state[NOTICE] = ("Tick “Yes, delete the class's answers to this check” first: "
                                    "resetting deletes them.", False)
        return
    st.session_state["class_pace_reset_sure"] = False
    try:
        deleted = class_store().reset_check(code, key, check_key)
        st.session_state[NOTICE] = (f"Reset: {deleted} answer(s) deleted; the class answers it "
                                    "again.", True)
    except ClassError as exc:
        st.session_state[NOTICE] = (str(exc), False)


def card_pacing(pacing: Pacing | None, waiting: dict[str, list[str]], hide_names: bool,
                check_key: str) -> None:
    """Under a board card: the check's state and who has not answered yet."""
    if pacing is not None:
        state_line(pacing.of(check_key), time.time(), key=f"class_board_countdown_{check_key}")
    if check_key in waiting:
        waiting_line(waiting[check_key], hide_names)

