"""Loss functions on the same logits, BCELoss against BCEWithLogitsLoss, and forward hooks.

Everything here is asked of PyTorch when the page draws it. `loss_curves` puts BCE, MSE and
Huber side by side as functions of one logit z, with their gradients from autograd;
`large_logit_rows` shows why the page's loss takes raw logits: `BCELoss(sigmoid(z))` rounds
sigmoid(z) to 0 or 1 in float32 for large |z|, and PyTorch then clamps the log at -100, while
`BCEWithLogitsLoss` computes the same loss from z directly. `hook_demo` shows that calling a
module (`model(x)`) runs its hooks and calling `model.forward(x)` skips them.
This module never imports streamlit.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn

from workbench.common.modes import evaluating

LOSSES: dict[str, nn.Module] = {
    "BCEWithLogitsLoss": nn.BCEWithLogitsLoss(reduction="none"),
    "MSELoss": nn.MSELoss(reduction="none"),
    "HuberLoss (delta=1)": nn.HuberLoss(reduction="none", delta=1.0),
}


@dataclass(frozen=True)
class LossCurves:
    z: list[float]
    target: float
    values: dict[str, list[float]]      # loss name -> loss at each z
    grads: dict[str, list[float]]       # loss name -> dloss/dz at each z (autograd)


def loss_curves(target: float, lo: float = -8.0, hi: float = 8.0, points: int = 161) -> LossCurves:
    """Each loss of the same logit z against the same 0/1 target, and its gradient in z."""
    values, grads = {}, {}
    for name, loss_fn in LOSSES.items():
        z = torch.linspace(lo, hi, points, requires_grad=True)
        loss = loss_fn(z, torch.full_like(z, target))
        (grad,) = torch.autograd.grad(loss.sum(), z)
        values[name], grads[name] = loss.detach().tolist(), grad.tolist()
    return LossCurves(torch.linspace(lo, hi, points).tolist(), target, values, grads)


def losses_on_logits(logits: torch.Tensor, targets: torch.Tensor) -> dict[str, float]:
    """The mean of each loss over the same logits and 0/1 targets (e.g. a model's test split)."""
    with torch.no_grad():
        return {name: float(loss_fn(logits, targets.float()).mean()) for name, loss_fn in LOSSES.items()}


@dataclass(frozen=True)
class LargeLogitRow:
    z: float
    target: float
    sigmoid: float           # sigmoid(z) in float32, as BCELoss receives it
    bce_of_sigmoid: float    # nn.BCELoss()(sigmoid(z), y), float32
    with_logits: float       # nn.BCEWithLogitsLoss()(z, y), float32
    exact: float             # the same loss in float64
    grad_bce_of_sigmoid: float   # d/dz through sigmoid then BCELoss
    grad_with_logits: float      # d/dz of BCEWithLogitsLoss: sigmoid(z) - y

    @property
    def saturated(self) -> bool:
        """sigmoid(z) rounded to exactly 0 or 1 in float32: the probability carries no z."""
        return self.sigmoid in (0.0, 1.0)

    @property
    def clamped(self) -> bool:
        """BCELoss clamps log(p) and log(1 - p) at -100, so a loss of exactly 100 is the clamp."""
        return self.bce_of_sigmoid == 100.0


LARGE_LOGITS = ((5.0, 1.0), (10.0, 0.0), (17.0, 0.0), (20.0, 0.0), (50.0, 0.0), (-20.0, 1.0),
                (-120.0, 1.0), (20.0, 1.0))


def large_logit_rows(cases: tuple[tuple[float, float], ...] = LARGE_LOGITS) -> list[LargeLogitRow]:
    rows = []
    for z_value, y_value in cases:
        y = torch.tensor([y_value])
        z = torch.tensor([z_value], requires_grad=True)
        p = torch.sigmoid(z)
        bce = nn.BCELoss()(p, y)
        (grad_bce,) = torch.autograd.grad(bce, z)
        z2 = torch.tensor([z_value], requires_grad=True)
        logits = nn.BCEWithLogitsLoss()(z2, y)
        (grad_logits,) = torch.autograd.grad(logits, z2)
        exact = nn.functional.binary_cross_entropy_with_logits(z.detach().double(), y.double())
        rows.append(LargeLogitRow(z_value, y_value, p.item(), bce.item(), logits.item(), exact.item(),
                                  grad_bce.item(), grad_logits.item()))
    return rows


@dataclass(frozen=True)
class HookDemo:
    calls: dict[str, dict[str, int]]    # "model(x)" / "model.forward(x)" -> hook -> times it ran
    same_output: bool


def hook_demo(model: nn.Module, x: torch.Tensor) -> HookDemo:
    """Forward hooks on the model and on its first layer; call it both ways and count."""
    model = copy.deepcopy(model).eval()       # the learner's model stays untouched
    first = next(m for m in model.modules() if isinstance(m, nn.Linear))
    counts = {"hook on the model": 0, "hook on its first Linear": 0}

    def on(name: str):
        def hook(module: nn.Module, inputs: tuple, output: torch.Tensor) -> None:
            counts[name] += 1
        return hook

    handles = [model.register_forward_hook(on("hook on the model")),
               first.register_forward_hook(on("hook on its first Linear"))]
    calls = {}
    with torch.no_grad():
        called = model(x)
        calls["model(x)"] = dict(counts)
        counts.update({k: 0 for k in counts})
        forwarded = model.forward(x)
        calls["model.forward(x)"] = dict(counts)
    for handle in handles:
        handle.remove()
    return HookDemo(calls, bool(torch.equal(called, forwarded)))


def model_losses(model: nn.Module, x: torch.Tensor, targets: torch.Tensor) -> dict[str, float]:
    """Each loss on the model's logits for `x` (eval mode, no graph; its mode is restored)."""
    with evaluating(model):
        logits = model(x)
    return losses_on_logits(logits, targets)


def confident_losses() -> dict[str, float]:
    """Each loss on a confident, correct logit: z = 5 for y = 1."""
    return losses_on_logits(torch.tensor([5.0]), torch.tensor([1.0]))
