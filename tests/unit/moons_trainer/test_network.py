"""The network view's numbers (workbench/moons_trainer/network.py): every hidden unit's map read with
forward hooks, checked against a forward pass written out by hand, and their uint8 form."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from workbench.moons_trainer.data import grid_points, plot_extent
from workbench.moons_trainer.network import (
    WEIGHT_ZERO,
    activation_modules,
    dequantised_maps,
    hidden_activations,
    linear_layers,
    network_picture,
    quantised_maps,
    quantised_weights,
)
from workbench.moons_trainer.settings import PRESET, TABLE
from workbench.moons_trainer.training import TrainingSession

THREE_POINTS = ((0, 0), (5, 7), (11, 3))        # (row, column) of the 12 x 12 grid


def by_hand(session: TrainingSession, points: torch.Tensor) -> list[torch.Tensor]:
    """Each hidden layer's activation, Linear by Linear, with the model's own activation module."""
    out, layers = points, []
    for linear, act in zip(linear_layers(session.model), activation_modules(session.model), strict=False):
        out = act(out @ linear.weight.T + linear.bias)
        layers.append(out)
    return layers


@pytest.mark.parametrize("act", ["ReLU", "Tanh"])
def test_a_units_map_is_its_activation_at_each_point_of_the_grid(act):
    session = TrainingSession(dataclasses.replace(PRESET, n=300, epochs=2, act=act))
    session.step_epoch()                          # trained weights, not the initial ones
    grid = session.network_grid(12)
    picture = session.network_snapshot(12).picture
    assert picture.widths == (2, 64, 32, 1)
    assert [m.shape for m in picture.maps] == [(64, 144), (32, 144)]
    for row, column in THREE_POINTS:
        point = grid[row * 12 + column]
        with torch.no_grad():
            expected = by_hand(session, point[None])
        for layer, unit in ((0, 2), (1, 30)):
            assert picture.maps[layer][unit, row * 12 + column] == pytest.approx(
                float(expected[layer][0, unit]), abs=1e-5)


def test_the_grid_is_the_boundarys_plane_scaled_as_the_model_sees_it():
    session = TrainingSession(dataclasses.replace(PRESET, n=300))
    raw = grid_points(plot_extent(session.data), 12)
    scaled = torch.as_tensor(session.split.scaled(raw), dtype=torch.float32)
    assert torch.equal(session.network_grid(12), scaled)
    # Row 0 is the lowest y, column 0 the lowest x, as in the boundary's grid.
    assert raw[0][0] == raw[12][0] and raw[1][1] == raw[0][1]


def test_the_hooks_are_removed_and_the_model_keeps_its_mode():
    session = TrainingSession(dataclasses.replace(PRESET, n=300, dropout=0.5))
    session.model.train()
    layers = hidden_activations(session.model, session.network_grid(12))
    assert len(layers) == 2
    assert session.model.training
    assert all(not m._forward_hooks for m in session.model.modules())
    # Dropout is off for the picture: the same map twice.
    again = hidden_activations(session.model, session.network_grid(12))
    assert all(torch.equal(a, b) for a, b in zip(layers, again, strict=True))


def test_a_linear_model_has_no_hidden_maps_only_its_weights():
    session = TrainingSession(dataclasses.replace(PRESET, n=300, hidden=()))
    picture = network_picture(session.model, session.network_grid(12))
    assert picture.widths == (2, 1) and picture.maps == ()
    assert torch.equal(torch.from_numpy(picture.weights[0]), session.model.net[0].weight.detach())


def test_maps_in_uint8_come_back_within_half_a_step_of_their_range():
    maps = torch.randn(5, 144, generator=torch.Generator().manual_seed(0)).numpy()
    maps[3] = 0.0                                 # a dead unit: constant over the plane
    codes, low, high = quantised_maps(maps)
    assert codes.dtype == np.uint8 and codes.shape == maps.shape
    back = dequantised_maps(codes, low, high)
    step = (high - low) / 255
    assert np.all(np.abs(back - maps) <= step[:, None] / 2 + 1e-6)
    assert np.all(codes[3] == 0) and low[3] == high[3] == 0.0


def test_weights_in_uint8_keep_their_sign_and_zero():
    weights = np.array([[0.5, -2.0, 0.0], [1.0, -0.01, 2.0]], dtype=np.float32)
    codes, scale = quantised_weights(weights)
    assert scale == 2.0 and codes.shape == (6,)
    back = (codes.astype(np.float32) - WEIGHT_ZERO) / WEIGHT_ZERO * scale
    assert np.all(np.abs(back - weights.ravel()) <= scale / 254 + 1e-6)
    assert np.all(np.sign(back[np.abs(weights.ravel()) > scale / 254]) ==
                  np.sign(weights.ravel()[np.abs(weights.ravel()) > scale / 254]))
    assert codes[2] == WEIGHT_ZERO
    assert quantised_weights(np.zeros((2, 2), dtype=np.float32))[1] == 0.0


def test_the_network_view_is_a_link_setting_that_keeps_the_run():
    assert TABLE.read({"net": "1"})[0].net is True
    assert TABLE.write(dataclasses.replace(PRESET, net=True)) == {"net": "1"}
    settings = dataclasses.replace(PRESET, n=300, epochs=3)
    session = TrainingSession(settings)
    session.step_epoch()
    with session.lock:
        assert session.continue_with(dataclasses.replace(settings, net=True)) == []
    assert session.epoch == 1 and session.settings.net
