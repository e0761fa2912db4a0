"""The autograd graph as text: what a screen reader reads instead of the drawing.

The drawing (app_pages/autograd_graph/drawing.py) places boxes in two dimensions; its text
alternative is a list: the nodes in the order PyTorch's engine ran them (`BackwardTrace.steps`,
recorded by hooks on the real backward()), each with the tensor it made (name, shape, dtype,
value) and the gradient it received and sent, as far as the step-through has got, exactly as the
drawing shows them at that moment. A graph with no backward() to walk lists its nodes in the
graph walk's order, from the output towards the leaves. Nothing here computes: every value and
gradient is one PyTorch produced, formatted by `format_tensor`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from workbench.autograd_graph.backward_steps import BackwardStep, BackwardTrace
from workbench.autograd_graph.graph import GraphModel, Node, TensorView, format_tensor

State = Literal["ran", "now", "next", "never"]


@dataclass(frozen=True)
class OutlineItem:
    """One node of the outline, in words."""

    number: int | None       # the engine's step number; None where the engine did not run it
    node: str                # `MulBackward0`, `AccumulateGrad → w.grad`, `y (output)`
    tensor: str              # `y: scalar float32 = 12`; "" where the node made none we know
    gradient: str            # what it received and sent, or why there is nothing yet
    state: State

    def text(self) -> str:
        """The item as one plain sentence."""
        head = f"{self.number}. {self.node}" if self.number is not None else self.node
        if self.state == "now":
            head += " (the node the engine ran last)"
        parts = [head] + [p for p in (self.tensor, self.gradient) if p]
        return "; ".join(parts)


def tensor_words(view: TensorView | None, role: str = "", *, named: bool = True) -> str:
    """`output y: shape 2×3 float32 = [...]`: the `role`, the program's name for the tensor
    where it gave one (and `named`), its shape, dtype and value."""
    if view is None:
        return ""
    shape = "scalar" if not view.shape else f"shape {view.shape_text}"
    name = f" {view.name}" if named and view.name else ""
    head = f"{role}{name}: " if role or name else ""
    return f"{head.lstrip()}{shape} {view.dtype} = {view.value}"


def _step_item(step: BackwardStep, model: GraphModel, state: State) -> OutlineItem:
    nodes = {n.key: n for n in model.nodes}
    if step.name == "AccumulateGrad":
        leaf = nodes.get(step.leaf_key) if step.leaf_key else None
        label = f"AccumulateGrad → {step.leaf_name}.grad"
        tensor = tensor_words(leaf.tensor if leaf else None, "leaf")
        if state in ("next", "never"):
            return OutlineItem(step.index, label, tensor, _not_yet(state), state)
        before = "None" if step.leaf_before is None else format_tensor(step.leaf_before)
        after = "?" if step.leaf_after is None else format_tensor(step.leaf_after)
        got = format_tensor(step.received) if step.received is not None else "nothing"
        return OutlineItem(step.index, label, tensor,
                           f"received gradient {got}; {step.leaf_name}.grad went from {before} "
                           f"to {after}",
                           state)
    node = nodes.get(step.key)
    tensor = tensor_words(node.tensor if node else None, "output")
    if state in ("next", "never"):
        return OutlineItem(step.index, step.name, tensor, _not_yet(state), state)
    got = format_tensor(step.received) if step.received is not None else "nothing"
    words = [f"received gradient {got}"]
    words += [f"sent {edge.text} to {edge.to.replace('`', '')}" for edge in step.sent]
    if step.skipped:
        words.append("nothing to " + ", ".join(s.replace("`", "") for s in step.skipped))
    return OutlineItem(step.index, step.name, tensor, "; ".join(words), state)


def _not_yet(state: State) -> str:
    return "not run yet" if state == "next" else "not run by this backward() call"


def walk_outline(trace: BackwardTrace, upto: int) -> list[OutlineItem]:
    """The step-through after `upto` steps, in the engine's order: the output and the gradient
    it starts with, then each node (ran, running now, or not yet run)."""
    model = trace.graph
    upto = max(0, min(upto, len(trace.steps)))
    root = next((n for n in model.nodes if n.key == model.root_key), None)
    seed = "nothing" if trace.seed is None else format_tensor(trace.seed)
    items = [OutlineItem(None, f"{trace.root_name} (output)",
                         tensor_words(root.tensor if root else None, named=False),
                         f"backward() starts with gradient {seed}",
                         "ran")]
    for step in trace.steps:
        state: State = "ran" if step.index < upto else "now" if step.index == upto else "next"
        items.append(_step_item(step, model, state))
    ran = {s.key for s in trace.steps}
    for node in model.nodes:
        if node.kind in ("op", "accumulate") and node.key not in ran:
            items.append(OutlineItem(None, _node_label(node, model),
                                     tensor_words(node.tensor, "output"), _not_yet("never"), "never"))
    return items


def _node_label(node: Node, model: GraphModel) -> str:
    if node.kind == "accumulate":
        leaf = next((model.node(e.src) for e in model.edges if e.dst == node.key and e.kind == "leaf"),
                    None)
        return f"AccumulateGrad → {leaf.title}.grad" if leaf else "AccumulateGrad"
    return node.title


def graph_outline(model: GraphModel) -> list[OutlineItem]:
    """A graph with no backward() to walk: its output, its backward nodes in the graph walk's
    order (breadth-first from the output), then its leaves and constants, with their values and
    any `.grad` a leaf holds."""
    items = []
    for node in model.nodes:
        if node.kind == "outside":
            continue
        grad = node.tensor.grad if node.tensor is not None else None
        if node.kind in ("op", "accumulate"):
            label, tensor = _node_label(node, model), tensor_words(node.tensor, "output")
        else:
            label, tensor = f"{node.title} ({node.kind})", tensor_words(node.tensor, named=False)
        items.append(OutlineItem(None, label, tensor,
                                 f"grad = {grad}" if grad is not None else "", "never"))
    return items


def graph_name(model: GraphModel, trace: BackwardTrace | None = None, upto: int = 0) -> str:
    """The drawing's accessible name: what the graph computes and where the step-through is."""
    ops = sum(1 for n in model.nodes if n.kind == "op")
    leaves = [n.title for n in model.nodes if n.kind == "leaf"]
    name = (f"Autograd graph of {model.root_name}: {ops} backward node{'s' if ops != 1 else ''}"
            + (f", leaves {', '.join(leaves)}" if leaves else ", no leaf that requires grad"))
    if trace is not None and trace.steps:
        # Worded unlike the page's "Step 2 of 6." so that a search for that text finds one thing.
        total, upto = len(trace.steps), max(0, min(upto, len(trace.steps)))
        if upto == 0:
            name += f"; backward() has run none of its {total} nodes yet"
        elif upto < total:
            name += f"; backward() has run {upto} of its {total} nodes, the last {trace.steps[upto - 1].name}"
        else:
            name += f"; backward() has run all {total} of its nodes"
    return name
