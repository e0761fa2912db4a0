"""Weights and gradients over time: per `nn.Linear` layer and per epoch, a histogram of the
weights and one of log10 |gradient|, recorded while a run trains, in bounded memory.

A run records at the end of each epoch (`TrainingSession._finish_epoch`), from the gradients
of the epoch's LAST batch: `optimizer.zero_grad()` runs at the start of a step, so after the
last step of an epoch each weight's `.grad` still holds that batch's gradient. Averaging over
every batch would need a hook on each step and cost more; the last batch is one honest sample
of what the optimizer saw, and it is what the page says it shows.

With L1 or L2 on, `.grad` is the gradient of the data loss PLUS the penalty's (rate x sign(w)
for L1, rate x w for L2), and the penalty's part does not shrink on its way back through the
layers: on the vanishing-gradient lesson's link with L1 at rate 0.01 it is about 1e-2 for every
weight while the data loss's gradient at the first layer is about 1e-10 of the last layer's. So
the run also hands over the data loss's gradient alone (`TrainingSession.train_step` runs the
two backward passes apart on the epoch's last batch), its mean is kept beside `.grad`'s, and
the vanishing verdict is judged on it.

Bins are fixed, so epochs can be compared and the memory is known in advance: weights in
`WEIGHT_BINS` bins over [WEIGHT_LOW, WEIGHT_HIGH] (a weight beyond the range is counted in the
edge bin), |gradient| in `GRADIENT_BINS` bins of log10 over [GRADIENT_LOW, GRADIENT_HIGH] (an
exact zero, or anything below 1e-10, in the lowest bin). At most `MAX_KEPT` epochs are kept:
when the record is full, every other one is dropped and only every `stride`-th epoch is
recorded from then on, so a 500-epoch run keeps 125 columns, evenly spaced: about as many as
the picture has room for, and at most about 0.4 MB for the largest network the page builds.

This module never imports streamlit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from workbench.moons_trainer.network import linear_layers

WEIGHT_LOW, WEIGHT_HIGH, WEIGHT_BINS = -3.0, 3.0, 48
GRADIENT_LOW, GRADIENT_HIGH, GRADIENT_BINS = -10.0, 1.0, 44     # a quarter of a decade each
MAX_KEPT = 128

# The first layer's mean |gradient| below this fraction of the last layer's is called vanishing:
# a plain SGD step (lr x gradient) then moves the first layer's weights 100x less than the
# last's. Measured on the lesson's links (8,8,8,8, SGD, lr 0.1) over 50 epochs: Sigmoid 1/150 to
# 1/1,400 (stuck at 50% accuracy), ReLU 1/2 to 2x (93%).
VANISHING_RATIO = 0.01


def weight_histogram(weight: torch.Tensor) -> torch.Tensor:
    """Counts of the weights over the fixed bins; out-of-range weights land in the edge bins."""
    values = weight.detach().float().clamp(WEIGHT_LOW, WEIGHT_HIGH)
    return torch.histc(values, WEIGHT_BINS, WEIGHT_LOW, WEIGHT_HIGH)


def gradient_histogram(grad: torch.Tensor) -> torch.Tensor:
    """Counts of log10 |gradient| over the fixed bins; zeros and tiny values in the lowest."""
    exponents = grad.detach().float().abs().clamp_min(10.0 ** GRADIENT_LOW).log10()
    return torch.histc(exponents.clamp(GRADIENT_LOW, GRADIENT_HIGH), GRADIENT_BINS,
                       GRADIENT_LOW, GRADIENT_HIGH)


def bin_centres(low: float, high: float, bins: int) -> np.ndarray:
    width = (high - low) / bins
    return low + width * (np.arange(bins) + 0.5)


@dataclass
class LayerHistory:
    """Per Linear layer, the epochs' histograms (rows: kept epochs) and mean |gradient|."""

    epochs: list[int] = field(default_factory=list)
    weights: list[list[np.ndarray]] = field(default_factory=list)     # [layer][kept epoch]
    gradients: list[list[np.ndarray]] = field(default_factory=list)
    mean_gradient: list[list[float]] = field(default_factory=list)    # [layer][kept epoch]
    # The data loss's gradient alone (equal to mean_gradient when no penalty was on).
    mean_data_gradient: list[list[float]] = field(default_factory=list)
    penalised: list[bool] = field(default_factory=list)    # [kept epoch]: .grad held a penalty's
    layer_shapes: list[tuple[int, int]] = field(default_factory=list)
    stride: int = 1

    def record(self, epoch: int, model: nn.Module,
               data_gradients: list[torch.Tensor] | None = None) -> bool:
        """Record `epoch` if the stride keeps it (True when it did). Call it right after the
        epoch's last optimizer step, before the next `zero_grad`. `data_gradients`: each
        Linear weight's gradient of the data loss alone, when `.grad` also holds a penalty's."""
        if epoch % self.stride:
            return False
        layers = linear_layers(model)
        if any(layer.weight.grad is None for layer in layers):
            return False      # no step has filled the gradients yet (an upload, say)
        if not self.layer_shapes:
            self.layer_shapes = [tuple(layer.weight.shape) for layer in layers]
            self.weights = [[] for _ in layers]
            self.gradients = [[] for _ in layers]
            self.mean_gradient = [[] for _ in layers]
            self.mean_data_gradient = [[] for _ in layers]
        with torch.no_grad():
            for i, layer in enumerate(layers):
                grad = layer.weight.grad
                # int32 on the CPU: counts are whole, and a count fits for any layer here.
                self.weights[i].append(weight_histogram(layer.weight).to(torch.int32).cpu().numpy())
                self.gradients[i].append(gradient_histogram(grad).to(torch.int32).cpu().numpy())
                self.mean_gradient[i].append(float(grad.abs().mean()))
                data = grad if data_gradients is None else data_gradients[i]
                self.mean_data_gradient[i].append(float(data.abs().mean()))
        self.epochs.append(epoch)
        self.penalised.append(data_gradients is not None)
        if len(self.epochs) > MAX_KEPT:
            self._thin()
        return True

    def _thin(self) -> None:
        """Keep the epochs that are multiples of twice the stride, and record only those."""
        self.stride *= 2
        keep = [k for k, epoch in enumerate(self.epochs) if epoch % self.stride == 0]
        self.epochs = [self.epochs[k] for k in keep]
        for rows in (self.weights, self.gradients, self.mean_gradient, self.mean_data_gradient):
            for i, layer_rows in enumerate(rows):
                rows[i] = [layer_rows[k] for k in keep]
        self.penalised = [self.penalised[k] for k in keep]

    @property
    def layers(self) -> int:
        return len(self.layer_shapes)

    def weight_counts(self, layer: int) -> np.ndarray:
        """(bins, kept epochs): value bins on rows, epochs on columns, as a heatmap draws them."""
        return np.stack(self.weights[layer], axis=1)

    def gradient_counts(self, layer: int) -> np.ndarray:
        return np.stack(self.gradients[layer], axis=1)


