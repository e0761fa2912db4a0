"""The graph PyTorch records, walked into plain data and drawn as DOT text by our own code.

Every tensor computed from a tensor that requires grad carries `grad_fn`, the node of the
backward graph that knows how to send gradients to its inputs. Each node lists those inputs in
`next_functions`: other nodes, `AccumulateGrad` for a leaf (which adds into the leaf's `.grad`),
or `None` for an input that needs no gradient. Walking `next_functions` from the output visits
exactly the graph `backward()` will run. The learner's names, the values and the tensors that are
*not* in the graph (constants, `no_grad` results, `detach()` results) come from the interpreter's
catalog of the program.
"""
from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from workbench.autograd.interpreter import Catalog
from workbench.common import palette

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


def saved_for_backward(grad_fn: Any) -> tuple[str, ...]:
    """What a node keeps for its backward formula (PyTorch exposes it as `_saved_*`).

    `PowBackward0` keeps `self` and `exponent`, `ExpBackward0` its `result`: this is what an
    in-place change must not touch, and what `backward()` frees unless `retain_graph=True`.
    """
    shown = []
    for attribute in sorted(dir(grad_fn)):
        if not attribute.startswith("_saved_") or attribute.endswith("_sym_strides"):
            continue
        name = attribute.removeprefix("_saved_")
        try:
            value = getattr(grad_fn, attribute)
        except RuntimeError as exc:
            stale = "inplace" in str(exc)
            shown.append(f"{name}: {'changed in place since saved' if stale else 'freed by backward()'}")
            continue
        if isinstance(value, torch.Tensor):
            shown.append(f"{name} = {format_tensor(value)}")
        elif value is not None:
            shown.append(f"{name} = {value}")
    return tuple(shown)


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
            nodes.append(Node(key, "op", title, tensor, saved=saved_for_backward(grad_fn)))
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


# ---------------------------------------------------------------------------- drawing

@dataclass(frozen=True)
class Overlay:
    """What the step-through adds to the picture at one moment of the backward pass."""

    done: frozenset[str] = frozenset()
    current: str | None = None
    edge_grads: Mapping[tuple[str, str, int], str] = field(default_factory=dict)
    node_grads: Mapping[str, str] = field(default_factory=dict)   # grad of a node's output
    leaf_grads: Mapping[str, str] = field(default_factory=dict)   # leaf .grad after accumulation
    seed: str | None = None                                       # gradient the output starts with


# What each colour means in the drawing; the colours themselves are the palette's.
MUTED = palette.GREY_700            # values, shapes and notes beside a node's title
EDGE = palette.GREY_500             # forward arrows, and what is outside the graph
GRADIENT = palette.VERMILION        # a gradient that flowed during backward
SAVED = palette.BLUE                # what a node saved for its backward formula
STYLE: dict[NodeKind, tuple[str, str]] = {          # fill, border
    "op": (palette.GREY_200, palette.GREY_650),
    "accumulate": (palette.TINT_GREEN, palette.GREEN),
    "leaf": (palette.TINT_BLUE, palette.BLUE),
    "output": (palette.TINT_PINK, palette.PURPLE),
    "constant": (palette.GREY_100, palette.GREY_500),
    "outside": (palette.GREY_100, palette.GREY_500),
}
DONE_FILL, DONE_BORDER = palette.TINT_ORANGE, palette.ORANGE   # nodes the engine has run
CURRENT_FILL = palette.TINT_AMBER                              # the node it runs now


def to_dot(model: GraphModel, overlay: Overlay | None = None, *, scale: float = 1.0,
           direction: str = "TB", show_outside: bool = True, show_saved: bool = False,
           max_inches: tuple[float, float] | None = None) -> str:
    """DOT text for `model`; `overlay` colours what the backward pass has done so far.

    `max_inches` (width, height) shrinks a graph that would not fit; smaller ones keep their size.
    """
    overlay = overlay or Overlay()
    font = 14 * scale
    size = f'size="{max_inches[0]:g},{max_inches[1]:g}", ' if max_inches else ""
    lines = [
        "digraph autograd {",
        f'  graph [rankdir={"TB" if direction == "TB" else "LR"}, bgcolor="transparent", {size}'
        f'nodesep={0.25 * scale:.2f}, ranksep={0.4 * scale:.2f}, fontname="Helvetica", '
        f'fontsize={font:.0f}, fontcolor="{EDGE}"];',
        f'  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize={font:.0f}, '
        f'fontcolor="{palette.INK}", penwidth={1.2 * scale:.1f}, margin="0.12,0.06"];',
        f'  edge [color="{EDGE}", penwidth={1.3 * scale:.1f}, arrowsize={0.8 * scale:.2f}, '
        f'fontname="Helvetica", fontsize={font * 0.9:.0f}];',
    ]
    inside = [n for n in model.nodes if n.kind != "outside"]
    for node in inside:
        lines.append("  " + _node_line(node, overlay, scale, show_saved))
    outside = [n for n in model.nodes if n.kind == "outside"]
    if show_outside and outside:
        lines.append("  subgraph cluster_outside {")
        lines.append(f'    label="Not in the backward graph"; style="dashed,rounded"; color="{EDGE}"; '
                     f'fontcolor="{EDGE}"; penwidth={scale:.1f};')
        for node in outside:
            lines.append("    " + _node_line(node, overlay, scale, False))
        lines.append("  }")
    for edge in model.edges:
        lines.append("  " + _edge_line(edge, overlay, scale))
    lines.append("}")
    return "\n".join(lines)


