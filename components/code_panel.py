"""The runnable PyTorch code behind the current view, with a download as a .py file."""
from __future__ import annotations

import streamlit as st

from components.code_block import code_block


def code_panel(code: str, *, filename: str, key: str, title: str = "Runnable PyTorch code",
               expanded: bool = False, caption: str | None = None) -> None:
    with st.expander(title, expanded=expanded, icon=":material/code:"):
        if caption:
            st.caption(caption)
        code_block(code, language="python", line_numbers=True)
        st.download_button(f"Download {filename}", data=code.encode(), file_name=filename,
                           mime="text/x-python", key=f"{key}_download",
                           icon=":material/download:")
