"""One run of the autograd page: the program, its backward() calls, and the same as a script.

Data flows one way: `AutogradSettings` (settings.py: what the widgets and the URL hold) ->
`run_session` (the interpreter runs the program, every backward() is recorded, then the page's
own backward calls) -> a `SessionResult` of plain data the page draws -> `program_script`, the
same thing as a script to paste into Python.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from workbench.autograd_graph.backward_steps import BackwardRecorder, BackwardTrace
from workbench.autograd_graph.graph import GraphModel, build_graph, format_tensor
from workbench.autograd_graph.interpreter import (Decision, Interpreter, ProgramRefused, RunOutcome,
                                                  run_program)
from workbench.autograd_graph.settings import AutogradSettings
from workbench.common.errors import ExplainedError, explain

# ---------------------------------------------------------------------------- the moons batch

MOONS_BATCH = 16
FRESH_MLP_SETUP = (
    "from sklearn.datasets import make_moons\n"
    "\n"
    "g = torch.Generator().manual_seed(0)\n"
    "model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1),\n"
    "                            torch.nn.Flatten(0))\n"
    "with torch.no_grad():\n"
    "    for p in model.parameters():\n"
    "        p.uniform_(-0.7, 0.7, generator=g)\n"
    f"points, labels = make_moons(n_samples={MOONS_BATCH}, noise=0.1, random_state=0)\n"
    "X = torch.tensor(points, dtype=torch.float32)\n"
    "y = torch.tensor(labels, dtype=torch.float32)\n"
)


def fresh_moons_bindings() -> dict[str, Any]:
    """A fresh small MLP and a seeded batch of moons, built without the global RNG."""
    from sklearn.datasets import make_moons

    generator = torch.Generator().manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 8, device="meta"), torch.nn.Tanh(),
                                torch.nn.Linear(8, 1, device="meta"), torch.nn.Flatten(0))
    model = model.to_empty(device="cpu")  # built on meta: no global-RNG initialisation
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.uniform_(-0.7, 0.7, generator=generator)
    points, labels = make_moons(n_samples=MOONS_BATCH, noise=0.1, random_state=0)
    return {"model": model, "X": torch.tensor(points, dtype=torch.float32),
            "y": torch.tensor(labels, dtype=torch.float32)}


def trained_moons_bindings(model: torch.nn.Module, features: torch.Tensor,
                           labels: torch.Tensor) -> dict[str, Any]:
    """The trainer's model (a copy, in eval mode: the trainer's own is never touched) and its
    first training batch."""
    twin = copy.deepcopy(model).cpu().eval()
    return {"model": twin, "X": features[:MOONS_BATCH].detach().float().cpu().clone(),
            "y": labels[:MOONS_BATCH].detach().float().cpu().clone()}


def program_uses_model(code: str) -> bool:
    return "model(" in code


# ---------------------------------------------------------------------------- the run

@dataclass
class SessionResult:
    outcome: RunOutcome
    traces: list[BackwardTrace]
    output_name: str | None
    final_graph: GraphModel | None
    page_calls_from: int                  # traces[page_calls_from:] are the page's calls
    error: ExplainedError | None = None
    error_line: int | None = None
    error_col: int | None = None
    error_source: str = ""               # "refused" | "failed" (PyTorch or Python raised) | ""
    leaf_history: list[dict[str, str]] = field(default_factory=list)  # after each page call
    page_calls: int = 0                   # backward() calls the page makes after the program
    program_calls_backward: bool = False  # then the page makes none: the program is in charge
    final_grads: list[tuple[str, str]] = field(default_factory=list)  # ("w.grad", print's text)

    @property
    def decisions(self) -> list[Decision]:
        """The program's `if`s and `while`s, with what the data decided, in line order."""
        return sorted(self.outcome.interpreter.decisions.values(), key=lambda d: d.line)

    @property
    def interpreter(self) -> Interpreter:
        return self.outcome.interpreter

    @property
    def printed(self) -> list[Any]:
        return self.outcome.interpreter.printed


def output_of(env: Mapping[str, Any], order: list[str]) -> str | None:
    """The program's output: the last-assigned name holding a tensor with a grad_fn, else the
    last-assigned tensor."""
    tensors = [name for name in reversed(order) if isinstance(env.get(name), torch.Tensor)]
    for name in tensors:
        if env[name].grad_fn is not None:
            return name
    return tensors[0] if tensors else None


def run_session(settings: AutogradSettings, *, bindings: dict[str, Any] | None = None,
                device: torch.device | None = None) -> SessionResult:
    """Run the program, then `settings.backward` calls of backward() on its output."""
    recorder = BackwardRecorder()
    outcome = run_program(settings.code, bindings=bindings, device=device, backward=recorder)
    interpreter = outcome.interpreter
    assigned = [n for n in interpreter.catalog.order if n in interpreter.env]
    output_name = output_of(interpreter.env, assigned)
    result = SessionResult(outcome, recorder.traces, output_name, None, len(recorder.traces))
    if outcome.refused is not None:
        result.error = refusal_explained(outcome.refused, ran=interpreter.statements_run > 0)
        result.error_line, result.error_source = outcome.refused.line, "refused"
        result.error_col = outcome.refused.col
        return _finish(result, interpreter)
    if outcome.failed is not None:
        result.error = explain(outcome.failed.error, origin=outcome.failed.origin)
        result.error_line, result.error_source = outcome.failed.line, "failed"
        result.error_col = outcome.failed.col
        return _finish(result, interpreter)
    if output_name is None:
        return _finish(result, interpreter)
    output = interpreter.env[output_name]
    result.program_calls_backward = interpreter.backward_calls > 0
    result.page_calls = 0 if result.program_calls_backward else settings.backward
    for _ in range(result.page_calls):
        if settings.zero:
            for trace_leaf in _leaves_of(output):
                trace_leaf.grad = None
        try:
            recorder(output, None, settings.retain, 0, interpreter)
        except Exception as exc:  # PyTorch's own error is the lesson (freed graph, no grad_fn...)
            result.error = explain(exc)
            result.error_line, result.error_source = 0, "failed"
            break
        result.leaf_history.append({name: format_tensor(grad) for name, grad
                                    in recorder.traces[-1].leaf_grads.items()})
    return _finish(result, interpreter)


