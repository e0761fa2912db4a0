"""The language of the autograd page: which Python a learner's program may contain, and its limits.

The program text is parsed with `ast.parse` and checked node by node here before any of it runs.
Nothing the learner types ever reaches `eval`, `exec` or `compile`: a node type, name, attribute
or function that is not on the lists of `catalog.py` is refused with the line and the reason.
`Limits` bounds every resource a run may use (source length, node count, statements run, loop
length, constants, exponents, tensor sizes, total elements, wall time); the interpreter enforces
the ones that can only be counted while running.

The accepted language (documented for learners on the page and in docs/lesson-links.md):

- `name = expression`, `name += expression` (also `-=`, `*=`, `/=`: in place on tensors)
- numbers, strings, lists and tuples of them; `+ - * / ** @` and unary minus
- `torch.<function>(...)` for the functions in TORCH_FUNCTIONS, `t.<method>(...)` for the
  methods in TENSOR_METHODS, the attributes in TENSOR_ATTRIBUTES, indexing with whole numbers
  and slices
- `with torch.no_grad():` / `with torch.enable_grad():` / `with torch.inference_mode():`,
  `for i in range(k):` with k <= 100
- comparisons `< <= > >= == !=` (chained as in Python), `x is None` / `x is not None`, `and`,
  `or`, `not`, `if`/`elif`/`else`, `a if cond else b`, and `while cond:`, which the interpreter
  stops after `max_loop_iterations` rounds: the condition of an `if` or a `while` on a tensor
  calls `bool(tensor)` as Python does, so the graph recorded depends on the data
- `print(...)`; `model(X)` when the page provides a model

Every refusal names its line and column (1-based, as editors count) and speaks Python: the
words of `PYTHON_WORDS`, never the names of the `ast` module's classes.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

from workbench.common.source import parse
from workbench.autograd_graph.catalog import (BINARY_OPERATORS, GRAD_MODES, IN_PLACE_OPERATORS, KEYWORDS,
                                              TENSOR_ATTRIBUTES, TENSOR_METHODS, TORCH_CONSTANTS,
                                              TORCH_FUNCTIONS)

# Friendly words for what is refused, so the message says what the learner wrote.
REFUSED_NODES: dict[type, str] = {
    ast.Import: "imports", ast.ImportFrom: "imports", ast.Lambda: "lambda functions",
    ast.FunctionDef: "defining functions", ast.AsyncFunctionDef: "defining functions",
    ast.ClassDef: "defining classes", ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions", ast.DictComp: "comprehensions",
    ast.GeneratorExp: "generator expressions", ast.Try: "try blocks",
    ast.Global: "`global`", ast.Nonlocal: "`nonlocal`", ast.Delete: "`del`",
    ast.Raise: "`raise`", ast.Assert: "`assert`", ast.Return: "`return`", ast.Yield: "`yield`",
    ast.YieldFrom: "`yield`", ast.Await: "`await`", ast.NamedExpr: "the walrus operator `:=`",
    ast.Dict: "dictionaries",
    ast.Set: "sets", ast.JoinedStr: "f-strings", ast.Starred: "`*` unpacking",
    ast.AnnAssign: "annotations", ast.Break: "`break` (a `while` loop ends when its condition "
    "is false)", ast.Continue: "`continue`", ast.AsyncFor: "`async for`",
    ast.AsyncWith: "`async with`", ast.Match: "`match` statements",
}
for _name, _words in (("TryStar", "try blocks"), ("TypeAlias", "`type` aliases")):
    if hasattr(ast, _name):
        REFUSED_NODES[getattr(ast, _name)] = _words

# The Python a learner wrote, for every syntax node a message might have to name. A message
# never shows an `ast` class name (`Gt`, `BoolOp`): a learner never typed one.
PYTHON_WORDS: dict[type, str] = {
    **REFUSED_NODES,
    ast.Mod: "the operator `%`", ast.FloorDiv: "the operator `//`", ast.BitAnd: "the operator `&`",
    ast.BitOr: "the operator `|`", ast.BitXor: "the operator `^`", ast.LShift: "the operator `<<`",
    ast.RShift: "the operator `>>`", ast.Invert: "the operator `~`", ast.In: "`in`",
    ast.NotIn: "`not in`", ast.Is: "`is`", ast.IsNot: "`is not`",
    ast.FormattedValue: "f-strings", ast.comprehension: "comprehensions",
    ast.ExceptHandler: "try blocks", ast.arguments: "function parameters",
    ast.arg: "function parameters", ast.Del: "`del`", ast.alias: "imports",
    ast.match_case: "`match` statements",
}

COMPARE_OPERATORS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


def python_words(node: ast.AST) -> str:
    """What the learner wrote, in Python's words (for a node the language does not accept)."""
    return PYTHON_WORDS.get(type(node), "this kind of Python statement or expression")


