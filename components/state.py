"""Per-learner state: typed accessors over `st.session_state`.

Each browser session has its own `st.session_state`, so nothing here is ever seen by another
learner. Module globals and `st.cache_resource` are shared by everyone and hold no learner data.
A tool keeps one dataclass under one key; `learner_state` creates it on first use.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import streamlit as st

T = TypeVar("T")


def learner_state(key: str, factory: Callable[[], T]) -> T:
    """This learner's object under `key`, created by `factory` the first time."""
    state_key = f"learner::{key}"
    if state_key not in st.session_state:
        st.session_state[state_key] = factory()
    return st.session_state[state_key]


def connection_check() -> Callable[[], bool]:
    """Whether this browser tab is still connected, askable later from any thread (the frame
    route asks on every frame). A closed tab's session leaves Streamlit's active sessions at
    once, though its state lives on for the disconnected-session TTL; work kept alive from
    outside a page run (a script polling a frame token) must stop then, not when the state goes.
    Without a Streamlit server (AppTest) there is nothing to ask: always connected."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    context = get_script_run_ctx()
    if context is None or not Runtime.exists():
        return lambda: True
    runtime, session = Runtime.instance(), context.session_id
    return lambda: runtime.is_active_session(session)


def resend_widget_value(key: str, value_if_unset: Any) -> None:
    """Call right before drawing the widget keyed `key`: its stored value (`value_if_unset` the
    first time, or after Streamlit dropped it) goes into this run's message to the browser.

    Streamlit sends a value set through session state only with the run that set it; later runs
    send the widget's default and leave the value to the browser. A browser that draws the widget
    first from a later run's message starts it at that default and sends it back with the next
    click. A busy one does: it draws an element once the element's code has loaded, and the
    learner may click meanwhile (CI saw a shape box seeded with 4,6 come back as "", a scalar;
    tests/e2e/test_tensor_inspector.py holds the text box's code to show it)."""
    st.session_state[key] = st.session_state[key] if key in st.session_state else value_if_unset


def fragment_rerun() -> bool:
    """Whether this script run is a fragment's own rerun (a button inside `st.fragment`), not a
    run of the whole page. Streamlit says so only in its script-run context; its
    `fragment_ids_this_run` is pinned by tests/unit/components/test_state.py."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    context = get_script_run_ctx()
    return bool(context is not None and context.fragment_ids_this_run)


@dataclass
class DeviceChoice:
    """'auto' (the server's best device) or 'cpu', chosen in the sidebar."""

    choice: str = "auto"


@dataclass
class SharedModel:
    """What the moons trainer publishes for the other tools (autograd graph, batch iterator).

    `model` is the learner's trained `nn.Module`; `features`/`labels` are the scaled training
    split as float32 tensors (N, 2) and (N,); `description` says in words what was trained.
    """

    model: Any = None
    features: Any = None
    labels: Any = None
    description: str = ""

    @property
    def ready(self) -> bool:
        return self.model is not None and self.features is not None


def device_choice() -> DeviceChoice:
    return learner_state("device", DeviceChoice)


def shared_model() -> SharedModel:
    return learner_state("shared_model", SharedModel)


def session_id() -> str:
    """A stable id for this browser session, e.g. to hold a heavy-job lease."""
    return learner_state("session_id", _new_session_id)


def _new_session_id() -> str:
    import uuid

    return uuid.uuid4().hex