def refusal_explained(refused: ProgramRefused, *, ran: bool) -> ExplainedError:
    """A refusal in words: which line and column, and whether it was the language or a limit."""
    place = f"Line {refused.line}" + (f", column {refused.col}" if refused.col else "")
    before = ("The lines before it ran; their results are shown." if ran
              else "Nothing of the program ran.")
    if refused.kind == "limit":
        return ExplainedError(
            f"{place}: stopped at one of the page's limits", refused.message,
            "The page caps how long a program runs and how much it computes, so that one "
            f"program cannot slow the server down for everyone. {before}", (), "Refused")
    return ExplainedError(
        f"{place}: not accepted here", refused.message,
        "The page runs your program with a small, safe interpreter that accepts a subset of "
        f"Python and PyTorch (see *What you can write*). {before}",
        ("rewrite the line with the accepted operations; *What you can write* lists them",),
        "Refused")


def leaf_names(env: Mapping[str, Any]) -> list[str]:
    """The program's names that hold a leaf requiring grad, in the order of first assignment."""
    return [name for name, value in env.items()
            if isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad]


def final_grads(interpreter: Interpreter) -> list[tuple[str, str]]:
    """Every leaf that requires grad, with `str(leaf.grad)`: what `print(w.grad)` writes.

    The program's names first, in the order they were first assigned, then the model's
    parameters.
    """
    shown = [(f"{name}.grad", str(interpreter.env[name].grad)) for name in leaf_names(interpreter.env)]
    if interpreter.model is not None:
        for name, parameter in interpreter.model.named_parameters():
            shown.append((f"model.{name}.grad", str(parameter.grad)))
    return shown


def _finish(result: SessionResult, interpreter: Interpreter) -> SessionResult:
    if result.traces:
        result.final_grads = final_grads(interpreter)
    if result.output_name is not None:
        named = {k: v for k, v in interpreter.env.items() if isinstance(v, torch.Tensor)}
        output = interpreter.env[result.output_name]
        result.final_graph = build_graph(output, interpreter.catalog, named, result.output_name).model
    return result


def _leaves_of(tensor: torch.Tensor) -> list[torch.Tensor]:
    found, seen, stack = [], set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "variable"):
            found.append(node.variable)
        stack.extend(child for child, _ in node.next_functions)
    return found


# ---------------------------------------------------------------------------- the code panel

def program_script(settings: AutogradSettings, output_name: str | None, *, page_calls: int,
                   uses_trainer_model: bool = False, leaves: list[str] | None = None) -> str:
    """The program as a script to paste into Python, with the page's `page_calls` backward() calls.

    `torch.manual_seed(0)` stands in for the page's per-learner generator seeded with 0: both
    draw the same numbers. `leaves` are the program's leaf names (`leaf_names`): the script
    ends by printing each one's `.grad`, the lines the page shows under *Final gradients*.
    """
    parts = ["import torch", "", "torch.manual_seed(0)  # the page draws random numbers from a seed of 0"]
    if program_uses_model(settings.code):
        parts += ["", "# %% model and batch"]
        if uses_trainer_model:
            parts.append("# On the page these came from your moons trainer; a fresh MLP stands in here.")
        parts.append(FRESH_MLP_SETUP.rstrip())
    parts += ["", "# %% the program", settings.code.rstrip()]
    if output_name and page_calls:
        listed = "leaves"
        parts += ["", f"# %% backward(), called {page_calls} time(s) by the page",
                  f"{listed} = [t for t in list(globals().values())",
                  "          if isinstance(t, torch.Tensor) and t.requires_grad and t.is_leaf]"]
        if program_uses_model(settings.code):
            parts.append(f"{listed} += list(model.parameters())")
        parts += [f"for call in range({page_calls}):"]
        if settings.zero:
            parts += [f"    for leaf in {listed}:", "        leaf.grad = None  # zero the gradients first"]
        retain = ", retain_graph=True" if settings.retain else ""
        parts += [f"    {output_name}.backward({retain.removeprefix(', ')})",
                  f"    print('after call', call + 1, [leaf.grad for leaf in {listed}])"]
    parts += ["", "# %% gradients"]
    if leaves is None:
        parts += ["for name, value in list(globals().items()):",
                  "    if isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad:",
                  "        print(name + '.grad =', value.grad)"]
    else:
        parts += [f"print({name + '.grad =' !r}, {name}.grad)" for name in leaves]
    if program_uses_model(settings.code):
        parts += ["for name, parameter in model.named_parameters():",
                  "    print(f'model.{name}.grad =', parameter.grad)"]
    return "\n".join(parts) + "\n"
