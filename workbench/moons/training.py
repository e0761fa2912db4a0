"""Two moons, end to end: data, split, scaling, an MLP, a training loop and honest metrics.

Read it top to bottom as the lesson's pipeline:

1. `make_dataset` draws points from a known generative process (moons, circles, XOR, spiral or
   two Gaussians), 2-D features and 0/1 labels.
2. `split_and_scale` makes a stratified train/val/test split and fits a StandardScaler on the
   training split only, so nothing about the val/test points leaks into training.
3. `MLP` is a plain `nn.Module`: Linear -> activation (-> dropout) ... -> Linear to one logit.
   Its parameters are initialised from the learner's own `torch.Generator`, never the global RNG.
4. `TrainingSession` owns model, optimizer, a seeded DataLoader and the history; `step_epoch()`
   and the bounded `run_for(max_steps, max_seconds)` advance it, so a web page can train in
   small slices and stay responsive.
5. `bayes_log_densities` is the best any classifier can do: the class-conditional densities of
   the generative process, integrated numerically over the curve each class lives on.

This module never imports streamlit.
"""
from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.datasets import make_circles, make_moons
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, Sampler, TensorDataset

from workbench.common.links import (
    ChoiceParam,
    FloatParam,
    IntListParam,
    IntParam,
    LinkSchema,
)

DATASETS = ("moons", "circles", "xor", "spiral", "gaussians")
ACTIVATIONS = ("ReLU", "LeakyReLU", "GELU", "Tanh", "Sigmoid")
OPTIMIZERS = ("AdamW", "Adam", "SGD", "RMSprop")
SPLITS = ("70/15/15", "60/20/20", "80/10/10", "50/25/25")

# Hard limits: a lesson link is untrusted input, and one learner must not starve the others.
MAX_SAMPLES = 5000
MAX_WIDTH = 256
MAX_LAYERS = 4
MAX_EPOCHS = 500
MAX_STEPS_PER_RUN = 200_000     # optimizer steps in one training run, whatever the settings


@dataclass(frozen=True)
class MoonsSettings:
    """Everything that decides one experiment. Defaults are the lesson's assignment."""

    dataset: str = "moons"
    n: int = 3000
    noise: float = 0.25
    seed: int = 42
    split: str = "70/15/15"
    hidden: tuple[int, ...] = (64, 32)
    act: str = "ReLU"
    dropout: float = 0.0
    opt: str = "AdamW"
    lr: float = 0.003
    wd: float = 1e-4
    batch: int = 64
    epochs: int = 50

    @property
    def fractions(self) -> tuple[float, float, float]:
        train, val, test = (int(p) / 100 for p in self.split.split("/"))
        return train, val, test

    @property
    def architecture(self) -> str:
        """`2 -> 64 -> 32 -> 1`, the shape of the network in words."""
        return " -> ".join(str(w) for w in (2, *self.hidden, 1))


PRESET = MoonsSettings()

LINK_SCHEMA: LinkSchema[MoonsSettings] = LinkSchema(MoonsSettings, [
    ChoiceParam("dataset", DATASETS, help="which generative process draws the points"),
    IntParam("n", 100, MAX_SAMPLES, help="number of points, all splits together"),
    FloatParam("noise", 0.0, 1.0, help="std of the Gaussian noise added to each point"),
    IntParam("seed", 0, 2**31 - 1, help="seeds the data, the split, the initial weights and the shuffling"),
    ChoiceParam("split", SPLITS, help="train/val/test percentages"),
    IntListParam("hidden", 1, MAX_WIDTH, MAX_LAYERS, empty_ok=True,
                 help="hidden layer widths, e.g. 64,32; empty for no hidden layer"),
    ChoiceParam("act", ACTIVATIONS, help="activation between layers"),
    FloatParam("dropout", 0.0, 0.8, help="dropout probability after each activation"),
    ChoiceParam("opt", OPTIMIZERS, help="optimizer"),
    FloatParam("lr", 1e-5, 1.0, help="learning rate"),
    FloatParam("wd", 0.0, 0.1, help="weight decay"),
    IntParam("batch", 1, 2048, help="mini-batch size"),
    IntParam("epochs", 1, MAX_EPOCHS, help="epochs to train"),
])


