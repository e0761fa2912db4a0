"""Code-editor keys for a program typed into a text area: monospace, Tab indents, Shift+Tab
outdents, Enter keeps the indentation and adds a level after a colon, and Esc then Tab leaves
the box (static/code_keys.js, unit-tested with node --test).

The text area stays the settings table's widget; a components-v2 element with no content of
its own loads the keys' module from this app's static folder (no other host) and attaches them.
"""
from __future__ import annotations

import streamlit as st

HINT = ("Tab indents the line (Shift+Tab outdents) and Enter keeps the indentation; press Esc, "
        "then Tab, to leave the box.")

_LOADER = """
const source = new URL("app/static/code_keys.js", document.baseURI).href;
export default function (component) {
  const { selector, hint } = component.data;
  import(source).then((module) => module.install(document, selector, hint));
}
"""
_KEYS = st.components.v2.component("workbench_code_keys", js=_LOADER)


def code_keys(widget_key: str) -> None:
    """Give the text area with key `widget_key` the keys above, and say so under it."""
    st.caption(f":material/keyboard: {HINT}")
    # The element draws nothing: its container is taken out of the layout (the script runs).
    st.html(f"<style>.st-key-{widget_key}_keys {{ display: none; }}</style>")
    _KEYS(data={"selector": f".st-key-{widget_key} textarea", "hint": HINT}, key=f"{widget_key}_keys")
