"""The moons trainer's loop: a seeded DataLoader, honest metrics and a TrainingSession.

`TrainingSession` owns model, optimizer, a seeded DataLoader and the history; `step_epoch()`
and the bounded `run_for(max_steps, max_seconds)` advance it, so a web page can train in small
slices and stay responsive. The data (`data.py`), model (`model.py`) and best possible accuracy
(`bayes.py`) it uses are in their own modules. This module never imports streamlit.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Sampler, TensorDataset

from workbench.common.modes import evaluating
from workbench.moons_trainer.bayes import bayes_accuracy, bayes_log_densities, regression_ceiling
from workbench.moons_trainer.data import (
    Dataset,
    DrawnPoints,
    Split,
    as_tensors,
    grid_points,
    make_dataset,
    plot_extent,
    read_only,
    split_and_scale,
)
from workbench.moons_trainer.layer_history import LayerHistory
from workbench.moons_trainer.model import MLP, apply_changes, build_model, build_optimizer, weight_penalty
from workbench.moons_trainer.network import NetworkPicture, linear_layers, network_picture
from workbench.moons_trainer.replay import WeightRecord
from workbench.moons_trainer.settings import MAX_STEPS_PER_RUN, MoonsSettings

# ---------------------------------------------------------------------------------------------
# Loaders and metrics.
# ---------------------------------------------------------------------------------------------

class ShuffledBatchSampler(Sampler[torch.Tensor]):
    """`BatchSampler(RandomSampler(data, generator=g), batch_size)`, yielding index tensors.

    RandomSampler turns each epoch's `torch.randperm` into Python ints and BatchSampler gathers
    them back into lists; on a small model that round trip is most of the DataLoader's cost.
    This sampler slices the same permutation as tensors instead. It makes the same generator
    draws in the same order (one permutation per epoch, then the empty-remainder permutation
    RandomSampler draws when an epoch's iterator runs out), so its batches are exactly those of
    `DataLoader(dataset, batch_size, shuffle=True, generator=g)`: a test checks it epoch by epoch.
    """

    def __init__(self, size: int, batch_size: int, generator: torch.Generator) -> None:
        self.size, self.batch_size, self.generator = size, batch_size, generator

    def __len__(self) -> int:
        return math.ceil(self.size / self.batch_size)

    def __iter__(self) -> Iterator[torch.Tensor]:
        yield from torch.randperm(self.size, generator=self.generator).split(self.batch_size)
        torch.randperm(self.size, generator=self.generator)    # RandomSampler's remainder draw


def batched_loader(dataset: TensorDataset, batch_size: int, generator: torch.Generator) -> DataLoader:
    """What the page trains with: the seeded DataLoader's batches, one tensor gather each
    (`batch_size=None` turns automatic batching off; the sampler yields whole batches)."""
    return DataLoader(dataset, sampler=ShuffledBatchSampler(len(dataset), batch_size, generator),
                      batch_size=None, generator=generator)


@dataclass(frozen=True)
class Metrics:
    loss: float
    accuracy: float     # for regression (an MSELoss): R², the coefficient of determination


def r_squared(predicted: torch.Tensor, target: torch.Tensor) -> float:
    """The coefficient of determination 1 - SSE / SST: 1 for a perfect fit, 0 for predicting the
    targets' mean everywhere, below 0 for worse than that (in double precision)."""
    predicted, target = predicted.double(), target.double()
    sse = ((target - predicted) ** 2).sum()
    sst = ((target - target.mean()) ** 2).sum()
    return float(1 - sse / sst) if float(sst) > 0 else math.nan


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor,
             loss_fn: nn.Module | None = None) -> Metrics:
    """Loss and accuracy in eval mode, without recording a graph; with an MSELoss (regression),
    the loss is the mean squared error and the accuracy's place holds R²."""
    loss_fn = loss_fn or nn.BCEWithLogitsLoss()
    with evaluating(model):
        logits = model(x)
        loss = loss_fn(logits, y).item()
        if isinstance(loss_fn, nn.MSELoss):
            return Metrics(loss, r_squared(logits, y))
        accuracy = ((logits > 0).float() == y).float().mean().item()
    return Metrics(loss, accuracy)


