"""The graph PyTorch records, walked into plain data (the page draws it: app_pages/autograd_graph/drawing.py).

Every tensor computed from a tensor that requires grad carries `grad_fn`, the node of the
backward graph that knows how to send gradients to its inputs. Each node lists those inputs in
`next_functions`: other nodes, `AccumulateGrad` for a leaf (which adds into the leaf's `.grad`),
or `None` for an input that needs no gradient. Walking `next_functions` from the output visits
exactly the graph `backward()` will run. The learner's names, the values and the tensors that are
*not* in the graph (constants, `no_grad` results, `detach()` results) come from the interpreter's
catalog of the program.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from workbench.autograd_graph.recording import Catalog

NodeKind = Literal["op", "accumulate", "leaf", "output", "constant", "outside"]
EdgeKind = Literal["flow", "leaf", "constant", "result"]
MAX_NODES_DRAWN = 160
SMALL_TENSOR = 6


@dataclass(frozen=True)
class TensorView:
    """A tensor as the page shows it."""

    name: str | None
    shape: tuple[int, ...]
    dtype: str
    value: str
    grad: str | None
    requires_grad: bool
    is_leaf: bool

    @property
    def shape_text(self) -> str:
        return "scalar" if not self.shape else "×".join(str(s) for s in self.shape)


@dataclass(frozen=True)
class Node:
    key: str
    kind: NodeKind
    title: str
    tensor: TensorView | None = None
    note: str = ""
    saved: tuple[str, ...] = ()     # what the node saved for backward, e.g. "self = 7"
    saved_from: tuple[str, ...] = ()  # PyTorch's attribute for each, e.g. "_saved_self"


@dataclass(frozen=True)
class Edge:
    """`src` feeds `dst` in the forward pass; gradients travel the other way.

    `slot` is the position of `src` in `dst.next_functions`, so a node used twice (`x * x`)
    has two edges.
    """

    src: str
    dst: str
    kind: EdgeKind
    slot: int = 0


@dataclass(frozen=True)
class GraphModel:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    root_key: str | None
    root_name: str
    truncated: bool = False

    def node(self, key: str) -> Node:
        for node in self.nodes:
            if node.key == key:
                return node
        raise KeyError(key)

    @property
    def op_names(self) -> list[str]:
        return [n.title for n in self.nodes if n.kind in ("op", "accumulate")]


@dataclass
class GraphBuild:
    """The model plus which key each live grad_fn node got (for the backward hooks)."""

    model: GraphModel
    keys: dict[int, str]                       # id(grad_fn node) -> node key
    grad_fns: list[Any] = field(default_factory=list)  # keeps the ids above valid
    leaf_of: dict[str, str] = field(default_factory=dict)  # AccumulateGrad key -> leaf box key


def format_tensor(tensor: torch.Tensor | None, digits: int = 4) -> str:
    """`3`, `-12`, `[1, 2, 3]`, or a summary for bigger tensors."""
    if tensor is None:
        return "None"
    data = tensor.detach()
    if data.numel() == 0:
        return "[]"
    if data.numel() == 1 and data.dim() == 0:
        return _number(data.item(), digits)
    if data.numel() <= SMALL_TENSOR:
        return _nested(data.cpu().tolist(), digits)
    floats = data.double() if data.is_floating_point() else data.to(torch.float64)
    return f"mean {_number(floats.mean().item(), 3)}, |max| {_number(floats.abs().max().item(), 3)}"


def _number(value: float | int | bool, digits: int) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    text = f"{value:.{digits}g}"
    return "0" if text == "-0" else text


def _nested(values: Any, digits: int) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v, digits) for v in values) + "]"
    return _number(values, digits)


def view_of(tensor: torch.Tensor, name: str | None) -> TensorView:
    grad = tensor.grad if (tensor.is_leaf or tensor.retains_grad) else None
    return TensorView(name, tuple(tensor.shape), str(tensor.dtype).removeprefix("torch."),
                      format_tensor(tensor), None if grad is None else format_tensor(grad),
                      tensor.requires_grad, tensor.is_leaf)


def pretty_name(grad_fn: Any) -> str:
    """PyTorch's class name for a node: `MulBackward0`, `AccumulateGrad`."""
    return grad_fn.name().split("::")[-1]


