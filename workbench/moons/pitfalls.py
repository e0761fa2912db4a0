"""The pitfall lab: the lesson's table of training mistakes, each run next to the correct loop.

`lab_run` is the training loop of `workbench.moons.training` with switches that break it on purpose.
`run_pitfall(key)` trains the same model twice from the same seed, once correctly and once with
one switch flipped, and returns both histories plus what PyTorch says about the difference.
This module never imports streamlit.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.utils.data import TensorDataset

from workbench.common.errors import ExplainedError, explain
from workbench.moons.data import as_tensors, make_dataset, split_and_scale
from workbench.moons.model import build_model, build_optimizer
from workbench.moons.settings import PRESET, MoonsSettings
from workbench.moons.training import batched_loader

LAB_SETTINGS = dataclasses.replace(PRESET, n=1200, epochs=25, batch=32)
MAX_LAB_STEPS = 5_000


@dataclass(frozen=True)
class Pitfall:
    key: str
    title: str
    symptom: str
    broken_code: str
    correct_code: str
    facts: tuple[str, ...] = ()      # the measurements that show this pitfall


PITFALLS: tuple[Pitfall, ...] = (
    Pitfall("no_zero_grad", "Forgetting optimizer.zero_grad()",
            "`backward()` adds into `.grad`. Without `zero_grad()` every step uses the sum of all "
            "gradients so far, so the steps grow and training oscillates.",
            "loss.backward()\noptimizer.step()", "optimizer.zero_grad()\nloss.backward()\noptimizer.step()"),
    Pitfall("sigmoid_before_bce", "Sigmoid before BCEWithLogitsLoss",
            "`BCEWithLogitsLoss` applies the sigmoid itself. A second sigmoid squeezes the logits "
            "into (0, 1), so the loss can never fall below log(1 + e^-1) = 0.313 and the gradients "
            "shrink.",
            "loss = loss_fn(torch.sigmoid(model(xb)), yb)", "loss = loss_fn(model(xb), yb)"),
    Pitfall("no_eval", "No model.eval() with dropout",
            "In train mode dropout zeroes random activations, so evaluating without `model.eval()` "
            "scores a random thinned network: the numbers are lower and change from call to call.",
            "with torch.no_grad():\n    acc = accuracy(model(x_val), y_val)",
            "model.eval()\nwith torch.no_grad():\n    acc = accuracy(model(x_val), y_val)",
            ("val accuracy, evaluated twice",)),
    Pitfall("scaler_on_all", "Scaler fit on all the data",
            "Fitting the StandardScaler on train+val+test lets the test points shape the "
            "preprocessing: the test score is no longer a score on unseen data.",
            "scaler = StandardScaler().fit(X)", "scaler = StandardScaler().fit(X_train)",
            ("scaler mean", "scaler std")),
    Pitfall("accumulate_tensor", "Summing the loss tensor instead of loss.item()",
            "`total += loss` keeps every batch's graph alive through the sum: memory grows with "
            "every step, and nothing is learned faster.",
            "total_loss += loss", "total_loss += loss.item()",
            ("total_loss", "graph nodes kept alive by total_loss after 1 epoch",
             "graph nodes kept alive by total_loss at the end")),
    Pitfall("float_targets", "Float targets where int64 is needed",
            "`CrossEntropyLoss` with one logit per class wants class indices as int64; float "
            "targets of shape (N,) are refused (and `BCEWithLogitsLoss` wants float targets: the "
            "two losses want opposite dtypes).",
            "loss = nn.CrossEntropyLoss()(logits, yb.float())",
            "loss = nn.CrossEntropyLoss()(logits, yb.long())"),
)
PITFALL_KEYS = tuple(p.key for p in PITFALLS)


@dataclass
class LabRun:
    label: str
    train_loss: list[float] = field(default_factory=list)
    val_acc: list[float] = field(default_factory=list)
    test_acc: float = math.nan
    facts: dict[str, str] = field(default_factory=dict)
    error: ExplainedError | None = None


@dataclass(frozen=True)
class PitfallResult:
    pitfall: Pitfall
    correct: LabRun
    broken: LabRun
    finding: str


def explain_target_dtype(exc: BaseException) -> ExplainedError:
    """The loss refused the targets' dtype: what each loss wants, in plain words."""
    return ExplainedError(
        "The targets have the wrong dtype for this loss", str(exc),
        "`CrossEntropyLoss` takes one logit per class, shape (N, C), and the targets as class "
        "**indices**: int64 of shape (N,). Float targets of shape (N,) are refused (float targets "
        "are only accepted as class probabilities of shape (N, C)). `BCEWithLogitsLoss` is the "
        "opposite: one logit per sample and **float** targets of the same shape, 0.0 or 1.0.",
        ("`loss_fn(logits, yb.long())` for CrossEntropyLoss",
         "`loss_fn(logit, yb.float())` for BCEWithLogitsLoss"),
        type(exc).__name__)


