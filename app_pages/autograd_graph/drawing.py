"""The autograd graph drawn as DOT text, by our own code, for the page to show.

`workbench.autograd_graph.graph` walks what PyTorch recorded into plain data (`GraphModel`) and the
step-through says what one moment of the backward pass adds (`Overlay`); this module turns both
into a picture: boxes, rows, colours, labels, arrows, the collapsed view of long chains, the
DOT text, and an estimate of the drawn size that `stage_plan` uses to fit it on a projector.
"""
from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.plain_text import dot_string
from workbench.autograd_graph.graph import (SMALL_TENSOR, Edge, GraphModel, Node, NodeKind, Overlay,
                                            TensorView, saved_label)
from workbench.common import palette

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


@dataclass(frozen=True)
class Row:
    """One line of a box's label: its DOT-HTML, and its plain text and size for `estimate_size`."""

    html: str
    text: str
    points: float
    bold: bool = False


@dataclass(frozen=True)
class Box:
    key: str
    rows: tuple[Row, ...]
    fill: str
    border: str
    pen: float
    style: str
    tooltip: str
    outside: bool = False       # drawn in the "Not in the backward graph" cluster


@dataclass(frozen=True)
class Arrow:
    src: str
    dst: str
    attributes: str             # what goes between the brackets of the DOT edge
    label: Row | None = None    # the gradient chip, when one has flowed along it


@dataclass(frozen=True)
class Drawing:
    """What `to_dot` writes: the boxes and arrows, before they become DOT text."""

    boxes: tuple[Box, ...]
    arrows: tuple[Arrow, ...]
    scale: float
    direction: str
    members: Mapping[str, tuple[str, ...]]  # box key -> the keys of the graph nodes it draws
    presenter: bool = False                 # one text size, tighter spacing (see `drawing`)

    def box_of(self, node_key: str) -> str | None:
        for key, keys in self.members.items():
            if node_key in keys:
                return key
        return None


def to_dot(model: GraphModel, overlay: Overlay | None = None, *, scale: float = 1.0,
           direction: str = "TB", show_outside: bool = True, show_saved: bool = False,
           max_inches: tuple[float, float] | None = None, collapsed: bool = False,
           presenter: bool = False, title: str = "autograd") -> str:
    """DOT text for `model`; `overlay` colours what the backward pass has done so far.

    `max_inches` (width, height) shrinks a graph that would not fit; smaller ones keep their size.
    `collapsed` draws the collapsed view (see `collapsed_drawing`), `presenter` the projector's
    (see `drawing`). `title` names the graph (the SVG's `<title>`: its accessible name).
    """
    picture = drawing(model, overlay, scale=scale, direction=direction, show_outside=show_outside,
                      show_saved=show_saved, collapsed=collapsed, presenter=presenter)
    return dot_text(picture, max_inches, title=title)


def drawing(model: GraphModel, overlay: Overlay | None = None, *, scale: float = 1.0,
            direction: str = "TB", show_outside: bool = True, show_saved: bool = False,
            collapsed: bool = False, presenter: bool = False) -> Drawing:
    """The boxes and arrows of `model` at one moment of the backward pass.

    `presenter` draws for a projector, where the graph is scaled to the screen's height and its
    smallest text is what the back row must read: every text has the one size (notes are told
    apart by colour and italics, not by a smaller font), the boxes and ranks sit closer, and the
    "leaf · requires_grad" / "output" lines go (the colour says it, the tooltip too).
    """
    overlay = overlay or Overlay()
    direction = "TB" if direction == "TB" else "LR"
    if collapsed:
        picture = collapsed_drawing(model, overlay, scale=scale, direction=direction, presenter=presenter)
    else:
        boxes = [_box(node, overlay, scale, show_saved, presenter) for node in model.nodes
                 if node.kind != "outside"]
        if show_outside:
            boxes += [dataclasses.replace(_box(node, overlay, scale, False, presenter), outside=True)
                      for node in model.nodes if node.kind == "outside"]
        arrows = [_arrow(edge, overlay, scale, presenter=presenter) for edge in model.edges]
        picture = Drawing(tuple(boxes), tuple(arrows), scale, direction, {b.key: (b.key,) for b in boxes})
    return dataclasses.replace(picture, presenter=presenter)