@dataclass(frozen=True)
class GradientVerdict:
    first: float          # mean |data loss's gradient| of the first Linear's weights, last kept epoch
    last: float           # ... of the last Linear's
    epoch: int
    vanishing: bool
    penalised: bool = False     # .grad also held a penalty's gradient, left out of first and last

    @property
    def ratio(self) -> float:
        return self.first / self.last if self.last > 0 else math.inf


def gradient_verdict(history: LayerHistory) -> GradientVerdict | None:
    """First against last layer at the latest kept epoch, on the data loss's gradient alone (a
    penalty's gradient does not vanish with depth, so it would hide a vanishing one); None
    before two layers and one epoch."""
    if history.layers < 2 or not history.epochs:
        return None
    first, last = history.mean_data_gradient[0][-1], history.mean_data_gradient[-1][-1]
    vanishing = last > 0 and first < VANISHING_RATIO * last
    return GradientVerdict(first, last, history.epochs[-1], vanishing, history.penalised[-1])


def verdict_sentence(verdict: GradientVerdict, optimizer: str) -> str:
    """One sentence a learner reads at a glance, from the numbers."""
    alone = (" of the data loss alone (`.grad` also holds the penalty's gradient, left out: "
             "each weight's own, it never passes back through the layers)"
             if verdict.penalised else "")
    where = (f"At epoch {verdict.epoch} the first layer's mean gradient magnitude{alone} is "
             f"{verdict.first:.1e}")
    if verdict.last == 0:
        return f"{where} and the last layer's is 0: no gradient reaches the output layer."
    if verdict.vanishing:
        times = 1 / verdict.ratio
        if optimizer == "SGD":
            effect = "SGD moves each weight by lr x its gradient, so its weights barely move"
        else:
            effect = (f"{optimizer} divides each gradient by its own running size, so its steps "
                      "stay near lr anyway; with SGD its weights would barely move")
        # A factor past a million reads better in powers of ten: 1.1e11x, not 106,960,631,986x.
        factor = f"{times:,.0f}" if times < 1e6 else f"{times:.1e}".replace("e+", "e")
        return (f"{where}, {factor}x smaller than the last layer's ({verdict.last:.1e}): "
                f"the gradient vanishes on its way back through the layers. {effect}.")
    if verdict.ratio >= 1:
        compared = f"{verdict.ratio:,.1f}x the last layer's ({verdict.last:.1e})"
    else:
        compared = f"{1 / verdict.ratio:,.1f}x smaller than the last layer's ({verdict.last:.1e})"
    return (f"{where}, {compared}: the gradient reaches the first layer without vanishing, "
            "and every layer learns.")
