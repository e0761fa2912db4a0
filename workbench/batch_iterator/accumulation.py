"""Gradient accumulation: several small batches, one `backward()` each, then one step.

Gradients add up in `.grad` until they are zeroed. With a mean loss, scaling each micro-batch's
loss by its share of the samples makes the accumulated gradient the gradient of the mean over
all of them: the same as one big batch, up to floating-point rounding. Forgetting the scale
multiplies the gradient by the number of micro-batches.
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from workbench.batch_iterator.datasets import make_dataset
from workbench.batch_iterator.runs import LoaderRun
from workbench.batch_iterator.settings import BatchSettings


@dataclass(frozen=True)
class ParameterGradients:
    name: str
    shape: tuple[int, ...]
    full_norm: float            # ||grad|| from one batch of all samples
    accumulated_norm: float     # ||grad|| summed over the scaled micro-batches
    max_abs_difference: float   # largest elementwise |full - accumulated|
    unscaled_norm: float        # ||grad|| when each micro-batch loss is not scaled


@dataclass(frozen=True)
class AccumulationResult:
    micro_batch_sizes: tuple[int, ...]
    loss_full: float
    loss_accumulated: float
    parameters: tuple[ParameterGradients, ...]
    allclose: bool              # torch.allclose on every parameter's gradient
    model_name: str
    random_in_train: bool = False   # two train-mode forward passes differ (dropout)
    eval_max_abs_difference: float | None = None    # the same comparison in eval mode, if so

    @property
    def total(self) -> int:
        return sum(self.micro_batch_sizes)

    @property
    def max_abs_difference(self) -> float:
        return max(p.max_abs_difference for p in self.parameters)

    def why_they_differ(self) -> str:
        """Where the largest difference comes from, judged from what was measured."""
        largest = f"largest difference {self.max_abs_difference:.1e}"
        if self.allclose:
            return f"{largest}: float32 rounding, the additions happen in a different order"
        if self.random_in_train and self.eval_max_abs_difference is not None:
            return (f"{largest}: the model draws new dropout masks at every forward pass, so the "
                    "batch and the micro-batches zero different activations and are different "
                    "(each fair) gradients; with dropout off (`model.eval()`) the largest "
                    f"difference is {self.eval_max_abs_difference:.1e}")
        return f"{largest}, more than float32 rounding accounts for"


def small_mlp(seed: int, inputs: int = 2, hidden: int = 8, classes: int = 2) -> nn.Module:
    """A tiny MLP whose weights come from a seeded generator (never the global RNG)."""
    model = nn.Sequential(nn.Linear(inputs, hidden), nn.Tanh(), nn.Linear(hidden, classes))
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.5)
    return model


def _loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    logits = model(x)
    if logits.dim() == 2 and logits.shape[1] > 1:
        return F.cross_entropy(logits, y)
    return F.binary_cross_entropy_with_logits(logits.reshape(-1), y.float())


def _gradients(model: nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.grad.detach().clone() for name, p in model.named_parameters()
            if p.grad is not None}


def _accumulate(model: nn.Module, dataset: TensorDataset, micro_batch: int,
                scaled: bool) -> tuple[dict[str, torch.Tensor], float, tuple[int, ...]]:
    model.zero_grad()
    total = len(dataset)
    loss_sum, sizes = 0.0, []
    for x, y in DataLoader(dataset, batch_size=micro_batch):
        loss = _loss(model, x, y)
        share = len(y) / total if scaled else 1.0
        (loss * share).backward()           # adds into .grad; nothing is overwritten
        loss_sum += loss.item() * len(y) / total
        sizes.append(len(y))
    return _gradients(model), loss_sum, tuple(sizes)


def compare_accumulation(features: torch.Tensor, labels: torch.Tensor, micro_batches: int = 4,
                         model: nn.Module | None = None, seed: int = 0,
                         model_name: str | None = None) -> AccumulationResult:
    """One batch of all samples versus `micro_batches` scaled micro-batches, gradient by gradient.

    `model` (e.g. the learner's trained moons model) is copied, never changed.
    """
    name = model_name or (type(model).__name__ if model is not None else "a seeded 2-8-2 MLP")
    net = copy.deepcopy(model) if model is not None else small_mlp(seed, inputs=features.shape[1])
    net.train()
    device = next(net.parameters()).device
    features, labels = features.float().to(device), labels.long().to(device)
    dataset = TensorDataset(features, labels)
    micro_batch = -(-len(dataset) // micro_batches)

    net.zero_grad()
    loss_full = _loss(net, features, labels)
    loss_full.backward()
    full = _gradients(net)
    accumulated, loss_accumulated, sizes = _accumulate(net, dataset, micro_batch, scaled=True)
    unscaled, _, _ = _accumulate(net, dataset, micro_batch, scaled=False)
    net.zero_grad()

    rows = tuple(
        ParameterGradients(key, tuple(full[key].shape), float(full[key].norm()),
                           float(accumulated[key].norm()),
                           float((full[key] - accumulated[key]).abs().max()),
                           float(unscaled[key].norm()))
        for key in full)
    allclose = all(torch.allclose(full[k], accumulated[k], rtol=1e-5, atol=1e-7) for k in full)
    random_in_train, eval_difference = _random_in_train(net, features), None
    if random_in_train:
        net.eval()
        eval_difference = _largest_difference(net, features, labels, dataset, micro_batch)
        net.zero_grad()
    return AccumulationResult(sizes, loss_full.item(), loss_accumulated, rows, allclose, name,
                              random_in_train, eval_difference)


def _random_in_train(net: nn.Module, features: torch.Tensor) -> bool:
    """Whether two forward passes of the same input differ (dropout, or any layer that draws)."""
    with torch.no_grad():
        return not torch.equal(net(features), net(features))


def _largest_difference(net: nn.Module, features: torch.Tensor, labels: torch.Tensor,
                        dataset: TensorDataset, micro_batch: int) -> float:
    net.zero_grad()
    _loss(net, features, labels).backward()
    full = _gradients(net)
    accumulated, _, _ = _accumulate(net, dataset, micro_batch, scaled=True)
    return max(float((full[k] - accumulated[k]).abs().max()) for k in full)


@dataclass(frozen=True)
class AccumulationData:
    """The 32 samples the comparison runs on, and where they come from, in words."""

    features: torch.Tensor
    labels: torch.Tensor
    source: str


def accumulation_data(run: LoaderRun | None, settings: BatchSettings,
                      moons: tuple[torch.Tensor, torch.Tensor] | None) -> AccumulationData:
    """The first 32 samples the learner's loader yields in epoch 0 (then the rest of the dataset
    in order); the points dataset stands in for sequences. `moons` is the moons trainer's data,
    used when the dataset is "moons" and the trainer has published it."""
    use_moons = settings.dataset == "moons" and moons is not None
    base = settings if settings.dataset != "sequences" else dataclasses.replace(
        settings, dataset="points")
    dataset = make_dataset(dataclasses.replace(base, n=max(base.n, 32)),
                           moons if use_moons else None)
    order: list[int] = []
    if run is not None and settings.dataset != "sequences":
        for record in run.epoch_records(0):
            order += [i for i in record.indices if i not in order]
    order += [i for i in range(len(dataset)) if i not in order]
    chosen = order[:32]
    source = ("the first 32 samples your loader yields in epoch 0" if run is not None
              and settings.dataset != "sequences" and len(run.pool) >= 32
              else "32 samples of the points dataset")
    return AccumulationData(dataset.features[chosen], dataset.labels[chosen], source)