# ---------------------------------------------------------------------------------------------
# 1. Data: a known generative process, so the best possible accuracy can be computed too.
# ---------------------------------------------------------------------------------------------

def _spiral_curve(t: torch.Tensor, label: int) -> torch.Tensor:
    """Two interleaved arms of an Archimedean spiral; t in [0, 1] runs along an arm."""
    radius = 0.2 + 1.8 * t
    angle = 3.0 * math.pi * t + math.pi * label
    return torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=-1)


def _moons_curve(t: torch.Tensor, label: int) -> torch.Tensor:
    """scikit-learn's two half circles, t in [0, 1] mapped to the angle 0..pi."""
    angle = math.pi * t
    if label == 0:
        return torch.stack([torch.cos(angle), torch.sin(angle)], dim=-1)
    return torch.stack([1 - torch.cos(angle), 1 - torch.sin(angle) - 0.5], dim=-1)


def _circles_curve(t: torch.Tensor, label: int) -> torch.Tensor:
    """scikit-learn's circles with factor 0.5: label 0 outer (radius 1), label 1 inner."""
    angle = 2 * math.pi * t
    radius = 1.0 if label == 0 else 0.5
    return torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=-1)


CURVES: dict[str, Callable[[torch.Tensor, int], torch.Tensor]] = {
    "moons": _moons_curve, "circles": _circles_curve, "spiral": _spiral_curve,
}
GAUSSIAN_CENTRES = ((-0.5, -0.5), (0.5, 0.5))


@dataclass(frozen=True)
class Dataset:
    features: np.ndarray   # (n, 2) float64, raw (unscaled) coordinates
    labels: np.ndarray     # (n,) int64, 0 or 1
    name: str
    noise: float


def make_dataset(name: str, n: int, noise: float, seed: int) -> Dataset:
    """Draw `n` labelled points. Moons and circles are scikit-learn's own generators."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; expected one of {', '.join(DATASETS)}")
    n = int(min(max(n, 4), MAX_SAMPLES))
    if name == "moons":
        x, y = make_moons(n_samples=n, noise=noise, random_state=seed)
    elif name == "circles":
        x, y = make_circles(n_samples=n, noise=noise, random_state=seed, factor=0.5)
    else:
        rng = np.random.default_rng(seed)
        if name == "xor":
            # Uniform on [-1, 1]^2; label 1 where x and y have the same sign.
            x = rng.uniform(-1.0, 1.0, size=(n, 2))
            y = (x[:, 0] * x[:, 1] > 0).astype(np.int64)
        else:
            y = np.arange(n) % 2            # equal classes, in random order
            rng.shuffle(y)
        if name == "spiral":
            # Two arms of an Archimedean spiral, t uniform along each arm (see _spiral_curve).
            t = rng.uniform(0.0, 1.0, size=n)
            radius = 0.2 + 1.8 * t
            angle = 3.0 * np.pi * t + np.pi * y
            x = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
        elif name == "gaussians":  # the noise is each blob's standard deviation
            x = np.asarray(GAUSSIAN_CENTRES)[y].astype(np.float64)
        x = x + rng.normal(scale=noise, size=(n, 2))
    return Dataset(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.int64), name, noise)


@dataclass(frozen=True)
class Split:
    """Raw and scaled features of the three splits, and the scaler fitted on train only."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    scaler: StandardScaler

    def scaled(self, x: np.ndarray) -> np.ndarray:
        return self.scaler.transform(x)


def split_and_scale(data: Dataset, fractions: tuple[float, float, float], seed: int) -> Split:
    """Stratified train/val/test split, then a StandardScaler fitted on the training split."""
    _, val_frac, test_frac = fractions
    x_rest, x_test, y_rest, y_test = train_test_split(
        data.features, data.labels, test_size=test_frac, stratify=data.labels, random_state=seed)
    x_train, x_val, y_train, y_val = train_test_split(
        x_rest, y_rest, test_size=val_frac / (1 - test_frac), stratify=y_rest, random_state=seed)
    scaler = StandardScaler().fit(x_train)
    return Split(x_train, y_train, x_val, y_val, x_test, y_test, scaler)