def graph_size(tensor: torch.Tensor) -> int:
    """How many autograd nodes a tensor keeps alive through its grad_fn."""
    seen: set[int] = set()
    stack = [tensor.grad_fn] if tensor.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return len(seen)


def _accuracy(logits: torch.Tensor, target: torch.Tensor) -> float:
    predicted = logits.argmax(dim=1) if logits.dim() == 2 else (logits > 0).long()
    return float((predicted == target.long()).float().mean())


def lab_run(settings: MoonsSettings, device: torch.device, label: str, *, zero_grad: bool = True,
            sigmoid_first: bool = False, eval_mode: bool = True, scaler_on_all: bool = False,
            accumulate_tensor: bool = False, two_logits: bool = False,
            target_dtype: torch.dtype | None = None) -> LabRun:
    """The lesson's loop with switches; bounded to MAX_LAB_STEPS optimizer steps."""
    run = LabRun(label)
    data = make_dataset(settings.dataset, settings.n, settings.noise, settings.seed)
    split = split_and_scale(data, settings.fractions, settings.seed)
    if scaler_on_all:
        split = dataclasses.replace(split, scaler=StandardScaler().fit(data.features))
    run.facts["scaler mean"] = np.array2string(split.scaler.mean_, precision=4)
    run.facts["scaler std"] = np.array2string(split.scaler.scale_, precision=4)
    x_train, y_train = as_tensors(split.scaled(split.x_train), split.y_train, torch.device("cpu"))
    x_val, y_val = as_tensors(split.scaled(split.x_val), split.y_val, device)
    x_test, y_test = as_tensors(split.scaled(split.x_test), split.y_test, device)

    # Initialised on the CPU (where the generator lives), then moved, as build_model does.
    model = build_model(settings, torch.device("cpu"), torch.Generator().manual_seed(settings.seed))
    if two_logits:   # a 2-class head for CrossEntropyLoss: replace the last layer
        head = nn.Linear(model.net[-1].in_features, 2, device="meta")   # no global RNG draws
        model.net[-1] = head.to_empty(device="cpu")
        model.reset_parameters(torch.Generator().manual_seed(settings.seed))
    model.to(device)
    model.set_dropout_generator(torch.Generator(device=device).manual_seed(settings.seed + 2))
    optimizer = build_optimizer(settings.opt, model.parameters(), settings.lr, settings.wd)
    loss_fn: nn.Module = nn.CrossEntropyLoss() if two_logits else nn.BCEWithLogitsLoss()
    loader = batched_loader(TensorDataset(x_train, y_train), settings.batch,
                            torch.Generator().manual_seed(settings.seed + 1))

    def logits(x: torch.Tensor) -> torch.Tensor:
        return model.net(x) if two_logits else model(x)   # (N, 2) for CrossEntropyLoss, else (N,)

    def loss_input(x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(logits(x)) if sigmoid_first else logits(x)

    steps = 0
    total_loss: float | torch.Tensor = 0.0
    for _ in range(settings.epochs):
        model.train()
        epoch_loss, seen = 0.0, 0
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            if target_dtype is not None:
                yb = yb.to(target_dtype)
            if zero_grad:
                optimizer.zero_grad()
            try:
                loss = loss_fn(loss_input(xb), yb)
            except RuntimeError as exc:
                run.error = explain_target_dtype(exc) if "dtype" in str(exc) else explain(exc)
                return run
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item() * len(yb)
            seen += len(yb)
            total_loss = total_loss + loss if accumulate_tensor else total_loss + loss.item()
            steps += 1
            if steps >= MAX_LAB_STEPS:
                break
        run.train_loss.append(epoch_loss / max(seen, 1))
        if eval_mode:
            model.eval()
        with torch.no_grad():
            run.val_acc.append(_accuracy(logits(x_val), y_val))
        if accumulate_tensor and len(run.train_loss) == 1:
            run.facts["graph nodes kept alive by total_loss after 1 epoch"] = (
                f"{graph_size(total_loss):,}" if torch.is_tensor(total_loss) else "0")
        if steps >= MAX_LAB_STEPS:
            break
    if eval_mode:
        model.eval()
    with torch.no_grad():
        run.test_acc = _accuracy(logits(x_test), y_test)
        again = _accuracy(logits(x_val), y_val)
        run.facts["val accuracy, evaluated twice"] = f"{100 * run.val_acc[-1]:.1f}% then {100 * again:.1f}%"
    total = total_loss if not torch.is_tensor(total_loss) else total_loss.detach()
    run.facts["total_loss"] = (f"{type(total_loss).__name__}: "
                               + (f"tensor({float(total):.2f}, grad_fn=<{type(total_loss.grad_fn).__name__}>)"
                                  if torch.is_tensor(total_loss) and total_loss.grad_fn is not None
                                  else f"{float(total):.2f}"))
    if accumulate_tensor:
        run.facts["graph nodes kept alive by total_loss at the end"] = f"{graph_size(total_loss):,}" \
            if torch.is_tensor(total_loss) else "0"
    else:
        run.facts["graph nodes kept alive by total_loss at the end"] = "0"
    return run


def run_pitfall(key: str, device: torch.device | None = None,
                settings: MoonsSettings = LAB_SETTINGS) -> PitfallResult:
    device = device or torch.device("cpu")
    pitfall = next(p for p in PITFALLS if p.key == key)
    if key == "no_eval":
        settings = dataclasses.replace(settings, dropout=0.5)
    switches: dict[str, dict] = {
        "no_zero_grad": {"zero_grad": False},
        "sigmoid_before_bce": {"sigmoid_first": True},
        "no_eval": {"eval_mode": False},
        "scaler_on_all": {"scaler_on_all": True},
        "accumulate_tensor": {"accumulate_tensor": True},
        "float_targets": {"two_logits": True, "target_dtype": torch.float32},
    }
    correct_switches = {"two_logits": True, "target_dtype": torch.int64} if key == "float_targets" else {}
    correct = lab_run(settings, device, "correct", **correct_switches)
    broken = lab_run(settings, device, "broken", **switches[key])
    return PitfallResult(pitfall, correct, broken, _finding(key, correct, broken))


def _finding(key: str, correct: LabRun, broken: LabRun) -> str:
    if broken.error is not None:
        return (f"The broken run stops at its first batch: PyTorch raises "
                f"`{broken.error.message}`. The correct run reaches {100 * correct.test_acc:.1f}% "
                "test accuracy.")
    def last(values: list[float]) -> float:
        return values[-1] if values else math.nan
    text = (f"Final train loss {last(correct.train_loss):.3f} (correct) vs {last(broken.train_loss):.3f} "
            f"(broken); test accuracy {100 * correct.test_acc:.1f}% vs {100 * broken.test_acc:.1f}%.")
    if key == "scaler_on_all":
        text += (" The accuracy barely moves on this easy data, but the scaler's mean and std now "
                 "contain the test points: compare them below.")
    if key == "accumulate_tensor":
        text += (" The parameters are the same either way; the difference is memory: "
                 f"{broken.facts.get('graph nodes kept alive by total_loss at the end')} graph "
                 "nodes are still alive because `total_loss` holds them.")
    return text
