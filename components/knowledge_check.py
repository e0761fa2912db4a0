"""A knowledge check: the learner commits to an answer, then PyTorch computes the truth.

`check.answer()` runs only after the learner has committed, so the revealed value is computed by
PyTorch at that moment, never typed into the page; the code shown is the function that ran.
"""
from __future__ import annotations

import streamlit as st

from components.class_session import record_answer
from components.code_block import code_block
from components.plain_text import md
from workbench.common.checks import Answer, Check

__all__ = ["Answer", "Check", "knowledge_check"]


def knowledge_check(check: Check, *, key: str | None = None) -> Answer | None:
    """Draw the check; returns what was revealed, or None until the learner commits."""
    key = key or check.key
    committed_key, attempt_key = f"kc_{key}_committed", f"kc_{key}_attempt"
    # Each attempt is a new radio: a browser keeps showing a radio's last choice after its
    # value is cleared on the server, so "Try again" would leave an answer ticked that the
    # page does not see (and "Commit" greyed out under it).
    attempt = st.session_state.get(attempt_key, 0)
    choice_key = f"kc_{key}_choice" + (f"_{attempt}" if attempt else "")
    with st.container(border=True, key=f"kc_{key}"):
        st.markdown(f"**:material/quiz: Knowledge check.** {check.question}")
        choice = st.radio("Your answer", check.options, index=None, key=choice_key,
                          disabled=st.session_state.get(committed_key, False),
                          label_visibility="collapsed")
        if not st.session_state.get(committed_key, False):
            if st.button("Commit and reveal", key=f"kc_{key}_commit", disabled=choice is None,
                         help="Pick an answer first: PyTorch then computes the real one."):
                st.session_state[committed_key] = True
                record_answer(check, choice)         # a learner in a class: to the teacher's board
                st.rerun()
            return None
        revealed = check.answer()
        if choice == revealed.correct_option:
            st.success(f"Right: **{md(revealed.correct_option)}**.", icon=":material/check_circle:")
        else:
            st.warning(f"You chose **{md(choice)}**; PyTorch says **{md(revealed.correct_option)}**.",
                       icon=":material/lightbulb:")
        st.caption(f"{check.computed_by} computed it with this function, just now:")
        code_block(check.code + f"\n\n# {check.compute.__name__}() saw: {revealed.shown_value}",
                language="python")
        if revealed.explanation:
            st.markdown(revealed.explanation)
        if st.button("Try again", key=f"kc_{key}_again"):
            st.session_state[committed_key] = False
            st.session_state.pop(choice_key, None)
            st.session_state[attempt_key] = attempt + 1
            st.rerun()
        return revealed