def as_tensors(x: np.ndarray, y: np.ndarray, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """float32 features (N, 2) and float32 targets (N,): BCEWithLogitsLoss wants float targets."""
    return (torch.tensor(x, dtype=torch.float32, device=device),
            torch.tensor(y, dtype=torch.float32, device=device))


# ---------------------------------------------------------------------------------------------
# 2. The model: an MLP whose parameters come from the learner's generator.
# ---------------------------------------------------------------------------------------------

ACTIVATION_MODULES: dict[str, Callable[[], nn.Module]] = {
    "ReLU": nn.ReLU, "LeakyReLU": lambda: nn.LeakyReLU(0.01), "GELU": nn.GELU,
    "Tanh": nn.Tanh, "Sigmoid": nn.Sigmoid,
}


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


class MLP(nn.Module):
    """2 inputs -> hidden layers with an activation (and dropout) -> 1 raw logit."""

    def __init__(self, hidden: tuple[int, ...] = (64, 32), act: str = "ReLU", dropout: float = 0.0,
                 device: torch.device | str | None = None) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = 2
        for out in hidden:
            layers += [nn.Linear(width, out, device=device), ACTIVATION_MODULES[act]()]
            if dropout > 0:
                layers.append(SeededDropout(dropout))
            width = out
        layers.append(nn.Linear(width, 1, device=device))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)   # (N, 1) -> (N,) logits, the shape of the targets

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


def build_model(settings: MoonsSettings, device: torch.device, generator: torch.Generator) -> MLP:
    """An MLP on `device` with weights from `generator`.

    Built on `meta` first, so nn.Linear's constructor draws nothing from the global RNG; then
    given uninitialised CPU memory, filled from the generator, and moved to `device`.
    """
    model = MLP(settings.hidden, settings.act, settings.dropout, device="meta")
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


# ---------------------------------------------------------------------------------------------
# 3. Optimizers, loaders and metrics.
# ---------------------------------------------------------------------------------------------

def build_optimizer(name: str, params, lr: float, wd: float) -> torch.optim.Optimizer:
    if name == "AdamW":
        return torch.optim.AdamW(params, lr=lr, weight_decay=wd)
    if name == "Adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=wd)
    if name == "SGD":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=wd)
    if name == "RMSprop":
        return torch.optim.RMSprop(params, lr=lr, weight_decay=wd)
    raise ValueError(f"unknown optimizer {name!r}")


def per_sample_loader(dataset: TensorDataset, batch_size: int, generator: torch.Generator) -> DataLoader:
    """The textbook loader: one sample at a time through default collate."""
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, generator=generator)


def batch_sampler_loader(dataset: TensorDataset, batch_size: int, generator: torch.Generator) -> DataLoader:
    """The same batches, one indexing call each: a BatchSampler is the sampler and automatic
    batching is off (`batch_size=None`), so TensorDataset receives a whole list of indices."""
    batches = BatchSampler(RandomSampler(dataset, generator=generator), batch_size, drop_last=False)
    return DataLoader(dataset, sampler=batches, batch_size=None, generator=generator)


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
    accuracy: float


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor,
             loss_fn: nn.Module | None = None) -> Metrics:
    """Loss and accuracy in eval mode, without recording a graph."""
    loss_fn = loss_fn or nn.BCEWithLogitsLoss()
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = loss_fn(logits, y).item()
        accuracy = ((logits > 0).float() == y).float().mean().item()
    model.train(was_training)
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


def grid_points(extent: tuple[float, float, float, float], resolution: int) -> np.ndarray:
    """The (resolution^2, 2) raw coordinates of a grid over `extent`, row by row (y, then x)."""
    x0, x1, y0, y1 = extent
    gx, gy = np.meshgrid(np.linspace(x0, x1, resolution), np.linspace(y0, y1, resolution))
    return np.column_stack([gx.ravel(), gy.ravel()])


