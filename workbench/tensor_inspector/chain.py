"""A typed chain of tensor ops, such as `transpose(0,2).reshape(4,-1)[:, 1:3]`, read safely.

The text is parsed with `ast.parse(mode="eval")` and the tree is walked against a whitelist:
only calls of the methods in `ALLOWED_METHODS` with whole-number literals (or tuples/lists of
them) as arguments (and, for `clone`/`contiguous`, `memory_format=` one of the names in
`MEMORY_FORMATS`), and subscripts made of slices, whole numbers, `None` and `...`. Nothing is
ever evaluated: the walk turns the tree into plain `Step` records, and `apply_step` calls the
named tensor method with those plain Python values. Anything else is refused with a reason.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import torch
from workbench.common.source import parse

# The layout ops of the lesson, plus a few neighbours worth comparing (flip, clone, movedim...).
ALLOWED_METHODS: dict[str, str] = {
    "view": "new sizes over the same storage; never copies, fails if the strides cannot allow it",
    "reshape": "like view when it can be, otherwise a copy",
    "transpose": "swaps two dimensions by swapping their sizes and strides",
    "t": "transpose of a matrix (rank <= 2)",
    "permute": "reorders every dimension: sizes and strides move together",
    "movedim": "moves one dimension to another place",
    "unsqueeze": "inserts a dimension of size 1",
    "squeeze": "removes dimensions of size 1",
    "flatten": "merges a range of dimensions into one (a view when it can be)",
    "unflatten": "splits one dimension into several",
    "contiguous": "a row-major copy, unless the tensor already is one",
    "expand": "stretches size-1 dimensions with stride 0, without copying",
    "narrow": "a window along one dimension: a view with a storage offset",
    "select": "picks one index of a dimension and drops it",
    "flip": "reverses a dimension; PyTorch has no negative strides, so this copies",
    "clone": "always a copy with new memory; by default (memory_format=torch.preserve_format) "
             "laid out in its input's order of dimensions, so not always contiguous",
}
# `memory_format=` is read only as one of these exact names, for these methods.
MEMORY_FORMATS: dict[str, torch.memory_format] = {
    "contiguous_format": torch.contiguous_format, "preserve_format": torch.preserve_format}
MEMORY_FORMAT_METHODS = ("clone", "contiguous")
KEYWORDS = frozenset({"dim", "dim0", "dim1", "dims", "start_dim", "end_dim", "start", "length",
                      "index", "source", "destination", "sizes", "size"})
MAX_SOURCE_LENGTH = 300
MAX_STEPS = 16
MAX_NODES = 400
MAX_MAGNITUDE = 2**40          # far beyond any real size, small enough to stay a plain int64
MAX_SEQUENCE = 8               # at most this many numbers inside one tuple or list argument


class ChainSyntaxError(ValueError):
    """The text is not a chain of allowed ops; the message says why, in words."""


@dataclass(frozen=True)
class Step:
    """One op of the chain: a method call (`method` set) or an indexing step (`index` set)."""

    text: str                                  # canonical source, e.g. "view(-1)" or "[:, 1:3]"
    method: str | None = None
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()
    index: tuple[Any, ...] | None = None       # slices, ints, None and Ellipsis

    @property
    def is_index(self) -> bool:
        return self.index is not None

    def code(self) -> str:
        """How the step is written after a tensor name: `.view(-1)` or `[:, 1:3]`."""
        return self.text if self.is_index else "." + self.text


def apply_step(tensor: torch.Tensor, step: Step) -> torch.Tensor:
    """Run one step on `tensor`; PyTorch's own errors pass through unchanged."""
    if step.is_index:
        assert step.index is not None
        return tensor[step.index]
    assert step.method in ALLOWED_METHODS
    return getattr(tensor, step.method)(*step.args, **dict(step.kwargs))


def format_chain(steps: list[Step] | tuple[Step, ...]) -> str:
    """The chain as a learner would type it: no leading dot, no tensor name."""
    return "".join(step.code() for step in steps).removeprefix(".")


