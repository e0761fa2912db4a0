"""The backward pass, node by node, exactly as PyTorch's engine runs it.

Nothing here re-implements autograd. Before a real `tensor.backward()` we register two hooks on
every node of its graph: a *pre-hook*, which the engine calls with the gradient arriving for the
node's output (already summed over every consumer), and a *post-hook*, which it calls with the
gradients the node sends to each of its inputs (`grad_inputs`, one per `next_functions` entry).
The order in which the hooks fire is the order the engine ran the nodes. For `AccumulateGrad`
the post-hook reads the leaf's `.grad` after the addition. The hooks only read and copy.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from workbench.autograd_graph.graph import GraphModel, Overlay, build_graph, format_tensor, pretty_name
from workbench.autograd_graph.interpreter import Interpreter

# What each node does with the gradient it receives: the local rule of the chain rule.
LOCAL_RULES: dict[str, str] = {
    "AddBackward0": "z = a + b: passes the gradient unchanged to both inputs",
    "AddBackward1": "z = a + c: passes the gradient unchanged to a",
    "SubBackward0": "z = a − b: sends the gradient to a and its negative to b",
    "SubBackward1": "z = a − c: passes the gradient unchanged to a",
    "RsubBackward1": "z = c − a: sends the negative gradient to a",
    "MulBackward0": "z = a · b: sends grad · b to a and grad · a to b",
    "MulBackward1": "z = a · c: sends grad · c to a",
    "DivBackward0": "z = a / b: sends grad / b to a and −grad · a / b² to b",
    "DivBackward1": "z = a / c: sends grad / c to a",
    "PowBackward0": "z = aⁿ: sends grad · n · aⁿ⁻¹ to a",
    "PowBackward1": "z = aᵇ: sends grad · b · aᵇ⁻¹ to a and grad · aᵇ · ln a to b",
    "NegBackward0": "z = −a: sends −grad to a",
    "ExpBackward0": "z = eᵃ: sends grad · eᵃ to a",
    "LogBackward0": "z = ln a: sends grad / a to a",
    "SinBackward0": "z = sin a: sends grad · cos a to a",
    "CosBackward0": "z = cos a: sends −grad · sin a to a",
    "TanhBackward0": "z = tanh a: sends grad · (1 − z²) to a",
    "SigmoidBackward0": "z = σ(a): sends grad · z · (1 − z) to a",
    "ReluBackward0": "z = relu(a): passes the gradient where a > 0, zero elsewhere",
    "SqrtBackward0": "z = √a: sends grad / (2√a) to a",
    "AbsBackward0": "z = |a|: sends grad · sign(a) to a",
    "SumBackward0": "z = sum(a): copies the gradient to every element of a",
    "SumBackward1": "z = sum(a, dim): copies the gradient along the summed dimension",
    "MeanBackward0": "z = mean(a): sends grad / n to every element of a",
    "MeanBackward1": "z = mean(a, dim): sends grad / n along the averaged dimension",
    "MmBackward0": "Z = A @ B: sends grad @ Bᵀ to A and Aᵀ @ grad to B",
    "MvBackward0": "z = A @ v: sends outer(grad, v) to A and Aᵀ @ grad to v",
    "DotBackward0": "z = a · b (dot): sends grad · b to a and grad · a to b",
    "AddmmBackward0": "Z = c + A @ B (a Linear layer): grad to c (summed over the batch), "
                      "grad @ Bᵀ to A, Aᵀ @ grad to B",
    "TBackward0": "Z = Aᵀ: transposes the gradient back",
    "ViewBackward0": "a view: reshapes the gradient back to the input's shape",
    "ReshapeAliasBackward0": "a reshape: reshapes the gradient back to the input's shape",
    "UnsafeViewBackward0": "a reshape: reshapes the gradient back to the input's shape",
    "SqueezeBackward1": "squeeze: puts the removed dimension back into the gradient",
    "UnsqueezeBackward0": "unsqueeze: removes the added dimension from the gradient",
    "CloneBackward0": "clone: passes the gradient through unchanged",
    "BinaryCrossEntropyWithLogitsBackward0": "BCE with logits: sends (σ(logit) − target) / n "
                                             "to each logit",
    "AccumulateGrad": "adds the gradient into the leaf's .grad (it is never overwritten)",
}


def local_rule(name: str) -> str:
    return LOCAL_RULES.get(name, "applies this operation's derivative (its local rule) to the gradient")


@dataclass(frozen=True)
class EdgeGradient:
    """A gradient one node sent to one of its inputs."""

    src: str           # the input's node key (the arrow's tail in the forward drawing)
    dst: str           # the node that sent it
    slot: int
    to: str            # readable name of the receiver
    value: torch.Tensor

    @property
    def text(self) -> str:
        return format_tensor(self.value)


@dataclass(frozen=True)
class BackwardStep:
    index: int                     # 1 = first node the engine ran
    key: str
    name: str                      # PyTorch's node name, e.g. MulBackward0
    output_name: str | None        # the program's name of the tensor this node made
    received: torch.Tensor | None  # gradient of the node's output, summed over its consumers
    sent: tuple[EdgeGradient, ...]
    skipped: tuple[str, ...]       # inputs that get no gradient (None in grad_inputs)
    leaf_key: str | None = None
    leaf_name: str | None = None
    leaf_before: torch.Tensor | None = None
    leaf_after: torch.Tensor | None = None
    arrivals: tuple[tuple[str, str], ...] = ()  # (gradient, sender) for each edge that arrived

    @property
    def rule(self) -> str:
        return local_rule(self.name)

    def story(self) -> str:
        """One or two sentences a learner can read aloud."""
        got = format_tensor(self.received) if self.received is not None else "nothing"
        if len(self.arrivals) > 1:
            summed = " and ".join(f"{value} from {sender}" for value, sender in self.arrivals)
            got += (f", the **sum** of {summed}: its output was used {len(self.arrivals)} times, "
                    "and the engine adds up every gradient for it before running the node")
        if self.name == "AccumulateGrad":
            before = "None" if self.leaf_before is None else format_tensor(self.leaf_before)
            after = format_tensor(self.leaf_after) if self.leaf_after is not None else "?"
            return (f"**AccumulateGrad** for leaf `{self.leaf_name}` received **{got}** and added it "
                    f"into `{self.leaf_name}.grad`: {before} → **{after}**.")
        made = f" (it made `{self.output_name}`)" if self.output_name else ""
        parts = [f"**{self.name}**{made} received gradient **{got}** for its output. "
                 f"Local rule: {self.rule}."]
        if self.sent:
            parts.append(" It sent " + "; ".join(f"**{e.text}** to {e.to}" for e in self.sent) + ".")
        if self.skipped:
            parts.append(" Nothing goes to " + ", ".join(self.skipped) + " (no gradient needed).")
        return "".join(parts)


@dataclass
class BackwardTrace:
    """One backward() call: the graph just before it, and every step the engine took."""

    number: int                    # 1 = first backward() of the run
    line: int                      # program line, or 0 for a call the page made
    root_name: str
    graph: GraphModel
    seed: torch.Tensor | None
    retain_graph: bool
    steps: list[BackwardStep] = field(default_factory=list)
    error: BaseException | None = None
    leaf_grads: dict[str, torch.Tensor | None] = field(default_factory=dict)  # name -> .grad after
    recorded: bool = True          # False once the run's budget for copies is spent
    leaf_grads_before: dict[str, torch.Tensor | None] = field(default_factory=dict)  # ... before

    @property
    def finished(self) -> bool:
        return self.error is None

    @property
    def changed(self) -> list[str]:
        """The leaves whose `.grad` this call changed (none, for a call PyTorch refused at once)."""
        return [name for name, after in self.leaf_grads.items()
                if not _same(self.leaf_grads_before.get(name), after)]

    def overlay(self, upto: int) -> Overlay:
        """The picture after the first `upto` steps (0 = only the seed gradient)."""
        upto = max(0, min(upto, len(self.steps)))
        done = self.steps[:upto]
        edge_grads: dict[tuple[str, str, int], str] = {}
        node_grads: dict[str, str] = {}
        leaf_grads: dict[str, str] = {}
        for step in done:
            for edge in step.sent:
                edge_grads[(edge.src, edge.dst, edge.slot)] = edge.text
            if step.received is not None and step.name != "AccumulateGrad":
                node_grads[step.key] = format_tensor(step.received)
            if step.leaf_key is not None and step.leaf_after is not None:
                leaf_grads[step.leaf_key] = format_tensor(step.leaf_after)
                if step.received is not None:
                    edge_grads[(step.leaf_key, step.key, 0)] = "+= " + format_tensor(step.received)
        return Overlay(done=frozenset(s.key for s in done),
                       current=done[-1].key if done else None,
                       edge_grads=edge_grads, node_grads=node_grads, leaf_grads=leaf_grads,
                       seed=None if self.seed is None else format_tensor(self.seed))


def _same(before: torch.Tensor | None, after: torch.Tensor | None) -> bool:
    if before is None or after is None:
        return before is after
    return before.shape == after.shape and bool(torch.equal(before, after))


def same_gradients(traces: list[BackwardTrace]) -> bool:
    """Whether every call left the same `.grad` on every leaf: what "every call gives the same
    gradient" claims, checked on the recorded gradients rather than assumed."""
    first = traces[0].leaf_grads if traces else {}
    return all(t.leaf_grads.keys() == first.keys()
               and all(_same(first[name], t.leaf_grads[name]) for name in first)
               for t in traces[1:])