def dot_text(picture: Drawing, max_inches: tuple[float, float] | None = None, *,
             title: str = "autograd") -> str:
    scale = picture.scale
    font = 14 * scale
    nodesep, ranksep = _separations(picture)
    margin = "0.08,0.03" if picture.presenter else "0.12,0.06"
    size = f'size="{max_inches[0]:g},{max_inches[1]:g}", ' if max_inches else ""
    lines = [
        # The graph's name is the SVG's <title>, which assistive technology reads as its name.
        f'digraph "{dot_string(title)}" {{',
        f'  graph [rankdir={picture.direction}, bgcolor="transparent", {size}'
        f'nodesep={nodesep:.2f}, ranksep={ranksep:.2f}, fontname="Helvetica", '
        f'fontsize={font:.0f}, fontcolor="{EDGE}"];',
        f'  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize={font:.0f}, '
        f'fontcolor="{palette.INK}", penwidth={1.2 * scale:.1f}, margin="{margin}"];',
        f'  edge [color="{EDGE}", penwidth={1.3 * scale:.1f}, arrowsize={0.8 * scale:.2f}, '
        f'fontname="Helvetica", fontsize={font * _chip_ratio(picture.presenter):.0f}];',
    ]
    for box in picture.boxes:
        if not box.outside:
            lines.append("  " + _box_line(box))
    outside = [box for box in picture.boxes if box.outside]
    if outside:
        lines.append("  subgraph cluster_outside {")
        lines.append(f'    label="Not in the backward graph"; style="dashed,rounded"; color="{EDGE}"; '
                     f'fontcolor="{EDGE}"; penwidth={scale:.1f};')
        for box in outside:
            lines.append("    " + _box_line(box))
        lines.append("  }")
    for arrow in picture.arrows:
        lines.append(f"  {arrow.src} -> {arrow.dst} [{arrow.attributes}];")
    lines.append("}")
    return "\n".join(lines)


def _separations(picture: Drawing) -> tuple[float, float]:
    """nodesep and ranksep, in inches."""
    if picture.presenter:
        return 0.15 * picture.scale, 0.22 * picture.scale
    return 0.25 * picture.scale, 0.4 * picture.scale


def _chip_ratio(presenter: bool) -> float:
    return 1.0 if presenter else 0.9


def _small_ratio(presenter: bool) -> float:
    return 1.0 if presenter else 11 / 14


def _box_line(box: Box) -> str:
    cells = "".join(f"<tr><td>{row.html}</td></tr>" for row in box.rows)
    label = f'<table border="0" cellborder="0" cellspacing="0" cellpadding="1">{cells}</table>'
    tooltip = _esc(box.tooltip).replace("\\", "\\\\")  # no DOT escapes (\\N, \\l)
    return (f'{box.key} [label=<{label}>, shape=box, style="{box.style}", fillcolor="{box.fill}", '
            f'color="{box.border}", penwidth={box.pen:.1f}, tooltip="{tooltip}"];')


def _look(node: Node, overlay: Overlay, scale: float, keys: tuple[str, ...] | None = None,
          ) -> tuple[str, str, float, str]:
    """Fill, border, pen width and style of a box drawing the nodes `keys` (default: its own)."""
    keys = keys or (node.key,)
    fill, border = STYLE[node.kind]
    pen = 1.2 * scale
    style = "rounded,filled"
    if node.kind in ("constant", "outside"):
        style = "rounded,filled,dashed"
    if all(key in overlay.done for key in keys):
        fill, border = DONE_FILL, DONE_BORDER
    elif any(key in overlay.done for key in keys):
        border = DONE_BORDER
    if overlay.current in keys:
        fill, border, pen = CURRENT_FILL, GRADIENT, 3.2 * scale
    if node.kind == "leaf" and node.key in overlay.leaf_grads and overlay.current not in keys:
        border, pen = GRADIENT, 2.4 * scale
    return fill, border, pen, style


def _box(node: Node, overlay: Overlay, scale: float, show_saved: bool, presenter: bool = False) -> Box:
    fill, border, pen, style = _look(node, overlay, scale)
    return Box(node.key, tuple(_rows(node, overlay, scale, show_saved, presenter)), fill, border, pen,
               style, _tooltip(node))


def _row(html_text: str, text: str, points: float, bold: bool = False) -> Row:
    return Row(html_text, text, points, bold)