def predict_labels(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        return (model(x) > 0).long()


def f1_score(predicted: torch.Tensor, target: torch.Tensor) -> float:
    """F1 of class 1: 2 TP / (2 TP + FP + FN)."""
    predicted, target = predicted.long(), target.long()
    tp = int(((predicted == 1) & (target == 1)).sum())
    fp = int(((predicted == 1) & (target == 0)).sum())
    fn = int(((predicted == 0) & (target == 1)).sum())
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def probability_grid(model: nn.Module, split: Split, extent: tuple[float, float, float, float],
                     resolution: int, device: torch.device) -> np.ndarray:
    """P(class 1) over a resolution x resolution grid of raw coordinates, shape (rows=y, cols=x)."""
    points = split.scaled(grid_points(extent, resolution))
    model.eval()
    with torch.no_grad():
        probs = torch.sigmoid(model(torch.as_tensor(points, dtype=torch.float32, device=device)))
    model.train()
    return probs.cpu().numpy().reshape(resolution, resolution)


# ---------------------------------------------------------------------------------------------
# Data shared read-only by every run on the same data settings.
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PreparedData:
    """Everything a run derives from the data settings alone, shared read-only by all runs."""

    data: Dataset
    split: Split
    bayes_test_accuracy: float | None       # None: drawn data (no known process drew them) or
                                            # regression (no classes, no accuracy)
    bayes_val_accuracy: float | None
    # Regression only: the best possible predictor's (E[target | x]) test MSE and R².
    best_test_mse: float | None = None
    best_test_r2: float | None = None


@functools.lru_cache(maxsize=32)
def prepared_data(name: str, n: int, noise: float, seed: int,
                  fractions: tuple[float, float, float], points: DrawnPoints = ()) -> PreparedData:
    """The dataset, its split and scaler, and the Bayes accuracies, computed once per process for
    the same data settings: a class opening one link shares one copy instead of thirty, and a
    change of learning rate or width does not recompute the best possible accuracy. The arrays
    are made read-only, so no run can change what the others see. Drawn data (`points`) have
    no Bayes accuracy: no known process drew them; regression data have the best possible
    predictor's test MSE and R² instead."""
    data = make_dataset(name, n, noise, seed, points)
    split = split_and_scale(data, fractions, seed)
    if data.regression:
        prepared = PreparedData(data, split, None, None,
                                *regression_ceiling(name, split.x_test, split.y_test, noise))
    elif name == "drawn":
        prepared = PreparedData(data, split, None, None)
    else:
        prepared = PreparedData(data, split, bayes_accuracy(name, split.x_test, split.y_test, noise, n),
                                bayes_accuracy(name, split.x_val, split.y_val, noise, n))
    read_only(data.features, data.labels, split.x_train, split.y_train, split.x_val, split.y_val,
              split.x_test, split.y_test)
    return prepared


@functools.lru_cache(maxsize=16)
def shared_bayes_grid(name: str, n: int, noise: float, seed: int, fractions: tuple[float, float, float],
                      resolution: int) -> np.ndarray:
    """log p(x | 1) - log p(x | 0) over the plot grid of these data settings (read-only)."""
    data = prepared_data(name, n, noise, seed, fractions).data
    points = grid_points(plot_extent(data), resolution)
    log_density = bayes_log_densities(name, points, noise, n)
    difference = (log_density[:, 1] - log_density[:, 0]).clamp(-50, 50)
    grid = difference.numpy().reshape(resolution, resolution)
    read_only(grid)
    return grid


# ---------------------------------------------------------------------------------------------
# A training session: the loop of the lesson, advanced in bounded slices.
# ---------------------------------------------------------------------------------------------

@dataclass
class History:
    epoch: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)   # mean of the batch losses (.item())
    train_acc: list[float] = field(default_factory=list)    # eval mode, whole training split
    val_loss: list[float] = field(default_factory=list)
    val_acc: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class TestReport:
    accuracy: float                 # NaN for regression: no classes
    f1: float
    bayes_accuracy: float | None    # None: drawn data, whose best possible accuracy is unknown
    n: int
    mse: float | None = None        # regression only: the test split's mean squared error ...
    r2: float | None = None         # ... and its coefficient of determination
    best_mse: float | None = None   # regression: the best possible predictor's test MSE ...
    best_r2: float | None = None    # ... and R² (E[target | x] of the known process)

    @property
    def regression(self) -> bool:
        return self.mse is not None

    @property
    def gap_points(self) -> float | None:
        """Percentage points between the model and the best possible classifier (None: unknown)."""
        if self.bayes_accuracy is None:
            return None
        return round(100 * (self.bayes_accuracy - self.accuracy), 6)