def parse_chain(text: str) -> tuple[Step, ...]:
    """Steps of a typed chain. Accepts `t().view(-1)`, `.t()`, `x.t()` and `[::2]` starts."""
    text = text.strip()
    if not text:
        return ()
    if len(text) > MAX_SOURCE_LENGTH:
        raise ChainSyntaxError(f"the chain is longer than {MAX_SOURCE_LENGTH} characters")
    if text.startswith("x.") or text.startswith("x["):
        text = text[1:]
    source = "x" + (text if text[0] in ".[" else "." + text)
    try:
        tree = parse(source, mode="eval")
    except SyntaxError as exc:
        raise ChainSyntaxError(f"this is not a chain of calls such as transpose(0, 1).reshape(-1) "
                               f"(Python could not read it: {exc.msg})") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ChainSyntaxError("the chain is too long")
    steps: list[Step] = []
    node = tree.body
    while not (isinstance(node, ast.Name) and node.id == "x"):
        if len(steps) >= MAX_STEPS:
            raise ChainSyntaxError(f"at most {MAX_STEPS} steps")
        if isinstance(node, ast.Call):
            steps.append(_call_step(node))
            node = node.func.value  # type: ignore[attr-defined]  (checked in _call_step)
        elif isinstance(node, ast.Subscript):
            steps.append(_index_step(node))
            node = node.value
        elif isinstance(node, ast.Attribute) and node.attr in ALLOWED_METHODS:
            raise ChainSyntaxError(f"write `{node.attr}()` with parentheses: steps are method calls")
        elif isinstance(node, ast.Attribute):
            raise ChainSyntaxError(f"`{node.attr}` is not one of the allowed ops: "
                                   + ", ".join(ALLOWED_METHODS))
        else:
            raise ChainSyntaxError(f"`{_snippet(node)}` is not an allowed step")
    return tuple(reversed(steps))


def _snippet(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 30 else text[:27] + "..."


def _call_step(node: ast.Call) -> Step:
    func = node.func
    if not isinstance(func, ast.Attribute):
        raise ChainSyntaxError(f"`{_snippet(node)}` is not a method call on the tensor")
    name = func.attr
    if name not in ALLOWED_METHODS:
        raise ChainSyntaxError(f"`{name}` is not one of the allowed ops: "
                               + ", ".join(ALLOWED_METHODS))
    if any(isinstance(a, ast.Starred) for a in node.args):
        raise ChainSyntaxError("`*` unpacking is not allowed")
    args = tuple(_argument(a, name) for a in node.args)
    kwargs: list[tuple[str, Any]] = []
    for keyword in node.keywords:
        if keyword.arg == "memory_format" and name in MEMORY_FORMAT_METHODS:
            kwargs.append((keyword.arg, _memory_format(keyword.value, name)))
            continue
        if keyword.arg is None or keyword.arg not in KEYWORDS:
            raise ChainSyntaxError(f"keyword `{keyword.arg or '**'}` is not allowed in {name}()")
        kwargs.append((keyword.arg, _argument(keyword.value, name)))
    text = name + "(" + ", ".join([ast.unparse(a) for a in node.args]
                                  + [f"{k.arg}={ast.unparse(k.value)}" for k in node.keywords]) + ")"
    return Step(text=text, method=name, args=args, kwargs=tuple(kwargs))


def _memory_format(node: ast.AST, where: str) -> torch.memory_format:
    """`torch.contiguous_format` or `torch.preserve_format`, written out; nothing else."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "torch" and node.attr in MEMORY_FORMATS:
        return MEMORY_FORMATS[node.attr]
    raise ChainSyntaxError(f"memory_format in {where}() must be one of "
                           + ", ".join(f"torch.{name}" for name in MEMORY_FORMATS))


def _whole_number(node: ast.AST, where: str) -> int:
    negative = False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        negative = isinstance(node.op, ast.USub)
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        value = -node.value if negative else node.value
        if abs(value) > MAX_MAGNITUDE:
            raise ChainSyntaxError(f"{value} is too large (numbers are limited to ±2**40)")
        return value
    raise ChainSyntaxError(f"`{_snippet(node)}` in {where} is not a whole number")


def _argument(node: ast.AST, where: str) -> int | tuple[int, ...]:
    if isinstance(node, ast.Tuple | ast.List):
        if len(node.elts) > MAX_SEQUENCE:
            raise ChainSyntaxError(f"at most {MAX_SEQUENCE} numbers in one tuple")
        return tuple(_whole_number(e, f"{where}()") for e in node.elts)
    return _whole_number(node, f"{where}()")


def _index_item(node: ast.AST) -> Any:
    if isinstance(node, ast.Slice):
        parts = [None if p is None or (isinstance(p, ast.Constant) and p.value is None)
                 else _whole_number(p, "a slice") for p in (node.lower, node.upper, node.step)]
        return slice(*parts)
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return Ellipsis
    return _whole_number(node, "an index")


def _index_step(node: ast.Subscript) -> Step:
    inner = node.slice
    items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
    if len(items) > MAX_SEQUENCE:
        raise ChainSyntaxError(f"at most {MAX_SEQUENCE} items in one index")
    index = tuple(_index_item(item) for item in items)
    text = "[" + ast.unparse(inner).removeprefix("(").removesuffix(")") + "]" \
        if isinstance(inner, ast.Tuple) else "[" + ast.unparse(inner) + "]"
    return Step(text=text, index=index)