def _rows(node: Node, overlay: Overlay, scale: float, show_saved: bool = False,
          presenter: bool = False, brief: bool = False) -> list[Row]:
    """The lines of a node's box. In presenter mode a value and its gradient share a line, and
    a node the engine has not reached yet says `grad —`: the box has its final size from the
    first step on, so the graph keeps its scale while the teacher steps through it. `brief`
    (the collapsed view) gives a tensor of more than a few elements as its shape."""
    rows: list[Row] = []
    tensor = node.tensor
    font = 14 * scale
    small = font * _small_ratio(presenter)
    stepping = overlay.seed is not None or bool(overlay.done)

    def note(text: str, colour: str = MUTED, italic: bool = False) -> Row:
        shown = f"<i>{_esc(text)}</i>" if italic else _esc(text)
        return _row(f'<font color="{colour}" point-size="{small:.0f}">{shown}</font>', text, small)

    def strong(text: str, colour: str) -> Row:
        return _row(f'<font color="{colour}"><b>{_esc(text)}</b></font>', text, font, True)

    def beside(first: Row | None, second: Row | None) -> list[Row]:
        if presenter and first is not None and second is not None:
            return [Row(f"{first.html}  {second.html}", f"{first.text}  {second.text}", font, True)]
        return [row for row in (first, second) if row is not None]

    if node.kind in ("op", "accumulate"):
        if node.kind == "op":
            rows.append(_row(f"<b>{_esc(node.title)}</b>", node.title, font, True))
        else:
            title = font if presenter else 12 * scale
            rows.append(_row(f'<font point-size="{title:.0f}"><b>{_esc(node.title)}</b></font>',
                             node.title, title, True))
        value = None
        if tensor is not None:
            named = f"{tensor.name} = " if tensor.name else ""
            text = (_briefly(tensor.name, tensor) if brief
                    else f"{named}{_short(tensor.value)}  ({tensor.shape_text})")
            value = _row(f'<font color="{MUTED}">{_esc(text)}</font>', text, font)
        grad = None
        if node.key in overlay.node_grads:
            grad = strong(f"grad {_short(overlay.node_grads[node.key])}", GRADIENT)
        elif presenter and stepping and node.kind == "op":
            grad = strong("grad —", MUTED)
        rows += beside(value, grad)
        if show_saved:
            rows += [note(f"saved {_short(item, 34)}", SAVED) for item in node.saved[:4]]
            if len(node.saved) > 4:
                rows.append(note(f"and {len(node.saved) - 4} more saved (hover the box)", SAVED))
        return rows
    shape = tensor.shape_text if tensor else ""
    rows.append(_row(f'<b>{_esc(node.title)}</b>  <font color="{MUTED}">{_esc(shape)}</font>',
                     f"{node.title}  {shape}", font, True))
    if tensor is not None:
        data = None
        if not brief or not _many(tensor):
            text = f"data {_short(tensor.value)}"
            data = _row(_esc(text), text, font)
        if node.kind == "leaf":
            grad = overlay.leaf_grads.get(node.key, tensor.grad)
            colour = GRADIENT if node.key in overlay.leaf_grads else MUTED
            rows += beside(data, strong(f".grad {'None' if grad is None else _short(grad)}", colour))
            if not presenter:
                rows.append(note("leaf · requires_grad"))
        elif node.kind == "output":
            seed = None if overlay.seed is None else strong(f"grad {_short(overlay.seed)}", GRADIENT)
            rows += beside(data, seed)
            flags = "requires_grad" if tensor.requires_grad else "requires_grad=False"
            if not presenter or not tensor.requires_grad:
                rows.append(note(f"output · {flags}"))
        elif data is not None:
            rows.append(data)
    if node.note:
        rows.append(note(node.note, italic=True))
    return rows


def _arrow(edge: Edge, overlay: Overlay, scale: float, src: str | None = None,
           dst: str | None = None, presenter: bool = False) -> Arrow:
    src, dst = src or edge.src, dst or edge.dst
    grad = overlay.edge_grads.get((edge.src, edge.dst, edge.slot))
    points = 14 * scale * _chip_ratio(presenter)
    if edge.kind == "constant":
        return Arrow(src, dst, "style=dotted, arrowhead=empty")
    if edge.kind == "result" and overlay.seed is not None:
        grad = overlay.seed
    elif grad is None:
        style = f"style={'dashed' if edge.kind == 'leaf' else 'solid'}"
        if presenter and (overlay.seed is not None or overlay.done):
            # A blank chip holds the place of the gradient to come: with every label there from
            # the first step, Graphviz keeps the ranks (and the drawing's height) step to step.
            blank = Row(_chip("", blank=True), " ", points, True)
            return Arrow(src, dst, f"{style}, label=<{blank.html}>", blank)
        return Arrow(src, dst, style)
    # Gradient has flowed along this edge: draw it against the forward arrow, labelled.
    chip = Row(_chip(grad), _short(grad), points, True)
    return Arrow(src, dst, f'color="{GRADIENT}", penwidth={2.6 * scale:.1f}, dir=back, label=<{chip.html}>',
                 chip)


