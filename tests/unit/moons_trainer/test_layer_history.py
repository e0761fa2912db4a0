"""Weights and gradients over time (workbench/moons_trainer/layer_history.py): what a run records per
layer and epoch, in bounded memory, and the sentence the page reads from it, both ways."""
from __future__ import annotations

import math

import torch

from workbench.moons_trainer import layer_history as lh
from workbench.moons_trainer.layer_history import (
    LayerHistory,
    gradient_verdict,
    verdict_sentence,
)
from workbench.moons_trainer.network import linear_layers
from workbench.moons_trainer.settings import TABLE, MoonsSettings
from workbench.moons_trainer.training import TrainingSession
from workbench.lessons.catalog import lesson_by_key

QUICK = MoonsSettings(n=300, epochs=3, hidden=(8, 4))


def test_each_epoch_records_torchs_own_histograms_of_the_weights_and_log_gradients():
    session = TrainingSession(QUICK)
    session.step_epoch()
    layers = linear_layers(session.model)
    recorded = session.layer_history
    assert recorded.epochs == [1]
    assert recorded.layer_shapes == [tuple(layer.weight.shape) for layer in layers]
    for i, layer in enumerate(layers):
        weight, grad = layer.weight.detach(), layer.weight.grad
        expected_w = torch.histc(weight.clamp(lh.WEIGHT_LOW, lh.WEIGHT_HIGH), lh.WEIGHT_BINS,
                                 lh.WEIGHT_LOW, lh.WEIGHT_HIGH)
        exponents = grad.abs().clamp_min(10.0 ** lh.GRADIENT_LOW).log10()
        expected_g = torch.histc(exponents.clamp(lh.GRADIENT_LOW, lh.GRADIENT_HIGH),
                                 lh.GRADIENT_BINS, lh.GRADIENT_LOW, lh.GRADIENT_HIGH)
        assert recorded.weights[i][0].tolist() == expected_w.int().tolist()
        assert recorded.gradients[i][0].tolist() == expected_g.int().tolist()
        # Every weight is counted once, whatever its value.
        assert recorded.weights[i][0].sum() == weight.numel() == recorded.gradients[i][0].sum()
        assert math.isclose(recorded.mean_gradient[i][0], float(grad.abs().mean()), rel_tol=1e-6)
    # The same bins as numpy's histogram over the same edges (histc's last bin is closed).
    edges = torch.linspace(lh.WEIGHT_LOW, lh.WEIGHT_HIGH, lh.WEIGHT_BINS + 1)
    first = layers[0].weight.detach().clamp(lh.WEIGHT_LOW, lh.WEIGHT_HIGH)
    counts, _ = torch.histogram(first, edges)
    assert recorded.weights[0][0].tolist() == counts.int().tolist()

    session.step_epoch()
    assert recorded.epochs == [1, 2]
    assert recorded.weight_counts(0).shape == (lh.WEIGHT_BINS, 2)
    assert recorded.gradient_counts(2).shape == (lh.GRADIENT_BINS, 2)


def test_the_record_is_bounded_by_striding_and_stays_evenly_spaced():
    session = TrainingSession(QUICK)
    session.step_epoch()
    history = LayerHistory()
    for epoch in range(1, 2 * lh.MAX_KEPT + 1):     # 512 epochs: more than a run may train
        history.record(epoch, session.model)
        assert len(history.epochs) <= lh.MAX_KEPT
    assert history.stride == 2
    assert history.epochs == list(range(2, 2 * lh.MAX_KEPT + 1, 2))
    assert all(len(rows) == len(history.epochs) for rows in history.weights + history.gradients)
    assert all(len(rows) == len(history.epochs) for rows in history.mean_gradient)


def test_a_model_without_gradients_records_nothing():
    session = TrainingSession(QUICK)
    assert not session.layer_history.record(1, session.model)
    assert session.layer_history.epochs == []


