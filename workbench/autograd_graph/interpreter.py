"""Running a learner's checked program: statement by statement, as real PyTorch, within limits.

`language.parse_program` has already refused anything outside the accepted language; here each
statement runs with the bindings the page provides (the moons model and its batch), a per-run
random generator seeded with 0, the counting limits (statements, loop length, tensor elements,
list items, backward calls, printed lines) and a deadline checked between statements and
expressions and at every step of a walk of a list (`_measure`: a shared list is walked once). An op
on large operands is first dry-run on the `meta` device, so an oversized result is refused
before it is allocated. `print` formats only what it shows. Problems come back in a
`RunOutcome`: refused (the page's limits) or failed (PyTorch's own error, which is the lesson).
"""
from __future__ import annotations

import ast
import math
import operator
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from workbench.autograd_graph.catalog import (BINARY_OPERATORS, COMPARISON_SYMBOLS, COMPARISONS, CREATORS,
                                              GRAD_MODES, IN_PLACE_OPERATORS, RANDOM_CREATORS, SYMBOLS,
                                              TENSOR_ATTRIBUTES, TENSOR_METHODS, TORCH_CONSTANTS,
                                              TORCH_FUNCTIONS)
from workbench.common.jobs import breathe
from workbench.autograd_graph.language import (DEFAULT_LIMITS, Limits, ProgramRefused, col_of, line_of,
                                               parse_program, where)

__all__ = ["DEFAULT_LIMITS", "Limits", "ProgramFailed", "ProgramRefused", "RunOutcome",
           "parse_program", "run_program"]


PYTORCH, PYTHON = "PyTorch", "Python"


class ProgramFailed(Exception):
    """PyTorch or Python itself raised while running `line`; `origin` says which: PyTorch when
    the error came out of a call into PyTorch (an op, a creator, backward(), the model, a
    tensor's truth value), Python otherwise (a name not defined yet, 1 / 0 on numbers)."""

    def __init__(self, line: int, error: BaseException, *, col: int | None = None,
                 origin: str = PYTHON) -> None:
        super().__init__(str(error))
        self.line = line
        self.col = col
        self.error = error
        self.origin = origin

    def __str__(self) -> str:
        return f"{where(self.line, self.col)}: {self.error}"


