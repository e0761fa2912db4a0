"""Router only: page config, navigation over pages/, the shared sidebar, one guard per page."""
import workbench  # noqa: F401  (first: pins torch to one thread before torch is imported)

import streamlit as st

from components.guard import run_guarded
from components.navigation import HOME, built_tools
from components.sidebar import draw_sidebar

st.set_page_config(page_title="PyTorch Workbench", page_icon=":material/memory:", layout="wide")

home = st.Page(HOME.script, title=HOME.title, icon=HOME.icon, default=True)
tools = [st.Page(t.script, title=t.title, icon=t.icon, url_path=t.url_path) for t in built_tools()]
page = st.navigation({"Start": [home], "Tools": tools} if tools else {"Start": [home]})
draw_sidebar()
run_guarded(page.run, page.title)