@dataclass(frozen=True)
class Limits:
    """Every resource a program may use. A shared link is untrusted input."""

    max_source_chars: int = 4000
    max_lines: int = 80
    max_nodes: int = 1500
    max_depth: int = 30
    max_statements_run: int = 3000
    max_loop_iterations: int = 100
    max_loop_nesting: int = 2
    max_numel: int = 10_000            # elements in any one tensor
    max_total_numel: int = 2_000_000   # elements created by the whole run
    max_abs_constant: float = 1e9
    max_abs_exponent: float = 64
    max_string_chars: int = 200
    max_print_lines: int = 200
    max_backward_calls: int = 60
    max_seconds: float = 2.0           # the rest of a page run's 3 s goes to backward and drawing


DEFAULT_LIMITS = Limits()


class ProgramRefused(Exception):
    """The program steps outside the accepted language or one of its limits.

    `kind` is "language" (something the page does not accept) or "limit" (a resource limit, hit
    while running). `col` is 1-based, like an editor's column; None until a position is known.
    """

    def __init__(self, line: int, message: str, *, col: int | None = None,
                 kind: str = "language") -> None:
        super().__init__(message)
        self.line = line
        self.col = col
        self.message = message
        self.kind = kind

    def __str__(self) -> str:
        return f"{where(self.line, self.col)}: {self.message}"


def where(line: int, col: int | None) -> str:
    """`line 3, column 5` (or `line 3` while the column is not known)."""
    return f"line {line}" if col is None else f"line {line}, column {col}"


# ---------------------------------------------------------------------------- static check

def parse_program(source: str, limits: Limits = DEFAULT_LIMITS) -> ast.Module:
    """Parse and check the whole program before any of it runs."""
    if len(source) > limits.max_source_chars:
        raise ProgramRefused(1, f"the program is longer than {limits.max_source_chars} characters",
                             col=1, kind="limit")
    if "\x00" in source:
        raise ProgramRefused(1, "the program contains a NUL character", col=1)
    if source.count("\n") + 1 > limits.max_lines:
        raise ProgramRefused(limits.max_lines, f"the program has more than {limits.max_lines} lines",
                             col=1, kind="limit")
    try:
        tree = parse(source, mode="exec")
    except SyntaxError as exc:
        raise ProgramRefused(exc.lineno or 1, f"this is not valid Python: {exc.msg}",
                             col=exc.offset or 1) from None
    except (ValueError, RecursionError, MemoryError):
        raise ProgramRefused(1, "the program could not be parsed", col=1) from None
    nodes = list(ast.walk(tree))
    if len(nodes) > limits.max_nodes:
        raise ProgramRefused(1, f"the program is too large ({len(nodes)} syntax nodes, at most "
                                f"{limits.max_nodes})", col=1, kind="limit")
    _check_depth(tree, limits)
    # In source order, each node before its parts: the first problem reported is the earliest
    # statement's, and an operator is judged by the expression it belongs to (`w > 0` on line 2
    # is line 2's comparison, not a position-less `>` counted as line 1).
    for node, line, col in _in_source_order(tree):
        try:
            _check_node(node, limits)
        except ProgramRefused as refused:
            if refused.col is None:
                refused.line, refused.col = line, col
            raise
    _check_loops(tree.body, 0, limits)
    return tree


def line_of(node: ast.AST) -> int:
    return getattr(node, "lineno", 1)


def col_of(node: ast.AST) -> int | None:
    """1-based column of a node, None for nodes without a position (operators, contexts)."""
    offset = getattr(node, "col_offset", None)
    return None if offset is None else offset + 1


