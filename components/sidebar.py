"""The sidebar every page shares: this learner's device, presenter mode, and their class."""
from __future__ import annotations

import streamlit as st

from components.class_session import (draw_class_state, join_from_url, landing_panel,
                                      restore_from_browser)
from components.device import learner_device, server_device
from components.figures import PRESENTER_KEY, presenting
from components.stage import presenter_styles
from components.lesson_link import problem_markdown
from components.state import device_choice, resend_widget_value
from workbench.common.device import AUTO, device_choices
from workbench.common.links import BoolParam, LinkProblem

_LABELS = {AUTO: "Best available", "cpu": "CPU only"}
PRESENT = BoolParam("present", help="1 opens the page in presenter mode")


def sync_presenter_from_url() -> None:
    """`present=` in the URL turns presenter mode on or off once per new value; the router calls
    it before `st.set_page_config`, which collapses the sidebar for a presenter."""
    raw = st.query_params.get(PRESENT.name)
    if raw is None or st.session_state.get("presenter_from_url") == raw:
        return
    st.session_state["presenter_from_url"] = raw
    try:
        st.session_state[PRESENTER_KEY] = PRESENT.parse(raw)
    except ValueError as exc:
        st.sidebar.warning(problem_markdown(LinkProblem(PRESENT.name, raw, str(exc)), default_used=False))


def _write_presenter_to_url() -> None:
    if presenting():
        st.query_params[PRESENT.name] = "1"
    elif PRESENT.name in st.query_params:
        del st.query_params[PRESENT.name]
    st.session_state["presenter_from_url"] = st.query_params.get(PRESENT.name)


def draw_sidebar(page_path: str = "", pages: dict[str, str] | None = None) -> None:
    """`page_path`: the url_path of the page on screen; `pages`: every page's url_path -> script
    (where a follower of the teacher is sent)."""
    server = server_device()
    choice = device_choice()
    options = device_choices(server)
    with st.sidebar:
        if len(options) > 1:
            picked = st.radio("Compute on", options, index=options.index(choice.choice)
                              if choice.choice in options else 0,
                              format_func=lambda o: f"{_LABELS[o]} ({server if o == AUTO else 'cpu'})",
                              key="sidebar_device_choice", horizontal=True,
                              help="Your choice only: other learners keep their own.")
            choice.choice = picked
        device = learner_device()
        st.markdown(f"**Device:** `{device}`", help="torch.device your tensors and models use on "
                    "every page. Chosen once per server: CUDA, then MPS, then CPU.")
        if server.type == "cpu":
            st.caption("No GPU on this server: everything runs on the CPU.")
        resend_widget_value(PRESENTER_KEY, False)
        st.toggle("Presenter mode", key=PRESENTER_KEY, on_change=_write_presenter_to_url,
                  help="For a projector: larger text, thicker lines, bigger markers, a "
                  "colour-blind-safe palette. `present=1` in a link turns it on.")
    restore_from_browser()
    join_from_url(page_path, pages or {})
    landing_panel(page_path)
    draw_class_state(page_path, pages or {})
    presenter_styles()
