"""The one error panel: PyTorch's own message (or the workbench's refusal), what it means and
how to fix it. Never a traceback."""
from __future__ import annotations

import streamlit as st

from components.code_block import code_block
from workbench.common.errors import ExplainedError, explain

REFUSED = "Refused"


def error_panel(error: ExplainedError | BaseException, *, key: str | None = None) -> None:
    explained = error if isinstance(error, ExplainedError) else explain(error)
    with st.container(border=True, key=key):
        st.error(f"**{explained.title}**", icon=":material/error:")
        if explained.kind == REFUSED:
            st.markdown("The workbench checked it and refused:")
        else:
            st.markdown(f"{explained.kind} from {explained.origin}:")
        code_block(explained.message, language="text", wrap_lines=True)
        st.markdown(explained.explanation)
        if explained.fixes:
            st.markdown("**How to fix it**\n" + "\n".join(f"- {fix}" for fix in explained.fixes))
