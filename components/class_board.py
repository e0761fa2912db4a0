"""The teacher's side of a class: the join panel (code, QR, link), the live board of answers,
and the teacher's own link. The page (app_pages/classroom/page.py) puts them on screen.

The board is a fragment that runs again every BOARD_SECONDS by itself: each run reads the counts
from the class store (one grouped query), so answers given on another replica show up too.

Which checks stay on the board is the teacher's choice: the checks they pinned first, then the
checks most of the class answered (by count, never by recency: one learner committing seven
checks in a row cannot push the class's question off), BOARD_CHECKS in all; every other check
the class answered is one pick away in "Show another check", with its count.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from components.class_session import (CLASS_PARAM, TEACHER_PARAM, class_store, read_class, seat,
                                      stop_teaching)
from components.classroom import app_root
from components.code_block import link_block
from components.figures import presenting
from components.plain_text import md
from workbench.classroom.catalog import all_checks
from workbench.classroom.qr import qr_svg
from workbench.classroom.store import CheckTally, ClassError, StartedClass

# Counts within 2 s of a learner's click: every second missed it for a class of 30 on SQLite
# (bench/class.py, p95 2.2 s); a run costs one query.
BOARD_SECONDS = 0.5
BOARD_CHECKS = 6                 # the checks the board shows: pinned, then the most answered
OTHER_CHECK_KEY = "class_board_other"


def join_link(code: str) -> str:
    return f"{app_root()}/?{CLASS_PARAM}={code}"


def teacher_link(started: StartedClass) -> str:
    return f"{app_root()}/class?{CLASS_PARAM}={started.code}&{TEACHER_PARAM}={started.teacher_key}"


def join_panel(code: str) -> None:
    """The code in large type, the QR code of the join link, and the link as text."""
    link = join_link(code)
    st.html(f'<p class="class-code-label">Join class</p>'
            f'<p class="class-code" aria-label="class code {" ".join(code)}">{code}</p>')
    st.image(qr_svg(link), width=260 if presenting() else 220,
             alt=f"QR code of the join link for class {code}")
    st.caption("Or open this link, or type the code on the Class page:")
    link_block(link)


def teacher_link_panel(started: StartedClass) -> None:
    """The private teacher link, shown until the teacher says it is kept: it reopens this board
    on another device, and anyone holding it can steer the class."""
    mine = seat()
    if mine.teacher_link_dismissed:
        return
    with st.container(border=True, key="class_teacher_link"):
        st.markdown("**:material/key: Your private teacher link.** It opens this board on another "
                    "device. Keep it to yourself: it is shown only now.")
        link_block(teacher_link(started))
        if st.button("I have kept it: hide the link", key="class_hide_teacher_link"):
            mine.teacher_link_dismissed = True
            st.rerun()


def _set_revealed(code: str, key: str, check_key: str, revealed: bool) -> None:
    try:
        class_store().set_revealed(code, key, check_key, revealed)
    except ClassError as exc:
        seat().notice = str(exc)


def _pytorch_answer(check_key: str) -> str:
    """The option PyTorch computes, once per session and check (the board runs every BOARD_SECONDS)."""
    answers = st.session_state.setdefault("class_board_answers", {})
    if check_key not in answers:
        answers[check_key] = all_checks()[check_key].answer().correct_option
    return answers[check_key]


def _set_pinned(code: str, key: str, check_key: str, pinned: bool) -> None:
    try:
        class_store().set_pinned(code, key, check_key, pinned)
    except ClassError as exc:
        seat().notice = str(exc)


def _tally_card(started: StartedClass, tally: CheckTally) -> None:
    check = all_checks()[tally.check_key]
    with st.container(border=True, key=f"class_board_{check.key}"):
        question, pin = st.columns([5, 1], vertical_alignment="top")
        question.markdown(f"**{check.question}**")
        if tally.pinned:
            pin.button("Unpin", key=f"class_unpin_{check.key}", icon=":material/keep_off:",
                       on_click=_set_pinned, args=(started.code, started.teacher_key, check.key, False),
                       help="Let this check leave the board when others are answered more.")
        else:
            pin.button("Pin", key=f"class_pin_{check.key}", icon=":material/keep:",
                       on_click=_set_pinned, args=(started.code, started.teacher_key, check.key, True),
                       help="Keep this check at the top of the board, whatever else is answered.")
        st.markdown(f"**{tally.answered}** answered" + (" · pinned" if tally.pinned else ""))
        if not tally.revealed:
            st.caption("The answers are hidden from the projector until you reveal them.")
            st.button("Reveal the answers", key=f"class_reveal_{check.key}", icon=":material/visibility:",
                      on_click=_set_revealed, args=(started.code, started.teacher_key, check.key, True))
            return
        truth = _pytorch_answer(check.key)
        rows = [{"answer": md(option), "learners": tally.counts.get(option, 0),
                 "share": f"{tally.counts.get(option, 0) / max(tally.answered, 1):.0%}",
                 "PyTorch": "✓ computed" if option == truth else ""} for option in check.options]
        st.table(pd.DataFrame(rows), hide_index=True)
        st.button("Hide the answers", key=f"class_hide_{check.key}", icon=":material/visibility_off:",
                  on_click=_set_revealed, args=(started.code, started.teacher_key, check.key, False))


@st.fragment(run_every=BOARD_SECONDS)
def live_board(started: StartedClass) -> None:
    read = read_class(lambda: (class_store().find_class(started.code),
                               class_store().tallies(started.code, started.teacher_key)))
    if read is None:
        return
    view, tallies = read
    st.metric("Learners in the class", view.members,
              help="Learners whose page was seen in the last few minutes; the roster lists the "
              "ones away too.")
    notes = [f"{view.away} away" if view.away else "",
             "joining closed" if view.joining_closed else "",
             "names hidden" if view.hide_names else ""]
    if any(notes):
        st.caption(" · ".join(note for note in notes if note))
    known = [tally for tally in tallies if tally.check_key in all_checks()]
    if not known:
        st.info("No answers yet. Each knowledge check a learner commits shows up here within a "
                "second or two, with how many answered.", icon=":material/hourglass_empty:")
    shown, others = board_checks(known)
    for tally in shown:
        _tally_card(started, tally)
    if others:
        by_key = {tally.check_key: tally for tally in others}
        if st.session_state.get(OTHER_CHECK_KEY) not in by_key:
            st.session_state.pop(OTHER_CHECK_KEY, None)
        picked = st.selectbox(
            f"Show another check ({len(others)} more answered)", list(by_key), index=None,
            key=OTHER_CHECK_KEY, placeholder="Pick a check the class answered",
            format_func=lambda key: f"{all_checks()[key].question} ({by_key[key].answered} answered)",
            help="Every check the class answered, the most answered first. Pin one to keep it "
            "on the board.")
        if picked is not None:
            _tally_card(started, by_key[picked])


def board_checks(tallies: list[CheckTally]) -> tuple[list[CheckTally], list[CheckTally]]:
    """(the cards on the board, the rest): every pinned check, then the most answered, up to
    BOARD_CHECKS (more if the teacher pinned more); `tallies` come in the store's order."""
    pinned = [tally for tally in tallies if tally.pinned]
    rest = [tally for tally in tallies if not tally.pinned]
    room = max(0, BOARD_CHECKS - len(pinned))
    return pinned + rest[:room], rest[room:]


def end_class_panel(started: StartedClass) -> None:
    with st.expander("End the class", icon=":material/stop_circle:"):
        st.markdown("Ending the class deletes its members, answers and posted runs; its code stops "
                    "working. (A class also ends by itself after a day without activity.)")
        if st.button("End the class and delete its data", key="class_end",
                     icon=":material/delete_forever:"):
            try:
                class_store().end_class(started.code, started.teacher_key)
            except ClassError as exc:
                seat().notice = str(exc)
                return
            stop_teaching()
            st.rerun()


CLASS_CSS = """<style>
.class-code-label { margin: 0; font-size: 1.1rem; }
.class-code { margin: 0 0 0.5rem 0; font-size: 3.2rem; font-weight: 700; letter-spacing: 0.18em;
              font-family: "Source Code Pro", monospace; line-height: 1.1; }
</style>"""
