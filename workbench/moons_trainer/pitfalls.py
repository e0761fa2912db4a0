"""The pitfall lab: the lesson's table of ten training mistakes, each next to the correct loop.

Each pitfall is one short function, `loop(lab, broken)`: the lesson's training loop with that
one mistake in it, the broken line next to the fixed one in an `if broken: ... else: ...`
(`LOOPS` maps the lesson's keys to them). What the loops share stays small and apart: `Lab`
builds a run's data, seeded model, optimizer and batches, and counts its epochs and steps;
`LabRun` is the history a run records; `saved_for_backward`, `loss_floor` and `graph_size`
measure what some pitfalls show. `run_pitfall(key)` runs a pitfall's loop twice from the same
seeds, correctly and broken, and returns both histories plus what PyTorch says about the
difference. This module never imports streamlit.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.utils.data import TensorDataset

from workbench.common.errors import ExplainedError, explain
from workbench.common.jobs import breathe
from workbench.common.saved import graph_nodes, saved_tensors_held
from workbench.moons_trainer.data import as_tensors, make_dataset, split_and_scale
from workbench.moons_trainer.model import MLP, build_model, build_optimizer
from workbench.moons_trainer.settings import PRESET, MoonsSettings
from workbench.moons_trainer.training import batched_loader

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
KEPT_AFTER_ONE_EPOCH = "graph nodes kept alive by total_loss after 1 epoch"
KEPT_AT_THE_END = "graph nodes kept alive by total_loss at the end"
SAVED_HELD = "tensors those nodes saved for backward, still held at the end"
# Pitfall 5's other half: a BatchNorm1d layer fed the lab's data, evaluated on 4 validation points.
BN_STATISTICS = "BatchNorm1d on 4 validation points normalises with"
BN_NEIGHBOURS = "BatchNorm1d: point 1's output moves when the other 3 points change, by"
BN_RUNNING = "BatchNorm1d: running_mean moved by that one evaluation, by"

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
            "A layer does not move its input to its weights' device: a model on one device fed "
            "a batch on another stops at the first layer with PyTorch's device error.",
            "logits = model(xb)                  # xb still on its old device",
            "logits = model(xb.to(device))       # the model's device"),
    Pitfall(5, "no_eval", "No model.eval() with dropout or BatchNorm",
            "In train mode dropout zeroes random activations, so evaluating without `model.eval()` "
            "scores a different random thinned network at every call. The lab trains one model "
            "(dropout 0.5) and evaluates the same trained weights both ways, several times: in "
            "train mode the score changes from call to call, and the finding says by how much "
            "and whether it came out lower. BatchNorm is the other layer train mode changes: in "
            "train mode it normalises each batch with that batch's own statistics and updates "
            "its running ones; the last three facts feed a `BatchNorm1d` the lab's data and "
            "evaluate it on 4 validation points, both ways.",
            "with torch.no_grad():\n    acc = accuracy(model(x_val), y_val)",
            "model.eval()\nwith torch.no_grad():\n    acc = accuracy(model(x_val), y_val)",
            (REPEATED, "spread of those evaluations", BN_STATISTICS, BN_NEIGHBOURS, BN_RUNNING)),
    Pitfall(6, "no_no_grad", "Validation without torch.no_grad()",
            "Without `no_grad()` the validation forward pass records a graph and keeps the "
            "tensors its backward would need, for a backward that never comes. The weights and "
            "the accuracy are the same either way; the memory is not.",
            "model.eval()\nval_logits = model(x_val)",
            "model.eval()\nwith torch.no_grad():\n    val_logits = model(x_val)",
            (SAVED_TENSORS, SAVED_BYTES, SAVED_NEW_BYTES, "val_logits.requires_grad")),
    Pitfall(7, "accumulate_tensor", "Summing the loss tensor instead of loss.item()",
            "`total += loss` keeps every batch's graph nodes alive through the sum, a chain that "
            "grows with every step, and nothing is learned faster. With `backward()` at every "
            "step those nodes no longer hold the activations (backward freed them, as the facts "
            "below count); the same sum in a validation loop, where nothing calls `backward()`, "
            "keeps every batch's activations.",
            "total_loss += loss", "total_loss += loss.item()",
            ("total_loss", KEPT_AFTER_ONE_EPOCH, KEPT_AT_THE_END, SAVED_HELD)),
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
    facts: dict[str, str] = field(default_factory=dict)   # those its pitfall shows, by name
    error: ExplainedError | None = None
    repeats: list[float] = field(default_factory=list)    # val accuracy of the final weights
    floor: float = math.nan             # pitfalls 2 and 3: the loss's lowest value for its input
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
    return sum(1 for _ in graph_nodes(tensor))


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


# ---------------------------------------------------------------------------- what every run shares

def accuracy(logits: torch.Tensor, target: torch.Tensor) -> float:
    """(N,) logits: positive means class 1; (N, C) logits: the largest one is the class."""
    predicted = logits.argmax(dim=1) if logits.dim() == 2 else (logits > 0).long()
    return float((predicted == target.long()).float().mean())


def seeded_model(settings: MoonsSettings, classes: int) -> MLP:
    """The trainer's MLP, its weights drawn from the seed; `classes=2`: a (N, 2) head for
    CrossEntropyLoss instead of the one logit BCEWithLogitsLoss takes."""
    # Initialised on the CPU (where the generator lives), then moved by the caller, as build_model does.
    model = build_model(settings.hidden, settings.act, settings.dropout, torch.device("cpu"),
                        torch.Generator().manual_seed(settings.seed), settings.features)
    if classes == 2:
        head = nn.Linear(model.net[-1].in_features, 2, device="meta")   # meta: no global RNG draws
        model.net[-1] = head.to_empty(device="cpu")
        model.reset_parameters(torch.Generator().manual_seed(settings.seed))
    return model


class Lab:
    """One run: the lab's data, then (after `setup`) its seeded model, optimizer and batches.

    The correct run and the broken one build theirs from the same seeds, so they start from the
    same weights and see the same batches. `evaluate(x, y)` (accuracy of the model on x, y) and
    `validate()` (the val accuracy after each epoch) are the lesson's, in eval mode under no_grad;
    pitfalls 5 and 6 replace them with their own.
    """

    def __init__(self, settings: MoonsSettings, device: torch.device, label: str) -> None:
        self.settings, self.device, self.run = settings, device, LabRun(label)
        self.data = make_dataset(settings.dataset, settings.n, settings.noise, settings.seed)
        self.split = split_and_scale(self.data, settings.fractions, settings.seed)
        self.steps = 0                  # optimizer steps so far, bounded by MAX_LAB_STEPS
        self.evaluate: Callable[[torch.Tensor, torch.Tensor], float] = self.eval_accuracy
        self.validate: Callable[[], float] = lambda: self.evaluate(self.x_val, self.y_val)

    def setup(self, scaler: StandardScaler | None = None,
              classes: int = 1) -> tuple[MLP, torch.optim.Optimizer]:
        """Tensors scaled by `scaler` (default: the one fitted on the training split), the model
        on the run's device, and its optimizer."""
        split = self.split if scaler is None else dataclasses.replace(self.split, scaler=scaler)
        seed = self.settings.seed
        self.x_train, self.y_train = as_tensors(split.scaled(split.x_train), split.y_train,
                                                torch.device("cpu"))
        self.x_val, self.y_val = as_tensors(split.scaled(split.x_val), split.y_val, self.device)
        self.x_test, self.y_test = as_tensors(split.scaled(split.x_test), split.y_test, self.device)
        self.model = self.run.model = seeded_model(self.settings, classes).to(self.device)
        self.train_generator = torch.Generator(device=self.device).manual_seed(seed + 2)
        # Train-mode evaluations (pitfall 5) draw their dropout masks from a generator of their
        # own, so an evaluation never changes the masks training sees: both runs train alike.
        self.eval_generator = torch.Generator(device=self.device).manual_seed(seed + 3)
        self.model.set_dropout_generator(self.train_generator)
        optimizer = build_optimizer(self.settings.opt, self.model.parameters(), self.settings.lr,
                                    self.settings.wd)
        self.loader = batched_loader(TensorDataset(self.x_train, self.y_train), self.settings.batch,
                                     torch.Generator().manual_seed(seed + 1))
        return self.model, optimizer

    def eval_accuracy(self, x: torch.Tensor, y: torch.Tensor) -> float:
        """The lesson's evaluation: eval mode, no graph."""
        self.model.eval()
        with torch.no_grad():
            return accuracy(self.model(x), y)

    def epochs(self) -> Iterator[Epoch]:
        """The settings' epochs; after each, its mean train loss and val accuracy go into the run.

        Stops early at MAX_LAB_STEPS optimizer steps or at a non-finite loss (an exploded run).
        """
        for _ in range(self.settings.epochs):
            epoch = Epoch(self)
            yield epoch
            self.run.train_loss.append(epoch.mean_loss)
            self.run.val_acc.append(self.validate())
            if self.steps >= MAX_LAB_STEPS or not math.isfinite(epoch.mean_loss):
                return

    def finish(self) -> LabRun:
        """After training: the test accuracy, the final weights' val accuracy REPEATS times (the
        same number each time unless evaluation is random), and what the loss history shows."""
        run = self.run
        run.test_acc = self.evaluate(self.x_test, self.y_test)
        run.repeats = [self.evaluate(self.x_val, self.y_val) for _ in range(REPEATS)]
        run.facts[REPEATED] = ", ".join(f"{100 * a:.1f}%" for a in run.repeats)
        run.facts["spread of those evaluations"] = (f"{100 * min(run.repeats):.1f}% to "
                                                    f"{100 * max(run.repeats):.1f}%, mean "
                                                    f"{100 * sum(run.repeats) / REPEATS:.1f}%")
        finite = [v for v in run.train_loss if math.isfinite(v)]
        run.facts["largest train loss of an epoch"] = f"{max(finite):.4g}" if finite else "—"
        rose = sum(b > a for a, b in zip(run.train_loss, run.train_loss[1:], strict=False))
        run.facts["epochs whose loss rose"] = f"{rose} of {max(len(run.train_loss) - 1, 0)}"
        self.model.eval()
        return run


