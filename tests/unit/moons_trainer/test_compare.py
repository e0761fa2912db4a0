"""Two runs side by side (workbench/moons_trainer/compare.py): the `vs=` link value, the claim that a
pinned run and the next start from the same weights, and the sentences that judge the numbers."""
from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import nn

from workbench.moons_trainer import compare
from workbench.moons_trainer.compare import Comparison, RunSummary
from workbench.moons_trainer.settings import PRESET
from workbench.moons_trainer.training import TrainingSession

QUICK = dataclasses.replace(PRESET, n=300, epochs=2, hidden=(8, 4))


# ---- the link value ----------------------------------------------------------------------------

def test_vs_reads_name_value_pairs_through_the_moons_table():
    read, problems = compare.TABLE.read({"vs": " LR:5 ; opt:sgd "})
    assert problems == []
    # The table's order, each value read (clamped) and written back by its own parameter.
    assert read == Comparison((("opt", "SGD"), ("lr", "1")))
    assert compare.TABLE.write(read) == {"vs": "opt:SGD;lr:1"}
    assert compare.TABLE.read(compare.TABLE.write(read))[0] == read
    assert compare.TABLE.read({"vs": "hidden:16,8;features:x1,x2_sq"})[0].vs == (
        ("features", "x1,x2_sq"), ("hidden", "16,8"))
    assert compare.TABLE.read({"vs": ""}) == (Comparison(), [])


@pytest.mark.parametrize("raw,reason", [
    ("optimizer:SGD", "'optimizer' is not a moons trainer setting"),
    ("opt=SGD", "expected name:value pairs"),
    ("speed:1", "changes how a run is shown"),
    ("opt:Adagrad", "opt: expected one of AdamW, Adam, SGD, RMSprop"),
    ("lr:fast", "lr: expected a number"),
    ("opt:SGD;opt:Adam", "opt is named twice"),
    (";".join(f"lr:{i}" for i in range(20)), "at most"),
])
def test_a_bad_vs_is_named_and_opens_no_comparison(raw, reason):
    read, problems = compare.TABLE.read({"vs": raw})
    assert read == Comparison()
    assert len(problems) == 1 and reason in problems[0].reason, problems


def test_the_pinned_settings_and_the_link_that_names_them_are_inverse():
    now = dataclasses.replace(QUICK, opt="AdamW", lr=0.01)
    pinned = compare.pinned_settings(now, (("opt", "SGD"), ("hidden", "")))
    assert (pinned.opt, pinned.hidden, pinned.lr) == ("SGD", (), 0.01)
    assert compare.overrides_between(pinned, now) == (("hidden", ""), ("opt", "SGD"))
    assert compare.pinned_settings(now, compare.overrides_between(pinned, now)) == pinned
    assert compare.labels(pinned, now) == ("pinned: hidden none, SGD", "now: hidden 8,4, AdamW")
    assert compare.labels(now, now) == ("pinned", "now")
    assert compare.differences(pinned, dataclasses.replace(pinned, speed="max")) == []


# ---- the same start, checked on the runs -------------------------------------------------------

def _loss_before_training(session: TrainingSession) -> float:
    """PyTorch's own BCE of the run's untouched model on the validation split."""
    model = session.model.eval()
    with torch.no_grad():
        return nn.functional.binary_cross_entropy_with_logits(model(session.x_val), session.y_val).item()


def test_another_optimizer_starts_from_the_same_weights_and_the_same_first_loss():
    first = TrainingSession(dataclasses.replace(QUICK, opt="SGD"))
    second = TrainingSession(QUICK)
    assert compare.same_initial_weights(first, second) and compare.same_data(first, second)
    assert compare.why_different_start(first, second) == ""
    before = _loss_before_training(second)
    first.run_to_end()
    second.run_to_end()
    # Trained apart, the runs differ; their recorded start does not.
    assert first.history.val_loss != second.history.val_loss
    assert compare.same_initial_weights(first, second)
    a, b = compare.summarise(first, "pinned: SGD"), compare.summarise(second, "now: AdamW")
    assert a.initial_val_loss == b.initial_val_loss == pytest.approx(before, abs=1e-7)
    assert (a.epoch, a.val_loss) == (2, first.history.val_loss[-1])


def test_another_width_starts_from_other_weights_and_says_why():
    first = TrainingSession(dataclasses.replace(QUICK, hidden=(16,)))
    second = TrainingSession(QUICK)
    assert not compare.same_initial_weights(first, second)
    assert compare.same_data(first, second)
    assert "layers' shapes differ" in compare.why_different_start(first, second)
    assert "2 -> 16 -> 1" in compare.why_different_start(first, second)


def test_another_activation_keeps_the_weights_but_not_the_first_loss():
    first = TrainingSession(dataclasses.replace(QUICK, act="Tanh"))
    second = TrainingSession(QUICK)
    assert compare.same_initial_weights(first, second)
    a, b = compare.summarise(first, "pinned: Tanh"), compare.summarise(second, "now: ReLU")
    assert a.initial_val_loss != b.initial_val_loss
    said = compare.comparison_sentences(a, b, same_init=True, same_points=True,
                                        differ=compare.differences(first.settings, second.settings))
    assert "the same weights compute another function" in " ".join(said)


def test_another_seed_draws_other_data():
    first = TrainingSession(dataclasses.replace(QUICK, seed=7))
    second = TrainingSession(QUICK)
    assert not compare.same_data(first, second) and not compare.same_initial_weights(first, second)
    noisier = TrainingSession(dataclasses.replace(QUICK, noise=0.3))
    assert not compare.same_data(noisier, second) and compare.same_initial_weights(noisier, second)