# Far above any weight this page's MLP reaches by training on standardised inputs (nn.Linear
# starts them below 1; sound runs stay within a few tens): uploaded weights beyond it, not the
# learning rate, are the likelier cause of a divergence.
LARGE_UPLOADED_WEIGHT = 1e4


# How far one step of each optimizer moves a weight: what makes a learning rate too large.
# tests/unit/moons_trainer/test_training.py measures each against torch.optim.
STEP_SIZE_WORDS = {
    "SGD": "Each SGD step moves every weight by the learning rate times its gradient, and the "
           "momentum of 0.9 adds up about ten past steps, so a steady gradient moves it about ten "
           "times further.",
    "Adam": "Each Adam step moves every weight by about the learning rate, whatever the size of "
            "its gradient (the gradient is divided by a running average of its own size).",
    "AdamW": "Each AdamW step moves every weight by about the learning rate, whatever the size of "
             "its gradient (the gradient is divided by a running average of its own size).",
    "RMSprop": "Each RMSprop step divides the gradient by a running average of its size, so a "
               "weight moves by a multiple of the learning rate that the gradient's size barely "
               "changes (about 10x lr at the first step).",
}


@dataclass(frozen=True)
class Divergence:
    """Where a run's loss stopped being a number: training stops there."""

    step: int            # 1-based optimizer step whose loss was NaN or infinite
    epoch: int           # 1-based epoch it happened in
    loss: float
    uploaded: LoadedWeights | None = None     # the run's weights came from an upload

    @property
    def caused_by_uploaded_weights(self) -> bool:
        """Whether the uploaded weights, not the learning rate, made the loss stop being a number.

        The loss of a step is computed before that step's update. So if it is already NaN or
        infinite at the first step after the upload, no learning rate played any part: the
        uploaded weights themselves overflow the forward pass. Weights far larger than
        training here produces make every gradient huge, so later divergences are theirs too.

        Such weights are accepted at upload, as `load_state_dict` accepts any finite weights: a
        run of this page that went badly can save them, and refusing one's own file would be
        wrong. The explanation is where the page says what they do.
        """
        uploaded = self.uploaded
        return uploaded is not None and (self.step == uploaded.from_step + 1
                                         or uploaded.largest_weight > LARGE_UPLOADED_WEIGHT)

    def explanation(self, settings: MoonsSettings) -> str:
        what = "NaN (not a number)" if math.isnan(self.loss) else "infinite"
        if self.caused_by_uploaded_weights:
            assert self.uploaded is not None
            first = self.step == self.uploaded.from_step + 1
            when = ("at the first optimizer step from the uploaded weights, before any update: the "
                    "learning rate played no part" if first else
                    f"at optimizer step {self.step:,}, in epoch {self.epoch}")
            return (f"The training loss became {what} {when}. The uploaded weights reach "
                    f"{self.uploaded.largest_weight:.3g} in magnitude, where a fresh model's are below "
                    "1 and training on this data keeps them within a few tens. float32 overflows "
                    "near 3.4e38, and weights this large overflow it in the forward pass or make "
                    "every gradient huge, whatever the learning rate. Once one weight is NaN every "
                    "prediction is NaN, so the run was stopped there: more steps cannot bring it "
                    "back.")
        return (f"The training loss became {what} at optimizer step {self.step:,}, in epoch "
                f"{self.epoch}. {STEP_SIZE_WORDS[settings.opt]} At lr = {settings.lr:g} the steps "
                "overshoot the minimum, the loss grows instead of shrinking, and the numbers "
                "overflow float32. Once one "
                "weight is NaN every prediction is NaN, so the run was stopped there: more steps "
                "cannot bring it back.")

    def advice(self, settings: MoonsSettings) -> str:
        """What to do next, in Markdown."""
        if self.caused_by_uploaded_weights:
            return ("**What to do**: press **Reset** to start again from this seed's fresh "
                    "weights, or upload a checkpoint of a run that trained soundly; a lower "
                    "learning rate cannot help these weights.")
        return (f"**What to do**: lower the learning rate (try {settings.lr / 10:g}), then the run "
                "starts again from the same initial weights; or press **Reset** to watch the "
                "divergence again.")