def plot_extent(data: Dataset, margin: float = 0.25) -> tuple[float, float, float, float]:
    """Fixed axes for the whole run: the data's bounding box plus a margin, rounded."""
    lo = data.features.min(axis=0) - margin
    hi = data.features.max(axis=0) + margin
    return (math.floor(lo[0] * 4) / 4, math.ceil(hi[0] * 4) / 4,
            math.floor(lo[1] * 4) / 4, math.ceil(hi[1] * 4) / 4)


# ---------------------------------------------------------------------------------------------
# 4. The best possible classifier for the generative process.
# ---------------------------------------------------------------------------------------------

BAYES_CHUNK = 256      # points per (chunk, T) block of the numerical integral: 8 MB at T = 4001


def bayes_log_densities(name: str, points: np.ndarray, noise: float, curve_points: int = 4001
                        ) -> torch.Tensor:
    """log p(x | class) for class 0 and 1, shape (N, 2), up to a shared constant.

    Moons, circles and spiral: each class is a point drawn uniformly along its curve plus
    isotropic Gaussian noise, so p(x | c) = integral over t of N(x; curve_c(t), noise^2 I) dt,
    computed with the trapezoid rule as a log-sum-exp over `curve_points` values of t.
    XOR: uniform on two quadrants convolved with the noise, in closed form. Gaussians: exact.
    """
    sigma = max(float(noise), 1e-4)
    x = torch.tensor(points, dtype=torch.float64)    # a copy: shared arrays are read-only
    if name in CURVES:
        t = torch.linspace(0.0, 1.0, curve_points, dtype=torch.float64)
        weights = torch.full((curve_points,), 1.0, dtype=torch.float64)
        weights[0] = weights[-1] = 0.5                     # trapezoid rule
        out = []
        for label in (0, 1):
            curve = CURVES[name](t, label)                  # (T, 2)
            # In chunks of points: an (N, T) block of float64 for 2,500 grid points is 80 MB,
            # and thirty learners open the same link at once.
            out.append(torch.cat([
                torch.logsumexp(-torch.cdist(chunk, curve).square() / (2 * sigma**2) + weights.log(),
                                dim=1)
                for chunk in x.split(BAYES_CHUNK)]) if len(x) else x.new_zeros(0))
        return torch.stack(out, dim=1)
    if name == "xor":
        normal = torch.distributions.Normal(0.0, sigma)

        def mass(u: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
            return normal.cdf(hi - u) - normal.cdf(lo - u)   # uniform [lo, hi] convolved with noise

        pos_x, neg_x = mass(x[:, 0], 0, 1), mass(x[:, 0], -1, 0)
        pos_y, neg_y = mass(x[:, 1], 0, 1), mass(x[:, 1], -1, 0)
        same_sign = pos_x * pos_y + neg_x * neg_y
        opposite = pos_x * neg_y + neg_x * pos_y
        return torch.stack([opposite, same_sign], dim=1).clamp_min(1e-300).log()
    if name == "gaussians":
        centres = torch.tensor(GAUSSIAN_CENTRES, dtype=torch.float64)
        return -torch.cdist(x, centres).square() / (2 * sigma**2)
    raise ValueError(f"unknown dataset {name!r}")


def bayes_predict(name: str, points: np.ndarray, noise: float) -> np.ndarray:
    """The Bayes-optimal label (classes equally likely): the class with the larger density."""
    log_density = bayes_log_densities(name, points, noise)
    return (log_density[:, 1] > log_density[:, 0]).long().numpy()


def bayes_accuracy(name: str, x: np.ndarray, y: np.ndarray, noise: float) -> float:
    """Accuracy of the Bayes-optimal classifier on these (raw, unscaled) points."""
    return float((bayes_predict(name, x, noise) == y).mean())


@dataclass(frozen=True)
class PreparedData:
    """Everything a run derives from the data settings alone, shared read-only by all runs."""

    data: Dataset
    split: Split
    bayes_test_accuracy: float
    bayes_val_accuracy: float


def _read_only(*arrays: np.ndarray) -> None:
    for array in arrays:
        array.flags.writeable = False


@functools.lru_cache(maxsize=32)
def prepared_data(name: str, n: int, noise: float, seed: int,
                  fractions: tuple[float, float, float]) -> PreparedData:
    """The dataset, its split and scaler, and the Bayes accuracies, computed once per process for
    the same data settings: a class opening one link shares one copy instead of thirty, and a
    change of learning rate or width does not recompute the best possible accuracy. The arrays
    are made read-only, so no run can change what the others see."""
    data = make_dataset(name, n, noise, seed)
    split = split_and_scale(data, fractions, seed)
    prepared = PreparedData(data, split, bayes_accuracy(name, split.x_test, split.y_test, noise),
                            bayes_accuracy(name, split.x_val, split.y_val, noise))
    _read_only(data.features, data.labels, split.x_train, split.y_train, split.x_val, split.y_val,
               split.x_test, split.y_test)
    return prepared


@functools.lru_cache(maxsize=16)
def shared_bayes_grid(name: str, n: int, noise: float, seed: int, fractions: tuple[float, float, float],
                      resolution: int) -> np.ndarray:
    """log p(x | 1) - log p(x | 0) over the plot grid of these data settings (read-only)."""
    data = prepared_data(name, n, noise, seed, fractions).data
    points = grid_points(plot_extent(data), resolution)
    log_density = bayes_log_densities(name, points, noise)
    difference = (log_density[:, 1] - log_density[:, 0]).clamp(-50, 50)
    grid = difference.numpy().reshape(resolution, resolution)
    _read_only(grid)
    return grid


# ---------------------------------------------------------------------------------------------
# 5. A training session: the loop of the lesson, advanced in bounded slices.
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
    accuracy: float
    f1: float
    bayes_accuracy: float
    n: int

    @property
    def gap_points(self) -> float:
        """Percentage points between the model and the best possible classifier."""
        return round(100 * (self.bayes_accuracy - self.accuracy), 6)


@dataclass(frozen=True)
class Divergence:
    """Where a run's loss stopped being a number: training stops there."""

    step: int            # 1-based optimizer step whose loss was NaN or infinite
    epoch: int           # 1-based epoch it happened in
    loss: float

    def explanation(self, settings: MoonsSettings) -> str:
        what = "NaN (not a number)" if math.isnan(self.loss) else "infinite"
        kick = (" SGD's momentum of 0.9 adds up to about ten past steps, so each step moves the "
                "weights about ten times further still." if settings.opt == "SGD" else "")
        return (f"The training loss became {what} at optimizer step {self.step:,}, in epoch "
                f"{self.epoch}. Each step moves every weight by about the learning rate times its "
                f"gradient; at lr = {settings.lr:g} the steps overshoot the minimum, the loss "
                f"grows instead of shrinking, and the numbers overflow float32.{kick} Once one "
                "weight is NaN every prediction is NaN, so the run was stopped there: more steps "
                "cannot bring it back.")


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
                                 settings.fractions)
        self.data, self.split = prepared.data, prepared.split
        self.bayes_test_accuracy = prepared.bayes_test_accuracy
        self.bayes_val_accuracy = prepared.bayes_val_accuracy
        s = self.split
        self.x_train, self.y_train = as_tensors(s.scaled(s.x_train), s.y_train, self.device)
        self.x_val, self.y_val = as_tensors(s.scaled(s.x_val), s.y_val, self.device)
        self.x_test, self.y_test = as_tensors(s.scaled(s.x_test), s.y_test, self.device)

        self.init_generator = torch.Generator().manual_seed(settings.seed)
        self.shuffle_generator = torch.Generator().manual_seed(settings.seed + 1)
        self.dropout_generator = torch.Generator(device=self.device).manual_seed(settings.seed + 2)
        self.model = build_model(settings, self.device, self.init_generator)
        self.model.set_dropout_generator(self.dropout_generator)
        self.optimizer = build_optimizer(settings.opt, self.model.parameters(), settings.lr, settings.wd)
        self.loss_fn = nn.BCEWithLogitsLoss()
        # The training tensors stay on the CPU for the loader (its indices are CPU tensors);
        # each batch moves to the device in the loop, as the lesson writes it.
        self.train_set = TensorDataset(self.x_train.cpu(), self.y_train.cpu())
        self.loader = batched_loader(self.train_set, settings.batch, self.shuffle_generator)

        self.epoch = 0
        self.steps = 0
        self.diverged: Divergence | None = None
        self.best_val_loss = math.inf
        self.history = History()
        self._batches: Iterator | None = None
        self._epoch_loss_sum = 0.0
        self._epoch_seen = 0

    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(len(self.train_set) / self.settings.batch)

    @property
    def done(self) -> bool:
        return (self.epoch >= self.settings.epochs or self.steps >= MAX_STEPS_PER_RUN
                or self.diverged is not None)

    @property
    def progress(self) -> float:
        return min(1.0, self.epoch / self.settings.epochs)

    def train_step(self, xb: torch.Tensor, yb: torch.Tensor) -> float:
        """One optimizer step: the five lines every PyTorch training loop is made of."""
        self.optimizer.zero_grad()            # forget the previous batch's gradients
        logits = self.model(xb)               # forward: raw logits, no sigmoid
        loss = self.loss_fn(logits, yb)       # BCEWithLogitsLoss applies the sigmoid stably
        loss.backward()                       # fill .grad of every parameter
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
                self._epoch_loss_sum, self._epoch_seen = 0.0, 0
            batch = next(self._batches, None)
            if batch is None:
                self._finish_epoch()
                epochs += 1
            else:
                xb, yb = batch
                if self.device.type != "cpu":
                    xb, yb = xb.to(self.device, non_blocking=True), yb.to(self.device, non_blocking=True)
                loss = self.train_step(xb, yb)
                self.steps += 1
                steps += 1
                if not math.isfinite(loss):
                    self.diverged = Divergence(self.steps, self.epoch + 1, loss)
                    break
                self._epoch_loss_sum += loss * len(yb)
                self._epoch_seen += len(yb)
            if time.perf_counter() - started >= max_seconds:
                break
        return SliceReport(steps, epochs, time.perf_counter() - started, self.done)

    def step_epoch(self) -> SliceReport:
        """Finish the current epoch (or train one whole epoch), however long it takes."""
        return self.run_for(MAX_STEPS_PER_RUN, math.inf, stop_at_epoch_end=True)

    def run_to_end(self) -> None:
        while not self.done:
            self.run_for(MAX_STEPS_PER_RUN, math.inf)

    def test_report(self) -> TestReport:
        predicted = predict_labels(self.model, self.x_test)
        # A count over n in double precision, so it compares exactly with the Bayes accuracy.
        accuracy = int((predicted == self.y_test.long()).sum()) / len(self.y_test)
        return TestReport(accuracy, f1_score(predicted, self.y_test), self.bayes_test_accuracy,
                          len(self.y_test))

    def grid(self, resolution: int = 50) -> np.ndarray:
        return probability_grid(self.model, self.split, plot_extent(self.data), resolution, self.device)

    def bayes_grid(self, resolution: int = 50) -> np.ndarray:
        """log p(x | 1) - log p(x | 0) over the plot grid: the best possible boundary is where it
        crosses 0. Shared by every run on the same data (the generative process never changes)."""
        s = self.settings
        return shared_bayes_grid(s.dataset, s.n, s.noise, s.seed, s.fractions, resolution)

    def replace_weights(self, state_dict: dict[str, torch.Tensor], optimizer_state: dict | None = None,
                        epoch: int | None = None, best_val_loss: float | None = None) -> None:
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
        if epoch is not None:
            self.epoch = min(epoch, self.settings.epochs)
            self.history = History()
        if best_val_loss is not None:
            self.best_val_loss = best_val_loss

    def fresh_model(self) -> MLP:
        """An untrained model of the same architecture on the same device (for reloading)."""
        return build_model(self.settings, self.device, torch.Generator().manual_seed(0))

    def describe(self) -> str:
        s = self.settings
        return (f"MLP {s.architecture} ({s.act}) trained {self.epoch} epochs on {s.dataset} "
                f"(n={s.n}, noise={s.noise:g}, seed={s.seed}) with {s.opt}(lr={s.lr:g}, "
                f"weight_decay={s.wd:g}), batch {s.batch}")
