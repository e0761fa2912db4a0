"""Lesson-link state on a page: settings from `st.query_params`, and back into them.

A page calls `link_settings` at the top. A URL that names any of the tool's parameters is a
lesson link and is applied: when the page opens, and whenever those parameters change under the
page (a lesson link followed inside the app). A URL that names none of them (the sidebar, the
home cards, a lesson's "back") restores this learner's own settings for the page, if it has
any; the page then rewrites the URL to match. `fresh` tells the page to seed its widgets from
the result. After drawing its widgets the page calls `publish_link`, so the address bar is
always a lesson link for what is on screen.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.classroom import hidden_controls
from components.plain_text import code_span, md, shorten
from workbench.common.links import LinkProblem, LinkSchema

Settings = TypeVar("Settings")


@dataclass
class _LinkMemory(Generic[Settings]):
    settings: Settings
    in_url: dict[str, str]
    problems: list[LinkProblem] = field(default_factory=list)


def problem_markdown(problem: LinkProblem, default_used: bool = True) -> str:
    """The problem in words, with the link's value (and anything quoting it) as plain text."""
    ending = "; the default is used." if default_used else "."
    return (f"{code_span(problem.param + '=' + shorten(problem.raw, 40))} was ignored: "
            f"{md(problem.reason)}{ending}")


def _url_values(schema: LinkSchema[Settings]) -> dict[str, str]:
    return {name: st.query_params[name] for name in schema.names if name in st.query_params}


def link_settings(schema: LinkSchema[Settings], key: str) -> tuple[Settings, bool]:
    """(settings, fresh): fresh is True when they were just read from the URL or restored."""
    memory_key = f"link::{key}"
    in_url = _url_values(schema)
    memory: _LinkMemory[Settings] | None = st.session_state.get(memory_key)
    if memory is not None and not in_url and memory.in_url:
        # Back from another page by a bare link: the learner's own settings, not the defaults.
        # Fresh, because Streamlit dropped this page's widget states while it was away.
        # The address says what is restored at once, not only when this run reaches
        # publish_link: a run interrupted before it (a click, a follow) would leave a bare URL.
        restored = schema.write(memory.settings)
        for name, value in restored.items():
            st.query_params[name] = value
        memory = _LinkMemory(memory.settings, restored, [])
        st.session_state[memory_key] = memory
        return memory.settings, True
    fresh = memory is None or memory.in_url != in_url
    if fresh:
        settings, problems = schema.read(in_url)
        memory = _LinkMemory(settings, in_url, problems)
        st.session_state[memory_key] = memory
    assert memory is not None
    for problem in memory.problems:
        st.warning(problem_markdown(problem), icon=":material/link_off:")
    return memory.settings, fresh


def publish_link(schema: LinkSchema[Settings], key: str, settings: Settings) -> dict[str, str]:
    """Write `settings` into the URL (non-default values only) and remember them."""
    wanted = schema.write(settings)
    for name in schema.names:
        if name in wanted:
            if st.query_params.get(name) != wanted[name]:
                st.query_params[name] = wanted[name]
        elif name in st.query_params:
            del st.query_params[name]
    memory: _LinkMemory[Settings] | None = st.session_state.get(f"link::{key}")
    problems = memory.problems if memory is not None and memory.in_url == wanted else []
    st.session_state[f"link::{key}"] = _LinkMemory(settings, wanted, problems)
    return wanted


def fixed_settings_note(slot: DeltaGenerator | None, schema: LinkSchema[Settings],
                        settings: Settings) -> None:
    """Under the title, when a shared link hid controls: which settings it fixed and to what
    (e.g. "Activation **Tanh** · Hidden layer widths **16,16**"), so the first screen says what the
    missing controls would have shown."""
    fixed = schema.fixed_settings(settings, hidden_controls()) if slot is not None else []
    if not fixed:
        return
    with slot:
        st.info("**This link fixes** " + " · ".join(f"{md(label)} **{md(value)}**"
                                                  for label, value in fixed),
                icon=":material/lock:")
