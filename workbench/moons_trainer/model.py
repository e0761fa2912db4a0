"""The moons trainer's model: an MLP whose parameters come from the learner's generator.

`MLP` is a plain `nn.Module`: Linear -> activation (-> dropout) ... -> Linear to one logit. It
is built on the `meta` device and initialised from the learner's own `torch.Generator`, never
the global RNG. This module never imports streamlit.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from workbench.common.modes import evaluating

class SeededDropout(nn.Module):
    """nn.Dropout, but its masks come from a given generator instead of the global RNG."""

    def __init__(self, p: float, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.p = p
        self.generator = generator

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        keep = torch.rand(x.shape, generator=self.generator, device=x.device) >= self.p
        return x * keep / (1.0 - self.p)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class InputFeatures(nn.Module):
    """The first layer's inputs, computed from each point's two (scaled) coordinates: TensorFlow
    Playground's input features. No parameters: it changes what the first Linear sees, so x1_sq
    and x2_sq let even a model without hidden layers draw a circle."""

    FORMULAS = {"x1": lambda x1, x2: x1, "x2": lambda x1, x2: x2,
                "x1_sq": lambda x1, x2: x1 * x1, "x2_sq": lambda x1, x2: x2 * x2,
                "x1_x2": lambda x1, x2: x1 * x2,
                "sin_x1": lambda x1, x2: torch.sin(x1), "sin_x2": lambda x1, x2: torch.sin(x2)}

    def __init__(self, names: tuple[str, ...] = ("x1", "x2")) -> None:
        super().__init__()
        self.names = tuple(names)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.names == ("x1", "x2"):
            return x                        # the coordinates themselves: nothing to compute
        x1, x2 = x[..., 0], x[..., 1]
        return torch.stack([self.FORMULAS[name](x1, x2) for name in self.names], dim=-1)

    def extra_repr(self) -> str:
        return ", ".join(self.names)


class MLP(nn.Module):
    """2 coordinates -> input features -> hidden layers with an activation (and dropout) -> 1
    raw logit."""

    ACTIVATIONS = {
        "ReLU": nn.ReLU, "LeakyReLU": lambda: nn.LeakyReLU(0.01), "GELU": nn.GELU,
        "Tanh": nn.Tanh, "Sigmoid": nn.Sigmoid,
        "Identity": nn.Identity,    # no nonlinearity: Linear after Linear is one Linear
    }

    def __init__(self, hidden: tuple[int, ...] = (64, 32), act: str = "ReLU", dropout: float = 0.0,
                 device: torch.device | str | None = None,
                 features: tuple[str, ...] = ("x1", "x2")) -> None:
        super().__init__()
        self.features = InputFeatures(features)     # no parameters: the state_dict is net's
        layers: list[nn.Module] = []
        width = len(features)
        for out in hidden:
            layers += [nn.Linear(width, out, device=device), self.ACTIVATIONS[act]()]
            if dropout > 0:
                layers.append(SeededDropout(dropout))
            width = out
        layers.append(nn.Linear(width, 1, device=device))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(self.features(x)).squeeze(-1)   # (N, 1) -> (N,) logits, as the targets

    def reset_parameters(self, generator: torch.Generator) -> None:
        """nn.Linear's own default init (Kaiming-uniform), drawn from `generator`."""
        with torch.no_grad():
            for layer in self.net:
                if isinstance(layer, nn.Linear):
                    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
                    bound = 1 / math.sqrt(layer.in_features)
                    nn.init.uniform_(layer.bias, -bound, bound, generator=generator)

    def set_dropout_generator(self, generator: torch.Generator) -> None:
        for layer in self.net:
            if isinstance(layer, SeededDropout):
                layer.generator = generator


ACTIVATION_MODULES: dict[str, Callable[[], nn.Module]] = MLP.ACTIVATIONS


def build_model(hidden: tuple[int, ...], act: str, dropout: float, device: torch.device,
                generator: torch.Generator, features: tuple[str, ...] = ("x1", "x2")) -> MLP:
    """An MLP over `features` on `device` with weights from `generator`.

    Built on `meta` first, so nn.Linear's constructor draws nothing from the global RNG; then
    given uninitialised CPU memory, filled from the generator, and moved to `device`.
    """
    model = MLP(hidden, act, dropout, device="meta", features=features)
    # The generator lives on the CPU: initialise there, then move, so every device starts
    # from the same weights for the same seed.
    model = model.to_empty(device="cpu")
    model.reset_parameters(generator)
    return model.to(device)


