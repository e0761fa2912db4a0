"""Items 13.12-13.15 outside the lab: Identity collapses the layers, Softmax in the activation
table, losses on the same logits, BCELoss against BCEWithLogitsLoss, and forward hooks.
Expected values are computed here with PyTorch (float64 references, hooks of our own)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch import nn

from workbench.common.modes import evaluating
from workbench.moons_trainer.checks import FORWARD_HOOK, HOOK_CALL_ONLY
from workbench.moons_trainer.codegen import moons_script
from workbench.moons_trainer.data import grid_points, plot_extent
from workbench.moons_trainer.losses import (confident_losses, hook_demo, large_logit_rows, loss_curves,
                                            losses_on_logits, model_losses)
from workbench.moons_trainer.model import (MLP, activation_table, collapsed_linear, device_mismatch,
                                           linear_map_check)
from workbench.moons_trainer.settings import ACTIVATIONS, PRESET, TABLE
from workbench.moons_trainer.training import TrainingSession


def test_identity_is_a_new_choice_and_the_old_link_values_stay():
    assert ACTIVATIONS[:5] == ("ReLU", "LeakyReLU", "GELU", "Tanh", "Sigmoid") and "Identity" in ACTIVATIONS
    assert TABLE["act"].parse("identity") == "Identity"
    assert 'ACTIVATION = "Identity"' in moons_script(dataclasses.replace(PRESET, act="Identity"), "cpu")


def test_identity_layers_collapse_into_one_linear_map_with_a_straight_boundary():
    session = TrainingSession(dataclasses.replace(PRESET, act="Identity", n=400, epochs=3))
    session.run_to_end()
    weight, bias = collapsed_linear(session.model)
    assert weight.shape == (1, 2) and bias.shape == (1,)
    points = torch.tensor(session.split.scaled(grid_points(plot_extent(session.data), 30)),
                          dtype=torch.float32)
    session.model.eval()
    with torch.no_grad():
        logits = session.model(points)
    assert torch.allclose(logits, (points @ weight.T + bias).squeeze(-1), atol=1e-4)
    # The 50% boundary of the page's grid is the half-plane of that one map: a straight line.
    grid = session.grid(30) > 0.5
    line = ((points.double() @ weight.double().T + bias.double()).squeeze(-1) > 0).numpy().reshape(30, 30)
    assert np.mean(grid == line) > 0.99
    assert collapsed_linear(MLP((64, 32), "ReLU")) is None


def test_the_activation_table_has_softmax_and_computes_each_row():
    rows = {r.name: r for r in activation_table()}
    assert set(ACTIVATIONS) | {"Softmax"} == set(rows)
    probe = torch.tensor([-2.0, 0.0, 2.0])
    assert rows["Softmax"].total == pytest.approx(float(torch.softmax(probe, 0).sum()))
    assert not rows["Softmax"].elementwise and all(r.elementwise for n, r in rows.items() if n != "Softmax")
    assert rows["Tanh"].values == "[" + ", ".join(f"{v:.4f}" for v in torch.tanh(probe).tolist()) + "]"


def test_losses_on_the_same_logits_and_their_gradients():
    curves = loss_curves(1.0)
    z = torch.tensor(curves.z, dtype=torch.float64)
    assert np.allclose(curves.values["BCEWithLogitsLoss"], nn.functional.softplus(-z).numpy(), atol=1e-5)
    assert np.allclose(curves.values["MSELoss"], ((z - 1) ** 2).numpy(), atol=1e-4)
    assert np.allclose(curves.grads["BCEWithLogitsLoss"], (torch.sigmoid(z) - 1).numpy(), atol=1e-5)
    assert np.allclose(curves.grads["HuberLoss (delta=1)"], (z - 1).clamp(-1, 1).numpy(), atol=1e-5)
    logits, targets = torch.tensor([5.0, -3.0, 0.5]), torch.tensor([1.0, 0.0, 1.0])
    means = losses_on_logits(logits, targets)
    assert means["MSELoss"] == pytest.approx(float(((logits - targets) ** 2).mean()))
    assert means["BCEWithLogitsLoss"] == pytest.approx(
        float(nn.functional.binary_cross_entropy_with_logits(logits, targets)))


def test_bce_of_sigmoid_is_clamped_at_large_logits_and_with_logits_is_not():
    rows = large_logit_rows(((20.0, 0.0), (-120.0, 1.0), (10.0, 0.0)))
    for r in rows:
        exact = nn.functional.binary_cross_entropy_with_logits(torch.tensor([r.z], dtype=torch.float64),
                                                               torch.tensor([r.target], dtype=torch.float64))
        assert r.exact == pytest.approx(float(exact))
        assert r.with_logits == pytest.approx(float(exact), rel=1e-6)
    saturated, underflow, moderate = rows
    assert saturated.sigmoid == 1.0 and saturated.clamped and saturated.grad_bce_of_sigmoid == 0.0
    assert saturated.grad_with_logits == pytest.approx(float(torch.sigmoid(torch.tensor(20.0))))
    assert underflow.sigmoid == 0.0 and underflow.bce_of_sigmoid == 100.0
    assert abs(moderate.bce_of_sigmoid - moderate.exact) > 100 * abs(moderate.with_logits - moderate.exact)


def test_the_page_rows_hold_what_the_large_logit_caption_says_of_them():
    """The caption under the page's table (its default rows) states fixed verdicts: some rows
    saturate, the clamped ones return 100 with a zero gradient, z = 10 loses digits, and
    BCEWithLogitsLoss keeps the value. Fixed inputs: pinned here on those very rows."""
    rows = large_logit_rows()
    assert any(r.saturated for r in rows) and any(r.clamped for r in rows)
    for r in rows:
        if r.clamped:
            assert r.bce_of_sigmoid == 100.0 and r.grad_bce_of_sigmoid == 0.0   # whatever r.exact is
        assert r.with_logits == pytest.approx(r.exact, rel=1e-5)
    ten = next(r for r in rows if r.z == 10.0)
    assert not ten.saturated and abs(ten.bce_of_sigmoid - ten.exact) > 100 * abs(ten.with_logits - ten.exact)


def test_a_forward_hook_fires_for_model_x_and_not_for_model_forward():
    model = MLP((8,), "ReLU")
    mine = []
    model.register_forward_hook(lambda *args: mine.append(1))
    model(torch.zeros(2, 2))
    model.forward(torch.zeros(2, 2))
    assert mine == [1]                                        # PyTorch's own behaviour, here
    demo = hook_demo(model, torch.zeros(3, 2))
    assert demo.calls["model(x)"] == {"hook on the model": 1, "hook on its first Linear": 1}
    assert demo.calls["model.forward(x)"] == {"hook on the model": 0, "hook on its first Linear": 1}
    assert demo.same_output
    assert len(model._forward_hooks) == 1 and not model.net[0]._forward_hooks   # none left behind
    assert FORWARD_HOOK.compute().correct_option == HOOK_CALL_ONLY


# The computations the model and losses tabs draw, as plain results.

@pytest.mark.parametrize("training", [True, False])
def test_evaluating_switches_to_eval_without_a_graph_and_restores_the_mode(training):
    model = MLP((8,), "ReLU", dropout=0.5).train(training)
    with evaluating(model) as inside:
        assert inside is model and not model.training and not torch.is_grad_enabled()
        out = model(torch.ones(3, 2, requires_grad=True))
    assert out.grad_fn is None and model.training is training and torch.is_grad_enabled()
    with pytest.raises(ValueError), evaluating(model):
        raise ValueError("the block fails")
    assert model.training is training


def test_linear_map_check_matches_an_identity_model_multiplied_out():
    session = TrainingSession(dataclasses.replace(PRESET, act="Identity", n=400, epochs=1))
    session.run_to_end()
    session.model.train()
    weight, bias = collapsed_linear(session.model)
    check = linear_map_check(session.model, session.x_test, weight, bias)
    assert check.layers == len(PRESET.hidden) + 1 and check.points == len(session.x_test)
    assert check.weights == tuple(weight.flatten().tolist()) and check.bias == float(bias)
    assert check.max_difference < 1e-4
    assert session.model.training
    assert check.agreement_words().startswith("it matches the model to")


def test_the_linear_map_words_say_differs_when_the_product_is_wrong():
    """Both ways with PyTorch: the right product matches, a wrong one (bias off by one) differs."""
    model = MLP((4, 3), "Identity")
    weight, bias = collapsed_linear(model)
    x = torch.randn(50, 2, generator=torch.Generator().manual_seed(0))
    right = linear_map_check(model, x, weight, bias)
    wrong = linear_map_check(model, x, weight, bias + 1)
    assert right.agreement_words() == f"it matches the model to {right.max_difference:.2g}"
    assert wrong.max_difference == pytest.approx(1.0, abs=1e-4)
    assert wrong.agreement_words() == f"it differs from the model by up to {wrong.max_difference:.2g}"


def test_device_mismatch_keeps_pytorchs_error_and_leaves_the_model_alone():
    model = MLP((4,), "ReLU").train()
    mismatch = device_mismatch(torch.device("cpu"), model)
    assert mismatch.other == torch.device("meta")
    if mismatch.error is not None:
        assert isinstance(mismatch.error, RuntimeError)
    assert model.training and next(model.parameters()).device.type == "cpu"


def test_model_losses_are_the_losses_of_the_models_eval_logits():
    model = MLP((8,), "ReLU", dropout=0.5).train()
    x, y = torch.randn(20, 2, generator=torch.Generator().manual_seed(0)), (torch.arange(20) % 2).float()
    model.eval()
    with torch.no_grad():
        expected = losses_on_logits(model(x), y)
    model.train()
    assert model_losses(model, x, y) == pytest.approx(expected) and model.training
    confident = confident_losses()
    assert confident == losses_on_logits(torch.tensor([5.0]), torch.tensor([1.0]))
    assert confident["BCEWithLogitsLoss"] == pytest.approx(float(nn.functional.softplus(torch.tensor(-5.0))))
