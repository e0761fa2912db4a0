"""The regression datasets (`plane`, `multigauss`, TensorFlow Playground's): their generators,
the unstratified split, the MSE loss and R², and what a run is not offered (no classes)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from torch import nn

from workbench.moons_trainer.challenge import not_reproducible
from workbench.moons_trainer.data import (
    BUMP_RADIUS,
    MULTI_GAUSSIANS,
    draw_multigauss,
    draw_plane,
    make_dataset,
    split_and_scale,
)
from workbench.moons_trainer.settings import PRESET, REGRESSION, TABLE
from workbench.moons_trainer.training import TrainingSession, evaluate, r_squared

DRAWERS = {"plane": draw_plane, "multigauss": draw_multigauss}


def regression(dataset: str = "plane", **changes):
    settings, problems = TABLE.read({"dataset": dataset, "epochs": "3"})
    assert not problems, problems
    return dataclasses.replace(settings, n=400, **changes)


# ---- the link parameter and the generators -------------------------------------------------------

@pytest.mark.parametrize("name", REGRESSION)
def test_a_regression_dataset_is_a_link_value(name):
    settings = regression(name)
    assert settings.dataset == name and settings.regression and not settings.drawn
    assert TABLE.write(settings)["dataset"] == name
    assert not PRESET.regression


@pytest.mark.parametrize("name", REGRESSION)
def test_targets_are_floats_in_minus_one_to_one_and_seeded(name):
    data = make_dataset(name, 800, 0.1, 3)
    assert data.labels.dtype == np.float64 and data.regression
    assert data.labels.min() >= -1 and data.labels.max() <= 1
    assert data.labels.min() < -0.5 and data.labels.max() > 0.5     # both signs are there
    again = make_dataset(name, 800, 0.1, 3)
    assert np.array_equal(data.features, again.features) and np.array_equal(data.labels, again.labels)
    other = make_dataset(name, 800, 0.1, 4)
    assert not np.array_equal(data.features, other.features)


def _clean_target(name: str, x: np.ndarray) -> np.ndarray:
    """The target without noise, written again from Playground's definition."""
    if name == "plane":
        return np.clip((x[:, 0] + x[:, 1]) / 2, -1, 1)
    best = np.zeros(len(x))
    for cx, cy, sign in MULTI_GAUSSIANS:
        distance = np.hypot(x[:, 0] - cx, x[:, 1] - cy)
        value = sign * np.clip(1 - distance / BUMP_RADIUS, 0, 1)
        best = np.where(np.abs(value) > np.abs(best), value, best)
    return best


@pytest.mark.parametrize("name", REGRESSION)
def test_noise_moves_where_the_target_is_read_not_the_point(name):
    x, y = DRAWERS[name](500, 0.0, 7)
    assert np.allclose(y, _clean_target(name, x))
    noisy_x, noisy_y = DRAWERS[name](500, 0.3, 7)
    assert np.array_equal(noisy_x, x)                   # the points stay where they were drawn
    assert not np.allclose(noisy_y, _clean_target(name, noisy_x))
    assert np.abs(noisy_y).max() <= 1


def test_the_split_is_not_stratified_and_keeps_every_point():
    data = make_dataset("plane", 1000, 0.1, 0)
    split = split_and_scale(data, (0.7, 0.15, 0.15), 0)
    assert (len(split.y_train), len(split.y_val), len(split.y_test)) == (700, 150, 150)
    together = np.sort(np.concatenate([split.y_train, split.y_val, split.y_test]))
    assert np.array_equal(together, np.sort(data.labels))


# ---- loss and metrics ------------------------------------------------------------------------------

def test_r_squared_is_one_minus_sse_over_sst():
    g = torch.Generator().manual_seed(0)
    target = torch.rand(50, generator=g) * 2 - 1
    predicted = target + 0.3 * torch.randn(50, generator=g)
    sse = torch.sum((target.double() - predicted.double()) ** 2)
    sst = torch.sum((target.double() - target.double().mean()) ** 2)
    assert r_squared(predicted, target) == pytest.approx(float(1 - sse / sst), rel=1e-12)
    assert r_squared(target, target) == 1.0
    assert r_squared(torch.full((50,), float(target.mean())), target) == pytest.approx(0.0, abs=1e-6)


def test_a_regression_run_uses_mse_and_reports_r_squared():
    session = TrainingSession(regression("plane"))
    assert isinstance(session.loss_fn, nn.MSELoss)
    session.run_to_end()
    model = session.model.eval()
    with torch.no_grad():
        out = model(session.x_val)
    assert session.history.val_loss[-1] == pytest.approx(float(nn.functional.mse_loss(out, session.y_val)),
                                                         rel=1e-6)
    assert session.history.val_acc[-1] == pytest.approx(r_squared(out, session.y_val), rel=1e-9)
    report = session.test_report()
    with torch.no_grad():
        test_out = model(session.x_test)
    assert report.regression and math.isnan(report.accuracy) and report.bayes_accuracy is None
    assert report.mse == pytest.approx(float(((test_out - session.y_test) ** 2).mean()), rel=1e-6)
    assert report.r2 == pytest.approx(r_squared(test_out, session.y_test))
    metrics = evaluate(model, session.x_test, session.y_test, session.loss_fn)
    assert metrics.loss == pytest.approx(report.mse) and metrics.accuracy == pytest.approx(report.r2)


def test_training_lowers_the_mse_on_plane():
    session = TrainingSession(regression("plane", epochs=5, noise=0.05))
    before = evaluate(session.model, session.x_val, session.y_val, session.loss_fn)
    session.run_to_end()
    after = session.history.val_loss[-1]
    assert after < before.loss / 2
    assert session.history.val_acc[-1] > before.accuracy


def test_no_bayes_accuracy_no_bayes_boundary_and_not_posted():
    session = TrainingSession(regression("multigauss"))
    assert session.bayes_test_accuracy is None and session.bayes_grid(20) is None
    session.run_to_end()
    assert "regression" in not_reproducible(session)


def test_the_live_view_shades_the_output_value():
    session = TrainingSession(regression("plane"))
    session.run_to_end()
    grid, points = session.live_probabilities(12, with_test=True)
    model = session.model.eval()
    with torch.no_grad():
        out = model(session.x_train)
    expected = ((out.clamp(-1, 1) + 1) / 2 * 255).round().to(torch.uint8).numpy()
    assert np.array_equal(points[:len(expected)], expected)
    assert grid.shape == (144,)


# ---- comparisons are for classification runs ------------------------------------------------------

def test_a_comparison_with_a_regression_run_is_refused_in_words_and_in_code():
    from workbench.moons_trainer.codegen import comparison_script
    from workbench.moons_trainer.compare import not_comparable

    plane = regression("plane")
    assert not_comparable(PRESET, PRESET) is None
    for a, b in ((PRESET, plane), (plane, PRESET), (plane, plane)):
        assert "classification" in not_comparable(a, b)
        with pytest.raises(ValueError, match="classification"):
            comparison_script([("pinned", a, ()), ("now", b, ())])
