"""A knowledge check: the learner commits to an answer, then PyTorch computes the truth.

`answer` runs only after the learner has committed, so the revealed value is computed by
PyTorch at that moment, never typed into the page.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from workbench.common.checks import Revealed

__all__ = ["Revealed", "knowledge_check"]


def knowledge_check(key: str, question: str, options: Sequence[str],
                    answer: Callable[[], Revealed]) -> Revealed | None:
    """Draw the check; returns what was revealed, or None until the learner commits."""
    committed_key = f"kc_{key}_committed"
    with st.container(border=True, key=f"kc_{key}"):
        st.markdown(f"**:material/quiz: Knowledge check.** {question}")
        choice = st.radio("Your answer", options, index=None, key=f"kc_{key}_choice",
                          disabled=st.session_state.get(committed_key, False),
                          label_visibility="collapsed")
        if not st.session_state.get(committed_key, False):
            if st.button("Commit and reveal", key=f"kc_{key}_commit", disabled=choice is None,
                         help="Pick an answer first: PyTorch then computes the real one."):
                st.session_state[committed_key] = True
                st.rerun()
            return None
        revealed = answer()
        if choice == revealed.correct_option:
            st.success(f"Right: **{revealed.correct_option}**.", icon=":material/check_circle:")
        else:
            st.warning(f"You chose **{choice}**; PyTorch says **{revealed.correct_option}**.",
                       icon=":material/lightbulb:")
        if revealed.code:
            st.code(revealed.code + f"\n# -> {revealed.shown_value}", language="python")
        if revealed.explanation:
            st.markdown(revealed.explanation)
        if st.button("Try again", key=f"kc_{key}_again"):
            st.session_state[committed_key] = False
            st.session_state.pop(f"kc_{key}_choice", None)
            st.rerun()
        return revealed