def test_a_pinned_run_keeping_pace_is_the_run_it_would_be_alone():
    pinned = TrainingSession(dataclasses.replace(QUICK, opt="SGD", epochs=3))
    session = TrainingSession(QUICK)
    assert compare.keep_pace(pinned, session, 60) is False and pinned.epoch == 0
    session.step_epoch()
    assert compare.keep_pace(pinned, session, 60) is False and pinned.epoch == 1
    session.run_to_end()                      # 2 epochs: the pinned run goes on to its own 3
    assert compare.keep_pace(pinned, session, 60) is False and pinned.epoch == 3 and pinned.done
    alone = TrainingSession(pinned.settings)
    alone.run_to_end()
    assert pinned.history == alone.history


def test_keeping_pace_stops_at_its_time_and_says_it_is_behind():
    pinned = TrainingSession(dataclasses.replace(QUICK, opt="SGD"))
    session = TrainingSession(QUICK)
    session.run_to_end()
    assert compare.keep_pace(pinned, session, 0) is True and pinned.epoch == 0


# ---- the sentences, both ways ------------------------------------------------------------------

def _run(label: str, val_loss: float | None, accuracy: float = 0.9, epoch: int = 5,
         initial: float = 0.7, diverged: bool = False) -> RunSummary:
    return RunSummary(label, QUICK, epoch if val_loss is not None else 0, initial, val_loss,
                      val_loss, accuracy, 0.92, diverged)


def _said(a: RunSummary, b: RunSummary, **kw) -> str:
    kw = {"same_init": True, "same_points": True, "differ": ["the optimizer changed from SGD to AdamW"],
          **kw}
    return " ".join(compare.comparison_sentences(a, b, **kw))


def test_the_run_with_the_lower_validation_loss_is_named_either_way():
    said = _said(_run("pinned: SGD", 0.25), _run("now: AdamW", 0.31))
    assert "The pinned run (SGD) reached the lower validation loss after 5 epochs each: 0.2500 " \
           "against 0.3100 for this run (AdamW)." in said
    said = _said(_run("pinned: SGD", 0.31), _run("now: AdamW", 0.25))
    assert "This run (AdamW) reached the lower validation loss after 5 epochs each: 0.2500 " \
           "against 0.3100 for the pinned run (SGD)." in said
    assert "reached the same validation loss, 0.3100" in _said(_run("pinned", 0.31), _run("now", 0.31))


def test_runs_of_different_lengths_are_said_to_be_unfair():
    said = _said(_run("pinned: SGD", 0.25, epoch=5), _run("now: AdamW", 0.31, epoch=9))
    assert "after 5 and 9 epochs (not the same number" in said


def test_an_untrained_or_diverged_run_is_not_judged():
    said = _said(_run("pinned: SGD", 0.25), _run("now: AdamW", None))
    assert "Train this run (AdamW) to compare" in said and "lower" not in said
    assert "Test accuracy" not in said
    said = _said(_run("pinned: SGD", float("nan"), diverged=True), _run("now: AdamW", 0.3))
    assert "The pinned run (SGD) diverged" in said and "this run (AdamW) did not" in said


def test_the_start_is_named_as_it_is():
    same = _said(_run("pinned", 0.2), _run("now", 0.3))
    assert "Both runs start from the same initial weights" in same
    assert "the same validation loss, 0.7000" in same
    other = _said(_run("pinned", 0.2), _run("now", 0.3), same_init=False, init_reason="because")
    assert "different initial weights (because)" in other and "same initial weights" not in other
    data = _said(_run("pinned", 0.2), _run("now", 0.3), same_init=False, same_points=False)
    assert "draw different data" in data and "best possible accuracy on these test points" not in data
    assert "Nothing differs" in _said(_run("pinned", 0.2), _run("now", 0.2), differ=[])


def test_each_accuracy_is_set_against_the_ceiling_either_way():
    said = _said(_run("pinned: SGD", 0.3, accuracy=0.90), _run("now: AdamW", 0.2, accuracy=0.95))
    assert "The best possible accuracy on these test points is 92.00%." in said
    assert "the pinned run (SGD) 90.00% (2.00 points below the best possible)" in said
    assert "this run (AdamW) 95.00% (3.00 points above the best possible (luck" in said
    said = _said(_run("pinned", 0.3, accuracy=0.92), _run("now", 0.2, accuracy=0.92))
    assert said.count("at the best possible") == 2


def test_the_shapes_words_name_the_layers_that_still_start_identical_both_ways():
    """Issue 44: "so the seed's generator fills them differently" hid that the layers before
    the first changed one start identical. The words come from torch.equal on both starts."""
    wide = TrainingSession(dataclasses.replace(QUICK, hidden=(16, 8)))
    narrower = TrainingSession(dataclasses.replace(QUICK, hidden=(16, 4)))
    start_a, start_b = compare.initial_weights(wide), compare.initial_weights(narrower)
    assert torch.equal(start_a["net.0.weight"], start_b["net.0.weight"])
    assert torch.equal(start_a["net.0.bias"], start_b["net.0.bias"])
    assert compare.identical_layers(start_a, start_b) == [1]
    said = compare.why_different_start(wide, narrower)
    assert "so Linear 1 starts identical (torch.equal)" in said and "fills them differently" not in said

    other_first = TrainingSession(dataclasses.replace(QUICK, hidden=(12, 8)))
    assert compare.identical_layers(start_a, compare.initial_weights(other_first)) == []
    said = compare.why_different_start(wide, other_first)
    assert "differ from the first layer on" in said and "identical" not in said