class Epoch:
    """One pass over the shuffled training batches (on the CPU); `record(loss)` after each step."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.loss_sum, self.seen, self.batch_size = 0.0, 0, 0
        self.finite = True

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for xb, yb in self.lab.loader:
            breathe()           # a lab run is a one-off turn: learners training get theirs
            self.batch_size = len(yb)
            yield xb, yb
            if self.lab.steps >= MAX_LAB_STEPS or not self.finite:
                return

    def record(self, loss: torch.Tensor) -> None:
        value = loss.item()
        self.loss_sum += value * self.batch_size     # the mean over samples, not over batches
        self.seen += self.batch_size
        self.finite = math.isfinite(value)
        self.lab.steps += 1

    @property
    def mean_loss(self) -> float:
        return self.loss_sum / max(self.seen, 1)


def record_floor(lab: Lab, loss_fn: nn.Module, squeeze: str | None) -> None:
    """The run's loss floor (pitfalls 2 and 3): 0 for raw logits, above 0 for squeezed ones."""
    lab.run.floor = loss_floor(loss_fn, lab.y_train, squeeze, 2)
    lab.run.facts[FLOOR] = f"{lab.run.floor:.4f}"


def first_layer_grad_norm(model: MLP) -> str:
    """The norm of net.0.weight's gradient: pitfall 3's softmax shrinks it."""
    return f"{float(model.net[0].weight.grad.norm()):.4g}"