# PyTorch names each saved value after the argument of the op's derivative formula (`self`, the
# tensor the op was called on; `other`, its second input; `result`, its output; `exponent`...)
# and keeps it as `grad_fn._saved_<name>`. For a tensor it only needs the shape of, it saves
# `<name>_sym_sizes` (and the like): drawn in the Python a learner writes, `self.shape`.
_METADATA_SUFFIXES = (
    (re.compile(r"_sym_sizes(_opt)?$"), lambda m: ".shape"),
    (re.compile(r"_sym_numel$"), lambda m: ".numel()"),
    (re.compile(r"_sym_storage_offset$"), lambda m: ".storage_offset()"),
    (re.compile(r"_sym_argsize_minus_(\d+)$"), lambda m: f".size(-{m.group(1)})"),
    (re.compile(r"_sym_argsize_(\d+)$"), lambda m: f".size({m.group(1)})"),
    (re.compile(r"_sym_([a-z]+)(_opt)?$"), lambda m: f".{m.group(1)}"),   # any other: `.blocksize`
)
# How a tensor's memory is laid out says nothing about the formula: never drawn.
_LAYOUT_SUFFIX = re.compile(r"_sym_strides$")


@dataclass(frozen=True)
class SavedField:
    """One value a node kept for its backward formula, under the name a learner knows."""

    label: str          # `self`, `other`, `result`, `exponent`, `self.shape`
    field: str          # PyTorch's own attribute: `_saved_self`, `_saved_self_sym_sizes`
    shown: str          # `self = 3`, `result: freed by backward()`
    is_tensor: bool = False


def saved_label(attribute: str) -> tuple[str, str, bool]:
    """`_saved_self_sym_sizes` -> (`self.shape`, `self`, True): the label, the argument it
    belongs to, and whether it is metadata about that argument rather than its value."""
    name = attribute.removeprefix("_saved_")
    for pattern, python in _METADATA_SUFFIXES:
        found = pattern.search(name)
        if found:
            base = name[: found.start()]
            return base + python(found), base, True
    return name, name, False


def _reduction_name(value: int) -> str | None:
    """PyTorch saves `reduction=` as its enum number; the names are the ones a loss accepts."""
    from torch.nn import _reduction

    for name in ("none", "mean", "sum"):
        if _reduction.get_enum(name) == value:
            return name
    return None


def saved_fields(grad_fn: Any) -> tuple[SavedField, ...]:
    """What a node keeps for its backward formula, read from its real `_saved_*` attributes.

    `PowBackward0` keeps `self` and `exponent`, `ExpBackward0` its `result`, `MeanBackward0`
    only `self.shape` and `self.numel()` (the mean needs no values to spread its gradient):
    this is what an in-place change must not touch, and what `backward()` frees unless
    `retain_graph=True`. Tensors come first, then shapes, then numbers; the shape of a tensor
    that is saved whole is left out (the tensor's own box says it).
    """
    found: list[tuple[int, SavedField]] = []
    attributes = [a for a in sorted(dir(grad_fn))
                  if a.startswith("_saved_") and not _LAYOUT_SUFFIX.search(a)]
    labels = {a: saved_label(a) for a in attributes}
    for attribute in attributes:
        label, base, metadata = labels[attribute]
        try:
            value = getattr(grad_fn, attribute)
        except RuntimeError as exc:
            why = "changed in place since saved" if "inplace" in str(exc) else "freed by backward()"
            found.append((0, SavedField(label, attribute, f"{label}: {why}", True)))
            continue
        if isinstance(value, torch.Tensor):
            found.append((0, SavedField(label, attribute, f"{label} = {format_tensor(value)}", True)))
        elif value is not None:
            shown = f"{label} = {tuple(value) if isinstance(value, list | tuple) else value}"
            if base == "reduction" and isinstance(value, int) and _reduction_name(value):
                shown += f" ('{_reduction_name(value)}')"
            found.append((1 if metadata else 2, SavedField(label, attribute, shown)))
    saved_whole = {f.label for _, f in found if f.is_tensor}
    kept = [(order, f) for order, f in found
            if not (order == 1 and labels[f.field][1] in saved_whole)]
    return tuple(f for _, f in sorted(kept, key=lambda item: item[0]))


def saved_for_backward(grad_fn: Any) -> tuple[str, ...]:
    """The saved values as the drawing shows them: `self = 3`, `exponent = 2`."""
    return tuple(f.shown for f in saved_fields(grad_fn))


