"""TensorFlow Playground's controls in the moons trainer: input features (the link setting, the
model's first module and what they change) and L1/L2 regularization."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from workbench.moons_trainer.model import MLP, InputFeatures, build_model
from workbench.moons_trainer.settings import FEATURES, PRESET, TABLE, changes
from workbench.moons_trainer.training import TrainingSession

FORMULAS = {"x1": lambda x1, x2: x1, "x2": lambda x1, x2: x2, "x1_sq": lambda x1, x2: x1 ** 2,
            "x2_sq": lambda x1, x2: x2 ** 2, "x1_x2": lambda x1, x2: x1 * x2,
            "sin_x1": lambda x1, x2: torch.sin(x1), "sin_x2": lambda x1, x2: torch.sin(x2)}


def test_every_feature_is_its_formula_of_the_scaled_coordinates():
    assert set(FORMULAS) == set(FEATURES)
    x = torch.randn(50, 2, generator=torch.Generator().manual_seed(0))
    out = InputFeatures(FEATURES)(x)
    assert out.shape == (50, len(FEATURES))
    for column, name in enumerate(FEATURES):
        assert torch.allclose(out[:, column], FORMULAS[name](x[:, 0], x[:, 1])), name


def test_the_coordinates_alone_pass_through_and_keep_the_state_dict():
    x = torch.randn(4, 2)
    assert InputFeatures()(x) is x
    generator = torch.Generator().manual_seed(3)
    plain = build_model((8,), "ReLU", 0.0, torch.device("cpu"), generator)
    assert list(plain.state_dict()) == ["net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias"]
    wide = MLP((8,), features=("x1", "sin_x2", "x1_x2"))
    assert list(wide.state_dict()) == list(plain.state_dict())
    assert wide.net[0].in_features == 3
    assert wide(x).shape == (4,)


@pytest.mark.parametrize(("raw", "expected"), [
    ("x1,x2", ("x1", "x2")),
    ("SIN_X2, x1 ,x1", ("x1", "sin_x2")),         # the table's order, each once, any case
    ("x1_x2", ("x1_x2",)),
])
def test_the_link_reads_a_set_in_the_tables_order(raw, expected):
    settings, problems = TABLE.read({"features": raw})
    assert problems == [] and settings.features == expected
    assert TABLE.read(TABLE.write(settings))[0] == settings


@pytest.mark.parametrize(("raw", "reason"), [
    ("", "expected at least one"), (",,", "expected at least one"), ("x3", "'x3' is not one of"),
])
def test_a_bad_set_is_named_ignored_and_defaulted(raw, reason):
    settings, problems = TABLE.read({"features": raw})
    assert settings.features == PRESET.features
    assert [p.param for p in problems] == ["features"] and reason in problems[0].reason


def test_the_architecture_counts_the_features_and_the_change_is_named():
    squares = dataclasses.replace(PRESET, features=("x1_sq", "x2_sq", "x1_x2"))
    assert squares.architecture == "3 -> 64 -> 32 -> 1"
    assert changes(PRESET, squares) == ["the input features changed from x₁, x₂ to x₁², x₂², x₁x₂"]


def test_squares_let_a_model_without_hidden_layers_separate_the_circles():
    """The reason Playground has them: a linear model on (x1, x2) cannot draw a circle (about
    chance on the test split), one on (x1², x2²) comes near the best possible accuracy."""
    accuracy = {}
    for features in (("x1", "x2"), ("x1_sq", "x2_sq")):
        settings = dataclasses.replace(PRESET, dataset="circles", n=600, epochs=30, hidden=(),
                                       lr=0.03, features=features)
        session = TrainingSession(settings)
        session.run_to_end()
        accuracy[features] = session.test_report().accuracy
        ceiling = session.bayes_test_accuracy
    assert accuracy[("x1", "x2")] < 0.65
    assert accuracy[("x1_sq", "x2_sq")] > ceiling - 0.05


def test_identity_layers_multiply_out_to_one_linear_map_of_the_features():
    from workbench.moons_trainer.model import collapsed_linear, linear_map_check

    model = MLP((4, 3), "Identity", features=("x1_sq", "x2_sq", "sin_x1"))
    weight, bias = collapsed_linear(model)
    assert weight.shape == (1, 3)
    x = torch.randn(50, 2, generator=torch.Generator().manual_seed(0))
    check = linear_map_check(model, x, weight, bias)
    assert check.max_difference < 1e-5 and check.agreement_words().startswith("it matches")


# --- Regularization: TensorFlow Playground's L1 and L2 penalties ---------------------------------

def test_the_penalty_is_the_formula_over_the_linear_weights_not_the_biases():
    from workbench.moons_trainer.model import weight_penalty

    model = MLP((4, 3), "ReLU")
    weights = [model.net[i].weight.detach() for i in (0, 2, 4)]
    l1 = weight_penalty(model, "L1", 0.1)
    l2 = weight_penalty(model, "L2", 0.1)
    assert float(l1.detach()) == pytest.approx(0.1 * sum(float(w.abs().sum()) for w in weights), rel=1e-6)
    assert float(l2.detach()) == pytest.approx(0.05 * sum(float((w ** 2).sum()) for w in weights), rel=1e-6)
    assert weight_penalty(model, "none", 0.1) is None and weight_penalty(model, "L2", 0.0) is None
    l1.backward()
    assert torch.allclose(model.net[0].weight.grad, 0.1 * model.net[0].weight.sign())
    assert model.net[0].bias.grad is None, "biases are not penalised"


def _first_layer_weights(reg: str) -> torch.Tensor:
    settings = dataclasses.replace(PRESET, n=600, epochs=30, hidden=(16,), reg=reg, reg_rate=0.01)
    session = TrainingSession(settings)
    session.run_to_end()
    return session.model.net[0].weight.detach()


def test_l1_zeroes_weights_and_l2_shrinks_them_where_no_penalty_does_neither():
    plain, l1, l2 = (_first_layer_weights(reg) for reg in ("none", "L1", "L2"))
    near_zero = {name: int((w.abs() < 0.01).sum()) for name, w in
                 (("none", plain), ("L1", l1), ("L2", l2))}
    assert near_zero["L1"] >= near_zero["none"] + 3, near_zero
    assert l2.pow(2).sum() < 0.8 * plain.pow(2).sum()


def test_a_regularization_change_carries_on_with_the_same_weights():
    from workbench.moons_trainer.training import continues

    run = dataclasses.replace(PRESET, reg="L1")
    assert continues(PRESET, run) and continues(run, dataclasses.replace(run, reg_rate=0.1))
    assert TABLE.read({"reg": "l2", "reg_rate": "0.03"})[0].reg == "L2"