@dataclass(frozen=True)
class ParameterRow:
    name: str
    shape: tuple[int, ...]
    numel: int
    dtype: str
    init: str


def collapsed_linear(model: MLP) -> tuple[torch.Tensor, torch.Tensor] | None:
    """With Identity activations (and no dropout in the way), the whole MLP is one affine map of
    its input features.

    Returns its weight (1, features) and bias (1,), multiplied out layer by layer:
    W = W_k ... W_2 W_1 and b = W_k (... (W_2 b_1 + b_2) ...) + b_k. None if a layer is nonlinear.
    """
    weight, bias = None, None
    for layer in model.net:
        if isinstance(layer, nn.Linear):
            w, b = layer.weight.detach(), layer.bias.detach()
            weight = w if weight is None else w @ weight
            bias = b if bias is None else w @ bias + b
        elif not isinstance(layer, (nn.Identity, SeededDropout)):
            return None
    return weight, bias


def parameter_table(model: nn.Module) -> list[ParameterRow]:
    """One row per parameter, with the init scheme nn.Linear uses for it."""
    rows = []
    for name, p in model.named_parameters():
        fan_in = int(p.shape[1]) if name.endswith("weight") else _fan_in(model, name)
        bound = f"U(±{1 / math.sqrt(fan_in):.3g})"
        # kaiming_uniform_ with a=sqrt(5) works out to the same bound as the bias: 1/sqrt(fan_in).
        init = (f"kaiming_uniform_(a=√5) = {bound}" if name.endswith("weight")
                else f"uniform_ {bound}, fan_in={fan_in}")
        rows.append(ParameterRow(name, tuple(p.shape), p.numel(), str(p.dtype).replace("torch.", ""), init))
    return rows


def _fan_in(model: nn.Module, bias_name: str) -> int:
    weight = dict(model.named_parameters())[bias_name.removesuffix("bias") + "weight"]
    return int(weight.shape[1])


def activation_curve(act: str, lo: float = -4.0, hi: float = 4.0, points: int = 161
                     ) -> tuple[list[float], list[float], list[float]]:
    """x, f(x) and f'(x) for an activation; the derivative comes from autograd."""
    x = torch.linspace(lo, hi, points, requires_grad=True)
    y = ACTIVATION_MODULES[act]()(x)
    (grad,) = torch.autograd.grad(y.sum(), x)
    return x.detach().tolist(), y.detach().tolist(), grad.tolist()


@dataclass(frozen=True)
class ActivationRow:
    name: str
    module: str
    values: str          # the module applied to the vector PROBE, as PyTorch prints it
    total: float         # the sum of those outputs: 1 for Softmax, whatever it is for the others
    elementwise: bool    # each output depends on its own input only
    role: str


PROBE = (-2.0, 0.0, 2.0)
_ROLES = {
    "ReLU": "hidden layers (the lesson's choice): zero for negative inputs, so gradients there are 0",
    "LeakyReLU": "hidden layers: like ReLU with a small slope (0.01) for negative inputs",
    "GELU": "hidden layers (transformers): a smooth ReLU",
    "Tanh": "hidden layers: squashes to (-1, 1), saturates for large inputs",
    "Sigmoid": "squashes to (0, 1): a probability for two classes; BCEWithLogitsLoss applies it "
               "itself, so the model outputs the raw logit",
    "Identity": "no nonlinearity: stacked Linear layers collapse into one linear map",
    "Softmax": "the output of a multi-class model, over the class dimension (not element-wise); "
               "CrossEntropyLoss applies log_softmax itself, so the model outputs raw logits",
}


def activation_table() -> list[ActivationRow]:
    """Every activation of the page, plus Softmax, applied by PyTorch to the same small vector."""
    modules: dict[str, Callable[[], nn.Module]] = {**ACTIVATION_MODULES,
                                                   "Softmax": lambda: nn.Softmax(dim=-1)}
    probe = torch.tensor(PROBE)
    rows = []
    for name, make in modules.items():
        module = make()
        out = module(probe)
        # Element-wise: changing one input changes only its own output (a Jacobian that is diagonal).
        jacobian = torch.autograd.functional.jacobian(module, probe)
        elementwise = bool(torch.equal(jacobian, torch.diag(torch.diagonal(jacobian))))
        values = ", ".join(f"{v:.4f}" for v in out.tolist())
        rows.append(ActivationRow(name, repr(module), f"[{values}]", float(out.sum()), elementwise,
                                  _ROLES[name]))
    return rows