def build_graph(root: torch.Tensor, catalog: Catalog, named: Mapping[str, Any] | None = None,
                root_name: str | None = None) -> GraphBuild:
    """Walk `root.grad_fn.next_functions` into a GraphModel.

    `named` (the program's names -> values) adds the tensors that are not in this graph, each
    with the reason. Breadth-first, so keys follow the order of distance from the output.
    """
    root_name = root_name or catalog.name_of(root) or "output"
    nodes: list[Node] = []
    edges: list[Edge] = []
    keys: dict[int, str] = {}
    grad_fns: list[Any] = []
    leaf_of: dict[str, str] = {}
    drawn_tensors: dict[int, str] = {}
    truncated = False

    root_key = "out"
    nodes.append(Node(root_key, "output", root_name, view_of(root, root_name)))
    drawn_tensors[id(root)] = root_key

    queue: list[Any] = []
    if root.grad_fn is not None:
        keys[id(root.grad_fn)] = "f0"
        grad_fns.append(root.grad_fn)
        queue.append(root.grad_fn)
        edges.append(Edge("f0", root_key, "result"))
    while queue:
        grad_fn = queue.pop(0)
        key = keys[id(grad_fn)]
        title = pretty_name(grad_fn)
        if title == "AccumulateGrad":
            leaf = grad_fn.variable
            leaf_name = catalog.name_of(leaf)
            leaf_key = f"t{key[1:]}"
            nodes.append(Node(key, "accumulate", title))
            nodes.append(Node(leaf_key, "leaf", leaf_name or "leaf", view_of(leaf, leaf_name)))
            edges.append(Edge(leaf_key, key, "leaf"))
            leaf_of[key] = leaf_key
            drawn_tensors[id(leaf)] = leaf_key
        else:
            record = catalog.producer(grad_fn)
            tensor = None
            if record is not None:
                name = catalog.name_of(record.result)
                tensor = view_of(record.result, name)
                if record.result is not root:
                    drawn_tensors.setdefault(id(record.result), key)
            saved = saved_fields(grad_fn)
            nodes.append(Node(key, "op", title, tensor, saved=tuple(f.shown for f in saved),
                              saved_from=tuple(f.field for f in saved)))
        for slot, (child, _) in enumerate(grad_fn.next_functions):
            if child is None:
                continue
            if id(child) not in keys:
                if len(keys) >= MAX_NODES_DRAWN:
                    truncated = True
                    continue
                keys[id(child)] = f"f{len(keys)}"
                grad_fns.append(child)
                queue.append(child)
            edges.append(Edge(keys[id(child)], key, "flow", slot))

    # Inputs PyTorch did not record (they need no gradient): from the interpreter's records.
    constant_count = 0
    for grad_fn in grad_fns:
        record = catalog.producer(grad_fn)
        if record is None:
            continue
        for tensor in record.inputs:
            if tensor.requires_grad:
                continue
            if id(tensor) not in drawn_tensors:
                constant_count += 1
                const_key = f"c{constant_count}"
                name = catalog.name_of(tensor)
                nodes.append(Node(const_key, "constant", name or "constant", view_of(tensor, name),
                                  catalog.reason_of(tensor) or "requires_grad=False: a constant"))
                drawn_tensors[id(tensor)] = const_key
            edges.append(Edge(drawn_tensors[id(tensor)], keys[id(grad_fn)], "constant"))

    outside = 0
    for name, value in (named or {}).items():
        if not isinstance(value, torch.Tensor) or id(value) in drawn_tensors:
            continue
        outside += 1
        if value.requires_grad:
            note = f"not used to compute {root_name}"
        else:
            note = catalog.reason_of(value) or "requires_grad=False: never tracked"
        nodes.append(Node(f"o{outside}", "outside", name, view_of(value, name), note))
        drawn_tensors[id(value)] = f"o{outside}"

    model = GraphModel(tuple(nodes), tuple(edges), root_key, root_name, truncated)
    return GraphBuild(model, keys, grad_fns, leaf_of)


# ---------------------------------------------------------------------------- the step-through

@dataclass(frozen=True)
class Overlay:
    """What the step-through adds to the picture at one moment of the backward pass."""

    done: frozenset[str] = frozenset()
    current: str | None = None
    edge_grads: Mapping[tuple[str, str, int], str] = field(default_factory=dict)
    node_grads: Mapping[str, str] = field(default_factory=dict)   # grad of a node's output
    leaf_grads: Mapping[str, str] = field(default_factory=dict)   # leaf .grad after accumulation
    seed: str | None = None                                       # gradient the output starts with


def leaves(model: GraphModel) -> Iterable[Node]:
    return (n for n in model.nodes if n.kind == "leaf")
