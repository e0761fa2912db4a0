"""A knowledge check: the learner commits to an answer, then PyTorch computes the truth.

`check.answer()` runs only after the learner has committed, so the revealed value is computed by
PyTorch at that moment, never typed into the page; the code shown is the function that ran.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from components.class_session import answer_refused, answer_waits, class_pacing, record_answer, seat
from components.countdown import countdown
from components.code_block import code_block
from components.guard import run_guarded
from components.plain_text import md
from workbench.classroom.pacing import CheckPace, closed_message
from workbench.common.checks import Answer, Check

__all__ = ["Answer", "Check", "knowledge_check"]


def knowledge_check(check: Check, *, key: str | None = None,
                    then: Callable[[Answer], None] | None = None) -> None:
    """Draw the check, and `then(answer)` under it once PyTorch has revealed the answer.

    The check is a fragment of its own: picking an option and committing rerun the check alone,
    not the page around it. A class answers within the same second; a page run per click was
    what kept sixty learners' answers off the teacher's board for seconds (bench/class.py)."""
    _check_fragment(check, key or check.key, then)


@st.fragment
def _check_fragment(check: Check, key: str, then: Callable[[Answer], None] | None) -> None:
    # A fragment's own reruns do not pass through the router's guard.
    run_guarded(lambda: _draw_check(check, key, then), f"the knowledge check {key}")


def _draw_check(check: Check, key: str, then: Callable[[Answer], None] | None) -> None:
    committed_key, attempt_key = f"kc_{key}_committed", f"kc_{key}_attempt"
    # Each attempt is a new radio: a browser keeps showing a radio's last choice after its
    # value is cleared on the server, so "Try again" would leave an answer ticked that the
    # page does not see (and "Commit" greyed out under it).
    attempt = st.session_state.get(attempt_key, 0)
    choice_key = f"kc_{key}_choice" + (f"_{attempt}" if attempt else "")
    pacing = class_pacing()
    pace = pacing.of(check.key) if pacing is not None else None
    reset = pace is not None and _reset_by_teacher(check.key, key, pace.round)
    committed = st.session_state.get(committed_key, False)
    with st.container(border=True, key=f"kc_{key}"):
        st.markdown(f"**:material/quiz: Knowledge check.** {check.question}")
        if reset:
            st.info("Your teacher reset this question for the class: answer it again.",
                    icon=":material/restart_alt:")
            attempt = st.session_state.get(attempt_key, 0)
            choice_key = f"kc_{key}_choice" + (f"_{attempt}" if attempt else "")
            committed = False
        closed = closed_message(pace, time.time()) if pace is not None and not committed else ""
        choice = st.radio("Your answer", check.options, index=None, key=choice_key,
                          disabled=committed or bool(closed), label_visibility="collapsed")
        if not committed:
            if closed:
                st.info(closed, icon=":material/lock:")
                return
            _timer(pace, key)
            st.button("Commit and reveal", key=f"kc_{key}_commit", disabled=choice is None,
                      on_click=_commit, args=(check, committed_key, choice_key, key,
                                              pace.round if pace is not None else 0),
                      help="Pick an answer first: PyTorch then computes the real one.")
            return
        revealed = check.answer()
        right = choice == revealed.correct_option
        shown_key = f"kc_{key}_shown"
        if not right and not st.session_state.get(shown_key, False):
            # A wrong answer first gets a second try: showing the right one at once takes away
            # the thinking the check is there for. The answer is one click further.
            st.warning(f"You chose **{md(choice)}**: that is not what PyTorch computes. "
                       "Think again, or see the answer.", icon=":material/lightbulb:")
            _waiting_note(check)
            with st.container(horizontal=True, vertical_alignment="center"):
                st.button("Try again", key=f"kc_{key}_again", type="primary",
                          on_click=_try_again,
                          args=(committed_key, choice_key, attempt_key, shown_key))
                st.button("Show the answer", key=f"kc_{key}_show", on_click=_show_answer,
                          args=(shown_key,))
            return
        if right:
            st.success(f"Right: **{md(revealed.correct_option)}**.", icon=":material/check_circle:")
        else:
            st.warning(f"You chose **{md(choice)}**; PyTorch says **{md(revealed.correct_option)}**.",
                       icon=":material/lightbulb:")
        _waiting_note(check)
        st.caption(f"{check.computed_by} computed it with this function, just now:")
        code_block(check.code + f"\n\n# {check.compute.__name__}() saw: {revealed.shown_value}",
                   language="python")
        if revealed.explanation:
            st.markdown(revealed.explanation)
        st.button("Try again", key=f"kc_{key}_again", on_click=_try_again,
                  args=(committed_key, choice_key, attempt_key, shown_key))
    if then is not None:
        then(revealed)


def _timer(pace: CheckPace | None, key: str) -> None:
    """The teacher's timer on this check, counted down in the browser."""
    left = pace.seconds_left(time.time()) if pace is not None else None
    if left is not None:
        countdown(left, key=f"kc_{key}_countdown", label="Your teacher's timer: answers close in",
                  ended="Time is up for this question: answers are not taken now.")


def _reset_by_teacher(check_key: str, key: str, round_now: int) -> bool:
    """True once, when the teacher reset the check since this learner answered it: their answer
    left the class's board, so the check is theirs to answer again."""
    round_key = f"kc_{key}_round"
    answered_in = st.session_state.get(round_key)
    if answered_in is None or answered_in >= round_now:
        return False
    st.session_state[round_key] = round_now
    if st.session_state.get(f"kc_{key}_committed"):
        _try_again(f"kc_{key}_committed", _choice_key(key), f"kc_{key}_attempt", f"kc_{key}_shown")
    seat().refused.pop(check_key, None)
    return True


def _choice_key(key: str) -> str:
    attempt = st.session_state.get(f"kc_{key}_attempt", 0)
    return f"kc_{key}_choice" + (f"_{attempt}" if attempt else "")


def _commit(check: Check, committed_key: str, choice_key: str, key: str, round_now: int) -> None:
    choice = st.session_state.get(choice_key)
    if choice is None:
        return
    st.session_state[committed_key] = True
    st.session_state[f"kc_{key}_round"] = round_now
    seat().refused.pop(check.key, None)
    record_answer(check, choice)                 # a learner in a class: to the teacher's board


def _waiting_note(check: Check) -> None:
    """Where the learner's answer is, when it is not on the teacher's board: refused (the
    teacher closed the check meanwhile), or waiting for the class database."""
    refused = answer_refused(check.key)
    if refused:
        st.caption(f":material/lock: {md(refused)} Your answer stays yours; it is not on your "
                   "teacher's board.")
    if answer_waits(check.key):
        st.caption(":material/cloud_off: Your answer waits for the class database; it is "
                   "sent to your teacher's board when the database is back.")


def _show_answer(shown_key: str) -> None:
    st.session_state[shown_key] = True


def _try_again(committed_key: str, choice_key: str, attempt_key: str, shown_key: str) -> None:
    st.session_state[committed_key] = False
    st.session_state.pop(shown_key, None)
    st.session_state.pop(choice_key, None)
    st.session_state[attempt_key] = st.session_state.get(attempt_key, 0) + 1
