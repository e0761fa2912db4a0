"""Inside the network: what every hidden unit computes over the plane, read with forward hooks.

A forward hook is PyTorch's way to look at a module's output without changing the model: it is
called with (module, input, output) each time the module runs. Hooking each hidden layer's
activation and running the model once on a grid over the plane gives every hidden unit's
activation at every grid point: one small map per unit, the pictures TensorFlow Playground
draws in its neurons. The weights and biases on the edges are the `nn.Linear` layers' own.

For the live view the maps and weights travel as uint8 (`quantised_maps`, `quantised_weights`):
a unit's map in its own range (so a unit whose values are all small still shows its shape),
each layer's weights on a scale symmetric around zero (so a weight's sign survives exactly).
This module never imports streamlit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from workbench.common.modes import evaluating


# The network view's unit maps: 12 x 12 points each (TensorFlow Playground draws its neurons at
# 10 x 10). The lesson preset's 96 units are 13.8 KB a picture, which with the boundary's frame
# (about 6 KB) and the weights (2.2 KB) keeps a frame under 25 KB.
MAP_RESOLUTION = 12


def activation_modules(model: nn.Module) -> list[nn.Module]:
    """Each hidden layer's activation module, in order: the module right after every `nn.Linear`
    but the last (in the moons trainer's MLP: Linear, activation, [dropout], ..., Linear)."""
    layers = list(model.net)
    return [layers[i + 1] for i, layer in enumerate(layers[:-1]) if isinstance(layer, nn.Linear)]


def linear_layers(model: nn.Module) -> list[nn.Linear]:
    return [layer for layer in model.net if isinstance(layer, nn.Linear)]


def hidden_activations(model: nn.Module, inputs: torch.Tensor) -> list[torch.Tensor]:
    """Every hidden layer's output (after its activation) for `inputs`, shape (points, units)
    each, from one forward pass in eval mode (dropout off) with a hook on each activation."""
    seen: dict[int, torch.Tensor] = {}
    hooks = []
    for index, module in enumerate(activation_modules(model)):
        def keep(_module: nn.Module, _inputs: tuple, output: torch.Tensor, index: int = index) -> None:
            seen[index] = output.detach()
        hooks.append(module.register_forward_hook(keep))
    try:
        with evaluating(model):
            model(inputs)
    finally:
        for hook in hooks:
            hook.remove()
    return [seen[i] for i in range(len(hooks))]


@dataclass(frozen=True)
class NetworkPicture:
    """The network at one moment: every hidden unit's activation over the grid, and the weights
    and biases of every `nn.Linear` (float32 arrays, copied off the model)."""

    widths: tuple[int, ...]         # inputs, each hidden layer, the output: (2, 64, 32, 1)
    maps: tuple[np.ndarray, ...]    # per hidden layer: (units, resolution * resolution), rows = y
    weights: tuple[np.ndarray, ...]     # per Linear: (out, in)
    biases: tuple[np.ndarray, ...]      # per Linear: (out,)


def network_picture(model: nn.Module, grid_inputs: torch.Tensor) -> NetworkPicture:
    """The picture of `model` over `grid_inputs` (the grid's points, as the model sees them:
    scaled, on the model's device)."""
    activations = hidden_activations(model, grid_inputs)
    linears = linear_layers(model)
    widths = (linears[0].in_features, *(layer.out_features for layer in linears))
    return NetworkPicture(
        widths=widths,
        maps=tuple(a.T.contiguous().cpu().numpy().astype(np.float32) for a in activations),
        weights=tuple(layer.weight.detach().cpu().numpy().astype(np.float32).copy() for layer in linears),
        biases=tuple(layer.bias.detach().cpu().numpy().astype(np.float32).copy() for layer in linears),
    )


def quantised_maps(maps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maps (units, points) as uint8 in each unit's own range: (codes, low, high), where a code q
    stands for low + q / 255 * (high - low). A unit constant over the plane (a dead ReLU) has
    low == high and every code 0."""
    low = maps.min(axis=1).astype(np.float32)
    high = maps.max(axis=1).astype(np.float32)
    span = np.where(high > low, high - low, 1.0)[:, None]
    codes = np.rint((maps - low[:, None]) / span * 255)
    return np.clip(codes, 0, 255).astype(np.uint8), low, high


def dequantised_maps(codes: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The inverse of `quantised_maps`, as the browser computes it: within (high - low) / 510."""
    return low[:, None] + codes.astype(np.float32) / 255 * (high - low)[:, None]


WEIGHT_ZERO = 127       # the code of a zero weight: codes 0..254, 127 steps either side


def quantised_weights(weights: np.ndarray) -> tuple[np.ndarray, float]:
    """A layer's weights as uint8 codes around WEIGHT_ZERO, and the scale: a code q stands for
    (q - 127) / 127 * scale, where scale is the largest |weight|. Zero stays zero and the sign is
    exact; each weight is within scale / 254 of its true value."""
    scale = float(np.abs(weights).max()) if weights.size else 0.0
    if scale == 0.0:
        return np.full(weights.shape, WEIGHT_ZERO, dtype=np.uint8).ravel(), 0.0
    codes = np.rint(weights / scale * WEIGHT_ZERO) + WEIGHT_ZERO
    return np.clip(codes, 0, 2 * WEIGHT_ZERO).astype(np.uint8).ravel(), scale