# Settings a running run can take on without starting again, as in TensorFlow Playground: they
# change the optimizer or the loader from the next step on and keep the weights and the curves.
CONTINUING_FIELDS = ("lr", "wd", "reg", "reg_rate", "batch", "opt", "epochs", "speed", "net",
                     "discrete")
_MARKED = {"lr": "learning rate", "wd": "weight decay", "reg": "regularization",
           "reg_rate": "regularization rate", "batch": "batch size", "opt": "optimizer"}
_SHORT = {"lr": "lr", "wd": "wd", "reg": "", "reg_rate": "reg rate", "batch": "batch", "opt": ""}


@dataclass(frozen=True)
class SettingChange:
    """A setting changed while the run trained: it applies from optimizer step `step + 1`
    (the batch size from the start of epoch `from_epoch`, when the loader is next iterated)."""

    step: int
    epoch: float            # where it sits on the curves: epochs done plus the part of this one
    field: str
    old: object
    new: object
    from_epoch: int | None = None

    @property
    def short(self) -> str:
        """The curves' label, e.g. 'lr 0.01' or 'SGD'."""
        value = f"{self.new:g}" if isinstance(self.new, float) else str(self.new)
        return f"{_SHORT[self.field]} {value}".strip()

    def describe(self) -> str:
        def shown(value: object) -> str:
            return f"{value:g}" if isinstance(value, float) else str(value)
        what = f"{_MARKED[self.field]} {shown(self.old)} \u2192 {shown(self.new)}"
        if self.field == "batch":
            return (f"{what}, from epoch {self.from_epoch} (a DataLoader's batch size is fixed "
                    "while it is iterated)")
        if self.field == "opt":
            return (f"{what} from optimizer step {self.step + 1:,}: the weights are kept and "
                    f"{self.new} starts with fresh state (no running averages or momentum yet)")
        return f"{what} from optimizer step {self.step + 1:,}"


def continues(old: MoonsSettings, new: MoonsSettings) -> bool:
    """Whether `new` differs from `old` only in settings a running run can take on."""
    return dataclasses.replace(old, **{f: getattr(new, f) for f in CONTINUING_FIELDS}) == new


@dataclass(frozen=True)
class LoadedWeights:
    """Where a run's weights came from when they were uploaded, not trained here."""

    name: str
    kind: str               # "state_dict" or "resume"
    epoch: int | None       # a resume checkpoint's epoch; a bare state_dict has no history
    from_step: int = 0      # the optimizer step count the run carried on from
    largest_weight: float = 0.0     # the largest |weight| uploaded, to explain a divergence


@dataclass(frozen=True)
class LiveSnapshot:
    """What the live view draws, taken by the training thread at the end of a slice so that a
    frame never waits for the model: P(class 1) as uint8 over the grid and at every train,
    validation and test point, and the counters at that moment."""

    grid: np.ndarray
    points: np.ndarray
    epoch: int
    steps: int
    epochs_recorded: int


@dataclass(frozen=True)
class NetworkSnapshot:
    """The network view's picture (workbench/moons_trainer/network.py), taken by the training thread
    like LiveSnapshot but less often; `serial` counts the pictures taken in this run, so a frame
    sends a picture only once."""

    picture: NetworkPicture
    epoch: int
    steps: int
    serial: int


@dataclass(frozen=True)
class SliceReport:
    steps: int
    epochs_finished: int
    seconds: float
    done: bool