# ---------------------------------------------------------------------------- collapsed view

def _gradient_flow(model: GraphModel) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Each node's inputs and consumers along the edges a gradient travels."""
    inputs: dict[str, list[str]] = {}
    consumers: dict[str, list[str]] = {}
    for edge in model.edges:
        if edge.kind in ("flow", "result"):
            inputs.setdefault(edge.dst, []).append(edge.src)
            consumers.setdefault(edge.src, []).append(edge.dst)
    return inputs, consumers


def chains(model: GraphModel) -> list[tuple[str, ...]]:
    """Runs of backward nodes that pass one gradient along: each node of a run has exactly one
    input, the next node of the run, and that node feeds nothing else. Output side first (the
    order the engine runs them). A node on no run is a run of one."""
    ops = {n.key for n in model.nodes if n.kind == "op"}
    inputs, consumers = _gradient_flow(model)
    below = {u: inputs[u][0] for u in ops
             if len(inputs.get(u, [])) == 1 and inputs[u][0] in ops and consumers.get(inputs[u][0]) == [u]}
    merged = set(below.values())
    runs = []
    for node in model.nodes:
        if node.key not in ops or node.key in merged:
            continue
        run = [node.key]
        while run[-1] in below:
            run.append(below[run[-1]])
        runs.append(tuple(run))
    return runs


def collapsed_drawing(model: GraphModel, overlay: Overlay, *, scale: float, direction: str,
                      presenter: bool = False) -> Drawing:
    """Fewer, smaller boxes for a graph too big to read: each `AccumulateGrad` is drawn inside
    its leaf's box, a chain of nodes that pass one gradient along (`chains`) is one box listing
    its nodes, a constant is written inside the node that uses it, a tensor of more than a few
    elements shows its shape rather than a summary of its values, and neither saved tensors nor
    the tensors outside the graph are drawn. Every node of the graph is still in some box: the
    box of the node the engine runs is the highlighted one, and in a chain its line is marked."""
    by_key = {n.key: n for n in model.nodes}
    box_of: dict[str, str] = {}
    members: dict[str, tuple[str, ...]] = {}
    for run in chains(model):
        members[run[0]] = run
        box_of.update({key: run[0] for key in run})
    leaf_of = {e.dst: e.src for e in model.edges if e.kind == "leaf"}
    inputs, consumers = _gradient_flow(model)
    for node in model.nodes:
        if node.kind == "leaf":
            group = [node.key, *(a for a, leaf in leaf_of.items() if leaf == node.key)]
            # The chain goes on past AccumulateGrad: a node whose one input is this leaf (as
            # `w.T` makes TBackward0) and that feeds one node is drawn in the leaf's box too.
            while True:
                nexts = consumers.get(group[-1], [])
                alone = len(nexts) == 1 and members.get(nexts[0]) == (nexts[0],)
                if not alone or inputs.get(nexts[0]) != [group[-1]]:
                    break
                members.pop(nexts[0])
                group.append(nexts[0])
            members[node.key] = tuple(group)
            box_of.update({key: node.key for key in group})
        elif node.kind == "output":
            members[node.key] = (node.key,)
            box_of[node.key] = node.key
    constants: dict[str, list[Node]] = {}
    for edge in model.edges:
        if edge.kind == "constant" and edge.dst in box_of:
            constants.setdefault(box_of[edge.dst], []).append(by_key[edge.src])
    small = 14 * scale * _small_ratio(presenter)

    def note(text: str) -> Row:
        return _row(f'<font color="{MUTED}" point-size="{small:.0f}">{_esc(text)}</font>', text, small)

    boxes = []
    for key, keys in members.items():
        node = by_key[key]
        if node.kind == "op":
            rows = _chain_rows(keys, by_key, overlay, scale, presenter)
        else:
            rows = _rows(node, overlay, scale, presenter=presenter, brief=True)
        if node.kind == "leaf":
            # The leaf's AccumulateGrad is drawn here: say so where "leaf · requires_grad" was.
            if not presenter:
                rows.pop()
            rows.append(note("leaf · AccumulateGrad adds into .grad"))
            rows += [_member_row(by_key[k], overlay, scale, "reached through ") for k in keys
                     if by_key[k].kind == "op"]
        unique = {c.key: c for c in constants.get(key, []) if c.tensor is not None}
        rows += [note(f"with constant {_briefly(c.title, c.tensor)}") for c in unique.values()]
        fill, border, pen, style = _look(node, overlay, scale, keys)
        tooltip = " · ".join(_tooltip(by_key[k]) for k in keys)
        boxes.append(Box(key, tuple(rows), fill, border, pen, style, tooltip))
    arrows = []
    for edge in model.edges:
        if edge.kind in ("leaf", "constant") or edge.src not in box_of or edge.dst not in box_of:
            continue
        src, dst = box_of[edge.src], box_of[edge.dst]
        if src != dst:
            arrows.append(_arrow(edge, overlay, scale, src, dst, presenter))
    return Drawing(tuple(boxes), tuple(arrows), scale, direction, members, presenter)