@contextmanager
def _from_pytorch(line: int) -> Iterator[None]:
    """An error raised inside this block came from a call into PyTorch (the interpreter's own
    refusals and limits pass through unchanged)."""
    try:
        yield
    except (ProgramRefused, ProgramFailed, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - PyTorch's own error is the lesson
        raise ProgramFailed(line, exc, origin=PYTORCH) from None


@dataclass
class Decision:
    """An `if` or `while` whose condition the data decided: the define-by-run part of a run."""

    line: int
    kind: str                       # "if" | "while"
    condition: str                  # the condition's source text
    true: int = 0                   # times the condition was true
    false: int = 0                  # times it was false

    def summary(self) -> str:
        """What the data decided, in words: `the body ran 5 times, then y < 100 was false`."""
        if self.kind == "while":
            body = f"the body ran {_times(self.true)}"
            if self.false == 0:
                return f"{body}; the condition was still true when the page stopped the loop"
            if self.false == 1:
                return f"{body}, then the condition was false"
            return f"the loop ran {_times(self.false)} (inside another loop); {body} in all"
        taken = []
        if self.true:
            taken.append(f"true {_times(self.true)}: the `if` branch ran")
        if self.false:
            taken.append(f"false {_times(self.false)}: the `else` branch ran (or nothing, where "
                         "there is none)")
        return "; ".join(taken)


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"



@dataclass
class OpRecord:
    """One tensor the program computed, and the tensors it was computed from."""

    line: int
    label: str                      # e.g. "w * x", "torch.relu", ".sum"
    result: torch.Tensor
    inputs: tuple[torch.Tensor, ...]
    grad_enabled: bool


@dataclass
class Catalog:
    """What the interpreter saw: names from the program, and how each tensor was made.

    The graph walker uses it to put the learner's names on PyTorch's nodes and to say why a
    tensor is not in the backward graph.
    """

    names: dict[int, str] = field(default_factory=dict)            # id(tensor) -> latest name
    tensors: dict[int, torch.Tensor] = field(default_factory=dict)  # keeps ids valid
    ops: list[OpRecord] = field(default_factory=list)
    reasons: dict[int, str] = field(default_factory=dict)          # id(tensor) -> why no graph
    order: list[str] = field(default_factory=list)                 # names, last-assigned last
    made_by: dict[int, OpRecord] = field(default_factory=dict)     # id(grad_fn) -> its op

    def keep(self, tensor: torch.Tensor) -> None:
        self.tensors[id(tensor)] = tensor

    def name(self, tensor: torch.Tensor, name: str) -> None:
        self.keep(tensor)
        self.names[id(tensor)] = name
        if name in self.order:
            self.order.remove(name)
        self.order.append(name)

    def name_of(self, tensor: torch.Tensor) -> str | None:
        return self.names.get(id(tensor))

    def reason_of(self, tensor: torch.Tensor) -> str | None:
        return self.reasons.get(id(tensor))

    def add(self, record: OpRecord) -> None:
        self.ops.append(record)
        if record.result.grad_fn is not None:
            self.made_by[id(record.result.grad_fn)] = record

    def producer(self, grad_fn: Any) -> OpRecord | None:
        """The op record whose result still carries this grad_fn (not after an in-place change)."""
        record = self.made_by.get(id(grad_fn))
        if record is not None and record.result.grad_fn is grad_fn:
            return record
        return None


@dataclass(frozen=True)
class Printed:
    line: int
    text: str


@dataclass(frozen=True)
class Note:
    """Something worth saying about a line that is not an error (e.g. `.grad` of a non-leaf)."""

    line: int
    title: str
    text: str


BackwardRunner = Callable[[torch.Tensor, "torch.Tensor | None", bool, int, "Interpreter"], None]


def plain_backward(tensor: torch.Tensor, gradient: torch.Tensor | None, retain_graph: bool,
                   line: int, interpreter: Interpreter) -> None:
    tensor.backward(gradient=gradient, retain_graph=retain_graph)


class Interpreter:
    """Runs a checked program statement by statement, with every limit enforced."""

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, seed: int = 0,
                 device: torch.device | None = None, bindings: dict[str, Any] | None = None,
                 backward: BackwardRunner = plain_backward) -> None:
        self.limits = limits
        self.device = device or torch.device("cpu")
        # Random numbers are drawn on the CPU and then moved, so a lesson link shows the same
        # numbers on every server, GPU or not, and `torch.manual_seed(seed)` reproduces them.
        self.generator = torch.Generator().manual_seed(seed)
        self.env: dict[str, Any] = {}
        self.catalog = Catalog()
        self.printed: list[Printed] = []
        self.notes: list[Note] = []
        self.decisions: dict[tuple[int, int], Decision] = {}   # (line, column) -> what happened
        self.backward_runner = backward
        self.backward_calls = 0
        self.statements_run = 0
        self.total_numel = 0
        self.deadline = 0.0
        self.line = 1
        self.model: torch.nn.Module | None = None
        for name, value in (bindings or {}).items():
            self._bind_given(name, value)

    # ---- bindings the page provides (the moons model and its batch)
    def _bind_given(self, name: str, value: Any) -> None:
        if isinstance(value, torch.nn.Module):
            if name != "model":
                raise ValueError("a module can only be bound as `model`")
            self.model = value.to(self.device)
            for pname, param in value.named_parameters():
                self.catalog.name(param, f"model.{pname}")
            return
        if isinstance(value, torch.Tensor):
            value = value.to(self.device)
            self.catalog.name(value, name)
        self.env[name] = value

    # ---- entry point
    def run(self, tree: ast.Module) -> None:
        """Run the program; raises ProgramRefused or ProgramFailed at the first problem."""
        # The limit is on the CPU time this thread spends on the program: what it costs the
        # server, the same on a quiet machine and a loaded one (wall-clock time would refuse a
        # 0.15 s program on a server busy enough to run it ten times slower).
        self.deadline = time.thread_time() + self.limits.max_seconds
        self._run_block(tree.body)

    def _run_block(self, body: list[ast.stmt]) -> None:
        for statement in body:
            self._run_statement(statement)

    def _limit(self, message: str) -> ProgramRefused:
        """A refusal for going past one of the page's limits (not for the language)."""
        return ProgramRefused(self.line, message, kind="limit")

    def _tick(self) -> None:
        # Where the page shares the CPU (jobs.SCHEDULER.sharing), a long program lets the
        # learners training have their turns (waiting costs no CPU time: the limit is unmoved).
        breathe()
        if time.thread_time() > self.deadline:
            raise self._limit(f"the program ran longer than {self.limits.max_seconds:g} s")

    def _bound_list(self, items: list[Any]) -> None:
        """A list literal holds at most `max_numel` items and `max_numel` lists inside it.

        Every list of a program is made by a literal (no method returns one), so this bounds every
        later walk of a learner's list: torch.tensor's, print's, an operand check's.
        """
        limit = self.limits.max_numel
        count, lists = _measure(items, limit, self._tick)
        if count > limit:
            raise self._limit(f"a list may hold at most {limit} numbers")
        if lists > limit:
            raise self._limit(f"a list may hold at most {limit} lists inside it, each counted as "
                              "often as it appears (`b = [a, a]` holds `a` twice)")

    def _count_step(self) -> None:
        """A statement run, or a `while` condition tested: both count against the step cap."""
        self.statements_run += 1
        if self.statements_run > self.limits.max_statements_run:
            raise self._limit(f"the program ran more than {self.limits.max_statements_run} "
                              "statements (each `while` test counts as one)")
        self._tick()

    def _run_statement(self, statement: ast.stmt) -> None:
        self.line = line_of(statement)
        try:
            self._count_step()
            if isinstance(statement, ast.For):
                self._run_for(statement)
            elif isinstance(statement, ast.If):
                self._run_if(statement)
            elif isinstance(statement, ast.While):
                self._run_while(statement)
            elif isinstance(statement, ast.With):
                self._run_with(statement)
            elif isinstance(statement, ast.Assign):
                target = statement.targets[0]
                assert isinstance(target, ast.Name)
                self._assign(target.id, self._eval(statement.value))
            elif isinstance(statement, ast.AugAssign):
                self._aug_assign(statement)
            elif isinstance(statement, ast.Expr):
                self._eval(statement.value)
            elif isinstance(statement, ast.Pass):
                pass
            else:  # pragma: no cover - parse_program refuses everything else
                raise ProgramRefused(self.line, "this statement is not accepted")
        except (ProgramRefused, ProgramFailed) as problem:
            if problem.col is None:  # raised by the statement itself, not by one of its parts
                problem.line, problem.col = line_of(statement), col_of(statement)
            raise
        except RecursionError:
            raise ProgramRefused(line_of(statement), "the program nests too deeply",
                                 col=col_of(statement), kind="limit") from None
        except Exception as exc:  # PyTorch's and Python's own errors are content for the page
            raise ProgramFailed(line_of(statement), exc, col=col_of(statement)) from None

    # ---- if and while: the data decides which operations run, so which graph is recorded
    def _decision(self, statement: ast.If | ast.While, kind: str) -> Decision:
        key = (statement.lineno, statement.col_offset + 1)
        if key not in self.decisions:
            self.decisions[key] = Decision(statement.lineno, kind, _describe(statement.test))
        return self.decisions[key]

    def _test(self, node: ast.expr) -> bool:
        """An `if`/`while` condition: evaluated, then `bool()`, a problem placed at the condition."""
        value = self._eval(node)
        try:
            return self._truth(value)
        except (ProgramRefused, ProgramFailed) as problem:
            if problem.col is None:
                problem.line, problem.col = line_of(node), col_of(node)
            raise
        except Exception as exc:  # noqa: BLE001 - PyTorch's refusal of bool() is the lesson
            raise ProgramFailed(line_of(node), exc, col=col_of(node)) from None

    def _run_if(self, statement: ast.If) -> None:
        chosen = self._test(statement.test)
        decision = self._decision(statement, "if")
        if chosen:
            decision.true += 1
            self._run_block(statement.body)
        else:
            decision.false += 1
            self._run_block(statement.orelse)

    def _run_while(self, statement: ast.While) -> None:
        decision = self._decision(statement, "while")
        rounds = 0
        while True:
            if rounds:  # the first test was counted as the `while` statement itself
                self.line = line_of(statement)
                self._count_step()
            if not self._test(statement.test):
                decision.false += 1
                return
            if rounds == self.limits.max_loop_iterations:
                self.line = line_of(statement)
                raise self._limit(
                    f"this `while` loop's condition was still true after "
                    f"{self.limits.max_loop_iterations} rounds, so the page stopped it (a loop "
                    "whose condition never becomes false would run forever); make the condition "
                    f"become false sooner, or use `for i in range({self.limits.max_loop_iterations}):`")
            rounds += 1
            decision.true += 1
            self._run_block(statement.body)

    def _truth(self, value: Any) -> bool:
        """`bool(value)`, as Python's `if`, `while`, `and`, `or` and `not` ask for it.

        For a tensor this is PyTorch's own `Tensor.__bool__`: fine for one element, and its real
        error ("Boolean value of Tensor with more than one value is ambiguous") for more.
        """
        if isinstance(value, torch.Tensor):
            with _from_pytorch(self.line):
                return bool(value)
        if value is None or isinstance(value, bool | int | float | str | list | tuple | torch.Size):
            return bool(value)
        raise ProgramRefused(self.line, f"{_kind(value)} is neither true nor false here")

    def _run_for(self, statement: ast.For) -> None:
        assert isinstance(statement.iter, ast.Call) and isinstance(statement.target, ast.Name)
        bounds = [self._eval(arg) for arg in statement.iter.args]
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            raise ProgramRefused(self.line, "range(...) needs whole numbers")
        try:
            steps = range(*bounds)
        except ValueError as exc:
            raise ProgramFailed(self.line, exc) from None
        if len(steps) > self.limits.max_loop_iterations:
            raise self._limit(f"a loop may run at most {self.limits.max_loop_iterations} "
                              f"times (this one: {len(steps)})")
        for value in steps:
            self.env[statement.target.id] = value
            self._run_block(statement.body)

    def _run_with(self, statement: ast.With) -> None:
        expr = statement.items[0].context_expr
        assert isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
        with GRAD_MODES[expr.func.attr]():
            self._run_block(statement.body)

    # ---- names
    def _assign(self, name: str, value: Any) -> None:
        if name == "torch" or name in ("print", "range", "model"):
            raise ProgramRefused(self.line, f"`{name}` is a reserved name")
        self.env[name] = value
        if isinstance(value, torch.Tensor):
            self.catalog.name(value, name)

    def _aug_assign(self, statement: ast.AugAssign) -> None:
        assert isinstance(statement.target, ast.Name)
        name = statement.target.id
        if name not in self.env:
            raise ProgramFailed(self.line, NameError(f"name '{name}' is not defined"))
        current = self.env[name]
        value = self._eval(statement.value)
        op = IN_PLACE_OPERATORS[type(statement.op)]
        if isinstance(current, torch.Tensor):
            self._check_operands((value,))
            self._dry_run(op, (current, value))
            op(current, value)  # in place: the tensor object keeps its identity, version += 1
            self._account(current)  # autograd may keep a copy of the old values for backward
            self._record(f"{name} {SYMBOLS[type(statement.op)]}= ...", current, (current, value))
        else:
            self._assign(name, self._number_op(op, current, value))

    # ---- expressions
    def _eval(self, node: ast.expr) -> Any:
        """Evaluate one expression; a problem raised by this node (not by one of its parts,
        which have named their own position) gets this node's line and column."""
        try:
            return self._eval_node(node)
        except (ProgramRefused, ProgramFailed) as problem:
            if problem.col is None:
                problem.line, problem.col = line_of(node), col_of(node)
            raise
        except RecursionError:
            raise
        except Exception as exc:  # PyTorch's and Python's own errors are content for the page
            raise ProgramFailed(line_of(node), exc, col=col_of(node)) from None

    def _eval_node(self, node: ast.expr) -> Any:
        self._tick()
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._lookup(node.id)
        if isinstance(node, ast.List | ast.Tuple):
            items = [self._eval(item) for item in node.elts]
            self._bound_list(items)
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.UnaryOp):
            operand = self._eval(node.operand)
            if isinstance(node.op, ast.Not):
                return not self._truth(operand)
            if isinstance(node.op, ast.UAdd):
                return operand
            return self._apply(operator.neg, (operand,), {}, "-", check=True)
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BoolOp):
            value = self._eval(node.values[0])
            for later in node.values[1:]:
                # Python's own rule: `a and b` is a if a is false, else b; `or` the other way.
                if self._truth(value) != isinstance(node.op, ast.And):
                    return value
                value = self._eval(later)
            return value
        if isinstance(node, ast.IfExp):
            return self._eval(node.body if self._truth(self._eval(node.test)) else node.orelse)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Slice):
            raise ProgramRefused(self.line, "slices only appear inside [...]")
        raise ProgramRefused(self.line, "this expression is not accepted")  # pragma: no cover

    def _lookup(self, name: str) -> Any:
        if name == "torch":
            return TORCH
        if name in self.env:
            return self.env[name]
        if name == "model" and self.model is not None:
            return self.model
        # What Python itself says: the name was never assigned, or its line did not run yet
        # (an `if` branch not taken, a loop that ran 0 times).
        raise ProgramFailed(self.line, NameError(f"name '{name}' is not defined"))

    def _compare(self, node: ast.Compare) -> Any:
        """`a < b`, and chains as Python runs them: `a < b < c` is `a < b and b < c`, so the
        middle result goes through `bool()`, which PyTorch refuses for several elements."""
        left = self._eval(node.left)
        result: Any = True
        last = len(node.ops) - 1
        for position, (op, right_node) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right = self._eval(right_node)
            if isinstance(op, ast.Is | ast.IsNot):  # only `x is None` passes parse_program
                result = (left is None) == isinstance(op, ast.Is)
            else:
                result = self._compare_pair(op, left, right, node, right_node)
            if position < last and not self._truth(result):
                return result
            left = right
        return result

    def _compare_pair(self, op: ast.cmpop, left: Any, right: Any, node: ast.Compare,
                      right_node: ast.expr) -> Any:
        function = COMPARISONS[type(op)]
        if isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor):
            label = f"{_describe(node.left if right_node is node.comparators[0] else node)} " \
                    f"{COMPARISON_SYMBOLS[type(op)]} {_describe(right_node)}"
            return self._apply(function, (left, right), {}, label, check=True)
        if (_is_number(left) and _is_number(right)) or (isinstance(left, str) and isinstance(right, str)):
            return function(left, right)
        raise ProgramRefused(self.line, f"cannot compare {_kind(left)} with {_kind(right)}")

    def _binary(self, node: ast.BinOp) -> Any:
        left, right = self._eval(node.left), self._eval(node.right)
        op = BINARY_OPERATORS[type(node.op)]
        symbol = SYMBOLS[type(node.op)]
        if not isinstance(left, torch.Tensor) and not isinstance(right, torch.Tensor):
            return self._number_op(op, left, right)
        if isinstance(node.op, ast.Pow):
            exponent = right
            if _is_number(exponent) and abs(exponent) > self.limits.max_abs_exponent:
                raise self._limit(f"exponents are limited to ±{self.limits.max_abs_exponent:g}")
        label = f"{_describe(node.left)} {symbol} {_describe(node.right)}"
        return self._apply(op, (left, right), {}, label, check=True)

    def _number_op(self, op: Callable[[Any, Any], Any], left: Any, right: Any) -> Any:
        if not (_is_number(left) and _is_number(right)):
            raise ProgramRefused(self.line, f"cannot combine {_kind(left)} and {_kind(right)}")
        if op is operator.pow:
            if abs(right) > self.limits.max_abs_exponent:
                raise self._limit(f"exponents are limited to ±{self.limits.max_abs_exponent:g}")
            if abs(left) > self.limits.max_abs_constant:
                raise self._limit("the base of ** is too large")
            left = float(left) if isinstance(right, int) and right < 0 else left
        result = op(left, right)
        if isinstance(result, complex):
            raise ProgramRefused(self.line, "complex numbers are not accepted")
        if abs(result) > 1e300 or (isinstance(result, int) and result.bit_length() > 256):
            raise self._limit("that number is too large")
        return result

    def _attribute(self, node: ast.Attribute) -> Any:
        owner = self._eval(node.value)
        name = node.attr
        if owner is TORCH:
            if name in TORCH_CONSTANTS:
                return TORCH_CONSTANTS[name]
            raise ProgramRefused(self.line, f"`torch.{name}` must be called")
        if not isinstance(owner, torch.Tensor):
            raise ProgramRefused(self.line, f"`.{name}` needs a tensor, not {_kind(owner)}")
        if name not in TENSOR_ATTRIBUTES:
            raise ProgramRefused(self.line, f"`.{name}` is a method: call it with `()`")
        if name == "grad" and not owner.is_leaf and not owner.retains_grad:
            # Asking PyTorch would print a UserWarning on the server; the answer is None and the
            # reason is part of the lesson, so say it here.
            shown = self.catalog.name_of(owner) or "this tensor"
            self.notes.append(Note(self.line, f"`{shown}.grad` is None",
                                   f"`{shown}` is not a leaf: it was computed from other tensors, so "
                                   "PyTorch does not keep its gradient after backward(). Call "
                                   f"`{shown}.retain_grad()` before `backward()` to keep it."))
            return None
        value = owner.T if name == "T" else getattr(owner, name)
        if isinstance(value, torch.Tensor) and name == "T":
            self._record(_describe(node), value, (owner,))
        return value

    def _subscript(self, node: ast.Subscript) -> Any:
        owner = self._eval(node.value)
        index = self._index(node.slice)
        if isinstance(owner, torch.Size | tuple | list) and isinstance(index, int):
            return owner[index]
        if not isinstance(owner, torch.Tensor):
            raise ProgramRefused(self.line, f"indexing needs a tensor, not {_kind(owner)}")
        return self._apply(operator.getitem, (owner, index), {}, _describe(node), check=True)

    def _index(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Slice):
            bounds = (node.lower, node.upper, node.step)
            parts = [None if part is None else self._eval(part) for part in bounds]
            if not all(p is None or (isinstance(p, int) and not isinstance(p, bool)) for p in parts):
                raise ProgramRefused(self.line, "slice bounds must be whole numbers")
            return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self._index(element) for element in node.elts)
        value = self._eval(node)
        if value is Ellipsis or value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise ProgramRefused(self.line, "an index must be a whole number or a slice")

    def _call(self, node: ast.Call) -> Any:
        args = [self._eval(arg) for arg in node.args]
        kwargs = {kw.arg: self._eval(kw.value) for kw in node.keywords if kw.arg is not None}
        func = node.func
        if isinstance(func, ast.Name):
            if func.id == "print":
                return self._print(args, kwargs)
            if func.id == "model" and self.model is not None:
                return self._call_model(args, kwargs)
            if func.id == "range":
                raise ProgramRefused(self.line, "`range(...)` only appears in a loop header: "
                                                "`for i in range(k):`")
            if func.id == "model":
                raise ProgramFailed(self.line, NameError("name 'model' is not defined"))
            raise ProgramRefused(self.line, f"`{func.id}(...)` is not available here")
        assert isinstance(func, ast.Attribute)
        owner = self._eval(func.value)
        if owner is TORCH:
            return self._torch_function(func.attr, args, kwargs)
        if isinstance(owner, torch.Tensor):
            return self._tensor_method(owner, func.attr, args, kwargs, node)
        if owner is None:  # Python's own words; RULES explains a `.grad` that is still None
            raise ProgramFailed(self.line, AttributeError(
                f"'NoneType' object has no attribute '{func.attr}'"))
        raise ProgramRefused(self.line, f"`.{func.attr}(...)` needs a tensor, not {_kind(owner)}")

    def _print(self, args: list[Any], kwargs: dict[str, Any]) -> None:
        if kwargs:
            raise ProgramRefused(self.line, "print(...) takes no keyword arguments here")
        if len(self.printed) >= self.limits.max_print_lines:
            raise self._limit(f"at most {self.limits.max_print_lines} lines may be printed")
        budget = [MAX_PRINTED_CHARS]
        parts = []
        for arg in args:
            parts.append(self._show(arg, budget))
            if budget[0] <= 0:
                break
        self.printed.append(Printed(self.line, " ".join(parts)[:MAX_PRINTED_CHARS]))
        return None

    def _show(self, value: Any, budget: list[int], *, nested: bool = False) -> str:
        """`str(value)` as print writes it, stopped once `budget[0]` characters are written.

        A list of 10,000 tensors would otherwise be formatted in full (seconds of CPU, outside
        any limit) before being cut to one line; here the deadline is checked between items.
        """
        self._tick()
        if budget[0] <= 0:
            return "..."
        if isinstance(value, list | tuple) and not isinstance(value, torch.Size):
            opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
            items = []
            for item in value:
                if budget[0] <= 0:
                    items.append("...")
                    break
                items.append(self._show(item, budget, nested=True))
            text = opening + ", ".join(items) + ("," if len(items) == 1 and closing == ")" else "") \
                + closing
        elif nested and isinstance(value, str):
            text = repr(value)  # Python writes `['a']` for a list, where print('a') writes a
        else:
            text = _show(value)
        budget[0] -= len(text)
        return text

    def _call_model(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        assert self.model is not None
        if kwargs or len(args) != 1 or not isinstance(args[0], torch.Tensor):
            raise ProgramRefused(self.line, "call the model with one tensor: `model(X)`")
        features = args[0]
        widest = max((p.shape[0] for p in self.model.parameters()), default=1)
        if features.dim() != 2 or features.shape[0] * widest > self.limits.max_total_numel // 4:
            raise self._limit("the model takes a batch of shape (N, features) of modest size")
        # Every layer's output (and its activation's) stays alive for backward: count them all.
        widths = [p.shape[0] for p in self.model.parameters() if p.dim() == 2]
        self._account_elements(2 * features.shape[0] * sum(widths))
        with _from_pytorch(self.line):
            result = self.model(features)
        self._account(result)
        self._record("model(...)", result, (features,))
        return result

    def _torch_function(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if name in GRAD_MODES:
            raise ProgramRefused(self.line, f"`torch.{name}()` is used as `with torch.{name}():`")
        if name not in TORCH_FUNCTIONS:  # pragma: no cover - parse_program refuses it first
            raise ProgramRefused(self.line, f"`torch.{name}` is not accepted")
        function = getattr(torch, name)
        if name in CREATORS:
            self._check_creation(name, args, kwargs)
            try:
                if name in RANDOM_CREATORS:
                    wants_grad = bool(kwargs.pop("requires_grad", False))
                    drawn = function(*args, **kwargs, generator=self.generator).to(self.device)
                    result = drawn.requires_grad_(wants_grad)
                else:
                    result = function(*args, **kwargs, device=self.device)
            except (RuntimeError, ValueError, TypeError) as exc:
                raise ProgramFailed(self.line, exc, origin=PYTORCH) from None
            self._account(result)
            self._record(f"torch.{name}", result, ())
            return result
        return self._apply(function, tuple(args), kwargs, f"torch.{name}", check=True)

    def _tensor_method(self, owner: torch.Tensor, name: str, args: list[Any], kwargs: dict[str, Any],
                       node: ast.Call) -> Any:
        if name not in TENSOR_METHODS:
            raise ProgramRefused(self.line, f"`.{name}(...)` is not accepted")
        if name == "backward":
            return self._backward(owner, args, kwargs)
        if name == "retain_grad":
            owner.retain_grad()
            return None
        if name in ("numel", "dim", "size", "item", "is_inference"):
            return getattr(owner, name)(*args, **kwargs)
        method = getattr(owner, name)
        result = self._apply(lambda *a, **k: method(*a, **k), tuple(args), kwargs, _describe(node),
                             check=True, dry=lambda *a, **k: getattr(a[0], name)(*a[1:], **k),
                             owner=owner)
        if name == "detach" and isinstance(result, torch.Tensor):
            self.catalog.reasons[id(result)] = "made by detach(): cut from the graph"
        return result

    def _backward(self, owner: torch.Tensor, args: list[Any], kwargs: dict[str, Any]) -> None:
        unknown = set(kwargs) - {"gradient", "retain_graph"}
        if unknown or len(args) > 1:
            raise ProgramRefused(self.line, "backward() accepts `gradient=` and `retain_graph=` only")
        gradient = args[0] if args else kwargs.get("gradient")
        if gradient is not None and not isinstance(gradient, torch.Tensor):
            raise ProgramRefused(self.line, "the gradient passed to backward() must be a tensor")
        retain = bool(kwargs.get("retain_graph", False))
        self.backward_calls += 1
        if self.backward_calls > self.limits.max_backward_calls:
            raise self._limit(f"at most {self.limits.max_backward_calls} backward() calls")
        with _from_pytorch(self.line):
            self.backward_runner(owner, gradient, retain, self.line, self)
        return None

    # ---- the one place tensors are computed
    def _apply(self, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
               label: str, *, check: bool, dry: Callable[..., Any] | None = None,
               owner: torch.Tensor | None = None) -> Any:
        self._check_operands((*args, *kwargs.values()))
        operands = ((owner,) if owner is not None else ()) + args
        if check:
            self._dry_run(dry or function, operands if dry else args, kwargs)
        with _from_pytorch(self.line):
            result = function(*args, **kwargs)
        if isinstance(result, tuple) and not isinstance(result, torch.Size):
            raise ProgramRefused(self.line, f"`{label}` returns several tensors; that is not supported here")
        if isinstance(result, torch.Tensor):
            # An in-place method returns its owner: it still counts, as autograd may keep a copy.
            self._account(result)
            self._record(label, result, tuple(t for t in operands if isinstance(t, torch.Tensor)))
        return result

    def _check_operands(self, values: tuple[Any, ...]) -> None:
        """Everything one call passes to PyTorch: bounded in size, then each value's kind.

        Each list is bounded by its literal, but a call takes many: `x.view(z, z, z, ...)` with
        600 copies of a 10,000-number list would be walked (checked, flattened, copied to the
        meta device) 6 million times. All of a call's values together get a list's bound.
        """
        limit = self.limits.max_numel
        count, lists = _measure(values, limit, self._tick)
        if count > limit or lists > limit:
            raise self._limit(f"one call may be given at most {limit} numbers and tensors, and "
                              f"{limit} lists, each counted as often as it appears")
        for value in _distinct_leaves(values, self._tick):
            if not (value is None or isinstance(value, torch.Tensor | int | float | bool | str
                                                | slice | torch.dtype | torch.Size)
                    or value is Ellipsis):
                raise ProgramRefused(self.line, f"{_kind(value)} cannot be passed to PyTorch here")

    def _dry_run(self, function: Callable[..., Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any] | None = None) -> None:
        """Run the op on the `meta` device first: the result's shape, without allocating.

        Skipped when the operands are so small that no accepted operation can exceed the limit:
        broadcasting, matmul, outer, cat, stack and reductions all make at most the product of
        the operands' *extents* elements, where a size of 0 counts as 1 and each operand as at
        least 2. Counting numel instead would let an empty tensor through: `torch.ones(0, N)`
        has no elements, but `.sum(0)` of it has N.
        """
        bound = 1
        for tensor in _flat_tensors(list(args) + list((kwargs or {}).values())):
            bound *= max(_extent(tensor), 2)
            if bound > self.limits.max_numel:  # stop: the product of 10,000 extents is huge
                break
        else:
            return
        made: dict[int, Any] = {}
        meta_args = tuple(_to_meta(a, made) for a in args)
        meta_kwargs = {k: _to_meta(v, made) for k, v in (kwargs or {}).items()}
        try:
            with torch.no_grad():
                shape_probe = function(*meta_args, **meta_kwargs)
        except Exception:  # noqa: BLE001 - the real call raises PyTorch's own error; inputs are bounded
            return
        if isinstance(shape_probe, torch.Tensor) and shape_probe.numel() > self.limits.max_numel:
            raise self._limit(f"the result would have {shape_probe.numel():,} elements; "
                              f"at most {self.limits.max_numel:,} are allowed here")

    def _check_creation(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> None:
        limit = self.limits.max_numel
        if "device" in kwargs or "generator" in kwargs:  # pragma: no cover - KEYWORDS refuses both
            raise ProgramRefused(self.line, "device and generator are chosen by the page")
        if name == "tensor":
            if len(args) != 1:
                raise ProgramRefused(self.line, "torch.tensor takes one value or list")
            count, lists = _measure(args[0], limit, self._tick)
            if lists > limit:
                raise self._limit(f"torch.tensor would walk more than {limit:,} lists; at most "
                                  f"{limit:,} are allowed here")
        elif name == "arange":
            bounds = {"start": 0, "end": None, "step": 1}
            given = dict(zip(("end",) if len(args) == 1 else ("start", "end", "step"), args, strict=False))
            bounds.update(given)
            bounds.update({k: v for k, v in kwargs.items() if k in bounds})
            start, end, step = bounds["start"], bounds["end"], bounds["step"]
            if not (_is_number(start) and _is_number(end) and _is_number(step)) or step == 0:
                raise ProgramRefused(self.line, "torch.arange takes numbers and a non-zero step")
            count = max(0, math.ceil((end - start) / step))
        elif name == "linspace":
            steps = args[2] if len(args) > 2 else kwargs.get("steps")
            if not isinstance(steps, int) or isinstance(steps, bool):
                raise ProgramRefused(self.line, "torch.linspace needs `steps`, a whole number")
            count = steps
        else:
            shape_args = args[:-1] if name == "full" and "fill_value" not in kwargs else args
            if len(shape_args) == 1 and isinstance(shape_args[0], list | tuple | torch.Size):
                shape_args = list(shape_args[0])
            if name == "eye":
                shape_args = [args[0], args[1] if len(args) > 1 else args[0]] if args else []
            if not all(isinstance(s, int) and not isinstance(s, bool) for s in shape_args):
                raise ProgramRefused(self.line, f"torch.{name} takes whole-number sizes")
            if any(s < 0 for s in shape_args):
                raise ProgramRefused(self.line, "sizes cannot be negative")
            count = math.prod(shape_args)
        if count > limit:
            # torch.tensor's count stopped once it passed the limit: only a lower bound is known.
            made = f"more than {limit:,}" if name == "tensor" else f"{count:,}"
            raise self._limit(f"torch.{name} would make {made} elements; at most "
                              f"{limit:,} are allowed here")

    def _account(self, tensor: torch.Tensor) -> None:
        if tensor.numel() > self.limits.max_numel:
            raise self._limit(f"a tensor of {tensor.numel():,} elements is larger than "
                              f"the {self.limits.max_numel:,} allowed")
        self._account_elements(tensor.numel())

    def _account_elements(self, count: int) -> None:
        self.total_numel += count
        if self.total_numel > self.limits.max_total_numel:
            raise self._limit(f"the program created more than "
                              f"{self.limits.max_total_numel:,} tensor elements in all")

    def _record(self, label: str, result: torch.Tensor, inputs: tuple[Any, ...]) -> None:
        self.catalog.keep(result)
        tensors = tuple(_flat_tensors(inputs))
        for tensor in tensors:
            self.catalog.keep(tensor)
        self.catalog.add(OpRecord(self.line, label, result, tensors, torch.is_grad_enabled()))
        if not result.requires_grad and id(result) not in self.catalog.reasons:
            if result.is_inference():
                self.catalog.reasons[id(result)] = ("made inside torch.inference_mode(): an "
                                                    "inference tensor, never recorded")
            elif not torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
                self.catalog.reasons[id(result)] = "made inside torch.no_grad(): not recorded"


class _TorchNamespace:
    """Stands for the name `torch` inside programs; it has no attributes of its own."""

    def __repr__(self) -> str:
        return "torch"


TORCH = _TorchNamespace()


def _to_meta(value: Any, made: dict[int, Any] | None = None) -> Any:
    """`value` with each tensor replaced by a meta tensor of its shape and strides.

    Memoized by id: a list or tensor the program passes several times (`[a, a, a]`, `b = [a, a]`)
    is converted once and shared, as it is in the real call.
    """
    made = {} if made is None else made
    if id(value) in made:
        return made[id(value)]
    if isinstance(value, torch.Tensor):
        converted: Any = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype,
                                             device="meta")
    elif isinstance(value, list | tuple) and not isinstance(value, torch.Size):
        converted = type(value)(_to_meta(v, made) for v in value)
    else:
        return value
    made[id(value)] = converted
    return converted


def _extent(tensor: torch.Tensor) -> int:
    """numel with every size of 0 counted as 1: a bound on what an op can make from it."""
    return math.prod(max(size, 1) for size in tensor.shape)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float)


def _is_list(value: Any) -> bool:
    """A list or tuple of the program's (a torch.Size too: a tuple of numbers)."""
    return isinstance(value, list | tuple)


def _measure(value: Any, limit: int, tick: Callable[[], None]) -> tuple[int, int]:
    """(items, lists) in `value`: the numbers (and tensors, strings...) and the lists inside it,
    each counted as often as it appears, as `torch.tensor`, `print` and every walk of it meet them.

    A program can share one list many times (`b = [a, a]`, `c = [b, b]`, ...): 30 lines hold 2**30
    items, so counting them one by one (or letting torch.tensor walk them, in C and past any
    deadline) never ends. Here each distinct list is walked once (its counts are kept by id and
    added for every later appearance), the walk stops as soon as either count passes `limit`, and
    `tick` (the deadline check) runs at every step. Every step adds at least one to a count, so a
    walk takes at most 2 * limit + 2 steps, whatever the shape. Empty lists count too: a
    million-fold nesting of `[]` holds no number, yet torch.tensor walks every one of them.
    """
    if not _is_list(value):
        return 1, 0
    known: dict[int, tuple[int, int]] = {}     # id(list) -> its counts; all alive during the walk
    # One frame per list on the path from `value` down: [the list, next index, items, lists].
    # Every count already added to a frame ends up in `value`'s, so the totals over the frames are
    # a lower bound on the answer: the walk may stop as soon as they pass the limit.
    frames: list[list[Any]] = [[value, 0, 0, 0]]
    items_total = lists_total = 0
    while True:
        tick()
        frame = frames[-1]
        node, index = frame[0], frame[1]
        if index == len(node):
            frames.pop()
            known[id(node)] = (frame[2], frame[3])
            if not frames:
                return frame[2], frame[3]
            frames[-1][2] += frame[2]
            frames[-1][3] += frame[3]
            continue
        frame[1] = index + 1
        item = node[index]
        if not _is_list(item):
            frame[2] += 1
            items_total += 1
        elif id(item) in known:
            items, lists = known[id(item)]
            frame[2] += items
            frame[3] += lists + 1
            items_total += items
            lists_total += lists + 1
        else:
            frame[3] += 1
            lists_total += 1
            frames.append([item, 0, 0, 0])
        if items_total > limit or lists_total > limit:
            return items_total, lists_total


def _distinct_leaves(value: Any, tick: Callable[[], None]) -> list[Any]:
    """Every value in `value` that is not a list, each object once (a shared list is walked once)."""
    seen: set[int] = set()
    leaves: list[Any] = []
    stack = [value]
    while stack:
        tick()
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if _is_list(item) and not isinstance(item, torch.Size):
            stack.extend(reversed(item))
        else:
            leaves.append(item)
    return leaves


def _flat_tensors(values: Any) -> list[torch.Tensor]:
    """The tensors in `values`, in order, each as often as it appears (`torch.stack([a, a])` makes
    two slices of `a`). Callers bound `values` first (`_measure`): this walks every appearance."""
    found: list[torch.Tensor] = []
    stack = [values]
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            found.append(item)
        elif _is_list(item) and not isinstance(item, torch.Size):
            stack.extend(reversed(item))
    return found


def _kind(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, torch.Tensor):
        return "a tensor"
    if isinstance(value, bool | int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if value is TORCH:
        return "the module `torch`"
    if isinstance(value, torch.nn.Module):
        return "the model"
    return f"a {type(value).__name__}"


MAX_PRINTED_CHARS = 2000


# ` at 0x7f...`: where CPython's default repr puts an object's heap address.
_ADDRESS = re.compile(r" (object )?at 0x[0-9a-fA-F]+")


def _show(value: Any) -> str:
    """What print writes for one value that is not a list.

    Never a heap address: `print(y.grad_fn)` in Python writes `<AddBackward0 object at 0x7f...>`,
    a number that changes from run to run and differs between the page and the learner's own
    script; it teaches nothing. The node is shown by the name PyTorch gives it, `<AddBackward0>`,
    and any other object's address is left out the same way.
    """
    if isinstance(value, torch.Tensor):
        return str(value.detach()) if value.numel() <= 100 else f"tensor of shape {tuple(value.shape)}"
    if value is TORCH:
        return "<module 'torch'>"
    if value is None or isinstance(value, str | int | float | torch.dtype | torch.Size):
        return str(value)  # a learner's own string is written as it is, whatever it says
    if isinstance(value, torch.autograd.graph.Node):
        return f"<{value.name().split('::')[-1]}>"
    return _ADDRESS.sub("", str(value))


def _describe(node: ast.AST) -> str:
    """Short source text of an expression, for labels (ast.unparse writes; it never runs code)."""
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."


def warm_up() -> None:
    """Load PyTorch's meta-device kernels once per process (about 2 s the first time), so a
    learner's first run is not charged for it against the time limit."""
    probe = torch.empty(2, 2, device="meta")
    with torch.no_grad():
        ((probe * probe + 1) ** 2 @ probe).sum().view(1)


warm_up()


@dataclass
class RunOutcome:
    """Everything one run produced, whether it finished or stopped at a line."""

    interpreter: Interpreter
    refused: ProgramRefused | None = None
    failed: ProgramFailed | None = None

    @property
    def ok(self) -> bool:
        return self.refused is None and self.failed is None

    @property
    def env(self) -> dict[str, Any]:
        return self.interpreter.env


def run_program(source: str, *, limits: Limits = DEFAULT_LIMITS, seed: int = 0,
                device: torch.device | None = None, bindings: dict[str, Any] | None = None,
                backward: BackwardRunner = plain_backward) -> RunOutcome:
    """Check then run `source`; problems come back in the outcome, never as exceptions."""
    interpreter = Interpreter(limits=limits, seed=seed, device=device, bindings=bindings,
                              backward=backward)
    try:
        tree = parse_program(source, limits)
    except ProgramRefused as refused:
        return RunOutcome(interpreter, refused=refused)
    try:
        interpreter.run(tree)
    except ProgramRefused as refused:
        return RunOutcome(interpreter, refused=refused)
    except ProgramFailed as failed:
        return RunOutcome(interpreter, failed=failed)
    except RecursionError:
        return RunOutcome(interpreter, refused=ProgramRefused(interpreter.line, "the program is too deep",
                                                              kind="limit"))
    return RunOutcome(interpreter)