def _in_source_order(tree: ast.AST) -> list[tuple[ast.AST, int, int]]:
    """Every node with its position, or the nearest enclosing node's when it has none."""
    found: list[tuple[ast.AST, int, int]] = []
    stack: list[tuple[ast.AST, int, int]] = [(tree, 1, 1)]
    while stack:
        node, line, col = stack.pop()
        if hasattr(node, "lineno"):
            line, col = node.lineno, (col_of(node) or col)
        found.append((node, line, col))
        stack.extend(reversed([(child, line, col) for child in ast.iter_child_nodes(node)]))
    return found


def _check_depth(tree: ast.AST, limits: Limits) -> None:
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limits.max_depth:
            raise ProgramRefused(line_of(node), "the program is nested too deeply",
                                 col=col_of(node), kind="limit")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _is_name(name: str) -> bool:
    return name == "_" or not name.startswith("_")


def _check_node(node: ast.AST, limits: Limits) -> None:
    line = line_of(node)
    if type(node) in REFUSED_NODES:
        raise ProgramRefused(line, f"not allowed here: {REFUSED_NODES[type(node)]}")
    if isinstance(node, ast.Name) and not _is_name(node.id):
        raise ProgramRefused(line, f"names starting with `_` are not allowed (`{node.id}`)")
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("_"):
            raise ProgramRefused(line, f"attributes starting with `_` are not allowed (`.{node.attr}`)")
        if isinstance(node.value, ast.Name) and node.value.id == "torch":
            allowed = TORCH_FUNCTIONS | set(GRAD_MODES) | set(TORCH_CONSTANTS)
            if node.attr not in allowed:
                raise ProgramRefused(line, f"`torch.{node.attr}` is not in the accepted list")
        elif node.attr not in TENSOR_METHODS | TENSOR_ATTRIBUTES:
            raise ProgramRefused(line, f"`.{node.attr}` is not in the accepted list of tensor "
                                       "methods and attributes")
    if isinstance(node, ast.keyword):
        if node.arg is None:
            raise ProgramRefused(line, "`**` unpacking is not allowed")
        if node.arg not in KEYWORDS:
            raise ProgramRefused(line, f"the keyword argument `{node.arg}=` is not accepted")
    if isinstance(node, ast.Constant):
        _check_constant(node.value, line, limits)
    if isinstance(node, ast.Assign):
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            raise ProgramRefused(line, "assign to one plain name, such as `y = w * x`")
    if isinstance(node, ast.AugAssign):
        if not isinstance(node.target, ast.Name):
            raise ProgramRefused(line, "in-place updates need a plain name, such as `w -= lr * w.grad`")
        if type(node.op) not in IN_PLACE_OPERATORS:
            raise ProgramRefused(line, "only `+=`, `-=`, `*=` and `/=` are accepted")
    if isinstance(node, ast.BinOp) and type(node.op) not in BINARY_OPERATORS:
        raise ProgramRefused(line, f"{python_words(node.op)} is not accepted; the arithmetic "
                                   "operators are + - * / ** @")
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
        raise ProgramRefused(line, f"{python_words(node.op)} is not accepted; of the unary "
                                   "operators only `-` and `not` are")
    if isinstance(node, ast.Compare):
        _check_compare(node)
    if isinstance(node, ast.While) and node.orelse:
        raise ProgramRefused(line, "`while ... else` is not accepted: write the `else` part after "
                                   "the loop")
    if isinstance(node, ast.With):
        for item in node.items:
            if item.optional_vars is not None or not _is_grad_mode(item.context_expr):
                raise ProgramRefused(line, "only `with torch.no_grad():`, `with torch.enable_grad():` "
                                           "and `with torch.inference_mode():` are accepted")
    if isinstance(node, ast.For):
        if not isinstance(node.target, ast.Name) or node.orelse:
            raise ProgramRefused(line, "loops look like `for i in range(3):`")
        if not (isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name)
                and node.iter.func.id == "range" and not node.iter.keywords
                and 1 <= len(node.iter.args) <= 3):
            raise ProgramRefused(line, "a loop may only run over `range(k)`")
    if isinstance(node, ast.Call):
        _check_call(node)
    if not isinstance(node, ALLOWED_NODES):
        raise ProgramRefused(line, f"{python_words(node)} is not part of the accepted language "
                                   "(see *What you can write*)")


