"""AppTest's per-instance component scan, done once per test process.

Each new `AppTest` scans every installed distribution's metadata for Streamlit component
manifests (streamlit/testing/v1/app_test.py, `discover_and_register_components`): about 0.25 s
on 2 cores, and the app tests create several hundred AppTests. The installed packages do not
change during a test session and this app declares its components in code, not in a package
manifest, so the first scan's answer is every later one's.
"""
from __future__ import annotations

import functools

from streamlit.components.v2 import manifest_scanner

manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


# --- Graphs: the DOT text the page computed ------------------------------------------------------
# With Graphviz's `dot` program on the machine, components/graph_view.py lays each graph out on the
# server (a child process per new graph) and sends SVG. The app tests read what the page computed,
# the DOT text of `st.graphviz_chart`, and start no other process (the `spawns` marker); the
# server-side layout has its own tests (autograd_graph/test_graph_view.py, which sets `dot_program` back,
# and the Chromium tests).
import pytest  # noqa: E402

from components import graph_view  # noqa: E402


@pytest.fixture(autouse=True)
def _graphs_as_dot_text(monkeypatch):
    monkeypatch.setattr(graph_view, "dot_program", lambda: None)


# --- The browser's order of widget states --------------------------------------------------------
# The browser's widget manager holds each widget's value from the moment it is drawn and adds a
# pressed button's trigger after them, so a rerun's callbacks run for changed values first and the
# press last. AppTest lists states in page order instead. A test of a press that races a redraw
# (the stale value of a slider the server had just moved) asks for the browser's order.
from streamlit.testing.v1.element_tree import ElementTree  # noqa: E402


@pytest.fixture
def presses_sent_last(monkeypatch):
    page_order = ElementTree.get_widget_states

    def browser_order(tree):
        states = page_order(tree)
        values = [s for s in states.widgets if s.WhichOneof("value") != "trigger_value"]
        presses = [s for s in states.widgets if s.WhichOneof("value") == "trigger_value"]
        del states.widgets[:]
        states.widgets.extend(values + presses)
        return states

    monkeypatch.setattr(ElementTree, "get_widget_states", browser_order)
