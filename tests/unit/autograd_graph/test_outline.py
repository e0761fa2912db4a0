"""The autograd graph as text (workbench/autograd_graph/outline.py): the engine's order, each node's
value and the gradients PyTorch computed, as far as the step-through has got."""
from __future__ import annotations

import torch

from workbench.autograd_graph.graph import format_tensor
from workbench.autograd_graph.outline import graph_name, graph_outline, walk_outline
from workbench.autograd_graph.session import run_session
from workbench.autograd_graph.settings import AutogradSettings

PROGRAM = ("w = torch.tensor(2.0, requires_grad=True)\nb = torch.tensor(1.0, requires_grad=True)\n"
           "c = torch.tensor(3.0)\ny = w * w + b * c\ny.backward()\n")


def _trace():
    return run_session(AutogradSettings(PROGRAM)).traces[0]


def _direct():
    w, b = torch.tensor(2.0, requires_grad=True), torch.tensor(1.0, requires_grad=True)
    return torch.autograd.grad(w * w + b * torch.tensor(3.0), (w, b))


def test_the_outline_lists_the_nodes_in_the_order_the_engine_ran_them():
    trace = _trace()
    items = walk_outline(trace, len(trace.steps))
    assert items[0].node == "y (output)"
    assert [i.number for i in items[1:]] == [s.index for s in trace.steps]
    assert [i.node.split(" ")[0] for i in items[1:]] == [s.name for s in trace.steps]


def test_after_the_walk_each_leaf_line_holds_the_gradient_pytorch_computed():
    trace = _trace()
    text = "\n".join(i.text() for i in walk_outline(trace, len(trace.steps)))
    grad_w, grad_b = _direct()
    assert f"w.grad went from None to {format_tensor(grad_w)}" in text
    assert f"b.grad went from None to {format_tensor(grad_b)}" in text
    assert f"leaf w: scalar float32 = {format_tensor(torch.tensor(2.0))}" in text
    assert "not run yet" not in text


def test_a_node_the_engine_has_not_reached_shows_no_gradient_yet():
    trace = _trace()
    items = walk_outline(trace, 1)
    assert items[1].state == "now" and "(the node the engine ran last)" in items[1].text()
    assert "received gradient 1" in items[1].gradient
    for item in items[2:]:
        assert item.gradient == "not run yet" and item.state == "next"
    grad_w, _ = _direct()
    assert f"to {format_tensor(grad_w)}" not in "\n".join(i.text() for i in items)


def test_the_graph_without_a_walk_lists_every_node_once_with_its_value():
    trace = _trace()
    items = graph_outline(trace.graph)
    ops = [n for n in trace.graph.nodes if n.kind == "op"]
    assert sum(1 for i in items if i.node.endswith("Backward0")) == len(ops)
    assert any(i.node == "c (constant)" and i.tensor == "scalar float32 = 3" for i in items)


def test_the_name_says_what_the_graph_computes_and_where_the_walk_is():
    trace = _trace()
    name = graph_name(trace.graph)
    assert name.startswith("Autograd graph of y: 3 backward nodes, leaves ")
    assert set(name.split("leaves ")[1].split(", ")) == {"w", "b"}
    last = len(trace.steps)
    assert graph_name(trace.graph, trace, 0).endswith(f"backward() has run none of its {last} nodes yet")
    assert graph_name(trace.graph, trace, 2).endswith(
        f"has run 2 of its {last} nodes, the last {trace.steps[1].name}")
    assert graph_name(trace.graph, trace, last).endswith(f"has run all {last} of its nodes")
    for upto in range(last + 1):                 # never the page's own "Step 2 of 5." text
        assert "step" not in graph_name(trace.graph, trace, upto).lower()
