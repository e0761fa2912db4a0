"""Router only: page config, navigation over app_pages/, the shared sidebar, one guard per page."""
import workbench  # noqa: F401  (first: pins torch to one thread before torch is imported)

import streamlit as st

from components.guard import run_guarded
from components.navigation import HOME, sections
from components.sidebar import draw_sidebar

st.set_page_config(page_title="PyTorch Workbench", page_icon=":material/memory:", layout="wide")

page = st.navigation({
    section: [st.Page(t.script, title=t.title, icon=t.icon, url_path=t.url_path or None,
                      default=t is HOME) for t in tools]
    for section, tools in sections().items()
})
draw_sidebar()
run_guarded(page.run, page.title)