def lesson_loop(lab: Lab, model: MLP, optimizer: torch.optim.Optimizer) -> None:
    """The lesson's training loop, correct: for the pitfalls that live outside it (5, 6, 9)."""
    loss_fn = nn.BCEWithLogitsLoss()
    for epoch in lab.epochs():
        model.train()
        for xb, yb in epoch:
            xb, yb = xb.to(lab.device), yb.to(lab.device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            epoch.record(loss)


# ---------------------------------------------------------------------------- the ten pitfalls
# Each is `loop(lab, broken)`: it trains lab's run, correctly or with its one mistake.

def no_zero_grad(lab: Lab, broken: bool) -> None:
    """Pitfall 1: without zero_grad(), backward() adds each batch's gradient to all the earlier ones."""
    model, optimizer = lab.setup()
    loss_fn = nn.BCEWithLogitsLoss()
    for epoch in lab.epochs():
        model.train()
        for xb, yb in epoch:
            xb, yb = xb.to(lab.device), yb.to(lab.device)
            if not broken:          # broken: forgotten, so backward() adds to the last step's .grad
                optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            epoch.record(loss)


def sigmoid_before_bce(lab: Lab, broken: bool) -> None:
    """Pitfall 2: BCEWithLogitsLoss applies the sigmoid itself; a second one gives the loss a floor."""
    model, optimizer = lab.setup()
    loss_fn = nn.BCEWithLogitsLoss()
    record_floor(lab, loss_fn, "sigmoid" if broken else None)
    for epoch in lab.epochs():
        model.train()
        for xb, yb in epoch:
            xb, yb = xb.to(lab.device), yb.to(lab.device)
            optimizer.zero_grad()
            if broken:
                loss = loss_fn(torch.sigmoid(model(xb)), yb)    # squeezed into (0, 1), then again
            else:
                loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            epoch.record(loss)


def softmax_before_ce(lab: Lab, broken: bool) -> None:
    """Pitfall 3: CrossEntropyLoss applies log_softmax itself; a softmax first gives it a floor and
    shrinks the gradients. The model has a 2-logit head: the two-class case of the multi-class loss."""
    model, optimizer = lab.setup(classes=2)
    loss_fn = nn.CrossEntropyLoss()
    record_floor(lab, loss_fn, "softmax" if broken else None)
    for epoch in lab.epochs():
        model.train()
        for xb, yb in epoch:
            xb, yb = xb.to(lab.device), yb.to(lab.device).long()    # class indices, int64
            optimizer.zero_grad()
            if broken:
                loss_input = torch.softmax(model(xb), dim=1)   # read by the loss as logits
            else:
                loss_input = model(xb)
            loss = loss_fn(loss_input, yb)
            loss.backward()
            if lab.steps == 0:      # the first step: the gradient's size; the loss is nll(log_softmax)
                lab.run.facts[GRAD_NORM] = first_layer_grad_norm(model)
                plain = nn.functional.nll_loss(torch.log_softmax(loss_input.detach(), dim=1), yb)
                lab.run.facts[CE_CHECK] = f"{loss.item():.6f} vs {plain.item():.6f}"
            optimizer.step()
            epoch.record(loss)


def device_mismatch(lab: Lab, broken: bool) -> None:
    """Pitfall 4: a layer does not move its input to its device; the first layer refuses the batch."""
    model, optimizer = lab.setup()
    loss_fn = nn.BCEWithLogitsLoss()
    elsewhere, _ = other_device(lab.device)
    for epoch in lab.epochs():
        model.train()
        for xb, yb in epoch:
            if broken:
                xb = xb.to(elsewhere)       # not the model's device
            else:
                xb = xb.to(lab.device)
            yb = yb.to(lab.device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            epoch.record(loss)


def no_eval(lab: Lab, broken: bool) -> None:
    """Pitfall 5: evaluating in train mode scores a random thinned network at every call
    (run_pitfall trains with dropout 0.5). The training is the lesson's; the evaluation is not."""
    model, optimizer = lab.setup()

    def evaluate(x: torch.Tensor, y: torch.Tensor) -> float:
        if broken:
            model.train()           # dropout still on
        else:
            model.eval()
        # Masks from the evaluations' own generator: training's masks stay the same in both runs.
        model.set_dropout_generator(lab.eval_generator)
        with torch.no_grad():
            score = accuracy(model(x), y)
        model.set_dropout_generator(lab.train_generator)
        return score

    lab.evaluate = evaluate
    lesson_loop(lab, model, optimizer)
    lab.run.facts.update(batchnorm_evaluation(lab.x_train, lab.x_val, broken))


def batchnorm_evaluation(x_train: torch.Tensor, x_val: torch.Tensor, broken: bool) -> dict[str, str]:
    """BatchNorm, the other layer that train mode changes: in train mode it normalises a batch
    with that batch's own mean and variance (so a point's output depends on its batch-mates) and
    updates its running statistics as a side effect; in eval mode it uses the running ones."""
    norm = nn.BatchNorm1d(x_train.shape[1], momentum=None, device=x_train.device)  # cumulative
    with torch.no_grad():
        for batch in x_train.split(32):          # training fills the running statistics
            norm(batch)
        norm.train(broken)                       # the evaluation: train mode or eval mode
        batch, others = x_val[:4], x_val[4:7]
        running_before = norm.running_mean.clone()
        out = norm(batch)
        moved = (norm.running_mean - running_before).abs().max().item()
        with_others = norm(torch.cat([batch[:1], others]))
    own = (batch - batch.mean(0)) / torch.sqrt(batch.var(0, unbiased=False) + norm.eps)
    running = (batch - running_before) / torch.sqrt(norm.running_var + norm.eps)
    used = ("the 4 points' own mean and variance" if torch.allclose(out, own, atol=1e-5)
            else "the running mean and variance" if torch.allclose(out, running, atol=1e-5)
            else "neither the batch's statistics nor the running ones")
    return {BN_STATISTICS: used,
            BN_NEIGHBOURS: f"{(out[0] - with_others[0]).abs().max().item():.3f}",
            BN_RUNNING: f"{moved:.3g}"}


def no_no_grad(lab: Lab, broken: bool) -> None:
    """Pitfall 6: validation outside no_grad records a graph and keeps the tensors its backward
    would need, for a backward that never comes. The training is the lesson's; validation is not."""
    model, optimizer = lab.setup()

    def validate() -> float:
        model.eval()
        if broken:
            val_logits, saved = saved_for_backward(model, lab.x_val, model)
        else:
            with torch.no_grad():
                val_logits, saved = saved_for_backward(model, lab.x_val, model)
        lab.run.facts[SAVED_TENSORS] = f"{saved.tensors:,}"
        lab.run.facts[SAVED_BYTES] = f"{saved.bytes:,}"
        lab.run.facts[SAVED_NEW_BYTES] = f"{saved.new_bytes:,}"
        lab.run.facts["val_logits.requires_grad"] = str(val_logits.requires_grad)
        return accuracy(val_logits.detach(), lab.y_val)     # the graph goes when val_logits does

    lab.validate = validate
    lesson_loop(lab, model, optimizer)


def accumulate_tensor(lab: Lab, broken: bool) -> None:
    """Pitfall 7: `total_loss += loss` keeps every batch's graph alive through the sum."""
    model, optimizer = lab.setup()
    loss_fn = nn.BCEWithLogitsLoss()
    total_loss: float | torch.Tensor = 0.0
    for number, epoch in enumerate(lab.epochs(), start=1):
        model.train()
        for xb, yb in epoch:
            xb, yb = xb.to(lab.device), yb.to(lab.device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            if broken:
                total_loss = total_loss + loss      # a tensor: the sum's graph holds every batch's
            else:
                total_loss = total_loss + loss.item()
            epoch.record(loss)
        if broken and number == 1:      # only the tensor sum has a graph to count
            lab.run.facts[KEPT_AFTER_ONE_EPOCH] = f"{graph_size(total_loss):,}"
    lab.run.facts["total_loss"] = describe_total(total_loss)
    lab.run.facts[KEPT_AT_THE_END] = (
        f"{graph_size(total_loss):,}" if torch.is_tensor(total_loss) else "0")
    if torch.is_tensor(total_loss):
        kept = saved_tensors_held(total_loss)
        lab.run.facts[SAVED_HELD] = f"{kept.held:,} of {kept.saved:,}"


def describe_total(total_loss: float | torch.Tensor) -> str:
    """What `total_loss` is, as its type and PyTorch's way of printing it."""
    if torch.is_tensor(total_loss) and total_loss.grad_fn is not None:
        return (f"{type(total_loss).__name__}: tensor({float(total_loss.detach()):.2f}, "
                f"grad_fn=<{type(total_loss.grad_fn).__name__}>)")
    return f"{type(total_loss).__name__}: {float(total_loss):.2f}"


def float_targets(lab: Lab, broken: bool) -> None:
    """Pitfall 8: CrossEntropyLoss wants class indices (int64) for one logit per class; it refuses
    float targets of shape (N,)."""
    model, optimizer = lab.setup(classes=2)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in lab.epochs():
        model.train()
        for xb, yb in epoch:
            xb, yb = xb.to(lab.device), yb.to(lab.device)
            if broken:
                yb = yb.float()             # what BCEWithLogitsLoss takes; refused by this loss
            else:
                yb = yb.long()
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            epoch.record(loss)


def scaler_on_all(lab: Lab, broken: bool) -> None:
    """Pitfall 9: a StandardScaler fitted on train+val+test lets the test points shape the
    preprocessing. The training is the lesson's; the data it sees is not."""
    if broken:
        scaler = StandardScaler().fit(lab.data.features)    # every split, the test points too
    else:
        scaler = StandardScaler().fit(lab.split.x_train)
    lab.run.facts["scaler mean"] = np.array2string(scaler.mean_, precision=4)
    lab.run.facts["scaler std"] = np.array2string(scaler.scale_, precision=4)
    model, optimizer = lab.setup(scaler=scaler)
    lesson_loop(lab, model, optimizer)


def data_mutation(lab: Lab, broken: bool, under_no_grad: bool = False) -> None:
    """Pitfall 10: a hand-written weight decay between forward and backward. Through `.data` it
    slips past autograd's version counter and leaves a wrong gradient; `under_no_grad` (the
    third run) bumps the counter, and backward() refuses. The fix: decay after the step."""
    model, optimizer = lab.setup()
    loss_fn = nn.BCEWithLogitsLoss()
    for epoch in lab.epochs():
        model.train()
        for xb, yb in epoch:
            xb, yb = xb.to(lab.device), yb.to(lab.device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            if lab.steps == 0:      # what backward() should leave in .grad, before any decay
                true_grads = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
            if broken:              # between forward and backward: backward() meets changed weights
                versions = decay_in_place(model, through_data=not under_no_grad)
                loss.backward()
                optimizer.step()
            else:                   # after the step, when nothing needs the old weights any more
                loss.backward()
                optimizer.step()
                versions = decay_in_place(model, through_data=False)
            if lab.steps == 0:      # step() leaves .grad as backward() made it
                lab.run.facts[VERSION] = versions
                lab.run.facts[GRAD_ERROR] = gradient_error(model, true_grads)
            epoch.record(loss)


def decay_in_place(model: MLP, through_data: bool) -> str:
    """p *= DECAY for every parameter; how net.0.weight's version counter moved, "before -> after"."""
    first = model.net[0].weight
    before = first._version
    for p in model.parameters():
        if through_data:
            p.data.mul_(DECAY)          # .data: a change autograd does not see
        else:
            with torch.no_grad():
                p.mul_(DECAY)
    return f"{before} -> {first._version}"


def gradient_error(model: MLP, true_grads: tuple[torch.Tensor, ...]) -> str:
    """The largest |.grad - true gradient| over all parameters, and its size relative to them."""
    error = max(float((p.grad - g).abs().max())
                for p, g in zip(model.parameters(), true_grads, strict=True))
    largest = max(float(g.abs().max()) for g in true_grads)
    return f"{error:.3g} ({100 * error / largest:.2g}% of the largest entry)"


LOOPS: dict[str, Callable[[Lab, bool], None]] = {
    "no_zero_grad": no_zero_grad,
    "sigmoid_before_bce": sigmoid_before_bce,
    "softmax_before_ce": softmax_before_ce,
    "device_mismatch": device_mismatch,
    "no_eval": no_eval,
    "no_no_grad": no_no_grad,
    "accumulate_tensor": accumulate_tensor,
    "float_targets": float_targets,
    "scaler_on_all": scaler_on_all,
    "data_mutation": data_mutation,
}


# ---------------------------------------------------------------------------- running a pitfall

def run_loop(loop: Callable[[Lab, bool], None], settings: MoonsSettings, device: torch.device,
             label: str, broken: bool) -> LabRun:
    """One run of a pitfall's loop, bounded to MAX_LAB_STEPS optimizer steps. A line PyTorch
    refuses ends the run there, with PyTorch's error explained."""
    lab = Lab(settings, device, label)
    try:
        loop(lab, broken)
    except RuntimeError as exc:
        lab.run.error = explain_target_dtype(exc) if "dtype" in str(exc) else explain(exc)
        return lab.run
    return lab.finish()


def pitfall_settings(key: str, settings: MoonsSettings, optimizer: str) -> MoonsSettings:
    """What a pitfall changes in the lab's settings: pitfall 5 needs dropout to show, pitfall 1
    takes an optimizer with its own learning rate."""
    if key == "no_eval":
        return dataclasses.replace(settings, dropout=0.5)
    if key == "no_zero_grad":
        return dataclasses.replace(settings, opt=optimizer, lr=ZERO_GRAD_OPTIMIZERS[optimizer])
    return settings


def run_pitfall(key: str, device: torch.device | None = None,
                settings: MoonsSettings = LAB_SETTINGS, optimizer: str = "SGD") -> PitfallResult:
    """Train the correct loop and the broken one from the same seed (pitfall 10: and a third).

    `optimizer` is used by pitfall 1 only: "SGD" (momentum 0.9, lr 0.05) or "AdamW" (lr 0.003).
    """
    device = device or torch.device("cpu")
    pitfall = next(p for p in PITFALLS if p.key == key)
    option = optimizer if key == "no_zero_grad" else ""
    settings = pitfall_settings(key, settings, optimizer)
    correct = run_loop(LOOPS[key], settings, device, "correct", broken=False)
    broken = run_loop(LOOPS[key], settings, device, "broken", broken=True)
    third = None
    if key == "data_mutation":      # the same decay under no_grad, where .data put it: refused
        third = run_loop(functools.partial(data_mutation, under_no_grad=True), settings, device,
                         "no_grad at the same place", broken=True)
    return PitfallResult(pitfall, correct, broken, _finding(key, correct, broken, device, option),
                         third, option)


# ---------------------------------------------------------------------------- what happened, in words

def _last(values: list[float]) -> float:
    return values[-1] if values else math.nan


def _finding(key: str, correct: LabRun, broken: LabRun, device: torch.device, option: str) -> str:
    if broken.error is not None:
        return _refused(key, correct, broken, device)
    if key == "no_eval":            # both runs train alike: only the evaluations differ
        return _evaluated_in_train_mode(correct, broken)
    text = (f"Final train loss {_last(correct.train_loss):.3f} (correct) vs "
            f"{_last(broken.train_loss):.3f} (broken); test accuracy {100 * correct.test_acc:.1f}% "
            f"vs {100 * broken.test_acc:.1f}%.")
    more = _MORE.get(key)
    return text + more(correct, broken, option) if more else text


def _refused(key: str, correct: LabRun, broken: LabRun, device: torch.device) -> str:
    text = (f"The broken run stops at its first batch: PyTorch raises "
            f"`{broken.error.message}`. The correct run reaches {100 * correct.test_acc:.1f}% "
            "test accuracy.")
    if key != "device_mismatch":
        return text
    other, simulated = other_device(device)
    text += (f" The model is on `{device}`, the batch on `{other}`.")
    if simulated:
        text += (" This server has no GPU, so the second device is simulated with `meta` "
                 "(tensors with a shape and no data): on a GPU machine the same mistake "
                 "names `cuda:0` and `cpu` in the message.")
    return text


def _evaluated_in_train_mode(correct: LabRun, broken: LabRun) -> str:
    spread = 100 * (max(broken.repeats) - min(broken.repeats))
    mean_train = 100 * sum(broken.repeats) / len(broken.repeats)
    in_eval = 100 * correct.repeats[0]
    return (f"{trained_alike_words(correct.model, broken.model)} "
            f"Evaluated {REPEATS} times, the final weights score {in_eval:.1f}% "
            f"every time with `model.eval()` and from {100 * min(broken.repeats):.1f}% to "
            f"{100 * max(broken.repeats):.1f}% in train mode (a spread of {spread:.1f} points, "
            f"mean {mean_train:.1f}%): {train_mode_verdict(broken.repeats, correct.repeats[0])}.")


def train_mode_verdict(train_mode: list[float], in_eval: float) -> str:
    """How the train-mode scores compare with the eval-mode one, in words, from the numbers.
    Each thinned network is a weaker model than the whole, so lower on average is usual; a
    few masks can still score as high or higher, and the words say which happened."""
    mean = sum(train_mode) / len(train_mode)
    gap = 100 * (in_eval - mean)
    below = sum(score < in_eval for score in train_mode)
    noisy = "noisier" if max(train_mode) > min(train_mode) else "the same at every call"
    if round(gap, 1) > 0:
        which = ("every one of them" if below == len(train_mode)
                 else f"{below} of the {len(train_mode)}")
        return f"{noisy} and lower on average, by {gap:.1f} points ({which} below the eval score)"
    if round(gap, 1) < 0:
        return (f"{noisy}, and here higher on average, by {-gap:.1f} points: these masks happened "
                "to score well, and a score that depends on the draw is not a measurement")
    return f"{noisy}, and the same on average"


def accuracy_words(correct: float, broken: float) -> str:
    """The broken run's test accuracy against the correct run's, in words, from the two numbers
    (to the 0.1 point the page shows them)."""
    gap = round(100 * (broken - correct), 1)
    if gap == 0:
        return "The test accuracy is the same"
    side = "lower" if gap < 0 else "higher"
    return f"The broken run's test accuracy is {abs(gap):.1f} points {side}"


def same_weights(a: nn.Module | None, b: nn.Module | None) -> bool:
    """Whether two trained models end with exactly the same parameters."""
    if a is None or b is None:
        return False
    left, right = list(a.parameters()), list(b.parameters())
    return len(left) == len(right) and all(
        x.shape == y.shape and torch.equal(x.cpu(), y.cpu()) for x, y in zip(left, right, strict=True))


def trained_alike_words(correct: nn.Module | None, broken: nn.Module | None) -> str:
    """Whether the two runs trained alike, judged from their final weights."""
    if same_weights(correct, broken):
        return "Both runs trained alike (the same final weights)."
    return "The two runs end with different weights, so more than the evaluation differs."


def _exploded_or_oscillated(correct: LabRun, broken: LabRun, option: str) -> str:
    finite = [v for v in broken.train_loss if math.isfinite(v)]
    peak = max(finite) if finite else math.inf
    epoch = broken.train_loss.index(peak) + 1 if finite else len(broken.train_loss)
    final = _last(correct.train_loss)
    if not math.isfinite(_last(broken.train_loss)) or peak > 100 * final:
        return (f" With {option} the loss explodes: it peaks at {peak:.3g} in epoch {epoch}, "
                f"{peak / final:,.0f} times the correct run's final loss.")
    where = "above" if _last(broken.train_loss) > final else "at or below"
    rose = broken.facts["epochs whose loss rose"]
    return (f" With {option} the loss does not explode (its largest epoch loss is "
            f"{peak:.3g}, in epoch {epoch}) {rises_words(rose)}, and ends {where} the correct run's.")


def rises_words(rose: str) -> str:
    """"it oscillates" only when the loss rose in some epoch: `rose` is the fact "3 of 7"."""
    if int(rose.split(" of ")[0]) > 0:
        return f"but it oscillates: it rose in {rose} epochs"
    return f"and it fell in every epoch (it rose in {rose})"


def _floored(correct: LabRun, broken: LabRun, option: str) -> str:
    return (f" With the extra squeeze the loss can never go below {broken.floor:.3f} on this "
            f"training split (its lowest epoch loss is {min(broken.train_loss):.3f}); the "
            f"correct run's floor is {correct.floor:g}.")


def _floored_with_smaller_gradients(correct: LabRun, broken: LabRun, option: str) -> str:
    return (_floored(correct, broken, option)
            + f" The first step's gradient of the first layer has norm "
              f"{broken.facts[GRAD_NORM]} against {correct.facts[GRAD_NORM]}.")


def _saved_for_nothing(correct: LabRun, broken: LabRun, option: str) -> str:
    return (f" {accuracy_words(correct.test_acc, broken.test_acc)}; without `no_grad` one "
            f"validation pass saved "
            f"{broken.facts[SAVED_TENSORS]} tensors for backward "
            f"({broken.facts[SAVED_BYTES]} bytes in all, {broken.facts[SAVED_NEW_BYTES]} of "
            f"them new activations), with it {correct.facts[SAVED_TENSORS]}. How much that "
            "is relative to the rest depends on the model and the batch: it is not a fixed "
            "ratio.")


def _graph_kept(correct: LabRun, broken: LabRun, option: str) -> str:
    held = broken.facts.get(SAVED_HELD, "")
    freed = held.startswith("0 of")
    parameters = ("The parameters are the same either way; the difference is memory"
                  if same_weights(correct.model, broken.model)
                  else "The parameters differ, and so does the memory")
    return (f" {parameters}: {broken.facts[KEPT_AT_THE_END]} graph "
            "nodes are still alive because `total_loss` holds them"
            + (", though `backward()` freed every tensor they had saved, so they are small."
               if freed else f", with {held} of the tensors they saved."))


def _scaler_leaked(correct: LabRun, broken: LabRun, option: str) -> str:
    return (f" {accuracy_words(correct.test_acc, broken.test_acc)}, but the scaler's mean and "
            "std now contain the test points: compare them below.")


def _silent_gradient(correct: LabRun, broken: LabRun, option: str) -> str:
    return (f" No error, but {silent_gradient_words(broken.facts[GRAD_ERROR], broken.facts[VERSION])} "
            f"(correct run: {correct.facts[GRAD_ERROR]}). The same change under "
            "`torch.no_grad()` bumps the counter and `backward()` refuses: see PyTorch's error below.")


def silent_gradient_words(grad_error: str, version: str) -> str:
    """What `.data` did at the first step, from the facts: the gradient error ("0.012 (3% of the
    largest entry)") and the version counter around the update ("5 -> 5")."""
    error = float(grad_error.split()[0])
    before, after = version.split(" -> ")
    gradient = (f"at the first step the gradient `.data` left in `.grad` differs from the true "
                f"gradient of the computed loss by up to {grad_error}" if error > 0 else
                "at the first step the gradient `.data` left in `.grad` equals the true gradient")
    counter = (f"the version counter did not move ({version})" if before == after else
               f"the version counter moved ({version})")
    return f"{gradient}, and {counter}"


# What each pitfall's finding says after the losses and accuracies both runs share.
_MORE: dict[str, Callable[[LabRun, LabRun, str], str]] = {
    "no_zero_grad": _exploded_or_oscillated,
    "sigmoid_before_bce": _floored,
    "softmax_before_ce": _floored_with_smaller_gradients,
    "no_no_grad": _saved_for_nothing,
    "accumulate_tensor": _graph_kept,
    "scaler_on_all": _scaler_leaked,
    "data_mutation": _silent_gradient,
}
