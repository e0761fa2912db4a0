"""Running the statements of a learner's program: assignments, `for`, `if`, `while`, `with`.

Each statement counts against the step cap and is placed: a problem raised inside it without a
position of its own gets the statement's line and column. `if` and `while` keep a `Decision`: which
way the data sent the program, the define-by-run part of the recorded graph.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import torch

from workbench.autograd_graph.budget import Budget
from workbench.autograd_graph.catalog import GRAD_MODES, IN_PLACE_OPERATORS, SYMBOLS
from workbench.autograd_graph.expressions import ExpressionEvaluator
from workbench.autograd_graph.language import ProgramRefused, col_of, line_of
from workbench.autograd_graph.problems import Position, ProgramFailed
from workbench.autograd_graph.program_values import source_text
from workbench.autograd_graph.pytorch_calls import PyTorchCalls
from workbench.autograd_graph.recording import Recorder


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


class StatementRunner:
    """Runs statements one by one, evaluating their expressions with `expressions`."""

    def __init__(self, *, env: dict[str, Any], budget: Budget, position: Position,
                 expressions: ExpressionEvaluator, calls: PyTorchCalls, recorder: Recorder) -> None:
        self.env = env
        self.budget = budget
        self.limits = budget.limits
        self.position = position
        self.expressions = expressions
        self.calls = calls
        self.recorder = recorder
        self.decisions: dict[tuple[int, int], Decision] = {}   # (line, column) -> what happened

    def run_block(self, body: list[ast.stmt]) -> None:
        for statement in body:
            self.run_statement(statement)

    def run_statement(self, statement: ast.stmt) -> None:
        self.position.line = line_of(statement)
        try:
            self.budget.count_step()
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
                self.assign(target.id, self.expressions.evaluate(statement.value))
            elif isinstance(statement, ast.AugAssign):
                self._aug_assign(statement)
            elif isinstance(statement, ast.Expr):
                self.expressions.evaluate(statement.value)
            elif isinstance(statement, ast.Pass):
                pass
            else:  # pragma: no cover - parse_program refuses everything else
                raise ProgramRefused(self.position.line, "this statement is not accepted")
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
            self.decisions[key] = Decision(statement.lineno, kind, source_text(statement.test))
        return self.decisions[key]

    def _test(self, node: ast.expr) -> bool:
        """An `if`/`while` condition: evaluated, then `bool()`, a problem placed at the condition."""
        value = self.expressions.evaluate(node)
        try:
            return self.expressions.truth(value)
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
            self.run_block(statement.body)
        else:
            decision.false += 1
            self.run_block(statement.orelse)

    def _run_while(self, statement: ast.While) -> None:
        decision = self._decision(statement, "while")
        rounds = 0
        while True:
            if rounds:  # the first test was counted as the `while` statement itself
                self.position.line = line_of(statement)
                self.budget.count_step()
            if not self._test(statement.test):
                decision.false += 1
                return
            if rounds == self.limits.max_loop_iterations:
                self.position.line = line_of(statement)
                raise self.budget.limit(
                    f"this `while` loop's condition was still true after "
                    f"{self.limits.max_loop_iterations} rounds, so the page stopped it (a loop "
                    "whose condition never becomes false would run forever); make the condition "
                    f"become false sooner, or use `for i in range({self.limits.max_loop_iterations}):`")
            rounds += 1
            decision.true += 1
            self.run_block(statement.body)

    def _run_for(self, statement: ast.For) -> None:
        assert isinstance(statement.iter, ast.Call) and isinstance(statement.target, ast.Name)
        bounds = [self.expressions.evaluate(arg) for arg in statement.iter.args]
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            raise ProgramRefused(self.position.line, "range(...) needs whole numbers")
        try:
            steps = range(*bounds)
        except ValueError as exc:
            raise ProgramFailed(self.position.line, exc) from None
        self.budget.check_loop_length(len(steps))
        for value in steps:
            self.env[statement.target.id] = value
            self.run_block(statement.body)

    def _run_with(self, statement: ast.With) -> None:
        expr = statement.items[0].context_expr
        assert isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
        with GRAD_MODES[expr.func.attr]():
            self.run_block(statement.body)

    # ---- names
    def assign(self, name: str, value: Any) -> None:
        if name == "torch" or name in ("print", "range", "model"):
            raise ProgramRefused(self.position.line, f"`{name}` is a reserved name")
        self.env[name] = value
        if isinstance(value, torch.Tensor):
            self.recorder.catalog.name(value, name)

    def _aug_assign(self, statement: ast.AugAssign) -> None:
        assert isinstance(statement.target, ast.Name)
        name = statement.target.id
        if name not in self.env:
            raise ProgramFailed(self.position.line, NameError(f"name '{name}' is not defined"))
        current = self.env[name]
        value = self.expressions.evaluate(statement.value)
        op = IN_PLACE_OPERATORS[type(statement.op)]
        if isinstance(current, torch.Tensor):
            self.calls.apply_in_place(op, current, value, f"{name} {SYMBOLS[type(statement.op)]}= ...")
        else:
            self.assign(name, self.expressions.number_op(op, current, value))
