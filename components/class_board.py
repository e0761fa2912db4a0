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

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from components.class_pacing import card_pacing
from components.class_report import ENDED
from components.class_session import (CLASS_PARAM, TEACHER_PARAM, class_store, keep_report,
                                      read_class, seat, stop_teaching)
from components.classroom import app_root
from components.code_block import link_block
from components.figures import presenting
from components.plain_text import md
from workbench.classroom.catalog import all_checks
from workbench.classroom.qr import qr_svg
from workbench.classroom.pacing import Pacing
from workbench.classroom.store import CheckTally, ClassError, StartedClass, StoreUnavailable

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
    """The private teacher link, in the teacher's own closed panel until they say it is kept: it
    reopens this board on another device, and anyone holding it can steer the class. Never drawn
    in presenter mode: a projected page must not show it, even for a scroll."""
    mine = seat()
    if mine.teacher_link_dismissed or presenting():
        return
    with st.container(key="class_teacher_link"), \
            st.expander("Your private teacher link", icon=":material/key:"):
        st.markdown("Your private teacher link opens this board on another device (it never "
                    "joins you to the class). "
                    "Keep it to yourself: anyone holding it can steer the class. It is shown "
                    "only until you hide it, and never in presenter mode.")
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


def _tally_card(started: StartedClass, tally: CheckTally, pace: PaceOnBoard) -> None:
    check = all_checks()[tally.check_key]
    with st.container(border=True, key=f"class_board_{check.key}"):
        st.markdown(f"**{check.question}**")
        st.markdown(f"**{tally.answered}** answered" + (" · pinned" if tally.pinned else ""))
        card_pacing(pace.pacing, pace.waiting, pace.hide_names, check.key)
        if tally.revealed:
            truth = _pytorch_answer(check.key)
            rows = [{"answer": md(option), "learners": tally.counts.get(option, 0),
                     "share": f"{tally.counts.get(option, 0) / max(tally.answered, 1):.0%}",
                     "PyTorch": "✓ computed" if option == truth else ""} for option in check.options]
            st.table(pd.DataFrame(rows), hide_index=True)
        else:
            st.caption("The answers are hidden from the projector until you reveal them.")
        # One row of buttons under the card, each as wide as its label: beside the question,
        # a narrow column cut "Pin" to "P.." on a 1280x720 projector.
        with st.container(horizontal=True, key=f"class_board_{check.key}_actions"):
            _card_buttons(started, tally)


def _card_buttons(started: StartedClass, tally: CheckTally) -> None:
    code, key, check_key = started.code, started.teacher_key, tally.check_key
    if tally.revealed:
        st.button("Hide the answers", key=f"class_hide_{check_key}", icon=":material/visibility_off:",
                  on_click=_set_revealed, args=(code, key, check_key, False))
    else:
        st.button("Reveal the answers", key=f"class_reveal_{check_key}", icon=":material/visibility:",
                  on_click=_set_revealed, args=(code, key, check_key, True))
    if tally.pinned:
        st.button("Unpin", key=f"class_unpin_{check_key}", icon=":material/keep_off:",
                  on_click=_set_pinned, args=(code, key, check_key, False),
                  help="Let this check leave the board when others are answered more.")
    else:
        st.button("Pin", key=f"class_pin_{check_key}", icon=":material/keep:",
                  on_click=_set_pinned, args=(code, key, check_key, True),
                  help="Keep this check at the top of the board, whatever else is answered.")


@dataclass(frozen=True)
class PaceOnBoard:
    """What the board's cards say of pacing: each check's state, and who has not answered."""
    pacing: Pacing | None
    waiting: dict[str, list[str]]
    hide_names: bool


@st.fragment(run_every=BOARD_SECONDS)
def live_board(started: StartedClass) -> None:
    read = read_class(lambda: (class_store().find_class(started.code),
                               class_store().tallies(started.code, started.teacher_key),
                               class_store().pacing(started.code)))
    if read is None:
        return
    view, tallies, pacing = read
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
    picked_other = st.session_state.get(OTHER_CHECK_KEY)
    asked = [tally.check_key for tally in shown] + ([picked_other] if picked_other else [])
    waiting = read_class(lambda: class_store().not_answered(started.code, started.teacher_key,
                                                            asked)) or {}
    pace = PaceOnBoard(pacing, waiting, view.hide_names)
    for tally in shown:
        _tally_card(started, tally, pace)
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
            _tally_card(started, by_key[picked], pace)


def board_checks(tallies: list[CheckTally]) -> tuple[list[CheckTally], list[CheckTally]]:
    """(the cards on the board, the rest): every pinned check, then the most answered, up to
    BOARD_CHECKS (more if the teacher pinned more); `tallies` come in the store's order."""
    pinned = [tally for tally in tallies if tally.pinned]
    rest = [tally for tally in tallies if not tally.pinned]
    room = max(0, BOARD_CHECKS - len(pinned))
    return pinned + rest[:room], rest[room:]


def class_still_taught(started: StartedClass) -> bool:
    """False when the class has ended (on the teacher's other device, or after a day without
    activity): this session stops teaching it, and reads its report if it was kept; the teacher's
    message waits for the page. True while it lives or while the database is out of reach (the
    board says that)."""
    try:
        class_store().check_teacher(started.code, started.teacher_key)
    except StoreUnavailable:
        return True
    except ClassError:
        ended = None
        try:
            ended = class_store().ended(started.code, started.teacher_key)
        except ClassError:
            pass
        if ended is not None:
            keep_report(started)
            st.session_state[ENDED] = (f"Class {started.code} has ended on your other device; "
                                       "its report is kept.")
        else:
            stop_teaching()
            st.session_state[ENDED] = (f"Class {started.code} has ended (on your other device, "
                                       "or after a day without activity); its data is deleted.")
        return False
    return True


CLASS_CSS = """<style>
.class-code-label { margin: 0; font-size: 1.1rem; }
.class-code { margin: 0 0 0.5rem 0; font-size: 3.2rem; font-weight: 700; letter-spacing: 0.18em;
              font-family: "Source Code Pro", monospace; line-height: 1.1; }
</style>"""
