"""Evaluating the expressions of a learner's program, node by node, as Python would.

Names, numbers, lists, operators, comparisons, `and`/`or`/`not`, attributes, indexing and calls.
Plain numbers are combined here, within the page's limits on their size; anything involving a
tensor goes to pytorch_calls.py, the one place tensors are computed. Every node checks the
deadline, and a problem is placed at the node that raised it.
"""
from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

import torch

from workbench.autograd_graph.budget import Budget
from workbench.autograd_graph.catalog import (BINARY_OPERATORS, COMPARISON_SYMBOLS, COMPARISONS, SYMBOLS,
                                              TENSOR_ATTRIBUTES, TORCH_CONSTANTS)
from workbench.autograd_graph.language import ProgramRefused, col_of, line_of
from workbench.autograd_graph.printing import Printer
from workbench.autograd_graph.problems import Position, ProgramFailed, from_pytorch
from workbench.autograd_graph.program_values import TORCH, is_number, kind_of, source_text
from workbench.autograd_graph.pytorch_calls import PyTorchCalls
from workbench.autograd_graph.recording import Recorder


class ExpressionEvaluator:
    """Evaluates one expression at a time against the program's names (`env`) and the model."""

    def __init__(self, *, env: dict[str, Any], model: torch.nn.Module | None, budget: Budget,
                 position: Position, calls: PyTorchCalls, printer: Printer, recorder: Recorder) -> None:
        self.env = env
        self.model = model
        self.budget = budget
        self.limits = budget.limits
        self.position = position
        self.calls = calls
        self.printer = printer
        self.recorder = recorder

    def evaluate(self, node: ast.expr) -> Any:
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

    def truth(self, value: Any) -> bool:
        """`bool(value)`, as Python's `if`, `while`, `and`, `or` and `not` ask for it.

        For a tensor this is PyTorch's own `Tensor.__bool__`: fine for one element, and its real
        error ("Boolean value of Tensor with more than one value is ambiguous") for more.
        """
        if isinstance(value, torch.Tensor):
            with from_pytorch(self.position.line):
                return bool(value)
        if value is None or isinstance(value, bool | int | float | str | list | tuple | torch.Size):
            return bool(value)
        raise ProgramRefused(self.position.line, f"{kind_of(value)} is neither true nor false here")

    def number_op(self, op: Callable[[Any, Any], Any], left: Any, right: Any) -> Any:
        """`left op right` on plain numbers, refused where the result would be huge or complex."""
        if not (is_number(left) and is_number(right)):
            raise ProgramRefused(self.position.line, f"cannot combine {kind_of(left)} and {kind_of(right)}")
        if op is operator.pow:
            if abs(right) > self.limits.max_abs_exponent:
                raise self.budget.limit(f"exponents are limited to ±{self.limits.max_abs_exponent:g}")
            if abs(left) > self.limits.max_abs_constant:
                raise self.budget.limit("the base of ** is too large")
            left = float(left) if isinstance(right, int) and right < 0 else left
        result = op(left, right)
        if isinstance(result, complex):
            raise ProgramRefused(self.position.line, "complex numbers are not accepted")
        if abs(result) > 1e300 or (isinstance(result, int) and result.bit_length() > 256):
            raise self.budget.limit("that number is too large")
        return result

    def _eval_node(self, node: ast.expr) -> Any:
        self.budget.tick()
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._lookup(node.id)
        if isinstance(node, ast.List | ast.Tuple):
            items = [self.evaluate(item) for item in node.elts]
            self.budget.bound_list(items)
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.UnaryOp):
            operand = self.evaluate(node.operand)
            if isinstance(node.op, ast.Not):
                return not self.truth(operand)
            if isinstance(node.op, ast.UAdd):
                return operand
            return self.calls.apply(operator.neg, (operand,), {}, "-", check=True)
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BoolOp):
            value = self.evaluate(node.values[0])
            for later in node.values[1:]:
                # Python's own rule: `a and b` is a if a is false, else b; `or` the other way.
                if self.truth(value) != isinstance(node.op, ast.And):
                    return value
                value = self.evaluate(later)
            return value
        if isinstance(node, ast.IfExp):
            return self.evaluate(node.body if self.truth(self.evaluate(node.test)) else node.orelse)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Slice):
            raise ProgramRefused(self.position.line, "slices only appear inside [...]")
        raise ProgramRefused(self.position.line, "this expression is not accepted")  # pragma: no cover

    def _lookup(self, name: str) -> Any:
        if name == "torch":
            return TORCH
        if name in self.env:
            return self.env[name]
        if name == "model" and self.model is not None:
            return self.model
        # What Python itself says: the name was never assigned, or its line did not run yet
        # (an `if` branch not taken, a loop that ran 0 times).
        raise ProgramFailed(self.position.line, NameError(f"name '{name}' is not defined"))

    def _compare(self, node: ast.Compare) -> Any:
        """`a < b`, and chains as Python runs them: `a < b < c` is `a < b and b < c`, so the
        middle result goes through `bool()`, which PyTorch refuses for several elements."""
        left = self.evaluate(node.left)
        result: Any = True
        last = len(node.ops) - 1
        for position, (op, right_node) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right = self.evaluate(right_node)
            if isinstance(op, ast.Is | ast.IsNot):  # only `x is None` passes parse_program
                result = (left is None) == isinstance(op, ast.Is)
            else:
                result = self._compare_pair(op, left, right, node, right_node)
            if position < last and not self.truth(result):
                return result
            left = right
        return result

    def _compare_pair(self, op: ast.cmpop, left: Any, right: Any, node: ast.Compare,
                      right_node: ast.expr) -> Any:
        function = COMPARISONS[type(op)]
        if isinstance(left, torch.Tensor) or isinstance(right, torch.Tensor):
            label = f"{source_text(node.left if right_node is node.comparators[0] else node)} " \
                    f"{COMPARISON_SYMBOLS[type(op)]} {source_text(right_node)}"
            return self.calls.apply(function, (left, right), {}, label, check=True)
        if (is_number(left) and is_number(right)) or (isinstance(left, str) and isinstance(right, str)):
            return function(left, right)
        raise ProgramRefused(self.position.line, f"cannot compare {kind_of(left)} with {kind_of(right)}")

    def _binary(self, node: ast.BinOp) -> Any:
        left, right = self.evaluate(node.left), self.evaluate(node.right)
        op = BINARY_OPERATORS[type(node.op)]
        symbol = SYMBOLS[type(node.op)]
        if not isinstance(left, torch.Tensor) and not isinstance(right, torch.Tensor):
            return self.number_op(op, left, right)
        if isinstance(node.op, ast.Pow):
            exponent = right
            if is_number(exponent) and abs(exponent) > self.limits.max_abs_exponent:
                raise self.budget.limit(f"exponents are limited to ±{self.limits.max_abs_exponent:g}")
        label = f"{source_text(node.left)} {symbol} {source_text(node.right)}"
        return self.calls.apply(op, (left, right), {}, label, check=True)

    def _attribute(self, node: ast.Attribute) -> Any:
        line = self.position.line
        owner = self.evaluate(node.value)
        name = node.attr
        if owner is TORCH:
            if name in TORCH_CONSTANTS:
                return TORCH_CONSTANTS[name]
            raise ProgramRefused(line, f"`torch.{name}` must be called")
        if not isinstance(owner, torch.Tensor):
            raise ProgramRefused(line, f"`.{name}` needs a tensor, not {kind_of(owner)}")
        if name not in TENSOR_ATTRIBUTES:
            raise ProgramRefused(line, f"`.{name}` is a method: call it with `()`")
        if name == "grad" and not owner.is_leaf and not owner.retains_grad:
            # Asking PyTorch would print a UserWarning on the server; the answer is None and the
            # reason is part of the lesson, so say it here.
            shown = self.recorder.catalog.name_of(owner) or "this tensor"
            self.recorder.note(f"`{shown}.grad` is None",
                               f"`{shown}` is not a leaf: it was computed from other tensors, so "
                               "PyTorch does not keep its gradient after backward(). Call "
                               f"`{shown}.retain_grad()` before `backward()` to keep it.")
            return None
        value = owner.T if name == "T" else getattr(owner, name)
        if isinstance(value, torch.Tensor) and name == "T":
            self.recorder.record(source_text(node), value, (owner,))
        return value

    def _subscript(self, node: ast.Subscript) -> Any:
        owner = self.evaluate(node.value)
        index = self._index(node.slice)
        if isinstance(owner, torch.Size | tuple | list) and isinstance(index, int):
            return owner[index]
        if not isinstance(owner, torch.Tensor):
            raise ProgramRefused(self.position.line, f"indexing needs a tensor, not {kind_of(owner)}")
        return self.calls.apply(operator.getitem, (owner, index), {}, source_text(node), check=True)

    def _index(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Slice):
            bounds = (node.lower, node.upper, node.step)
            parts = [None if part is None else self.evaluate(part) for part in bounds]
            if not all(p is None or (isinstance(p, int) and not isinstance(p, bool)) for p in parts):
                raise ProgramRefused(self.position.line, "slice bounds must be whole numbers")
            return slice(*parts)
        if isinstance(node, ast.Tuple):
            return tuple(self._index(element) for element in node.elts)
        value = self.evaluate(node)
        if value is Ellipsis or value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise ProgramRefused(self.position.line, "an index must be a whole number or a slice")

    def _call(self, node: ast.Call) -> Any:
        args = [self.evaluate(arg) for arg in node.args]
        kwargs = {kw.arg: self.evaluate(kw.value) for kw in node.keywords if kw.arg is not None}
        line = self.position.line
        func = node.func
        if isinstance(func, ast.Name):
            if func.id == "print":
                return self.printer.print(args, kwargs)
            if func.id == "model" and self.model is not None:
                return self.calls.call_model(args, kwargs)
            if func.id == "range":
                raise ProgramRefused(line, "`range(...)` only appears in a loop header: "
                                           "`for i in range(k):`")
            if func.id == "model":
                raise ProgramFailed(line, NameError("name 'model' is not defined"))
            raise ProgramRefused(line, f"`{func.id}(...)` is not available here")
        assert isinstance(func, ast.Attribute)
        owner = self.evaluate(func.value)
        if owner is TORCH:
            return self.calls.torch_function(func.attr, args, kwargs)
        if isinstance(owner, torch.Tensor):
            return self.calls.tensor_method(owner, func.attr, args, kwargs, node)
        if owner is None:  # Python's own words; RULES explains a `.grad` that is still None
            raise ProgramFailed(line, AttributeError(
                f"'NoneType' object has no attribute '{func.attr}'"))
        raise ProgramRefused(line, f"`.{func.attr}(...)` needs a tensor, not {kind_of(owner)}")
