"""The autograd page's text alternative: the graph's name says what it computes and where the
walk is, and "Graph as text" (closed, built only when opened) lists the engine's nodes with the
values and gradients PyTorch computed."""
from __future__ import annotations

from tests.app.apptest import assert_clean, open_page
# The lesson program's gradients, computed apart from the page (written once, with its tests).
from tests.app.autograd_graph.test_page import _lesson_grads
from workbench.autograd_graph.graph import format_tensor

PAGE = "app_pages/autograd_graph/page.py"


def _outline_box(at):
    boxes = [e for e in at.expander if e.proto.id.endswith("-ag_outline")]
    assert len(boxes) == 1, "no 'Graph as text' under the graph"
    return boxes[0]


def test_the_graph_is_named_and_its_outline_follows_the_walk():
    at = open_page(PAGE)
    assert_clean(at)
    dot = at.get("graphviz_chart")[0].proto.spec
    assert dot.startswith('digraph "Autograd graph of ')
    assert "backward() has run none of its" in dot.splitlines()[0]
    assert not _outline_box(at).get("markdown"), "the closed outline was built"
    at.session_state["ag_outline"] = True
    at.run()
    assert_clean(at)
    before = _outline_box(at).markdown[0].value
    assert before.count("not run yet") >= 4
    for _ in range(6):
        next(b for b in at.button if b.label == "Next node").click()
        at.run()
    assert_clean(at)
    text = _outline_box(at).markdown[0].value.replace("\\", "")
    grad_w, grad_b = _lesson_grads()
    assert f"w.grad went from None to {format_tensor(grad_w)}" in text
    assert f"b.grad went from None to {format_tensor(grad_b)}" in text
    assert "not run yet" not in text
    lines = text.splitlines()
    assert all(line.startswith("- ") for line in lines)          # a list a screen reader counts
    assert "backward() has run all" in at.get("graphviz_chart")[0].proto.spec.splitlines()[0]