class TrainingSession:
    """One learner's experiment: data, model, optimizer, loader, history.

    Three generators, each seeded from the settings, keep the run reproducible without ever
    touching PyTorch's global RNG: one for the initial weights, one for the shuffling, one for
    dropout masks.
    """

    def __init__(self, settings: MoonsSettings, device: torch.device | None = None) -> None:
        self.settings = settings
        self.device = device or torch.device("cpu")
        prepared = prepared_data(settings.dataset, settings.n, settings.noise, settings.seed,
                                 settings.fractions, settings.drawn_points)
        self.data, self.split = prepared.data, prepared.split
        self.bayes_test_accuracy = prepared.bayes_test_accuracy
        self.bayes_val_accuracy = prepared.bayes_val_accuracy
        self.best_test_mse, self.best_test_r2 = prepared.best_test_mse, prepared.best_test_r2
        s = self.split
        self.x_train, self.y_train = as_tensors(s.scaled(s.x_train), s.y_train, self.device)
        self.x_val, self.y_val = as_tensors(s.scaled(s.x_val), s.y_val, self.device)
        self.x_test, self.y_test = as_tensors(s.scaled(s.x_test), s.y_test, self.device)

        self.init_generator = torch.Generator().manual_seed(settings.seed)
        self.shuffle_generator = torch.Generator().manual_seed(settings.seed + 1)
        self.dropout_generator = torch.Generator(device=self.device).manual_seed(settings.seed + 2)
        self.model = build_model(settings.hidden, settings.act, settings.dropout,
                                 self.device, self.init_generator, settings.features)
        self.model.set_dropout_generator(self.dropout_generator)
        self.optimizer = build_optimizer(settings.opt, self.model.parameters(), settings.lr, settings.wd)
        # Classes: BCEWithLogitsLoss on the logits. Regression: the mean squared error of the
        # raw output (the same MLP, no sigmoid).
        self.loss_fn = nn.MSELoss() if settings.regression else nn.BCEWithLogitsLoss()
        # The training tensors stay on the CPU for the loader (its indices are CPU tensors);
        # each batch moves to the device in the loop, as the lesson writes it.
        self.train_set = TensorDataset(self.x_train.cpu(), self.y_train.cpu())
        self.loader = batched_loader(self.train_set, settings.batch, self.shuffle_generator)

        self.epoch = 0
        self.steps = 0
        self.changes: list[SettingChange] = []
        self.loaded: LoadedWeights | None = None
        # Held by whoever trains or reads the model: live training runs in a scheduler thread.
        self.lock = threading.RLock()
        self._live_inputs: torch.Tensor | None = None
        self.latest: LiveSnapshot | None = None     # the last slice's picture, for the frames
        self.latest_network: NetworkSnapshot | None = None     # ... and the network view's
        self._network_inputs: torch.Tensor | None = None
        self.diverged: Divergence | None = None
        self.best_val_loss = math.inf
        self.history = History()
        self.layer_history = LayerHistory()     # weights and gradients per layer, per epoch
        self.weight_record = WeightRecord()     # the weights at each epoch's end, for the replay
        self.weight_record.record(0, self.model, 0)
        self._batches: Iterator | None = None
        self._epoch_loss_sum = 0.0
        self._epoch_seen = 0
        self._epoch_steps = self._epoch_batches = 0
        # The data loss's gradient of each Linear weight at the epoch's last batch, when a
        # penalty's gradient shares .grad with it (None: .grad is the data loss's alone).
        self.data_gradients: list[torch.Tensor] | None = None

    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(len(self.train_set) / self.settings.batch)

    @property
    def done(self) -> bool:
        return (self.epoch >= self.settings.epochs or self.steps >= MAX_STEPS_PER_RUN
                or self.diverged is not None)

    def train_step(self, xb: torch.Tensor, yb: torch.Tensor, keep_data_gradients: bool = False) -> float:
        """One optimizer step: the five lines every PyTorch training loop is made of (and the
        weights' penalty, when regularised). Returns the data's loss, without the penalty.

        With `keep_data_gradients` (the epoch's last batch), the Linear weights' gradients of
        the data loss alone are kept in `data_gradients` for the Weights & gradients tab: with a
        penalty, `.grad` also holds the penalty's gradient (rate x sign(w) for L1), which can
        be far larger than a vanishing data gradient and would hide it."""
        self.optimizer.zero_grad()            # forget the previous batch's gradients
        logits = self.model(xb)               # forward: raw logits, no sigmoid
        loss = self.loss_fn(logits, yb)       # BCEWithLogitsLoss applies the sigmoid stably
        penalty = weight_penalty(self.model, self.settings.reg, self.settings.reg_rate)
        if penalty is not None and keep_data_gradients:
            # Two backward passes instead of one on loss + penalty: the penalty's graph shares
            # nothing with the data's but the leaves, so .grad ends up as the same sum (the
            # same two float terms, added once), and between them it holds the data's alone.
            loss.backward()
            self.data_gradients = [layer.weight.grad.clone() for layer in linear_layers(self.model)]
            penalty.backward()
        else:
            (loss if penalty is None else loss + penalty).backward()   # fill every parameter's .grad
            if keep_data_gradients:
                self.data_gradients = None    # .grad is the data loss's gradient itself
        self.optimizer.step()                 # update the parameters
        return loss.item()                    # a Python float: the graph can be freed

    def _finish_epoch(self) -> None:
        self.epoch += 1
        train = evaluate(self.model, self.x_train, self.y_train, self.loss_fn)
        val = evaluate(self.model, self.x_val, self.y_val, self.loss_fn)
        h = self.history
        h.epoch.append(self.epoch)
        h.train_loss.append(self._epoch_loss_sum / max(self._epoch_seen, 1))
        h.train_acc.append(train.accuracy)
        h.val_loss.append(val.loss)
        h.val_acc.append(val.accuracy)
        self.best_val_loss = min(self.best_val_loss, val.loss)
        # The epoch's last batch's gradients are still in .grad (zero_grad runs at a step's start).
        self.layer_history.record(self.epoch, self.model, self.data_gradients)
        self.weight_record.record(self.epoch, self.model, self.steps)
        self._batches = None

    def run_for(self, max_steps: int, max_seconds: float, stop_at_epoch_end: bool = False) -> SliceReport:
        """Train until `max_steps` optimizer steps or `max_seconds` have passed, or the run ends
        (or, with `stop_at_epoch_end`, the current epoch ends).

        Stops mid-epoch if it must; the next call carries on with the same batches, so slicing
        never changes the result.
        """
        started = time.perf_counter()
        steps = epochs = 0
        self.model.train()
        while not self.done and steps < max_steps and not (stop_at_epoch_end and epochs):
            if self._batches is None:
                self._batches = iter(self.loader)
                self._epoch_loss_sum, self._epoch_seen, self._epoch_steps = 0.0, 0, 0
                # Counted now: a batch size changed mid-epoch applies from the next epoch on.
                self._epoch_batches, self.data_gradients = len(self.loader), None
            batch = next(self._batches, None)
            if batch is None:
                self._finish_epoch()
                epochs += 1
            else:
                xb, yb = batch
                if self.device.type != "cpu":
                    xb, yb = xb.to(self.device, non_blocking=True), yb.to(self.device, non_blocking=True)
                self._epoch_steps += 1
                loss = self.train_step(xb, yb, keep_data_gradients=self._epoch_steps == self._epoch_batches)
                self.steps += 1
                steps += 1
                if not math.isfinite(loss):
                    self.diverged = Divergence(self.steps, self.epoch + 1, loss, self.loaded)
                    break
                self._epoch_loss_sum += loss * len(yb)
                self._epoch_seen += len(yb)
            if time.perf_counter() - started >= max_seconds:
                break
        return SliceReport(steps, epochs, time.perf_counter() - started, self.done)

    def continue_with(self, settings: MoonsSettings) -> list[SettingChange]:
        """Take on new learning rate, weight decay, batch size, optimizer or epochs mid-run,
        keeping the weights and the history; return the changes (marked on the curves)."""
        assert continues(self.settings, settings)
        old, self.settings = self.settings, settings
        in_epoch = self._batches is not None
        position = self.epoch + (self._epoch_seen / len(self.train_set) if in_epoch else 0.0)
        changes = [SettingChange(self.steps, position, f, getattr(old, f), getattr(settings, f),
                                 (self.epoch + 2 if in_epoch else self.epoch + 1) if f == "batch" else None)
                   for f in _MARKED if getattr(old, f) != getattr(settings, f)]
        change = {"lr": settings.lr, "weight_decay": settings.wd}
        if old.opt != settings.opt:
            change["optimizer"] = settings.opt
        self.optimizer = apply_changes(self.optimizer, self.model.parameters(), change)
        # The sampler splits each epoch's permutation when the epoch starts: an epoch under way
        # keeps its batches, the next one uses the new size.
        self.loader.sampler.batch_size = settings.batch
        self.changes.extend(changes)
        return changes

    def snapshot(self, resolution: int) -> LiveSnapshot:
        """The live view's picture of the current weights (call it holding `lock`)."""
        grid, points = self.live_probabilities(resolution, with_test=True)
        return LiveSnapshot(grid, points, self.epoch, self.steps, len(self.history.epoch))

    def live_probabilities(self, resolution: int, with_test: bool,
                           model: MLP | None = None) -> tuple[np.ndarray, np.ndarray]:
        """P(class 1) as uint8 (0-255) over the plot grid (rows = y) and at every train,
        validation (and test) point, from one forward pass of the current weights (or of
        `model`'s)."""
        model = model if model is not None else self.model
        if self._live_inputs is None or self._live_inputs.shape[0] != resolution ** 2 + len(self.y_train) \
                + len(self.y_val) + len(self.y_test):
            grid = torch.as_tensor(self.split.scaled(grid_points(plot_extent(self.data), resolution)),
                                   dtype=torch.float32, device=self.device)
            self._live_inputs = torch.cat([grid, self.x_train, self.x_val, self.x_test])
        points = len(self.y_train) + len(self.y_val) + (len(self.y_test) if with_test else 0)
        inputs = self._live_inputs[:resolution ** 2 + points]
        with evaluating(model):
            output = model(inputs)
        # Regression: the output value, clipped to the targets' [-1, 1] and mapped onto [0, 1].
        probability = (output.clamp(-1, 1) + 1) / 2 if self.settings.regression else torch.sigmoid(output)
        quantised = (probability * 255).round().to(torch.uint8).cpu().numpy()
        return quantised[:resolution ** 2], quantised[resolution ** 2:]

    def network_grid(self, resolution: int) -> torch.Tensor:
        """The network view's grid over the same plane as the boundary, as the model sees it
        (scaled, on the device), rows = y."""
        if self._network_inputs is None or self._network_inputs.shape[0] != resolution ** 2:
            self._network_inputs = torch.as_tensor(
                self.split.scaled(grid_points(plot_extent(self.data), resolution)),
                dtype=torch.float32, device=self.device)
        return self._network_inputs

    def replayed_model(self, epoch: int) -> MLP:
        """A copy of the model with the weights it had at the end of `epoch` (one the weight
        record holds), in eval mode: the run as it was, for the replay."""
        model = self.fresh_model()
        model.load_state_dict(self.weight_record.weights(epoch), strict=True)
        return model.eval()

    def replay(self, epoch: int, resolution: int, network_resolution: int | None
               ) -> tuple[LiveSnapshot, NetworkSnapshot | None]:
        """The live view's pictures of the run at the end of `epoch`, recomputed from its
        recorded weights (the network's too, at `network_resolution`, unless None)."""
        model = self.replayed_model(epoch)
        grid, points = self.live_probabilities(resolution, with_test=True, model=model)
        steps = self.weight_record.steps(epoch)
        snapshot = LiveSnapshot(grid, points, epoch, steps, len(self.history.epoch))
        network = None
        if network_resolution is not None:
            picture = network_picture(model, self.network_grid(network_resolution))
            network = NetworkSnapshot(picture, epoch, steps, serial=-1 - epoch)  # never a live serial
        return snapshot, network

    def network_input_maps(self, resolution: int) -> np.ndarray:
        """Each input feature over the network view's grid, (features, points), as the model's
        first module computes it: the maps of the view's input column."""
        with torch.no_grad():
            features = self.model.features(self.network_grid(resolution))
        return features.T.contiguous().cpu().numpy().astype(np.float32)

    def network_snapshot(self, resolution: int) -> NetworkSnapshot:
        """Every hidden unit's map and the weights now (call it holding `lock`)."""
        serial = self.latest_network.serial + 1 if self.latest_network is not None else 1
        picture = network_picture(self.model, self.network_grid(resolution))
        self.latest_network = NetworkSnapshot(picture, self.epoch, self.steps, serial)
        return self.latest_network

    def step_epoch(self) -> SliceReport:
        """Finish the current epoch (or train one whole epoch), however long it takes."""
        return self.run_for(MAX_STEPS_PER_RUN, math.inf, stop_at_epoch_end=True)

    def run_to_end(self) -> None:
        while not self.done:
            self.run_for(MAX_STEPS_PER_RUN, math.inf)

    def test_report(self) -> TestReport:
        if self.settings.regression:
            with evaluating(self.model):
                output = self.model(self.x_test)
                mse = float(nn.functional.mse_loss(output, self.y_test))
            return TestReport(math.nan, math.nan, None, len(self.y_test), mse,
                              r_squared(output, self.y_test), self.best_test_mse, self.best_test_r2)
        predicted = predict_labels(self.model, self.x_test)
        # A count over n in double precision, so it compares exactly with the Bayes accuracy.
        accuracy = int((predicted == self.y_test.long()).sum()) / len(self.y_test)
        return TestReport(accuracy, f1_score(predicted, self.y_test), self.bayes_test_accuracy,
                          len(self.y_test))

    def grid(self, resolution: int = 50) -> np.ndarray:
        return probability_grid(self.model, self.split, plot_extent(self.data), resolution, self.device)

    def bayes_grid(self, resolution: int = 50) -> np.ndarray | None:
        """log p(x | 1) - log p(x | 0) over the plot grid: the best possible boundary is where it
        crosses 0. Shared by every run on the same data (the generative process never changes).
        None for drawn data (no known process drew them) and for regression (no classes)."""
        s = self.settings
        if s.drawn or s.regression:
            return None
        return shared_bayes_grid(s.dataset, s.n, s.noise, s.seed, s.fractions, resolution)

    def replace_weights(self, state_dict: dict[str, torch.Tensor], optimizer_state: dict | None = None,
                        epoch: int | None = None, best_val_loss: float | None = None,
                        source: str = "uploaded weights") -> None:
        """Adopt checked weights (and, for a resume checkpoint, optimizer state and epoch).

        A fresh model takes them with `strict=True`; only if that succeeds does it replace the
        current one. The optimizer is rebuilt for the new parameters.
        """
        fresh = self.fresh_model()
        fresh.load_state_dict({k: v.to(self.device) for k, v in state_dict.items()}, strict=True)
        optimizer = build_optimizer(self.settings.opt, fresh.parameters(), self.settings.lr, self.settings.wd)
        if optimizer_state is not None:
            optimizer.load_state_dict(optimizer_state)
        fresh.set_dropout_generator(self.dropout_generator)
        self.model, self.optimizer = fresh, optimizer
        self._batches = None
        self.diverged = None
        # Neither file holds the curves: the history before now is unknown either way.
        self.history, self.changes = History(), []
        self.layer_history = LayerHistory()
        self.data_gradients = None
        # A bare state_dict starts this page's count again; a resume checkpoint carries on from
        # its epoch, counting the steps those epochs would have taken here.
        self.epoch = min(epoch, self.settings.epochs) if epoch is not None else 0
        self.steps = self.epoch * self.steps_per_epoch
        self.weight_record.clear()              # the replay starts from the uploaded weights
        self.weight_record.record(self.epoch, self.model, self.steps)
        largest = max((float(v.detach().abs().max()) for v in state_dict.values()
                       if v.is_floating_point() and v.numel()), default=0.0)
        self.loaded = LoadedWeights(source, "resume" if epoch is not None else "state_dict", epoch,
                                    self.steps, largest)
        if best_val_loss is not None:
            self.best_val_loss = best_val_loss

    def fresh_model(self) -> MLP:
        """An untrained model of the same architecture on the same device (for reloading)."""
        return build_model(self.settings.hidden, self.settings.act, self.settings.dropout, self.device,
                           torch.Generator().manual_seed(0), self.settings.features)

    def describe(self) -> str:
        s = self.settings
        inputs = "" if s.features == ("x1", "x2") else f" on inputs {', '.join(s.feature_labels)}"
        data = (f"{len(s.points)} drawn points (seed={s.seed})" if s.drawn else
                f"{s.dataset} (n={s.n}, noise={s.noise:g}, seed={s.seed})")
        return (f"MLP {s.architecture} ({s.act}){inputs} trained {self.epoch} epochs on {data} "
                f"with {s.opt}(lr={s.lr:g}, "
                f"weight_decay={s.wd:g}), batch {s.batch}")
