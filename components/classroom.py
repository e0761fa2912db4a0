"""Classroom links: `hide=` in a lesson link removes chosen controls from a page.

A control is named by its lesson-link parameter (`hide=batch,shuffle` hides the controls behind
`batch` and `shuffle`), so hiding needs no page-specific code: a page asks `visible(name)`
before drawing a control, and uses the link's value when it is hidden.
"""
from __future__ import annotations

import re

import streamlit as st

HIDE = "hide"
_NAME = re.compile(r"^[a-z_]{1,30}$")


def hidden_controls() -> frozenset[str]:
    raw = st.query_params.get(HIDE, "")
    names = {part.strip().lower() for part in raw.split(",")[:50]}
    return frozenset(name for name in names if _NAME.match(name))


def visible(control: str) -> bool:
    return control not in hidden_controls()
