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
from workbench.common.jobs import breathe
from workbench.moons.data import as_tensors, make_dataset, split_and_scale
from workbench.moons.model import build_model, build_optimizer
from workbench.moons.settings import PRESET, MoonsSettings
from workbench.moons.training import batched_loader

LAB_SETTINGS = dataclasses.replace(PRESET, n=1200, epochs=25, batch=32)
MAX_LAB_STEPS = 5_000
REPEATS = 8             # evaluations of the same trained weights, for pitfall 5
DECAY = 1 - 1e-3        # the hand-written weight decay of pitfall 10: p *= DECAY at every step
# Pitfall 1's optimizers: the lesson's exploding loss needs SGD; AdamW shows something else.
ZERO_GRAD_OPTIMIZERS = {"SGD": 0.05, "AdamW": 0.003}     # name -> learning rate


@dataclass(frozen=True)
class Pitfall:
    number: int          # its row in the lesson's table of ten pitfalls
    key: str
    title: str
    symptom: str
    broken_code: str
    correct_code: str
    facts: tuple[str, ...] = ()      # the measurements that show this pitfall

    @property
    def label(self) -> str:
        return f"{self.number}. {self.title}"


SAVED_TENSORS = "tensors saved for backward by one validation pass"
SAVED_BYTES = "bytes those saved tensors hold (each storage once)"
SAVED_NEW_BYTES = "of which new tensors made by the forward pass"
REPEATED = f"val accuracy of the final weights, {REPEATS} evaluations"
FLOOR = "lowest possible train loss for this loss input"
GRAD_ERROR = "step 1: largest |.grad - true gradient|"
VERSION = "net.0.weight._version around the update"
GRAD_NORM = "step 1: gradient norm of net.0.weight"
CE_CHECK = "step 1: CrossEntropyLoss vs nll_loss(log_softmax)"