def _trained(act: str) -> TrainingSession:
    # The lesson's links, read through the settings table like the page reads them.
    steps = {step.title: step for step in lesson_by_key("gradients").steps}
    step = next(s for s in steps.values() if s.params.get("act") == act)
    settings, problems = TABLE.read({**step.params, "n": "600"})
    assert not problems
    session = TrainingSession(settings)
    for _ in range(4):
        session.step_epoch()
    return session


def test_the_sentence_says_vanishing_for_the_deep_sigmoid_preset_and_not_for_relu():
    sigmoid, relu = _trained("Sigmoid"), _trained("ReLU")
    assert sigmoid.settings.hidden == relu.settings.hidden and len(sigmoid.settings.hidden) >= 4
    vanishing = gradient_verdict(sigmoid.layer_history)
    healthy = gradient_verdict(relu.layer_history)
    assert vanishing is not None and healthy is not None
    first = linear_layers(sigmoid.model)[0].weight.grad.abs().mean()
    assert math.isclose(vanishing.first, float(first), rel_tol=1e-6)
    assert vanishing.vanishing and vanishing.ratio < lh.VANISHING_RATIO
    assert not healthy.vanishing and healthy.ratio > lh.VANISHING_RATIO
    said = verdict_sentence(vanishing, sigmoid.settings.opt)
    assert "vanishes" in said and "barely move" in said
    assert f"{1 / vanishing.ratio:,.0f}x smaller" in said
    assert f"{vanishing.first:.1e}" in said
    said = verdict_sentence(healthy, relu.settings.opt)
    assert "vanish" in said and "without vanishing" in said and "barely" not in said


def test_the_sentence_under_adam_says_the_steps_stay_near_lr():
    verdict = lh.GradientVerdict(first=1e-6, last=1e-2, epoch=3, vanishing=True)
    said = verdict_sentence(verdict, "AdamW")
    assert "10,000x smaller" in said and "stay near lr" in said
    tiny = lh.GradientVerdict(first=3.1e-13, last=3.3e-2, epoch=50, vanishing=True, penalised=True)
    assert "1.1e11x smaller" in verdict_sentence(tiny, "SGD")


def test_the_lessons_check_asks_about_the_network_its_link_opens():
    from workbench.moons_trainer.checks import VANISHING_GRADIENT

    step = lesson_by_key("gradients").steps[0]
    assert step.check is VANISHING_GRADIENT
    settings, _ = TABLE.read(step.params)
    arrows = " -> ".join(str(w) for w in (2, *settings.hidden, 1))
    assert arrows in VANISHING_GRADIENT.question and settings.act in VANISHING_GRADIENT.question
    assert f"build_model({settings.hidden}, act" in VANISHING_GRADIENT.code
    assert VANISHING_GRADIENT.answer().correct_option == "100 times smaller or less"


def test_the_docs_paragraph_states_the_modules_own_bins_bounds_and_the_lessons_link():
    from pathlib import Path
    from urllib.parse import urlencode

    from workbench.lessons.catalog import VANISHING_SIGMOID

    text = " ".join(Path("docs/lesson-links.md").read_text().split())
    assert f"{lh.WEIGHT_BINS} fixed bins over {lh.WEIGHT_LOW:g} to {lh.WEIGHT_HIGH:g}" in text
    assert (f"{lh.GRADIENT_BINS} bins from 1e{lh.GRADIENT_LOW:.0f} to "
            f"{10 ** lh.GRADIENT_HIGH:g}") in text
    assert f"at most {lh.MAX_KEPT} epochs" in text
    assert f"vanishing below 1/{1 / lh.VANISHING_RATIO:.0f}" in text
    assert "/moons_trainer?" + urlencode(VANISHING_SIGMOID, safe=",") in text


def _lesson_link_with(extra: dict[str, str], epochs: int) -> TrainingSession:
    """The vanishing-gradient lesson's first link (issue 44), with `extra` on top, shortened."""
    step = lesson_by_key("gradients").steps[0]
    settings, problems = TABLE.read({**step.params, **extra, "n": "600"})
    assert not problems
    session = TrainingSession(settings)
    for _ in range(epochs):
        session.step_epoch()
    return session