def _check_compare(node: ast.Compare) -> None:
    for op, right in zip(node.ops, node.comparators, strict=True):
        if isinstance(op, ast.Is | ast.IsNot):
            if not (isinstance(right, ast.Constant) and right.value is None):
                raise ProgramRefused(line_of(node), f"{python_words(op)} is accepted only as "
                                                   "`x is None` or `x is not None`; compare values "
                                                   "with `==`")
        elif not isinstance(op, COMPARE_OPERATORS):
            raise ProgramRefused(line_of(node), f"{python_words(op)} is not accepted; the comparisons "
                                               "are < <= > >= == != (and `is None`)")


def _is_grad_mode(expr: ast.AST) -> bool:
    return (isinstance(expr, ast.Call) and not expr.args and not expr.keywords
            and isinstance(expr.func, ast.Attribute) and expr.func.attr in GRAD_MODES
            and isinstance(expr.func.value, ast.Name) and expr.func.value.id == "torch")


def _check_call(node: ast.Call) -> None:
    func = node.func
    if isinstance(func, ast.Name):
        if func.id not in ("print", "range", "model"):
            raise ProgramRefused(line_of(node), f"calling `{func.id}(...)` is not allowed; the accepted "
                                              "calls are torch functions, tensor methods and print")
    elif not isinstance(func, ast.Attribute):
        raise ProgramRefused(line_of(node), "only torch functions, tensor methods and print can be called")
    elif isinstance(func.value, ast.Name) and func.value.id == "torch" and func.attr in TORCH_CONSTANTS:
        raise ProgramRefused(line_of(node), f"`torch.{func.attr}` is not a function")
    elif func.attr in TENSOR_ATTRIBUTES and func.attr not in TENSOR_METHODS:
        raise ProgramRefused(line_of(node), f"`.{func.attr}` is an attribute, not a method")


def _check_constant(value: Any, line: int, limits: Limits) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return
        if abs(value) > limits.max_abs_constant:
            raise ProgramRefused(line, f"the number {value!r:.20} is larger than "
                                       f"{limits.max_abs_constant:g}")
        return
    if isinstance(value, str):
        if len(value) > limits.max_string_chars:
            raise ProgramRefused(line, f"strings are limited to {limits.max_string_chars} characters")
        return
    if value is Ellipsis:
        return
    raise ProgramRefused(line, f"the constant {type(value).__name__} is not accepted")


def _check_loops(body: list[ast.stmt], depth: int, limits: Limits) -> None:
    """`for` and `while` loops nest at most `max_loop_nesting` deep, inside `if` and `with` too."""
    for statement in body:
        if isinstance(statement, ast.For | ast.While):
            if depth + 1 > limits.max_loop_nesting:
                raise ProgramRefused(line_of(statement), f"loops (`for` and `while`) may be nested "
                                                       f"at most {limits.max_loop_nesting} deep",
                                     col=col_of(statement), kind="limit")
            _check_loops(statement.body, depth + 1, limits)
        elif isinstance(statement, ast.With):
            _check_loops(statement.body, depth, limits)
        elif isinstance(statement, ast.If):
            _check_loops(statement.body, depth, limits)
            _check_loops(statement.orelse, depth, limits)


ALLOWED_NODES = (
    ast.Module, ast.Assign, ast.AugAssign, ast.Expr, ast.With, ast.withitem, ast.For, ast.Pass,
    ast.If, ast.While, ast.IfExp, ast.Compare, ast.BoolOp, ast.And, ast.Or, ast.Not,
    ast.BinOp, ast.UnaryOp, ast.Call, ast.Attribute, ast.Name, ast.Constant, ast.List, ast.Tuple,
    ast.Subscript, ast.Slice, ast.keyword, ast.Load, ast.Store, ast.USub, ast.UAdd,
    ast.Is, ast.IsNot, *COMPARE_OPERATORS, *BINARY_OPERATORS,
)

