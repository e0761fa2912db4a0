"""Issue 44: the settings' help sentences against what PyTorch, NumPy and scikit-learn do.
Each test measures the fact its sentence states, so the words fail when the fact does."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split

from workbench.moons_trainer.data import make_dataset, split_and_scale
from workbench.moons_trainer.model import build_model
from workbench.moons_trainer.network import linear_layers
from workbench.moons_trainer.settings import FEATURE_LABELS, PRESET, TABLE, MoonsSettings
from workbench.moons_trainer.training import TrainingSession


def help_of(name: str) -> str:
    return next(p for p in TABLE.params if p.name == name).help


# --- reg: what L1 does to the weights ---------------------------------------------------------

def _all_weights(reg: str) -> torch.Tensor:
    settings = dataclasses.replace(PRESET, n=600, epochs=30, hidden=(16,), reg=reg, reg_rate=0.01)
    session = TrainingSession(settings)
    session.run_to_end()
    return torch.cat([layer.weight.detach().flatten() for layer in linear_layers(session.model)])


def test_l1_leaves_many_weights_near_zero_and_none_exactly_zero_as_the_help_says():
    """Plain PyTorch L1: the gradient of |w| is sign(w), so a weight near zero steps across it
    and back; nothing clips it to 0 as TensorFlow Playground does. Measured: 10 of 48 weights
    within 0.01 of zero (none without the penalty), 0 exactly zero."""
    plain, l1 = _all_weights("none"), _all_weights("L1")
    near = {name: int((w.abs() < 0.01).sum()) for name, w in (("none", plain), ("L1", l1))}
    exact = int((l1 == 0).sum())
    assert near["L1"] >= near["none"] + 5, near
    assert exact == 0, exact
    words = help_of("reg")
    assert "exactly zero" not in words
    assert "many end close to zero, but hardly any exactly" in words
    assert "Playground sets such a weight to 0, this page, like plain PyTorch, does not" in words


# --- act and hidden: a straight line only in the coordinates ----------------------------------

FEATURE_SETS = [("x1", "x2"), ("x1",), ("x1", "x2", "x1_sq"), ("x1_sq", "x2_sq"),
                ("x1", "x2", "x1_x2"), ("x1", "x2", "sin_x1"), ("sin_x2",)]


def _straight_on_the_plane(features: tuple[str, ...]) -> bool:
    """An Identity network's logit on the plane is affine (its boundary a straight line) iff
    the logit at a midpoint is the mean of the logits at the two ends, for random pairs."""
    model = build_model((4, 3), "Identity", 0.0, torch.device("cpu"),
                        torch.Generator().manual_seed(0), features)
    points = torch.randn(2, 200, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float32)
    with torch.no_grad():
        gap = model((points[0] + points[1]) / 2) - (model(points[0]) + model(points[1])) / 2
    return bool(gap.abs().max() < 1e-4)


@pytest.mark.parametrize("features", FEATURE_SETS)
def test_the_identity_boundary_is_straight_exactly_when_the_features_are_coordinates(features):
    settings = MoonsSettings(features=features, act="Identity")
    assert _straight_on_the_plane(features) == settings.linear_on_the_plane


def test_the_activation_and_hidden_help_say_straight_only_for_the_coordinates():
    act, hidden = help_of("act"), help_of("hidden")
    assert "the boundary is a straight line." not in act
    assert "a straight boundary with x₁ and x₂ alone" in act
    curved = [f for f in FEATURE_LABELS if not _straight_on_the_plane(("x1", "x2", f))]
    assert set(curved) == {"x1_sq", "x2_sq", "x1_x2", "sin_x1", "sin_x2"}
    assert "a curve with x₁², x₂², x₁x₂ or sin" in act
    assert "a linear classifier" not in hidden
    assert "linear in those features (a straight boundary when they are x₁ and x₂ only)" in hidden


# --- seed: who draws the data and the split -----------------------------------------------------

def test_the_data_and_split_are_seeded_by_scikit_learn_and_numpy_as_the_seed_help_says(monkeypatch):
    data = make_dataset("moons", 300, 0.2, 7)
    x, y = make_moons(n_samples=300, noise=0.2, random_state=7)
    assert np.array_equal(data.features, x) and np.array_equal(data.labels, y)
    split = split_and_scale(data, (0.7, 0.15, 0.15), 7)
    _, x_test, _, _ = train_test_split(x, y, test_size=0.15, stratify=y, random_state=7)
    assert np.array_equal(split.x_test, x_test)
    seeds: list[int] = []
    default_rng = np.random.default_rng
    monkeypatch.setattr(np.random, "default_rng", lambda seed: seeds.append(seed) or default_rng(seed))
    make_dataset("gaussians", 100, 0.2, 7)
    assert seeds == [7]
    words = help_of("seed")
    assert "scikit-learn's random_state and NumPy's default_rng" in words
    assert "(the learner's own torch.Generator objects)" in words


# --- smaller sentences (issue 44, item 9) --------------------------------------------------------

def test_the_state_dict_words_say_persistent_buffers_as_pytorch_keeps_them():
    from torch import nn

    from workbench.moons_trainer.checks import STATE_DICT_ROUND_TRIP

    model = nn.BatchNorm1d(3)
    model.register_buffer("scratch", torch.zeros(3), persistent=False)
    buffers = {name for name, _ in model.named_buffers()}
    kept = set(model.state_dict())
    assert "scratch" in buffers - kept and "running_mean" in buffers & kept
    words = STATE_DICT_ROUND_TRIP.answer().explanation
    assert "every parameter and every persistent buffer" in words
    assert "`persistent=False` stays out" in words


def test_the_plane_is_called_like_playgrounds_and_its_differences_are_measured():
    from workbench.moons_trainer.data import draw_plane

    x, target = draw_plane(2000, 0.0, 3)
    assert np.allclose(target, (x[:, 0] + x[:, 1]) / 2, atol=1e-12)     # not 0.6 (x1 + x2)
    _, noisy = draw_plane(2000, 0.6, 3)
    assert noisy.max() == 1.0 and noisy.min() == -1.0                     # clipped
    words = " ".join(draw_plane.__doc__.split())
    assert words.startswith("Like Playground's regressPlane, not the same")
    assert "Playground's is 0.6·(x1 + x2)" in words and "unclipped" in words
