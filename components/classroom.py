"""Classroom links: `hide=` in a lesson link removes chosen controls; the share panel builds them.

A control is named by its lesson-link parameter (`hide=batch,shuffle` hides the controls behind
`batch` and `shuffle`), so hiding needs no page-specific code: a page asks `visible(name)`
before drawing a control, and uses the link's value when it is hidden.
"""
from __future__ import annotations

import re
from urllib.parse import quote, urlencode, urlsplit

import streamlit as st

from components.code_block import link_block
from workbench.common.links import LinkSchema
from workbench.common.notebook import notebook_bytes

HIDE = "hide"
_NAME = re.compile(r"^[a-z_]{1,30}$")


def hidden_controls() -> frozenset[str]:
    raw = st.query_params.get(HIDE, "")
    names = {part.strip().lower() for part in raw.split(",")[:50]}
    return frozenset(name for name in names if _NAME.match(name))


def visible(control: str) -> bool:
    return control not in hidden_controls()


def app_root() -> str:
    """The app's address without the page's path, e.g. https://x.streamlit.app."""
    try:
        url = st.context.url or ""
    except Exception:  # noqa: BLE001 - no browser context (AppTest, bare mode)
        url = ""
    parts = urlsplit(url)
    if not parts.scheme:
        return ""
    path = parts.path.rstrip("/")
    page = path.rsplit("/", 1)[-1] if "/" in path else ""
    base_path = path[: len(path) - len(page)].rstrip("/") if page else path
    return f"{parts.scheme}://{parts.netloc}{base_path}"


def lesson_url(url_path: str, params: dict[str, str], hidden: list[str] | None = None,
               present: bool = False, root: str = "") -> str:
    query = dict(params)
    if hidden:
        query[HIDE] = ",".join(hidden)
    if present:
        query["present"] = "1"
    encoded = urlencode(query, quote_via=quote, safe=",()[]:-.")
    return f"{root}/{url_path}" + (f"?{encoded}" if encoded else "")


def share_panel(*, schema: LinkSchema, settings: object, url_path: str, script: str, title: str,
                key: str, labels: dict[str, str] | None = None) -> str:
    """'Share this experiment': the lesson link (with chosen controls hidden) and the exports.

    The check boxes are labelled from the settings table (`labels` overrides some). The panel is
    lazy: its two dozen widgets run and reach the browser only while it is open, so a new tab's
    first screen does not wait for them; the ticks stay while it is closed."""
    labels = {**schema.labels(), **(labels or {})}
    params = schema.write(settings)
    hide_keys = {name: f"{key}_hide_{name}" for name in schema.names}
    present_key = f"{key}_present"
    panel = st.expander("Share this experiment", icon=":material/share:", key=f"{key}_panel",
                        on_change="rerun")
    if not panel.open:
        # Streamlit forgets a widget's value in a run that does not draw it: writing the value
        # back makes it the learner's own, so the boxes come back ticked when the panel reopens.
        for widget_key in (*hide_keys.values(), present_key):
            if widget_key in st.session_state:
                st.session_state[widget_key] = st.session_state[widget_key]
        hidden = [name for name, widget_key in hide_keys.items()
                  if st.session_state.get(widget_key)]
        return lesson_url(url_path, params, hidden, bool(st.session_state.get(present_key)),
                          app_root())
    with panel:
        st.markdown("The link opens exactly this experiment. Tick the controls your class should "
                    "not see; they keep the values of the link.")
        columns = st.columns(4)
        hidden = [name for i, (name, widget_key) in enumerate(hide_keys.items())
                  if columns[i % 4].checkbox(f"hide {labels[name]}", key=widget_key,
                                             help=f"hide={name}")]
        present = st.checkbox("open in presenter mode", key=present_key)
        url = lesson_url(url_path, params, hidden, present, app_root())
        link_block(url)
        left, right = st.columns(2)
        # The notebook is built when the learner clicks, not on every rerun of the page.
        left.download_button("Notebook (.ipynb)",
                             data=lambda: notebook_bytes(script, title, f"Reproduces {url}"),
                             file_name=f"{url_path}.ipynb", mime="application/x-ipynb+json",
                             key=f"{key}_notebook", icon=":material/description:")
        right.download_button("Script (.py)", data=script.encode(), file_name=f"{url_path}.py",
                              mime="text/x-python", key=f"{key}_script", icon=":material/code:")
    return url