def test_with_l1_the_verdict_judges_the_data_loss_gradient_and_says_vanishing():
    """L1 at 0.01 adds 0.01 x sign(w) to every weight's .grad, in every layer alike: on .grad
    alone the first layer looks as lively as the last. The data loss's gradient vanishes."""
    session = _lesson_link_with({"reg": "L1", "reg_rate": "0.01"}, epochs=4)
    history = session.layer_history
    assert session.history.val_acc[-1] == 0.5           # stuck, as the issue measured
    assert history.penalised == [True] * 4
    # .grad's ratio is not vanishing: judged on it, the page said "without vanishing".
    assert history.mean_gradient[0][-1] > lh.VANISHING_RATIO * history.mean_gradient[-1][-1]
    verdict = gradient_verdict(history)
    assert verdict.vanishing and verdict.penalised and verdict.ratio < lh.VANISHING_RATIO ** 2
    said = verdict_sentence(verdict, session.settings.opt)
    assert "without vanishing" not in said and "vanishes" in said
    assert "data loss alone" in said and f"{verdict.first:.1e}" in said


def test_the_data_loss_gradient_is_what_autograd_gives_for_the_data_loss():
    session = _lesson_link_with({"reg": "L1", "reg_rate": "0.01"}, epochs=1)
    layers = linear_layers(session.model)
    x, y = session.x_train[:64], session.y_train[:64]
    weights = [layer.weight for layer in layers]
    # Before the step moves the weights; autograd.grad leaves .grad alone.
    expected = torch.autograd.grad(session.loss_fn(session.model(x), y), weights)
    session.train_step(x, y, keep_data_gradients=True)
    assert all(torch.equal(kept, grad) for kept, grad in zip(session.data_gradients, expected, strict=True))
    # ... and .grad is still the whole gradient: data loss plus the penalty's rate x sign(w).
    for layer, data in zip(layers, session.data_gradients, strict=True):
        assert not torch.equal(layer.weight.grad, data)


def test_keeping_the_data_gradient_changes_nothing_in_the_run():
    """Two backward passes on the epoch's last batch (data loss, then penalty) add the same two
    terms into .grad as one backward of their sum: the run's weights are bit-identical."""
    kept = _lesson_link_with({"reg": "L1", "reg_rate": "0.01", "act": "ReLU"}, epochs=3)
    plain = _lesson_link_with({"reg": "L1", "reg_rate": "0.01", "act": "ReLU"}, epochs=0)
    one_backward = plain.train_step
    plain.train_step = lambda xb, yb, keep_data_gradients=False: one_backward(xb, yb)
    for _ in range(3):
        plain.step_epoch()
    assert plain.layer_history.penalised == [False] * 3 and kept.layer_history.penalised == [True] * 3
    for name, value in kept.model.state_dict().items():
        assert torch.equal(value, plain.model.state_dict()[name]), name


def test_a_healthy_run_with_l2_is_judged_not_vanishing():
    session = _lesson_link_with({"act": "ReLU", "reg": "L2", "reg_rate": "0.001"}, epochs=8)
    assert session.history.val_acc[-1] > 0.8
    verdict = gradient_verdict(session.layer_history)
    assert verdict.penalised and not verdict.vanishing and verdict.ratio > lh.VANISHING_RATIO
    said = verdict_sentence(verdict, session.settings.opt)
    assert "without vanishing" in said and "data loss alone" in said


def test_without_a_penalty_the_data_gradient_is_grad_itself():
    session = TrainingSession(QUICK)
    session.step_epoch()
    history = session.layer_history
    assert history.penalised == [False] and session.data_gradients is None
    assert history.mean_data_gradient == history.mean_gradient
    said = verdict_sentence(gradient_verdict(history), session.settings.opt)
    assert "data loss alone" not in said