PITFALLS: tuple[Pitfall, ...] = (
    Pitfall(1, "no_zero_grad", "Forgetting optimizer.zero_grad()",
            "`backward()` adds into `.grad`. Without `zero_grad()` every step uses the sum of all "
            "gradients so far. What that does depends on the optimizer: SGD's step is `lr` times "
            "that growing sum (and momentum 0.9 adds up the steps too), so the loss explodes; "
            "AdamW divides each step by a running average of the gradient's size, so its steps "
            "stay about `lr` long and the loss oscillates instead. Pick one below.",
            "loss.backward()\noptimizer.step()", "optimizer.zero_grad()\nloss.backward()\noptimizer.step()",
            ("largest train loss of an epoch", "epochs whose loss rose")),
    Pitfall(2, "sigmoid_before_bce", "Sigmoid before BCEWithLogitsLoss",
            "`BCEWithLogitsLoss` applies the sigmoid itself. A second sigmoid squeezes what it "
            "sees into (0, 1): a class-1 sample's loss cannot fall below log(1 + e^-1) and a "
            "class-0 sample's below log 2, so the average has a floor set by the class balance, "
            "and the gradients shrink.",
            "loss = loss_fn(torch.sigmoid(model(xb)), yb)", "loss = loss_fn(model(xb), yb)",
            (FLOOR,)),
    Pitfall(3, "softmax_before_ce", "Softmax before CrossEntropyLoss",
            "`CrossEntropyLoss` is the multi-class loss: it takes raw logits of shape (N, C) and "
            "int64 class indices, and applies `log_softmax` itself. A softmax before it squeezes "
            "the logits into (0, 1), so the loss has a floor and the gradients shrink. Here the "
            "model has a 2-logit head, the two-class case of the multi-class loss.",
            "loss = nn.CrossEntropyLoss()(torch.softmax(logits, dim=1), yb)",
            "loss = nn.CrossEntropyLoss()(logits, yb)",
            (FLOOR, GRAD_NORM, CE_CHECK)),
    Pitfall(4, "device_mismatch", "Model and batch on different devices",
            "PyTorch never moves tensors between devices for you: a model on one device fed a "
            "batch on another stops at the first layer with PyTorch's device error.",
            "logits = model(xb)                  # xb still on its old device",
            "logits = model(xb.to(device))       # the model's device"),
    Pitfall(5, "no_eval", "No model.eval() with dropout",
            "In train mode dropout zeroes random activations, so evaluating without `model.eval()` "
            "scores a different random thinned network at every call. The lab trains one model "
            "(dropout 0.5) and evaluates the same trained weights both ways, several times: in "
            "train mode the score is noisier, not reliably lower.",
            "with torch.no_grad():\n    acc = accuracy(model(x_val), y_val)",
            "model.eval()\nwith torch.no_grad():\n    acc = accuracy(model(x_val), y_val)",
            (REPEATED, "spread of those evaluations")),
    Pitfall(6, "no_no_grad", "Validation without torch.no_grad()",
            "Without `no_grad()` the validation forward pass records a graph and keeps the "
            "tensors its backward would need, for a backward that never comes. The weights and "
            "the accuracy are the same either way; the memory is not.",
            "model.eval()\nval_logits = model(x_val)",
            "model.eval()\nwith torch.no_grad():\n    val_logits = model(x_val)",
            (SAVED_TENSORS, SAVED_BYTES, SAVED_NEW_BYTES, "val_logits.requires_grad")),
    Pitfall(7, "accumulate_tensor", "Summing the loss tensor instead of loss.item()",
            "`total += loss` keeps every batch's graph alive through the sum: memory grows with "
            "every step, and nothing is learned faster.",
            "total_loss += loss", "total_loss += loss.item()",
            ("total_loss", "graph nodes kept alive by total_loss after 1 epoch",
             "graph nodes kept alive by total_loss at the end")),
    Pitfall(8, "float_targets", "Float targets where int64 is needed",
            "`CrossEntropyLoss` with one logit per class wants class indices as int64; float "
            "targets of shape (N,) are refused (and `BCEWithLogitsLoss` wants float targets: the "
            "two losses want opposite dtypes).",
            "loss = nn.CrossEntropyLoss()(logits, yb.float())",
            "loss = nn.CrossEntropyLoss()(logits, yb.long())"),
    Pitfall(9, "scaler_on_all", "Scaler fit on all the data",
            "Fitting the StandardScaler on train+val+test lets the test points shape the "
            "preprocessing: the test score is no longer a score on unseen data.",
            "scaler = StandardScaler().fit(X)", "scaler = StandardScaler().fit(X_train)",
            ("scaler mean", "scaler std")),
    Pitfall(10, "data_mutation", "Changing parameters in place between forward and backward",
            "A hand-written weight decay (`p *= 0.999`) placed after the forward pass and before "
            "`backward()`. The forward pass saved some weights for the backward pass. Through "
            "`.data` the change bypasses autograd's version counter: `backward()` runs with the "
            "changed weights mixed into the saved ones and leaves a silently wrong gradient. "
            "Under `torch.no_grad()` the counter is bumped and `backward()` refuses with PyTorch's "
            "error. (The lesson's table has this backwards: `.data` is the silent one.) The fix is "
            "to change parameters after `optimizer.step()`, under `torch.no_grad()`.",
            "loss = loss_fn(model(xb), yb)\nfor p in model.parameters():\n    p.data.mul_(0.999)\n"
            "loss.backward()",
            "loss = loss_fn(model(xb), yb)\nloss.backward()\noptimizer.step()\n"
            "with torch.no_grad():\n    for p in model.parameters():\n        p.mul_(0.999)",
            (GRAD_ERROR, VERSION)),
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
    repeats: list[float] = field(default_factory=list)    # val accuracy of the final weights
    floor: float = math.nan                               # the loss's lowest value for its input
    model: nn.Module | None = None                        # the trained model, for a closer look


@dataclass(frozen=True)
class PitfallResult:
    pitfall: Pitfall
    correct: LabRun
    broken: LabRun
    finding: str
    third: LabRun | None = None     # pitfall 10: the same change under no_grad, refused
    option: str = ""                # pitfall 1: the optimizer


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


@dataclass(frozen=True)
class Saved:
    """What one forward pass saved for backward: counted by a saved_tensors_hooks pack hook."""
    tensors: int
    bytes: int          # each storage counted once
    new_bytes: int      # storages that are not a parameter or the input


def saved_for_backward(model: nn.Module, x: torch.Tensor, forward) -> tuple[torch.Tensor, Saved]:
    """Run `forward(x)` with a pack hook that sees every tensor autograd saves for backward."""
    packed: list[torch.Tensor] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        packed.append(tensor)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        out = forward(x)
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in packed}
    known = {p.untyped_storage().data_ptr() for p in model.parameters()} | {x.untyped_storage().data_ptr()}
    new = sum(size for ptr, size in storages.items() if ptr not in known)
    return out, Saved(len(packed), sum(storages.values()), new)