def _node_line(node: Node, overlay: Overlay, scale: float, show_saved: bool) -> str:
    fill, border = STYLE[node.kind]
    pen = 1.2 * scale
    style = "rounded,filled"
    if node.kind in ("constant", "outside"):
        style = "rounded,filled,dashed"
    if node.key in overlay.done:
        fill, border = DONE_FILL, DONE_BORDER
    if node.key == overlay.current:
        fill, border, pen = CURRENT_FILL, GRADIENT, 3.2 * scale
    if node.kind == "leaf" and node.key in overlay.leaf_grads and node.key != overlay.current:
        border, pen = GRADIENT, 2.4 * scale
    label = _label(node, overlay, scale, show_saved)
    tooltip = _esc(_tooltip(node)).replace("\\", "\\\\")  # no DOT escapes (\\N, \\l)
    return (f'{node.key} [label=<{label}>, shape=box, style="{style}", fillcolor="{fill}", '
            f'color="{border}", penwidth={pen:.1f}, tooltip="{tooltip}"];')


def _label(node: Node, overlay: Overlay, scale: float, show_saved: bool = False) -> str:
    rows: list[str] = []
    tensor = node.tensor
    small = f"{11 * scale:.0f}"
    if node.kind in ("op", "accumulate"):
        rows.append(f"<b>{_esc(node.title)}</b>" if node.kind == "op"
                    else f'<font point-size="{12 * scale:.0f}"><b>{_esc(node.title)}</b></font>')
        if tensor is not None:
            named = f"{_esc(tensor.name)} = " if tensor.name else ""
            rows.append(f'<font color="{MUTED}">{named}{_esc(_short(tensor.value))}'
                        f"  ({_esc(tensor.shape_text)})</font>")
        if node.key in overlay.node_grads:
            rows.append(f'<font color="{GRADIENT}"><b>grad {_esc(_short(overlay.node_grads[node.key]))}'
                        "</b></font>")
        if show_saved:
            for item in node.saved[:4]:
                text = _esc(_short(item, 34))
                rows.append(f'<font color="{SAVED}" point-size="{small}">saved {text}</font>')
    else:
        title = _esc(node.title)
        shape = _esc(tensor.shape_text) if tensor else ""
        rows.append(f'<b>{title}</b>  <font color="{MUTED}">{shape}</font>')
        if tensor is not None:
            rows.append(f"data {_esc(_short(tensor.value))}")
            if node.kind == "leaf":
                grad = overlay.leaf_grads.get(node.key, tensor.grad)
                shown = "None" if grad is None else _short(grad)
                colour = GRADIENT if node.key in overlay.leaf_grads else MUTED
                rows.append(f'<font color="{colour}"><b>.grad {_esc(shown)}</b></font>')
                rows.append(f'<font color="{MUTED}" point-size="{small}">leaf · requires_grad</font>')
            elif node.kind == "output":
                if overlay.seed is not None:
                    rows.append(f'<font color="{GRADIENT}"><b>grad {_esc(_short(overlay.seed))}'
                                "</b></font>")
                flags = "requires_grad" if tensor.requires_grad else "requires_grad=False"
                rows.append(f'<font color="{MUTED}" point-size="{small}">output · {flags}</font>')
        if node.note:
            rows.append(f'<font color="{MUTED}" point-size="{small}"><i>{_esc(node.note)}</i></font>')
    cells = "".join(f"<tr><td>{row}</td></tr>" for row in rows)
    return f'<table border="0" cellborder="0" cellspacing="0" cellpadding="1">{cells}</table>'


def _edge_line(edge: Edge, overlay: Overlay, scale: float) -> str:
    grad = overlay.edge_grads.get((edge.src, edge.dst, edge.slot))
    if edge.kind == "constant":
        return f'{edge.src} -> {edge.dst} [style=dotted, arrowhead=empty];'
    if edge.kind == "result" and overlay.seed is not None:
        return (f'{edge.src} -> {edge.dst} [color="{GRADIENT}", penwidth={2.6 * scale:.1f}, dir=back, '
                f'label=<{_chip(overlay.seed)}>];')
    if grad is None:
        style = "dashed" if edge.kind == "leaf" else "solid"
        return f"{edge.src} -> {edge.dst} [style={style}];"
    # Gradient has flowed along this edge: draw it against the forward arrow, labelled.
    return (f'{edge.src} -> {edge.dst} [color="{GRADIENT}", penwidth={2.6 * scale:.1f}, dir=back, '
            f"label=<{_chip(grad)}>];")


def _chip(text: str) -> str:
    return (f'<table border="0" cellborder="0" cellpadding="2" bgcolor="{palette.TINT_CREAM}"><tr><td>'
            f'<font color="{palette.DEEP_BROWN}"><b>{_esc(_short(text))}</b></font></td></tr></table>')


def _tooltip(node: Node) -> str:
    if node.tensor is None:
        return node.title
    t = node.tensor
    parts = [node.title, f"shape {t.shape_text}", f"dtype {t.dtype}", f"requires_grad={t.requires_grad}",
             f"is_leaf={t.is_leaf}"]
    if node.note:
        parts.append(node.note)
    return " · ".join(parts)


def _short(text: str, limit: int = 42) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def leaves(model: GraphModel) -> Iterable[Node]:
    return (n for n in model.nodes if n.kind == "leaf")
