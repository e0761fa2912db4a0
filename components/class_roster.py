"""The teacher's roster: who is in the class, and the teacher's say over it.

Every learner with their name, when they joined, the answers they gave and runs they posted, when
their page was last seen and whether they are present (seen within store.PRESENT_SECONDS) or
away. The teacher removes a learner (their answers and runs leave the board, their seat and name
free, their page says they were removed), renames one (checked as a learner's own name is),
hides names from the projected boards, closes joining, and switches the word filter.

Learners are named by their seat number, the roster's public handle: no token or digest reaches
the browser. The roster sits in an expander that starts closed, because the teacher's board is
usually on the projector and the roster shows names even while they are hidden from the boards.
"""
from __future__ import annotations

import datetime as dt

import pandas as pd
import streamlit as st

from components.class_session import NICKNAME_HELP, class_store, read_class
from components.plain_text import md
from workbench.classroom.store import (PRESENT_SECONDS, ClassError, ClassView, RosterEntry,
                                       StartedClass)

ROSTER_SECONDS = 5.0             # present/away changes over minutes: a refresh every 5 s is plenty
NOTICE_KEY = "class_roster_notice"


def _since(moment: float, now: float) -> str:
    seconds = max(0, int(now - moment))
    if seconds < 60:
        return "just now" if seconds < 10 else f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min ago"


def roster_frame(entries: list[RosterEntry], now: float) -> pd.DataFrame:
    """The roster's table: one row per learner, in seat order (st.dataframe shows text as it is)."""
    return pd.DataFrame([{
        "seat": entry.seat,
        "name": entry.nickname,
        "status": "present" if entry.present else "away",
        "answers": entry.answers,
        "runs": entry.runs,
        "last seen": _since(entry.last_seen_at, now),
        "joined": dt.datetime.fromtimestamp(entry.joined_at).strftime("%H:%M"),
    } for entry in entries], columns=["seat", "name", "status", "answers", "runs", "last seen",
                                      "joined"])


def _say(message: str, ok: bool = True) -> None:
    st.session_state[NOTICE_KEY] = (message, ok)


def _set_option(started: StartedClass, option: str, widget_key: str) -> None:
    value = bool(st.session_state.get(widget_key))
    try:
        class_store().set_class_options(started.code, started.teacher_key, **{option: value})
    except ClassError as exc:
        _say(str(exc), ok=False)


def _seat_label(entries: dict[int, RosterEntry]):
    def label(seat_number: int) -> str:
        entry = entries.get(seat_number)
        if entry is None:
            return f"Seat {seat_number}"
        return f"Seat {seat_number}: {entry.nickname} ({'present' if entry.present else 'away'})"
    return label


def _rename(started: StartedClass) -> None:
    seat_number = st.session_state.get("class_roster_seat")
    typed = st.session_state.get("class_roster_new_name") or ""
    if seat_number is None:
        _say("Pick the learner to rename first.", ok=False)
        return
    try:
        name = class_store().rename_member(started.code, started.teacher_key, int(seat_number), typed)
    except ClassError as exc:
        _say(str(exc), ok=False)
        return
    st.session_state["class_roster_new_name"] = ""
    _say(f"Seat {seat_number} is now called “{name}”.")


def _remove(started: StartedClass) -> None:
    seat_number = st.session_state.get("class_roster_seat")
    if seat_number is None:
        _say("Pick the learner to remove first.", ok=False)
        return
    if not st.session_state.get("class_roster_sure"):
        _say("Tick “Yes, remove this learner” first: removing cannot be undone.", ok=False)
        return
    try:
        name = class_store().remove_member(started.code, started.teacher_key, int(seat_number))
    except ClassError as exc:
        _say(str(exc), ok=False)
        return
    st.session_state["class_roster_sure"] = False
    _say(f"“{name}” was removed from the class: their answers and runs left the board, and "
         "their page says so.")


