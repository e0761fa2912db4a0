"""Running a learner's checked program: statement by statement, as real PyTorch, within limits.

`language.parse_program` has already refused anything outside the accepted language; here each
statement runs with the bindings the page provides (the moons model and its batch), a per-run
random generator seeded with 0, the counting limits (statements, loop length, tensor elements,
list items, backward calls, printed lines) and a deadline checked between statements and
expressions and at every step of a walk of a list (`budget.measure`: a shared list is walked once).
An op on large operands is first dry-run on the `meta` device, so an oversized result is refused
before it is allocated. `print` formats only what it shows. Problems come back in a
`RunOutcome`: refused (the page's limits) or failed (PyTorch's own error, which is the lesson).

`Interpreter` puts one run together from its parts, each in its own module: statements.py and
expressions.py walk the program's tree, pytorch_calls.py computes every tensor, budget.py counts
against the limits, dry_run.py checks a call before it runs, printing.py writes what `print`
shows, and recording.py keeps how each tensor was made, for the graph.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from workbench.autograd_graph.budget import Budget
from workbench.autograd_graph.dry_run import DryRun, warm_up
from workbench.autograd_graph.expressions import ExpressionEvaluator
from workbench.autograd_graph.language import DEFAULT_LIMITS, Limits, ProgramRefused, parse_program
from workbench.autograd_graph.printing import MAX_PRINTED_CHARS, Printed, Printer
from workbench.autograd_graph.problems import PYTHON, PYTORCH, Position, ProgramFailed
from workbench.autograd_graph.program_values import TORCH
from workbench.autograd_graph.pytorch_calls import PyTorchCalls
from workbench.autograd_graph.recording import Catalog, Note, OpRecord, Recorder
from workbench.autograd_graph.statements import Decision, StatementRunner

# Importers of this module may use these names from here: the names of a run and its outcome.
__all__ = ["DEFAULT_LIMITS", "MAX_PRINTED_CHARS", "PYTHON", "PYTORCH", "TORCH", "BackwardRunner",
           "Catalog", "Decision", "Interpreter", "Limits", "Note", "OpRecord", "Printed",
           "ProgramFailed", "ProgramRefused", "RunOutcome", "parse_program", "plain_backward",
           "run_program", "warm_up"]


BackwardRunner = Callable[[torch.Tensor, "torch.Tensor | None", bool, int, "Interpreter"], None]


def plain_backward(tensor: torch.Tensor, gradient: torch.Tensor | None, retain_graph: bool,
                   line: int, interpreter: Interpreter) -> None:
    tensor.backward(gradient=gradient, retain_graph=retain_graph)


class Interpreter:
    """Runs a checked program statement by statement, with every limit enforced.

    Owns the run's state (its names, the model, the line it is at) and the parts that share it:
    the budget, the dry run, the recorder, the printer, the calls into PyTorch, and the two walkers
    of the program's tree. What a run produced is read from here (`printed`, `catalog`, ...).
    """

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, seed: int = 0,
                 device: torch.device | None = None, bindings: dict[str, Any] | None = None,
                 backward: BackwardRunner = plain_backward) -> None:
        self.limits = limits
        self.device = device or torch.device("cpu")
        # Random numbers are drawn on the CPU and then moved, so a lesson link shows the same
        # numbers on every server, GPU or not, and `torch.manual_seed(seed)` reproduces them.
        self.generator = torch.Generator().manual_seed(seed)
        self.env: dict[str, Any] = {}
        self.backward_runner = backward
        self.model: torch.nn.Module | None = None
        self.position = Position()
        self.budget = Budget(limits, self.position)
        self.recorder = Recorder(self.position)
        self.printer = Printer(self.budget, self.position)
        self.dry_run = DryRun(self.budget, self.position)
        for name, value in (bindings or {}).items():
            self._bind_given(name, value)
        # Built after the bindings: the calls and the expressions are given the bound model.
        self.calls = PyTorchCalls(
            budget=self.budget, dry_run=self.dry_run, recorder=self.recorder, position=self.position,
            device=self.device, generator=self.generator, model=self.model,
            run_backward=lambda tensor, gradient, retain, line: self.backward_runner(
                tensor, gradient, retain, line, self))
        self.expressions = ExpressionEvaluator(
            env=self.env, model=self.model, budget=self.budget, position=self.position,
            calls=self.calls, printer=self.printer, recorder=self.recorder)
        self.statements = StatementRunner(
            env=self.env, budget=self.budget, position=self.position, expressions=self.expressions,
            calls=self.calls, recorder=self.recorder)

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
        self.budget.start()
        self.statements.run_block(tree.body)

    # ---- what the run produced, kept by the part that produced it
    @property
    def line(self) -> int:
        return self.position.line

    @property
    def catalog(self) -> Catalog:
        return self.recorder.catalog

    @property
    def notes(self) -> list[Note]:
        return self.recorder.notes

    @property
    def printed(self) -> list[Printed]:
        return self.printer.printed

    @property
    def decisions(self) -> dict[tuple[int, int], Decision]:
        return self.statements.decisions

    @property
    def statements_run(self) -> int:
        return self.budget.statements_run

    @property
    def backward_calls(self) -> int:
        return self.budget.backward_calls

    @property
    def total_numel(self) -> int:
        return self.budget.total_numel

    @property
    def deadline(self) -> float:
        return self.budget.deadline


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
