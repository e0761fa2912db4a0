"""No page ends its run with `st.stop()`.

`st.stop()` asks Streamlit's script runner to stop (`ScriptRequests.request_stop`), and a stop
replaces whatever rerun was queued while the page ran: a click, a typed value or a drawing sent
meanwhile is dropped without a word. A busy server lost the moons trainer's drawn points that
way (the page stopped while too few points were drawn; tests/e2e/test_moons_trainer_drawn.py's
busy-server test). A page ends by its structure instead: `if ...: ... else: ...`.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = [ROOT / "streamlit_app.py", ROOT / "router.py", *sorted((ROOT / "app_pages").rglob("*.py")),
       *sorted((ROOT / "components").rglob("*.py"))]


def stop_calls(source: str, filename: str = "<source>") -> list[str]:
    """Where `source` calls `st.stop()` (or `streamlit.stop()`), as 'file:line'."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "stop" and isinstance(node.func.value, ast.Name)
                and node.func.value.id in {"st", "streamlit"}):
            found.append(f"{filename}:{node.lineno}")
    return found


def test_the_check_finds_a_stop_and_passes_other_stops():
    assert stop_calls("import streamlit as st\nif x:\n    st.stop()\n") == ["<source>:3"]
    assert stop_calls("server.stop()\nst.stop_training()\ntimer.stop()\n") == []


def test_no_page_calls_st_stop():
    found = [hit for path in APP for hit in stop_calls(path.read_text(), str(path.relative_to(ROOT)))]
    assert not found, found