def other_device(device: torch.device) -> tuple[torch.device, bool]:
    """A device that is not `device`, and whether it is the `meta` stand-in (no second real one)."""
    if device.type != "cpu":
        return torch.device("cpu"), False
    if torch.cuda.is_available():
        return torch.device("cuda"), False
    return torch.device("meta"), True


def loss_floor(loss_fn: nn.Module, y: torch.Tensor, squeeze: str | None, classes: int) -> float:
    """The infimum of the mean loss over the training labels when its input is squeezed first.

    Sigmoid outputs lie in (0, 1), softmax outputs too: the best a squeezed input can do is to
    approach the one-hot target itself, so the floor is the loss evaluated there.
    """
    if squeeze == "sigmoid":
        return float(loss_fn(y.float(), y.float()))
    if squeeze == "softmax":
        return float(loss_fn(nn.functional.one_hot(y.long(), classes).float(), y.long()))
    return 0.0


def lab_run(settings: MoonsSettings, device: torch.device, label: str, *, zero_grad: bool = True,
            sigmoid_first: bool = False, softmax_first: bool = False, eval_mode: bool = True,
            scaler_on_all: bool = False, accumulate_tensor: bool = False, two_logits: bool = False,
            target_dtype: torch.dtype | None = None, batch_device: torch.device | None = None,
            validate_no_grad: bool = True, mutation: str | None = None) -> LabRun:
    """The lesson's loop with switches; bounded to MAX_LAB_STEPS optimizer steps.

    `mutation` is pitfall 10's hand-written decay: "data" (p.data.mul_ before backward),
    "no_grad" (p.mul_ under no_grad before backward) or "after" (under no_grad after the step).
    """
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
    model = build_model(settings.hidden, settings.act, settings.dropout, torch.device("cpu"),
                        torch.Generator().manual_seed(settings.seed))
    if two_logits:   # a 2-class head for CrossEntropyLoss: replace the last layer
        head = nn.Linear(model.net[-1].in_features, 2, device="meta")   # no global RNG draws
        model.net[-1] = head.to_empty(device="cpu")
        model.reset_parameters(torch.Generator().manual_seed(settings.seed))
    model.to(device)
    run.model = model
    train_generator = torch.Generator(device=device).manual_seed(settings.seed + 2)
    # Train-mode evaluations draw their dropout masks from a generator of their own, so an
    # evaluation never changes the masks training sees: both runs of pitfall 5 train alike.
    eval_generator = torch.Generator(device=device).manual_seed(settings.seed + 3)
    model.set_dropout_generator(train_generator)
    optimizer = build_optimizer(settings.opt, model.parameters(), settings.lr, settings.wd)
    loss_fn: nn.Module = nn.CrossEntropyLoss() if two_logits else nn.BCEWithLogitsLoss()
    loader = batched_loader(TensorDataset(x_train, y_train), settings.batch,
                            torch.Generator().manual_seed(settings.seed + 1))
    squeeze = "sigmoid" if sigmoid_first else "softmax" if softmax_first else None
    run.floor = loss_floor(loss_fn, y_train, squeeze, 2)
    run.facts[FLOOR] = f"{run.floor:.4f}"

    def logits(x: torch.Tensor) -> torch.Tensor:
        return model.net(x) if two_logits else model(x)   # (N, 2) for CrossEntropyLoss, else (N,)

    def loss_input(x: torch.Tensor) -> torch.Tensor:
        if sigmoid_first:
            return torch.sigmoid(logits(x))
        if softmax_first:
            return torch.softmax(logits(x), dim=1)
        return logits(x)

    def evaluate(x: torch.Tensor, y: torch.Tensor) -> float:
        """Accuracy in the run's mode: model.eval(), or (the pitfall) still in train mode."""
        if eval_mode:
            model.eval()
        else:
            model.train()
            model.set_dropout_generator(eval_generator)
        with torch.no_grad():
            accuracy = _accuracy(logits(x), y)
        model.set_dropout_generator(train_generator)
        return accuracy

    first = model.net[0].weight
    steps = 0
    total_loss: float | torch.Tensor = 0.0
    for _ in range(settings.epochs):
        model.train()
        epoch_loss, seen = 0.0, 0
        for xb, yb in loader:
            breathe()           # a lab run is a one-off turn: learners training get theirs
            xb, yb = xb.to(batch_device or device), yb.to(device)
            if target_dtype is not None:
                yb = yb.to(target_dtype)
            if zero_grad:
                optimizer.zero_grad()
            try:
                loss = loss_fn(loss_input(xb), yb)
            except RuntimeError as exc:
                run.error = explain_target_dtype(exc) if "dtype" in str(exc) else explain(exc)
                return run
            if steps == 0:
                if two_logits and target_dtype != torch.float32:
                    plain = nn.functional.nll_loss(torch.log_softmax(loss_input(xb), dim=1), yb)
                    run.facts[CE_CHECK] = f"{loss.item():.6f} vs {plain.item():.6f}"
                true_grads = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
            if mutation in ("data", "no_grad"):
                before = first._version
                if mutation == "data":
                    for p in model.parameters():
                        p.data.mul_(DECAY)
                else:
                    with torch.no_grad():
                        for p in model.parameters():
                            p.mul_(DECAY)
                if steps == 0:
                    run.facts[VERSION] = f"{before} -> {first._version}"
            try:
                loss.backward()
            except RuntimeError as exc:
                run.error = explain(exc)
                return run
            if steps == 0:
                run.facts[GRAD_NORM] = f"{float(first.grad.norm()):.4g}"
                error = max(float((p.grad - g).abs().max())
                            for p, g in zip(model.parameters(), true_grads, strict=True))
                largest = max(float(g.abs().max()) for g in true_grads)
                run.facts[GRAD_ERROR] = f"{error:.3g} ({100 * error / largest:.2g}% of the largest entry)"
            optimizer.step()
            if mutation == "after":
                before = first._version
                with torch.no_grad():
                    for p in model.parameters():
                        p.mul_(DECAY)
                if steps == 0:
                    run.facts[VERSION] = f"{before} -> {first._version}"
            epoch_loss += loss.item() * len(yb)
            seen += len(yb)
            total_loss = total_loss + loss if accumulate_tensor else total_loss + loss.item()
            steps += 1
            if steps >= MAX_LAB_STEPS or not math.isfinite(loss.item()):
                break
        run.train_loss.append(epoch_loss / max(seen, 1))
        if validate_no_grad:
            run.val_acc.append(evaluate(x_val, y_val))
        else:                       # pitfall 6: the same evaluation, outside no_grad
            model.eval()
            val_logits, saved = saved_for_backward(model, x_val, logits)
            run.val_acc.append(_accuracy(val_logits.detach(), y_val))
            run.facts[SAVED_TENSORS] = f"{saved.tensors:,}"
            run.facts[SAVED_BYTES] = f"{saved.bytes:,}"
            run.facts[SAVED_NEW_BYTES] = f"{saved.new_bytes:,}"
            run.facts["val_logits.requires_grad"] = str(val_logits.requires_grad)
            del val_logits      # the graph goes with it
        if accumulate_tensor and len(run.train_loss) == 1:
            run.facts["graph nodes kept alive by total_loss after 1 epoch"] = (
                f"{graph_size(total_loss):,}" if torch.is_tensor(total_loss) else "0")
        if steps >= MAX_LAB_STEPS or not math.isfinite(run.train_loss[-1]):
            break
    if validate_no_grad:
        model.eval()
        with torch.no_grad():
            val_logits, saved = saved_for_backward(model, x_val, logits)
        run.facts[SAVED_TENSORS] = f"{saved.tensors:,}"
        run.facts[SAVED_BYTES] = f"{saved.bytes:,}"
        run.facts[SAVED_NEW_BYTES] = f"{saved.new_bytes:,}"
        run.facts["val_logits.requires_grad"] = str(val_logits.requires_grad)
    run.test_acc = evaluate(x_test, y_test)
    run.repeats = [evaluate(x_val, y_val) for _ in range(REPEATS)]
    run.facts[REPEATED] = ", ".join(f"{100 * a:.1f}%" for a in run.repeats)
    run.facts["spread of those evaluations"] = (f"{100 * min(run.repeats):.1f}% to "
                                                f"{100 * max(run.repeats):.1f}%, mean "
                                                f"{100 * sum(run.repeats) / REPEATS:.1f}%")
    model.eval()
    finite = [v for v in run.train_loss if math.isfinite(v)]
    run.facts["largest train loss of an epoch"] = f"{max(finite):.4g}" if finite else "—"
    rose = sum(b > a for a, b in zip(run.train_loss, run.train_loss[1:], strict=False))
    run.facts["epochs whose loss rose"] = f"{rose} of {max(len(run.train_loss) - 1, 0)}"
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
                settings: MoonsSettings = LAB_SETTINGS, optimizer: str = "SGD") -> PitfallResult:
    """Train the correct loop and the broken one from the same seed (pitfall 10: and a third).

    `optimizer` is used by pitfall 1 only: "SGD" (momentum 0.9, lr 0.05) or "AdamW" (lr 0.003).
    """
    device = device or torch.device("cpu")
    pitfall = next(p for p in PITFALLS if p.key == key)
    option = ""
    if key == "no_eval":
        settings = dataclasses.replace(settings, dropout=0.5)
    if key == "no_zero_grad":
        option = optimizer
        settings = dataclasses.replace(settings, opt=optimizer, lr=ZERO_GRAD_OPTIMIZERS[optimizer])
    switches: dict[str, dict] = {
        "no_zero_grad": {"zero_grad": False},
        "sigmoid_before_bce": {"sigmoid_first": True},
        "softmax_before_ce": {"two_logits": True, "softmax_first": True, "target_dtype": torch.int64},
        "device_mismatch": {"batch_device": other_device(device)[0]},
        "no_eval": {"eval_mode": False},
        "no_no_grad": {"validate_no_grad": False},
        "accumulate_tensor": {"accumulate_tensor": True},
        "float_targets": {"two_logits": True, "target_dtype": torch.float32},
        "scaler_on_all": {"scaler_on_all": True},
        "data_mutation": {"mutation": "data"},
    }
    correct_switches: dict[str, dict] = {
        "float_targets": {"two_logits": True, "target_dtype": torch.int64},
        "softmax_before_ce": {"two_logits": True, "target_dtype": torch.int64},
        "data_mutation": {"mutation": "after"},
    }
    correct = lab_run(settings, device, "correct", **correct_switches.get(key, {}))
    broken = lab_run(settings, device, "broken", **switches[key])
    third = lab_run(settings, device, "no_grad at the same place", mutation="no_grad") \
        if key == "data_mutation" else None
    return PitfallResult(pitfall, correct, broken, _finding(key, correct, broken, device, option),
                         third, option)


