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