def _switches(started: StartedClass, view: ClassView) -> None:
    for option, label, value, help_text in (
            ("joining_closed", "Close joining", view.joining_closed,
             "On: the code and the link admit no one new (they are told joining is closed); "
             "learners already in stay. Off: anyone with the code joins again."),
            ("hide_names", "Hide names on the boards", view.hide_names,
             "On: the challenge board and its winner sentence show no learner's name, so the "
             "projector shows none. This roster still shows them to you."),
            ("word_filter", "Word filter on nicknames", view.word_filter,
             "On: nicknames with words from a maintained list of offensive words (and their "
             "usual spellings with digits and symbols) are refused. Names that look like "
             "another learner's or the teacher's are refused either way.")):
        widget_key = f"class_option_{option}"
        st.session_state[widget_key] = value          # the store's value, whoever changed it
        st.toggle(label, key=widget_key, help=help_text, on_change=_set_option,
                  args=(started, option, widget_key))


def roster_panel(started: StartedClass) -> None:
    """The roster in an expander that starts closed: the table refreshes itself every
    ROSTER_SECONDS; the switches and the rename / remove controls do not (a timer's redraw would
    close the learner list while the teacher picks from it), and read the roster again on every
    use, or on *Update the list*."""
    with st.expander("Roster: who is in the class", icon=":material/groups:"):
        st.caption(f"Names show here even when they are hidden from the boards: keep this closed "
                   f"while projecting. A learner is away when their page was not seen for "
                   f"{PRESENT_SECONDS // 60} minutes; away seats do not count toward the class's "
                   "limit.")
        _roster_table(started)
        _roster_controls(started)


@st.fragment(run_every=ROSTER_SECONDS)
def _roster_table(started: StartedClass) -> None:
    entries = read_class(lambda: class_store().roster(started.code, started.teacher_key))
    if entries is None:
        return
    present = sum(entry.present for entry in entries)
    if not entries:
        st.caption("No learner yet: learners show up here as they join.")
        return
    st.markdown(f"**{present}** present, **{len(entries) - present}** away")
    st.dataframe(roster_frame(entries, class_store().clock()), hide_index=True,
                 key="class_roster_table",
                 column_config={"seat": st.column_config.NumberColumn(width="small")})


@st.fragment
def _roster_controls(started: StartedClass) -> None:
    with st.container(key="class_roster_controls"):
        _draw_controls(started)


def _draw_controls(started: StartedClass) -> None:
    read = read_class(lambda: (class_store().find_class(started.code),
                               class_store().roster(started.code, started.teacher_key)))
    if read is None:
        return
    view, entries = read
    notice = st.session_state.pop(NOTICE_KEY, None)
    if notice:
        message, ok = notice
        (st.success if ok else st.error)(md(message), icon=":material/groups:")
    _switches(started, view)
    if view.joining_closed:
        st.info(f"Joining is closed: class {view.code} admits no one new.", icon=":material/lock:")
    if view.hide_names:
        st.info("Names are hidden on the boards.", icon=":material/visibility_off:")
    by_seat = {entry.seat: entry for entry in entries}
    if st.session_state.get("class_roster_seat") not in by_seat:
        st.session_state.pop("class_roster_seat", None)
    # Full width, the button under it: beside it, the board column of a 1280 px projector cut
    # the button's label.
    st.selectbox("Learner", list(by_seat), key="class_roster_seat", index=None,
                 format_func=_seat_label(by_seat), placeholder="Pick a learner",
                 help="The learner to rename or remove, by seat number and name.")
    st.button("Update the list", key="class_roster_update", icon=":material/refresh:",
              help="Read the roster again: learners who joined since show up.")
    st.caption(f"{len(entries)} learner(s) to pick from, as of "
               f"{dt.datetime.fromtimestamp(class_store().clock()).strftime('%H:%M:%S')}.")
    if not entries:
        return
    rename_column, remove_column = st.columns(2)
    with rename_column:
        st.text_input("New nickname", key="class_roster_new_name", help=NICKNAME_HELP)
        st.button("Rename", key="class_roster_rename", icon=":material/edit:",
                  on_click=_rename, args=(started,))
    with remove_column:
        st.checkbox("Yes, remove this learner", key="class_roster_sure",
                    help="Their answers and runs leave the board, their seat frees, and their "
                    "page says they were removed. It cannot be undone.")
        st.button("Remove from the class", key="class_roster_remove",
                  icon=":material/person_remove:", on_click=_remove, args=(started,))