def weight_penalty(model: nn.Module, kind: str, rate: float) -> torch.Tensor | None:
    """TensorFlow Playground's regularization, added to the loss: rate * sum |w| (L1) or
    rate * sum w^2 / 2 (L2) over every Linear layer's weights, not the biases. None when off,
    so an unregularised step computes exactly what it would without this function."""
    if kind == "none" or rate == 0:
        return None
    weights = [m.weight for m in model.modules() if isinstance(m, nn.Linear)]
    if kind == "L1":
        return rate * sum(w.abs().sum() for w in weights)
    return rate * sum(w.pow(2).sum() for w in weights) / 2


def build_optimizer(name: str, params, lr: float, wd: float) -> torch.optim.Optimizer:
    """The optimizer the page names, over `params` (SGD with momentum 0.9)."""
    if name == "AdamW":
        return torch.optim.AdamW(params, lr=lr, weight_decay=wd)
    if name == "Adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=wd)
    if name == "SGD":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=wd)
    if name == "RMSprop":
        return torch.optim.RMSprop(params, lr=lr, weight_decay=wd)
    raise ValueError(f"unknown optimizer {name!r}")


def apply_changes(optimizer: torch.optim.Optimizer, params, change: dict) -> torch.optim.Optimizer:
    """Settings changed mid-run, as {"lr" / "weight_decay" / "optimizer": new value}: the same
    weights go on training; a new optimizer starts with fresh state (no momentum yet)."""
    lr = change.get("lr", optimizer.param_groups[0]["lr"])
    weight_decay = change.get("weight_decay", optimizer.param_groups[0]["weight_decay"])
    if "optimizer" in change:
        return build_optimizer(change["optimizer"], params, lr, weight_decay)
    for group in optimizer.param_groups:
        group["lr"], group["weight_decay"] = lr, weight_decay
    return optimizer


@dataclass(frozen=True)
class LinearMapCheck:
    """An identity-activation model multiplied out to one `Linear`, checked on some points."""

    weights: tuple[float, ...]     # W = W_k @ ... @ W_1, flattened
    bias: float
    layers: int                    # how many `Linear` layers multiplied out
    points: int                    # how many points it was checked on
    max_difference: float          # largest |model(x) - (x @ W.T + b)| on them

    def agreement_words(self) -> str:
        """Whether the multiplied-out map reproduces the model, judged from the measured
        difference: float32 rounding of a few small matrix products stays far below
        LINEAR_MAP_TOLERANCE, a wrong product does not."""
        if self.max_difference <= LINEAR_MAP_TOLERANCE:
            return f"it matches the model to {self.max_difference:.2g}"
        return f"it differs from the model by up to {self.max_difference:.2g}"


LINEAR_MAP_TOLERANCE = 1e-3


def linear_map_check(model: MLP, x: torch.Tensor, weight: torch.Tensor,
                     bias: torch.Tensor) -> LinearMapCheck:
    """The model against its multiplied-out map `x @ weight.T + bias` on `x`, in eval mode."""
    with evaluating(model):
        direct = model(x)
        product = (model.features(x) @ weight.T + bias).squeeze(-1)
    return LinearMapCheck(weights=tuple(weight.flatten().tolist()), bias=float(bias),
                          layers=sum(isinstance(m, nn.Linear) for m in model.net),
                          points=len(direct), max_difference=float((direct - product).abs().max()))


@dataclass(frozen=True)
class DeviceMismatch:
    """What PyTorch says when a batch on `other` meets a model on another device."""

    other: torch.device
    error: RuntimeError | None      # None: this combination of devices is allowed here


def device_mismatch(device: torch.device, model: nn.Module) -> DeviceMismatch:
    """Feed a copy of `model` (on `device`) a batch on another device, and keep PyTorch's error."""
    other = torch.device("cpu") if device.type != "cpu" else torch.device("meta")
    try:
        with torch.no_grad():
            copy.deepcopy(model).eval()(torch.zeros(4, 2, device=other))
    except RuntimeError as exc:
        return DeviceMismatch(other, exc)
    return DeviceMismatch(other, None)
