"""Item 13.5: the Bayes ceiling is exact for scikit-learn's points, and worded as an expectation.

The reference here is computed independently at test time: scikit-learn's own noise-free points
(`noise=None, shuffle=False`) are the mixture's centres, and torch.distributions gives each
Gaussian's log density.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.datasets import make_circles, make_moons

from app_pages.moons_trainer.results import verdict
from workbench.moons_trainer.bayes import bayes_accuracy, bayes_log_densities, bayes_predict
from workbench.moons_trainer.data import grid_points, make_dataset, plot_extent, split_and_scale
from workbench.moons_trainer.settings import PRESET
from workbench.moons_trainer import training
from workbench.moons_trainer.training import TrainingSession


def reference_predict(name: str, points: np.ndarray, noise: float, n: int) -> np.ndarray:
    """Bayes labels from scikit-learn's noise-free points and torch.distributions.Normal."""
    if name == "moons":
        centres, labels = make_moons(n_samples=n, noise=None, shuffle=False)
    else:
        centres, labels = make_circles(n_samples=n, noise=None, shuffle=False, factor=0.5)
    x = torch.tensor(points, dtype=torch.float64)[:, None, :]
    normal = torch.distributions.Normal(torch.tensor(centres, dtype=torch.float64), noise)
    per_centre = normal.log_prob(x).sum(-1)                 # (N, n): log N(x; centre_k, noise^2 I)
    joint = [torch.logsumexp(per_centre[:, torch.from_numpy(labels == c)], dim=1) for c in (0, 1)]
    return (joint[1] > joint[0]).long().numpy()


@pytest.mark.parametrize(("name", "n", "noise", "seed"),
                         [("moons", PRESET.n, PRESET.noise, PRESET.seed), ("moons", 801, 0.3, 3),
                          ("circles", 1000, 0.2, 5)])
def test_bayes_classifier_is_exact_for_scikit_learns_points(name, n, noise, seed):
    data = make_dataset(name, n, noise, seed)
    split = split_and_scale(data, PRESET.fractions, seed)
    expected = reference_predict(name, split.x_test, noise, n)
    assert np.array_equal(bayes_predict(name, split.x_test, noise, n), expected)
    accuracy = bayes_accuracy(name, split.x_test, split.y_test, noise, n)
    assert accuracy == float((expected == split.y_test).mean())


def test_the_page_shows_the_exact_ceiling_for_the_preset():
    data = make_dataset("moons", PRESET.n, PRESET.noise, PRESET.seed)
    split = split_and_scale(data, PRESET.fractions, PRESET.seed)
    exact = float((reference_predict("moons", split.x_test, PRESET.noise, PRESET.n) == split.y_test).mean())
    session = TrainingSession(PRESET)
    assert session.bayes_test_accuracy == exact


def test_bayes_grid_uses_the_same_exact_densities():
    session = TrainingSession(PRESET)
    grid = session.bayes_grid(10)
    points = grid_points(plot_extent(session.data), 10)
    log_density = bayes_log_densities("moons", points, PRESET.noise, PRESET.n)
    assert np.array_equal(grid > 0, (log_density[:, 1] > log_density[:, 0]).numpy().reshape(10, 10))


def test_a_model_that_predicts_like_the_bayes_classifier_is_shown_at_the_ceiling():
    session = TrainingSession(PRESET)
    labels = torch.from_numpy(bayes_predict("moons", session.split.x_test, PRESET.noise, PRESET.n))
    accuracy = int((labels == session.y_test.long().cpu()).sum()) / len(labels)
    report = training.TestReport(accuracy, 0.0, session.bayes_test_accuracy, len(labels))
    text = verdict(report, PRESET.noise)
    assert report.gap_points == 0 and "at the ceiling" in text
    assert f"{100 * accuracy:.2f}%" in text
    assert "On average" in text and "no classifier beats it" in text
    lucky = verdict(training.TestReport(accuracy + 1 / len(labels), 0.0, accuracy, len(labels)), PRESET.noise)
    assert "luck" in lucky and "above the ceiling" in lucky


def test_the_results_verdict_follows_the_gap_and_the_ceiling_every_way():
    """Each sentence of the verdict against its numbers: at, above, near and far below the
    ceiling, and the 95% sentence only when the ceiling itself is below 95%."""
    def words(accuracy: float, ceiling: float) -> str:
        return verdict(training.TestReport(accuracy, 0.0, ceiling, 200), 0.2)

    assert "at the ceiling" in words(0.97, 0.97)
    assert "above the ceiling" in words(0.98, 0.97) and "below it" not in words(0.98, 0.97)
    near = words(0.96, 0.97)
    assert "**1.00 points** below it: about as good as" in near and "room to improve" not in near
    far = words(0.90, 0.97)
    assert "**7.00 points** below it: there is room to improve" in far and "about as good" not in far
    assert "The lesson asks for 95%" not in far
    low_ceiling = words(0.90, 0.93)
    assert "The lesson asks for 95%" in low_ceiling and "scores below it" in low_ceiling
