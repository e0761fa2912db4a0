"""The stage: the first screen of a tool page given to its key figure, on a school laptop
(1366x768), a projector (1280x720 with `present=1`) and a phone (390x844) alike.

Every tool page opens with its title and a folded *About this page* on one line, then the key
figure with the control that drives it; the settings and the explanations follow below. In
presenter mode the sidebar also starts collapsed (the router asks for it; a learner can still
open it), the empty band above the title goes, and every text is 1.4x (`html` at 140%, so every
`rem` grows with it), the title included: it is never smaller than in the normal layout. A page
puts its key figure inside `st.container(key=...)` and calls `fit_to_viewport` so that the
figure's height follows the browser's viewport rather than a fixed number of pixels: the server
never knows the size of the projector, the browser does.

A teacher who teaches a class gets *Send class <code> here* on the title's line (the sidebar,
where it also is, starts folded on a projector); the Class page has its own send.
"""
from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.class_session import PAGE_ON_SCREEN, send_here_button, seat
from components.classroom import hidden_controls
from components.figures import presenting
from components.graph_view import GRAPH_SVG

PRESENTER_CSS = """
<style>
html { font-size: 140% !important; }
/* Streamlit leaves 6rem above the title for its header bar; the bar becomes transparent and
   only its buttons (open the sidebar, the app menu) take clicks. */
[data-testid="stMainBlockContainer"] {
  max-width: 100%; padding: 0.45rem 1.6rem 2rem 1.6rem;
}
[data-testid="stHeader"] { background: transparent; pointer-events: none; }
[data-testid="stHeader"] button, [data-testid="stHeader"] a { pointer-events: auto; }
/* The title: one line between the sidebar button (left) and the app menu (right), at least
   as large as the normal layout's 2.75rem of 16 px (44 px): 2rem of 22.4 px is 44.8 px. */
[data-testid="stMainBlockContainer"] h1 {
  font-size: 2rem; line-height: 1.2; padding: 0.1rem 2.6rem 0 1.5rem;
}
/* With the sidebar opened its button is no longer above the title: no room kept for it. */
[data-testid="stAppViewContainer"]:has([data-testid="stSidebar"][data-collapsed="false"])
  [data-testid="stMainBlockContainer"] h1 { padding-left: 0; }
.st-key-page_about { padding-right: 2.4rem; }
</style>
"""


# The normal layout's first screen: Streamlit's 6rem band above the title shrinks to what its
# header bar (the app menu, the sidebar's button) needs, and on a phone the page's sides narrow.
NORMAL_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.75rem; }
@media (max-width: 640px) {
  [data-testid="stMainBlockContainer"] { padding-left: 0.75rem; padding-right: 0.75rem; }
}
</style>
"""


def presenter_styles() -> None:
    """The page-wide CSS of the layout on screen: presenter mode's, or the normal one's."""
    st.html(PRESENTER_CSS if presenting() else NORMAL_CSS)


def fit_to_viewport(key: str, *, leave_px: int, min_px: int = 320, max_px: int | None = None) -> None:
    """In presenter mode, make the Plotly chart, graphviz graph or table inside
    `st.container(key=key)` as tall as the viewport less `leave_px` (what sits above and below it
    on the first screen), never shorter than `min_px`. A Plotly chart there must be drawn with
    `height="stretch"`; a table's rows share the height."""
    if not presenting():
        return
    height = f"max({min_px}px, calc(100vh - {leave_px}px))"
    if max_px is not None:
        height = f"min({max_px}px, {height})"
    st.html(f"""<style>
.st-key-{key} [data-testid="stPlotlyChart"] {{ height: {height} !important; }}
.st-key-{key} {GRAPH_SVG} {{
  height: {height}; width: auto; max-width: 100%;
}}
.st-key-{key} table {{ height: {height}; }}
</style>""")


def page_header(title: str, about: str, *, figure_first: bool = False) -> DeltaGenerator | None:
    """The page's title and what it is about. On a tool's page (`figure_first`) and in
    presenter mode the explanation folds into an expander on the title's line, so that the first
    screen goes to the pictures (a laptop's 768 px, a phone's 844 px, a projector's 720 px) and,
    on a projector, the teacher does the explaining. When a link hides controls, returns the
    slot under the title for the note that names what they fixed
    (`lesson_link.fixed_settings_note`)."""
    if not (figure_first or presenting()):
        st.title(title, anchor=False)
        st.markdown(about)
        return st.container(key="fixed_settings") if hidden_controls() else None
    teaching = presenting() and seat().teaching is not None and \
        st.session_state.get(PAGE_ON_SCREEN, "") != "class"
    if teaching:       # the teacher's send, on the stage: the sidebar is folded on a projector
        title_column, send_column, about_column = st.columns(
            [5, 3, 3], vertical_alignment="center")
        with send_column.container(key="stage_send"):
            send_here_button("class_send_here_stage")
    else:
        title_column, about_column = st.columns([3, 2], vertical_alignment="center")
    title_column.title(title, anchor=False)
    with about_column.container(key="page_about"), \
            st.expander("About this page", icon=":material/info:"):
        st.markdown(about)
    return st.container(key="fixed_settings") if hidden_controls() else None
