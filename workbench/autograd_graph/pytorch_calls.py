"""The calls a program makes into PyTorch: torch functions, tensor methods, the model, backward().

Every tensor a program computes is computed here, in `apply` (or `apply_in_place`, for `x += ...`):
its operands checked and its size dry-run first (dry_run.py), PyTorch's own error kept as the
lesson, the result counted against the budget and recorded for the graph. Random creators draw
from the run's own generator, so a lesson link shows the same numbers on every server.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import torch

from workbench.autograd_graph.budget import Budget
from workbench.autograd_graph.catalog import (CREATORS, GRAD_MODES, RANDOM_CREATORS, TENSOR_METHODS,
                                              TORCH_FUNCTIONS)
from workbench.autograd_graph.dry_run import DryRun
from workbench.autograd_graph.language import ProgramRefused
from workbench.autograd_graph.problems import PYTORCH, Position, ProgramFailed, from_pytorch
from workbench.autograd_graph.program_values import source_text
from workbench.autograd_graph.recording import Recorder

# backward() of a tensor: (tensor, gradient, retain_graph, line); the interpreter supplies the rest.
RunBackward = Callable[[torch.Tensor, "torch.Tensor | None", bool, int], None]


class PyTorchCalls:
    """Calls into PyTorch with the page's checks around each; see the module docstring."""

    def __init__(self, *, budget: Budget, dry_run: DryRun, recorder: Recorder, position: Position,
                 device: torch.device, generator: torch.Generator, model: torch.nn.Module | None,
                 run_backward: RunBackward) -> None:
        self.budget = budget
        self.limits = budget.limits
        self.dry_run = dry_run
        self.recorder = recorder
        self.position = position
        self.device = device
        self.generator = generator
        self.model = model
        self.run_backward = run_backward

    def call_model(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        assert self.model is not None
        line = self.position.line
        if kwargs or len(args) != 1 or not isinstance(args[0], torch.Tensor):
            raise ProgramRefused(line, "call the model with one tensor: `model(X)`")
        features = args[0]
        widest = max((p.shape[0] for p in self.model.parameters()), default=1)
        if features.dim() != 2 or features.shape[0] * widest > self.limits.max_total_numel // 4:
            raise self.budget.limit("the model takes a batch of shape (N, features) of modest size")
        # Every layer's output (and its activation's) stays alive for backward: count them all.
        widths = [p.shape[0] for p in self.model.parameters() if p.dim() == 2]
        self.budget.account_elements(2 * features.shape[0] * sum(widths))
        with from_pytorch(line):
            result = self.model(features)
        self.budget.account(result)
        self.recorder.record("model(...)", result, (features,))
        return result

    def torch_function(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        line = self.position.line
        if name in GRAD_MODES:
            raise ProgramRefused(line, f"`torch.{name}()` is used as `with torch.{name}():`")
        if name not in TORCH_FUNCTIONS:  # pragma: no cover - parse_program refuses it first
            raise ProgramRefused(line, f"`torch.{name}` is not accepted")
        function = getattr(torch, name)
        if name in CREATORS:
            self.dry_run.check_creation(name, args, kwargs)
            try:
                if name in RANDOM_CREATORS:
                    wants_grad = bool(kwargs.pop("requires_grad", False))
                    drawn = function(*args, **kwargs, generator=self.generator).to(self.device)
                    result = drawn.requires_grad_(wants_grad)
                else:
                    result = function(*args, **kwargs, device=self.device)
            except (RuntimeError, ValueError, TypeError) as exc:
                raise ProgramFailed(line, exc, origin=PYTORCH) from None
            self.budget.account(result)
            self.recorder.record(f"torch.{name}", result, ())
            return result
        return self.apply(function, tuple(args), kwargs, f"torch.{name}", check=True)

    def tensor_method(self, owner: torch.Tensor, name: str, args: list[Any], kwargs: dict[str, Any],
                      node: ast.Call) -> Any:
        if name not in TENSOR_METHODS:
            raise ProgramRefused(self.position.line, f"`.{name}(...)` is not accepted")
        if name == "backward":
            return self.backward(owner, args, kwargs)
        if name == "retain_grad":
            owner.retain_grad()
            return None
        if name in ("numel", "dim", "size", "item", "is_inference"):
            return getattr(owner, name)(*args, **kwargs)
        method = getattr(owner, name)
        result = self.apply(lambda *a, **k: method(*a, **k), tuple(args), kwargs, source_text(node),
                            check=True, dry=lambda *a, **k: getattr(a[0], name)(*a[1:], **k),
                            owner=owner)
        if name == "detach" and isinstance(result, torch.Tensor):
            self.recorder.detached(result)
        return result

    def backward(self, owner: torch.Tensor, args: list[Any], kwargs: dict[str, Any]) -> None:
        line = self.position.line
        unknown = set(kwargs) - {"gradient", "retain_graph"}
        if unknown or len(args) > 1:
            raise ProgramRefused(line, "backward() accepts `gradient=` and `retain_graph=` only")
        gradient = args[0] if args else kwargs.get("gradient")
        if gradient is not None and not isinstance(gradient, torch.Tensor):
            raise ProgramRefused(line, "the gradient passed to backward() must be a tensor")
        retain = bool(kwargs.get("retain_graph", False))
        self.budget.count_backward()
        with from_pytorch(line):
            self.run_backward(owner, gradient, retain, line)
        return None

    # ---- the one place tensors are computed
    def apply(self, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
              label: str, *, check: bool, dry: Callable[..., Any] | None = None,
              owner: torch.Tensor | None = None) -> Any:
        self.dry_run.check_operands((*args, *kwargs.values()))
        operands = ((owner,) if owner is not None else ()) + args
        if check:
            self.dry_run.check_result_size(dry or function, operands if dry else args, kwargs)
        with from_pytorch(self.position.line):
            result = function(*args, **kwargs)
        if isinstance(result, tuple) and not isinstance(result, torch.Size):
            raise ProgramRefused(self.position.line,
                                 f"`{label}` returns several tensors; that is not supported here")
        if isinstance(result, torch.Tensor):
            # An in-place method returns its owner: it still counts, as autograd may keep a copy.
            self.budget.account(result)
            self.recorder.record(label, result, tuple(t for t in operands if isinstance(t, torch.Tensor)))
        return result

    def apply_in_place(self, op: Callable[[Any, Any], Any], current: torch.Tensor, value: Any,
                       label: str) -> None:
        """`name op= value` on a tensor: `current` changes in place, and is counted and recorded."""
        self.dry_run.check_operands((value,))
        self.dry_run.check_result_size(op, (current, value))
        # Outside from_pytorch, so PyTorch's error here reaches the page with origin Python, where
        # `x = x * y` says PyTorch: kept as it was, since the page's wording depends on the origin.
        op(current, value)  # in place: the tensor object keeps its identity, version += 1
        self.budget.account(current)  # autograd may keep a copy of the old values for backward
        self.recorder.record(label, current, (current, value))
