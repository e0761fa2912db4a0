"""The router that streamlit_app.py serves: page config, navigation over app_pages/, the shared
sidebar, one guard per page. AppTest runs this script (tests/app/apptest.py)."""
import workbench  # noqa: F401  (first: pins torch to one thread before torch is imported)

from pathlib import Path

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from components.accessible_theme import accessible_theme
from components.class_prediction import prediction_banner
from components.guard import run_guarded
from app_pages.lessons.way_back import back_to_lesson_link
from app_pages.navigation import HOME, all_pages, sections
from components.figures import presenting
from components.sidebar import draw_sidebar, sync_presenter_from_url
from workbench.common.jobs import SCRIPT_RUNS

# A local favicon: a `:material/...:` page icon makes every visitor's browser fetch it from
# Google's font CDN, a request to another host on every page.
FAVICON = str(Path(__file__).parent / "assets" / "favicon.png")
PAGES_KEY = "_router_pages"


def streamlit_pages() -> dict[str, list[StreamlitPage]]:
    """The navigation's pages, built once per session: st.Page resolves its file on disk
    (realpath, a stat per folder), which was 5% of the server's time when 60 followers arrived
    at a page at once. Per session, not per process: st.navigation marks the pages it returns."""
    if PAGES_KEY not in st.session_state:
        st.session_state[PAGES_KEY] = {
            section: [st.Page(t.script, title=t.title, icon=t.icon, url_path=t.url_path or None,
                              default=t is HOME) for t in tools]
            for section, tools in sections().items()
        }
    return st.session_state[PAGES_KEY]


sync_presenter_from_url()
# A projector needs the width: presenter mode starts with the sidebar folded (one click opens it).
st.set_page_config(page_title="PyTorch Workbench", page_icon=FAVICON, layout="wide",
                   initial_sidebar_state="collapsed" if presenting() else "auto")
page = st.navigation(streamlit_pages())
with SCRIPT_RUNS.run():       # a few page runs at a time: see workbench/common/jobs.py
    accessible_theme()
    draw_sidebar(page.url_path, {tool.url_path: tool.script for tool in all_pages()})
    back_to_lesson_link(page.url_path)      # a tool opened from a lesson step: the way back
    run_guarded(prediction_banner, "the class's prediction")   # on every page: predict, then run
    run_guarded(page.run, page.title)