def _many(tensor: TensorView) -> bool:
    """More elements than the page writes out (it summarises them as mean and |max|)."""
    numel = 1
    for size in tensor.shape:
        numel *= size
    return numel > SMALL_TENSOR


def _briefly(name: str | None, tensor: TensorView) -> str:
    """`w = 3`, `[1, 2]`, or for a tensor of many elements its shape: `X (16×2)`."""
    if _many(tensor):
        return f"{name} ({tensor.shape_text})" if name else f"({tensor.shape_text})"
    value = _short(tensor.value, 24)
    return f"{name} = {value}" if name else value


def _member_row(node: Node, overlay: Overlay, scale: float, lead: str = "") -> Row:
    """A node inside a collapsed box: `PowBackward0 → L = 36`, marked ◀ while the engine runs it."""
    made = ""
    if node.tensor is not None and node.tensor.name:
        made = f" → {_briefly(node.tensor.name, node.tensor)}"
    title = f"{_esc(lead)}<b>{_esc(node.title)}</b>"
    if made:
        title += f'<font color="{MUTED}">{_esc(made)}</font>'
    running = node.key == overlay.current
    if running:
        title = f'<font color="{GRADIENT}">{title} ◀</font>'
    return _row(title, lead + node.title + made + (" ◀" if running else ""), 14 * scale, True)


def _chain_rows(keys: tuple[str, ...], by_key: Mapping[str, Node], overlay: Overlay,
                scale: float, presenter: bool) -> list[Row]:
    """One line per node of a chain, `PowBackward0 → L = 36`, output side first; the node the
    engine runs marked; then the newest gradient the chain passed along."""
    if len(keys) == 1:
        return _rows(by_key[keys[0]], overlay, scale, presenter=presenter, brief=True)
    font = 14 * scale
    rows = [_member_row(by_key[key], overlay, scale) for key in keys]
    ran = [key for key in keys if key in overlay.node_grads]
    stepping = overlay.seed is not None or bool(overlay.done)
    if ran:
        newest = overlay.current if overlay.current in ran else ran[-1]
        text = f"grad {_short(overlay.node_grads[newest], 30)}"
        rows.append(_row(f'<font color="{GRADIENT}"><b>{_esc(text)}</b></font>', text, font, True))
    elif presenter and stepping:
        rows.append(_row(f'<font color="{MUTED}"><b>grad —</b></font>', "grad —", font, True))
    return rows


# ---------------------------------------------------------------------------- size estimate

# Graphviz sizes text from the font's metrics. Helvetica's advance widths, in ems, by kind of
# character: close enough to say whether a drawing fits a screen, not to typeset it.
_NARROW = set("ijl.,:;'|!()[]{} ")
_WIDE = set("mwMW@%")


def text_width(text: str, points: float, bold: bool = False) -> float:
    ems = 0.0
    for char in text:
        if char in _NARROW:
            ems += 0.28
        elif char in _WIDE:
            ems += 0.86
        elif char.isupper():
            ems += 0.68
        else:
            ems += 0.56
    return ems * points * (1.07 if bold else 1.0)


def _box_size(box: Box, presenter: bool) -> tuple[float, float]:
    """A box's width and height in points: its rows, the cell padding and the node margin."""
    margin_x, margin_y = (0.08, 0.03) if presenter else (0.12, 0.06)
    width = max(text_width(r.text, r.points, r.bold) for r in box.rows) + 2 + 2 * margin_x * 72
    height = sum(r.points * 1.2 + 2 for r in box.rows) + 2 * margin_y * 72
    return max(width, 54.0), max(height, 36.0)