# Copies of gradients kept for the step-through, in elements, over a whole run (16 MB of float32).
MAX_RECORDED_ELEMENTS = 4_000_000


class BackwardRecorder:
    """Pass as the interpreter's `backward`: runs the real backward() and records every step.

    Once a run has copied MAX_RECORDED_ELEMENTS gradient elements, later calls still run (the
    program's result is the same) but are no longer recorded step by step.
    """

    def __init__(self, max_elements: int = MAX_RECORDED_ELEMENTS) -> None:
        self.traces: list[BackwardTrace] = []
        self.max_elements = max_elements
        self.recorded_elements = 0

    def _copy(self, tensor: torch.Tensor) -> torch.Tensor:
        self.recorded_elements += tensor.numel()
        return tensor.detach().clone()

    def __call__(self, tensor: torch.Tensor, gradient: torch.Tensor | None, retain_graph: bool,
                 line: int, interpreter: Interpreter) -> None:
        named = {k: v for k, v in interpreter.env.items() if isinstance(v, torch.Tensor)}
        build = build_graph(tensor, interpreter.catalog, named)
        seed = gradient
        if seed is None and tensor.requires_grad and tensor.numel() == 1:
            seed = torch.ones_like(tensor)  # what backward() creates implicitly for a scalar
        trace = BackwardTrace(len(self.traces) + 1, line, build.model.root_name, build.model,
                              None if seed is None else seed.detach().clone(), retain_graph)
        self.traces.append(trace)
        titles = {n.key: n for n in build.model.nodes}
        self._leaf_grads(trace.leaf_grads_before, build, titles)
        if self.recorded_elements > self.max_elements:
            trace.recorded = False
            self._run(trace, tensor, gradient, retain_graph, build, titles, handles=[])
            return
        received: dict[str, torch.Tensor | None] = {}
        # node key -> (edge, sender) for each gradient sent to it so far, in the order sent: a
        # step's arrivals are looked up, not found by scanning every earlier step's edges (a
        # stack of 700 tensors sends 700 edges; 160 such steps made that scan 10^7 comparisons).
        arrived: dict[str, list[tuple[EdgeGradient, str]]] = {}
        handles = []

        def receiver_name(child: Any) -> str:
            key = build.keys.get(id(child), "?")
            if key in build.leaf_of:
                return f"AccumulateGrad (`{titles[build.leaf_of[key]].title}`)"
            return pretty_name(child)

        def on_pre(node: Any, key: str, grad_outputs: Sequence[torch.Tensor | None]) -> None:
            first = grad_outputs[0] if grad_outputs else None
            received[key] = None if first is None else self._copy(first)

        def on_post(node: Any, key: str, grad_inputs: Sequence[torch.Tensor | None]) -> None:
            sent, skipped = [], []
            for slot, (child, _) in enumerate(node.next_functions):
                grad = grad_inputs[slot] if slot < len(grad_inputs) else None
                if child is None:
                    continue
                if grad is None:
                    skipped.append(receiver_name(child))
                    continue
                sent.append(EdgeGradient(build.keys.get(id(child), "?"), key, slot,
                                         receiver_name(child), self._copy(grad)))
            node_view = titles.get(key)
            leaf_key = build.leaf_of.get(key)
            step = BackwardStep(len(trace.steps) + 1, key, pretty_name(node),
                                node_view.tensor.name if node_view and node_view.tensor else None,
                                received.get(key), tuple(sent), tuple(skipped))
            if leaf_key is not None:
                leaf = node.variable
                grad = leaf.grad
                step = BackwardStep(step.index, key, step.name, None, step.received, (), (),
                                    leaf_key, titles[leaf_key].title, leaves_before.get(key),
                                    None if grad is None else self._copy(grad))
            arrivals = tuple((edge.text, sender) for edge, sender in arrived.pop(key, ()))
            for edge in step.sent:
                arrived.setdefault(edge.src, []).append((edge, step.name))
            trace.steps.append(dataclasses.replace(step, arrivals=arrivals))

        leaves_before: dict[str, torch.Tensor | None] = {}
        for grad_fn in build.grad_fns:
            key = build.keys[id(grad_fn)]
            if key in build.leaf_of:
                before = grad_fn.variable.grad
                leaves_before[key] = None if before is None else self._copy(before)
            handles.append(grad_fn.register_prehook(
                lambda grad_outputs, node=grad_fn, key=key: on_pre(node, key, grad_outputs)))
            handles.append(grad_fn.register_hook(
                lambda grad_inputs, grad_outputs, node=grad_fn, key=key: on_post(node, key, grad_inputs)))
        self._run(trace, tensor, gradient, retain_graph, build, titles, handles)

    def _run(self, trace: BackwardTrace, tensor: torch.Tensor, gradient: torch.Tensor | None,
             retain_graph: bool, build: Any, titles: dict[str, Any], handles: list) -> None:
        """The real `backward()`: its error kept on the trace (and raised on), then the hooks
        removed and each leaf's `.grad` recorded, whether it ran or failed."""
        try:
            tensor.backward(gradient=gradient, retain_graph=retain_graph)
        except BaseException as exc:
            trace.error = exc
            raise
        finally:
            for handle in handles:
                handle.remove()
            self._leaf_grads(trace.leaf_grads, build, titles)

    def _leaf_grads(self, into: dict[str, torch.Tensor | None], build: Any,
                    titles: dict[str, Any]) -> None:
        for grad_fn in build.grad_fns:
            key = build.keys[id(grad_fn)]
            if key in build.leaf_of:
                leaf = grad_fn.variable
                name = titles[build.leaf_of[key]].title
                into[name] = None if leaf.grad is None else self._copy(leaf.grad)