def _finding(key: str, correct: LabRun, broken: LabRun, device: torch.device, option: str) -> str:
    if broken.error is not None:
        text = (f"The broken run stops at its first batch: PyTorch raises "
                f"`{broken.error.message}`. The correct run reaches {100 * correct.test_acc:.1f}% "
                "test accuracy.")
        if key == "device_mismatch":
            other, simulated = other_device(device)
            text += (f" The model is on `{device}`, the batch on `{other}`.")
            if simulated:
                text += (" This server has no GPU, so the second device is simulated with `meta` "
                         "(tensors with a shape and no data): on a GPU machine the same mistake "
                         "names `cuda:0` and `cpu` in the message.")
        return text

    def last(values: list[float]) -> float:
        return values[-1] if values else math.nan
    text = (f"Final train loss {last(correct.train_loss):.3f} (correct) vs {last(broken.train_loss):.3f} "
            f"(broken); test accuracy {100 * correct.test_acc:.1f}% vs {100 * broken.test_acc:.1f}%.")
    if key == "no_zero_grad":
        finite = [v for v in broken.train_loss if math.isfinite(v)]
        peak = max(finite) if finite else math.inf
        epoch = broken.train_loss.index(peak) + 1 if finite else len(broken.train_loss)
        rose = broken.facts["epochs whose loss rose"]
        if not math.isfinite(last(broken.train_loss)) or peak > 100 * last(correct.train_loss):
            text += (f" With {option} the loss explodes: it peaks at {peak:.3g} in epoch {epoch}, "
                     f"{peak / last(correct.train_loss):,.0f} times the correct run's final loss.")
        else:
            where = "above" if last(broken.train_loss) > last(correct.train_loss) else "at or below"
            text += (f" With {option} the loss does not explode (its largest epoch loss is "
                     f"{peak:.3g}, in epoch {epoch}) but it oscillates: it rose in {rose} epochs, "
                     f"and ends {where} the correct run's.")
    if key in ("sigmoid_before_bce", "softmax_before_ce"):
        text += (f" With the extra squeeze the loss can never go below {broken.floor:.3f} on this "
                 f"training split (its lowest epoch loss is {min(broken.train_loss):.3f}); the "
                 f"correct run's floor is {correct.floor:g}.")
        if key == "softmax_before_ce":
            text += (f" The first step's gradient of the first layer has norm "
                     f"{broken.facts[GRAD_NORM]} against {correct.facts[GRAD_NORM]}.")
    if key == "no_eval":
        spread = 100 * (max(broken.repeats) - min(broken.repeats))
        mean_train = 100 * sum(broken.repeats) / len(broken.repeats)
        text = (f"Both runs trained alike (the same train losses, so the same final weights). "
                f"Evaluated {REPEATS} times, those weights score {100 * correct.repeats[0]:.1f}% "
                f"every time with `model.eval()` and from {100 * min(broken.repeats):.1f}% to "
                f"{100 * max(broken.repeats):.1f}% in train mode (a spread of {spread:.1f} points, "
                f"mean {mean_train:.1f}%): noisier, not lower.")
    if key == "no_no_grad":
        text += (f" The accuracy is the same; without `no_grad` one validation pass saved "
                 f"{broken.facts[SAVED_TENSORS]} tensors for backward "
                 f"({broken.facts[SAVED_BYTES]} bytes in all, {broken.facts[SAVED_NEW_BYTES]} of "
                 f"them new activations), with it {correct.facts[SAVED_TENSORS]}. How much that "
                 "is relative to the rest depends on the model and the batch: it is not a fixed "
                 "ratio.")
    if key == "scaler_on_all":
        text += (" The accuracy barely moves on this easy data, but the scaler's mean and std now "
                 "contain the test points: compare them below.")
    if key == "accumulate_tensor":
        text += (" The parameters are the same either way; the difference is memory: "
                 f"{broken.facts.get('graph nodes kept alive by total_loss at the end')} graph "
                 "nodes are still alive because `total_loss` holds them.")
    if key == "data_mutation":
        text += (f" No error, but at the first step the gradient `.data` left in `.grad` differs "
                 f"from the true gradient of the computed loss by up to {broken.facts[GRAD_ERROR]} "
                 f"(correct run: {correct.facts[GRAD_ERROR]}), and the version counter did not "
                 f"move ({broken.facts[VERSION]}). The same change under `torch.no_grad()` bumps "
                 "the counter and `backward()` refuses: see PyTorch's error below.")
    return text