def estimate_size(picture: Drawing) -> tuple[float, float]:
    """About how big Graphviz's `dot` draws `picture`, in points (the SVG's own units).

    The ranks of a longest-path layering: each as deep as its deepest box, and as wide as its
    boxes side by side, plus one slot for every arrow passing through it. When any arrow has a
    label, dot doubles the ranks (each label gets a rank between its arrow's ends) and halves
    their separation. Unconnected boxes (the "not in the graph" cluster) join the first rank.
    The browser lays the graph out, not the server: this is what the server can know before it
    sends the DOT text, within about 25% (tests/unit/autograd_graph/test_stage_plan.py).
    """
    nodesep, ranksep = (inches * 72 for inches in _separations(picture))
    sizes = {b.key: _box_size(b, picture.presenter) for b in picture.boxes}
    if picture.direction == "LR":
        sizes = {key: (h, w) for key, (w, h) in sizes.items()}   # (across the ranks, along them)
    below: dict[str, list[str]] = {}
    for arrow in picture.arrows:
        below.setdefault(arrow.src, []).append(arrow.dst)
    depth: dict[str, int] = {}

    def to_sink(key: str, trail: frozenset[str] = frozenset()) -> int:
        if key not in depth:
            nexts = [k for k in below.get(key, []) if k in sizes and k not in trail]
            depth[key] = 1 + max((to_sink(k, trail | {key}) for k in nexts), default=-1)
        return depth[key]

    connected = [b.key for b in picture.boxes if not b.outside]
    for key in connected:
        to_sink(key)
    step = 2 if any(a.label is not None for a in picture.arrows) else 1
    top = max((depth[k] for k in connected), default=0) * step
    members: dict[int, list[tuple[float, float]]] = {}     # rank -> (across, along) of each slot
    for key in connected:
        members.setdefault(depth[key] * step, []).append(sizes[key])
    for arrow in picture.arrows:
        if arrow.src not in depth or arrow.dst not in depth:
            continue
        upper, lower = depth[arrow.src] * step, depth[arrow.dst] * step
        for rank in range(lower + 1, upper):
            slot = (0.0, 0.0)
            if arrow.label is not None and rank == upper - 1:
                width = text_width(arrow.label.text, arrow.label.points, True) + 8
                height = arrow.label.points * 1.2 + 8
                slot = (width, height) if picture.direction == "TB" else (height, width)
            members.setdefault(rank, []).append(slot)
    outside = [b.key for b in picture.boxes if b.outside]
    cluster = 0.0
    if outside:
        cluster = 2 * 8 + 14 * picture.scale * 1.2  # the cluster's margin and its label
        members.setdefault(top, []).extend(
            (sizes[k][0] + (2 * 8 if i == 0 else 0), sizes[k][1] + cluster) for i, k in enumerate(outside))
    separation = (ranksep / 2 + 1) if step == 2 else ranksep
    along = (sum(max(a for _, a in slots) for slots in members.values())
             + separation * max(0, len(members) - 1))
    across = max((sum(w for w, _ in slots) + nodesep * (len(slots) - 1) for slots in members.values()),
                 default=0.0)
    width, height = (across, along) if picture.direction == "TB" else (along, across)
    return width + 8, height + 8


def _chip(text: str, blank: bool = False) -> str:
    if blank:
        return '<table border="0" cellborder="0" cellpadding="2"><tr><td> </td></tr></table>'
    return (f'<table border="0" cellborder="0" cellpadding="2" bgcolor="{palette.TINT_CREAM}"><tr><td>'
            f'<font color="{palette.DEEP_BROWN}"><b>{_esc(_short(text))}</b></font></td></tr></table>')


def _tooltip(node: Node) -> str:
    """What hovering a box shows: the tensor's facts, and PyTorch's own name of each value the
    node saved (the drawing says `saved self`; PyTorch keeps it as `grad_fn._saved_self`)."""
    parts = [node.title]
    if node.tensor is not None:
        t = node.tensor
        parts += [f"shape {t.shape_text}", f"dtype {t.dtype}", f"requires_grad={t.requires_grad}",
                  f"is_leaf={t.is_leaf}"]
    if node.note:
        parts.append(node.note)
    if node.saved_from:
        labels = [saved_label(field)[0] for field in node.saved_from]
        parts.append("saved for backward: " + ", ".join(
            f"{label} is grad_fn.{field}" for label, field in zip(labels, node.saved_from, strict=True)))
    return " · ".join(parts)


def _short(text: str, limit: int = 42) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)
