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

from collections.abc import Callable

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


def _tally_card(started: StartedClass, tally: CheckTally) -> None:
    check = all_checks()[tally.check_key]
    with st.container(border=True, key=f"class_board_{check.key}"):
        st.markdown(f"**{check.question}**")
        st.markdown(f"**{tally.answered}** answered" + (" · pinned" if tally.pinned else ""))
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


END_ASKED = "class_end_asked"           # the class code whose End waits for a yes
ENDED = "class_ended_message"           # the teacher's message after End, shown once


def end_class_panel(started: StartedClass, class_data: Callable[[], str]) -> None:
    """End the class, in two steps: *End the class…* says what ending deletes (counted in the
    store) and offers the class's data as a CSV (`class_data`, built when the button is
    pressed); only *Yes, end …* deletes. The teacher then reads a teacher's message."""
    asked = st.session_state.get(END_ASKED) == started.code
    with st.expander("End the class", icon=":material/stop_circle:", expanded=asked):
        if not asked:
            st.markdown("Ending the class deletes its members, answers and posted runs; its code "
                        "stops working. (A class also ends by itself after a day without activity.)")
            if st.button("End the class…", key="class_end", icon=":material/stop_circle:"):
                st.session_state[END_ASKED] = started.code
                st.rerun()
            return
        counts = read_class(lambda: _class_counts(started))
        if counts is None:
            return
        members, answered, runs = counts
        st.warning(f"Ending class **{started.code}** deletes its **{members}** member(s), "
                   f"**{answered}** answer(s) and **{runs}** posted run(s), now; its code stops "
                   "working and no one can read them again. Download them first if you want "
                   "to keep them.", icon=":material/warning:")
        st.download_button("Download the class's data (CSV)", data=class_data,
                           file_name=f"class-{started.code}.csv", mime="text/csv",
                           key="class_end_download", icon=":material/download:",
                           on_click="ignore",
                           help="The answers per check and option, and every posted run with its "
                           "link. Names that a spreadsheet would run as a formula start with '.")
        yes, no = st.columns(2)
        if yes.button(f"Yes, end class {started.code} and delete its data", key="class_end_confirm",
                      type="primary", icon=":material/delete_forever:"):
            _end(started)
        if no.button("Keep the class", key="class_end_cancel", icon=":material/undo:"):
            st.session_state.pop(END_ASKED, None)
            st.rerun()


def _class_counts(started: StartedClass) -> tuple[int, int, int]:
    store = class_store()
    view = store.find_class(started.code)
    answered = sum(t.answered for t in store.tallies(started.code, started.teacher_key))
    runs = len(store.challenge_board(started.code, teacher_key=started.teacher_key).runs)
    return view.members, answered, runs


def _end(started: StartedClass) -> None:
    """End the class; a class that ended already (on the teacher's other device, or by expiry)
    is ended as far as this teacher is concerned, and said so as such, never as a learner's
    "check the code with your teacher"."""
    try:
        class_store().end_class(started.code, started.teacher_key)
        message = f"Class {started.code} ended; its data is deleted."
    except StoreUnavailable as exc:
        st.warning(md(str(exc)), icon=":material/cloud_off:")
        return
    except ClassError:
        message = f"Class {started.code} had ended already; its data is deleted."
    stop_teaching()
    st.session_state.pop(END_ASKED, None)
    st.session_state[ENDED] = message
    st.rerun()


def class_still_taught(started: StartedClass) -> bool:
    """False, with the teacher's message kept for the page, when the class has ended (on the
    teacher's other device, or after a day without activity); True while it lives or while the
    database is out of reach (the board says that)."""
    try:
        class_store().check_teacher(started.code, started.teacher_key)
    except StoreUnavailable:
        return True
    except ClassError:
        st.session_state[ENDED] = (f"Class {started.code} has ended (on your other device, or "
                                   "after a day without activity); its data is deleted.")
        return False
    return True


def ended_message() -> None:
    """The teacher's message after End, once, on the Class page."""
    message = st.session_state.pop(ENDED, "")
    if message:
        st.success(md(message), icon=":material/check_circle:")


CLASS_CSS = """<style>
.class-code-label { margin: 0; font-size: 1.1rem; }
.class-code { margin: 0 0 0.5rem 0; font-size: 3.2rem; font-weight: 700; letter-spacing: 0.18em;
              font-family: "Source Code Pro", monospace; line-height: 1.1; }
</style>"""
