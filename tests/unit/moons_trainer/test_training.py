"""The moons pipeline: data, split, scaler, model, loaders, sliced training, Bayes ceiling."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_moons

from workbench.batch_iterator.cost import per_sample_loader, whole_batch_loader
from workbench.moons_trainer.bayes import bayes_accuracy, bayes_predict
from workbench.moons_trainer.data import grid_points, make_dataset, plot_extent, split_and_scale
from workbench.moons_trainer.model import activation_curve, build_model, parameter_table
from workbench.moons_trainer.settings import ACTIVATIONS, DATASETS, GENERATED, MAX_SAMPLES, PRESET, TABLE
from workbench.moons_trainer.training import (
    TrainingSession,
    batched_loader,
    f1_score,
)

SMALL = dataclasses.replace(PRESET, n=400, epochs=4)


@pytest.fixture(scope="module")
def preset_run() -> TrainingSession:
    session = TrainingSession(PRESET)
    session.run_to_end()
    return session


def test_preset_reaches_the_bayes_ceiling_within_one_and_a_half_points(preset_run):
    report = preset_run.test_report()
    bayes = bayes_accuracy("moons", preset_run.split.x_test, preset_run.split.y_test, PRESET.noise, PRESET.n)
    assert report.bayes_accuracy == bayes
    assert report.accuracy >= bayes - 0.015
    assert preset_run.epoch == PRESET.epochs
    assert len(preset_run.history.val_loss) == PRESET.epochs


def test_preset_is_the_lessons_assignment():
    assert (PRESET.dataset, PRESET.n, PRESET.noise, PRESET.seed) == ("moons", 3000, 0.25, 42)
    assert PRESET.fractions == (0.7, 0.15, 0.15) and PRESET.hidden == (64, 32) and PRESET.act == "ReLU"
    assert (PRESET.opt, PRESET.lr, PRESET.wd, PRESET.batch) == ("AdamW", 0.003, 1e-4, 64)
    model = build_model(PRESET.hidden, PRESET.act, PRESET.dropout,
                        torch.device("cpu"), torch.Generator().manual_seed(0))
    assert [tuple(p.shape) for p in model.parameters()] == [(64, 2), (64,), (32, 64), (32,), (1, 32), (1,)]


def test_moons_are_scikit_learns_own():
    data = make_dataset("moons", 300, 0.1, 7)
    x, y = make_moons(n_samples=300, noise=0.1, random_state=7)
    assert np.array_equal(data.features, x) and np.array_equal(data.labels, y)


def test_split_is_stratified_and_the_scaler_sees_only_train():
    data = make_dataset("moons", 1000, 0.2, 3)
    split = split_and_scale(data, (0.7, 0.15, 0.15), 3)
    assert len(split.x_train) + len(split.x_val) + len(split.x_test) == 1000
    for labels in (split.y_train, split.y_val, split.y_test):
        assert abs(labels.mean() - data.labels.mean()) < 0.01
    assert np.allclose(split.scaler.mean_, split.x_train.mean(axis=0))
    assert np.allclose(split.scaler.scale_, split.x_train.std(axis=0))
    assert not np.allclose(split.scaler.mean_, data.features.mean(axis=0))


@pytest.mark.parametrize("make", [batched_loader, whole_batch_loader])
@pytest.mark.parametrize("batch", [1, 48, 64, 5000])
def test_the_fast_loaders_yield_exactly_the_seeded_dataloaders_batches(make, batch):
    session = TrainingSession(SMALL)
    fast_gen, textbook_gen = torch.Generator().manual_seed(9), torch.Generator().manual_seed(9)
    fast = make(session.train_set, batch, fast_gen)
    textbook = per_sample_loader(session.train_set, batch, textbook_gen)
    assert len(fast) == len(textbook)
    for _epoch in range(3):
        pairs = list(zip(fast, textbook, strict=True))
        assert pairs
        for (xa, ya), (xb, yb) in pairs:
            assert torch.equal(xa, xb) and torch.equal(ya, yb)
        assert torch.equal(fast_gen.get_state(), textbook_gen.get_state())


def test_slicing_never_changes_the_result():
    whole = TrainingSession(SMALL)
    whole.run_to_end()
    sliced = TrainingSession(SMALL)
    while not sliced.done:
        sliced.run_for(3, math.inf)
    for a, b in zip(whole.model.parameters(), sliced.model.parameters(), strict=True):
        assert torch.equal(a, b)
    assert whole.history.val_loss == sliced.history.val_loss


def test_run_for_is_bounded_in_steps_and_step_epoch_stops_at_the_epoch_end():
    session = TrainingSession(SMALL)
    assert session.run_for(5, math.inf).steps == 5
    report = session.step_epoch()
    assert session.epoch == 1 and report.epochs_finished == 1
    assert session.steps == session.steps_per_epoch
    assert session.run_for(10**6, 0.0).steps <= 1


def test_training_never_touches_the_global_rng():
    before = torch.get_rng_state()
    session = TrainingSession(dataclasses.replace(SMALL, dropout=0.3))
    session.run_to_end()
    assert torch.equal(torch.get_rng_state(), before)


def test_same_seed_same_run_other_seed_other_weights():
    a, b = TrainingSession(SMALL), TrainingSession(SMALL)
    c = TrainingSession(dataclasses.replace(SMALL, seed=1))
    for s in (a, b, c):
        s.run_to_end()
    assert all(torch.equal(p, q) for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True))
    assert not torch.equal(next(a.model.parameters()), next(c.model.parameters()))


def test_initial_weights_follow_nn_linears_default_bounds():
    model = build_model(PRESET.hidden, PRESET.act, PRESET.dropout,
                        torch.device("cpu"), torch.Generator().manual_seed(0))
    first = model.net[0]
    bound = 1 / math.sqrt(first.in_features)
    assert first.weight.abs().max() <= bound and first.bias.abs().max() <= bound
    rows = parameter_table(model)
    assert [r.name for r in rows] == [n for n, _ in model.named_parameters()]
    assert rows[0].shape == (64, 2) and rows[0].numel == 128


@pytest.mark.parametrize("name", GENERATED)     # drawn data: tests/unit/moons_trainer/test_data_drawn.py
def test_every_dataset_trains_and_has_a_ceiling_above_chance(name):
    session = TrainingSession(dataclasses.replace(SMALL, dataset=name))
    session.run_to_end()
    assert 0.5 < session.bayes_test_accuracy <= 1.0
    assert set(np.unique(session.data.labels)) == {0, 1}


@pytest.mark.parametrize("name", GENERATED)
def test_bayes_is_perfect_without_noise_and_beats_a_trained_model_on_many_points(name):
    clean = make_dataset(name, 400, 0.0, 5)
    assert bayes_accuracy(name, clean.features, clean.labels, 0.0, 400) > 0.99
    noisy = make_dataset(name, 4000, 0.3, 11)
    assert bayes_accuracy(name, noisy.features, noisy.labels, 0.3, 4000) > 0.6


def test_bayes_accuracy_at_the_lessons_noise_is_about_94_percent():
    data = make_dataset("moons", MAX_SAMPLES, 0.25, 0)
    assert 0.92 < bayes_accuracy("moons", data.features, data.labels, 0.25, MAX_SAMPLES) < 0.96


def test_bayes_boundary_of_two_gaussians_is_the_perpendicular_bisector():
    points = np.array([[0.3, -0.2], [-0.4, 0.3], [1.0, 1.0], [-1.0, -1.0]])
    expected = (points.sum(axis=1) > 0).astype(int).tolist()
    assert bayes_predict("gaussians", points, 0.5, 4).tolist() == expected


def test_f1_matches_its_definition():
    predicted = torch.tensor([1, 1, 0, 0, 1])
    target = torch.tensor([1, 0, 0, 1, 1])
    assert f1_score(predicted, target) == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))


@pytest.mark.parametrize("act", ACTIVATIONS)
def test_activation_derivative_matches_a_finite_difference(act):
    x, y, dy = activation_curve(act)
    x = np.array(x)
    numeric = np.gradient(np.array(y), x)
    smooth = np.abs(x) > 0.1          # ReLU and LeakyReLU have a kink at 0
    assert np.allclose(np.array(dy)[smooth][1:-1], numeric[smooth][1:-1], atol=0.05)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(TABLE.names), st.text(max_size=20)))
def test_any_lesson_link_gives_valid_clamped_settings(query):
    settings_, problems = TABLE.read(query)
    assert settings_.dataset in DATASETS and 100 <= settings_.n <= MAX_SAMPLES
    assert 0.0 <= settings_.noise <= 1.0 and 1 <= settings_.batch <= 2048
    assert len(settings_.hidden) <= 4 and all(1 <= w <= 256 for w in settings_.hidden)
    assert len(problems) <= len(query)


def test_lesson_link_round_trips_and_clamps():
    wanted = dataclasses.replace(PRESET, dataset="spiral", hidden=(16, 8), act="Tanh", lr=0.01, epochs=80)
    query = TABLE.write(wanted)
    assert query == {"dataset": "spiral", "hidden": "16,8", "act": "Tanh", "lr": "0.01", "epochs": "80"}
    assert TABLE.read(query) == (wanted, [])
    clamped, problems = TABLE.read({"n": "99999999", "hidden": "9999,0", "epochs": "abc"})
    assert clamped.n == MAX_SAMPLES and clamped.hidden == (256, 1) and clamped.epochs == PRESET.epochs
    assert [p.param for p in problems] == ["epochs"]


@pytest.mark.parametrize("name", GENERATED)
def test_bayes_grid_agrees_with_the_bayes_classifier(name):
    session = TrainingSession(dataclasses.replace(SMALL, dataset=name))
    grid = session.bayes_grid(12)
    points = grid_points(plot_extent(session.data), 12)
    expected = bayes_predict(name, points, session.settings.noise, session.settings.n).reshape(12, 12)
    assert np.array_equal((grid > 0).astype(int), expected)
    assert session.bayes_grid(12) is grid


def _steps(opt: str, gradient: float, lr: float = 0.01, steps: int = 30) -> list[float]:
    """How far each of `steps` optimizer steps moves one weight under a steady gradient, in lr."""
    from workbench.moons_trainer.model import build_optimizer

    weight = torch.zeros(1, requires_grad=True)
    optimizer = build_optimizer(opt, [weight], lr, 0.0)
    moves = []
    for _ in range(steps):
        before = weight.detach().clone()
        weight.grad = torch.tensor([gradient])
        optimizer.step()
        moves.append(float((weight.detach() - before).abs()) / lr)
    return moves


def test_the_divergence_explanation_says_how_far_each_optimizer_steps():
    """SGD steps by lr x gradient (momentum adds up to about ten steps); Adam, AdamW and
    RMSprop divide by the gradient's own size, so its size barely matters."""
    import dataclasses

    from workbench.moons_trainer.settings import PRESET
    from workbench.moons_trainer.training import STEP_SIZE_WORDS, Divergence

    small, large = _steps("SGD", 1e-3), _steps("SGD", 1e3)
    assert small[0] == pytest.approx(1e-3) and large[0] == pytest.approx(1e3)
    assert large[-1] / large[0] == pytest.approx(9.6, abs=0.1)          # about ten times further
    for opt in ("Adam", "AdamW"):
        assert _steps(opt, 1e-3)[0] == pytest.approx(1.0, rel=1e-3) == _steps(opt, 1e3)[0]
        assert "about the learning rate, whatever the size" in STEP_SIZE_WORDS[opt]
    assert _steps("RMSprop", 1e-3)[0] == pytest.approx(10.0, rel=1e-2) == _steps("RMSprop", 1e3)[0]
    assert "lr times its gradient" not in " ".join(STEP_SIZE_WORDS[o] for o in ("Adam", "AdamW", "RMSprop"))
    for opt, words in STEP_SIZE_WORDS.items():
        text = Divergence(step=12, epoch=1, loss=float("nan")).explanation(
            dataclasses.replace(PRESET, opt=opt, lr=0.5))
        assert words in text and "lr = 0.5" in text
