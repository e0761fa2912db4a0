"""The moons trainer's settings table, its checks and its refusals: each written once."""
from __future__ import annotations

import dataclasses

import pytest

from workbench.common.checks import Check
from workbench.common.errors import ExplainedError
from workbench.common.links import ChoiceParam, IntListParam
from workbench.moons_trainer import checks
from workbench.moons_trainer.checkpoints import CheckpointRefused, read_checkpoint
from workbench.moons_trainer.settings import PRESET, TABLE, MoonsSettings, changes, discard_notice
from workbench.moons_trainer.training import TrainingSession

LINK_NAMES = ("dataset", "points", "n", "noise", "seed", "split", "features", "hidden", "act", "dropout",
              "opt", "lr", "wd", "reg", "reg_rate", "batch", "epochs", "speed", "net",
              "discrete")


def test_the_link_names_teachers_type_are_kept():
    assert TABLE.names == LINK_NAMES
    assert [p.field for p in TABLE.params] == [f.name for f in dataclasses.fields(MoonsSettings)]


@pytest.mark.parametrize("name", LINK_NAMES)
def test_every_setting_has_a_label_and_help(name):
    p = TABLE[name]
    assert p.label and p.label != p.name
    assert p.help and p.help.endswith(".")
    assert p.meaning


def test_the_widgets_are_written_in_the_table():
    assert TABLE["dataset"].choice_label("moons") == "Two moons"
    assert all(TABLE["dataset"].choice_label(d) != d for d in ("gaussians", "circles"))
    assert isinstance(TABLE["hidden"], IntListParam) and TABLE["hidden"].kind == "text"
    assert TABLE["noise"].kind == "slider" and TABLE["noise"].widget.step == 0.01
    assert TABLE["dropout"].kind == "slider"
    assert TABLE["lr"].widget.format == "%.5f"
    assert TABLE["n"].widget.step == 100 and TABLE["epochs"].widget.step == 10
    assert isinstance(TABLE["act"], ChoiceParam) and TABLE["act"].kind == "select"


def test_links_stay_canonical_and_case_insensitive():
    settings, problems = TABLE.read({"act": "relu", "opt": "sgd", "dataset": "SPIRAL"})
    assert not problems
    assert (settings.act, settings.opt, settings.dataset) == ("ReLU", "SGD", "spiral")
    assert TABLE.write(settings) == {"dataset": "spiral", "opt": "SGD"}    # ReLU is the default


def test_a_discarded_run_is_named_with_what_changed():
    new = dataclasses.replace(PRESET, lr=0.01, epochs=80)
    assert changes(PRESET, new, ignore=("epochs",)) == [
        "the learning rate changed from 0.003 to 0.01"]
    notice = discard_notice(PRESET, new, 12, 500)
    assert notice == ("The run at epoch 12 was discarded: the learning rate changed from 0.003 "
                      "to 0.01 (a new run starts from fresh weights).")
    words = discard_notice(PRESET, dataclasses.replace(PRESET, dataset="spiral", hidden=()), 0, 7)
    assert "step 7 of epoch 1" in words
    assert "the dataset changed from Two moons to Spiral" in words
    assert "the hidden layer widths changed from 64,32 to none (linear)" in words


@pytest.mark.parametrize("check", checks.CHECKS, ids=lambda c: c.key)
def test_each_check_is_answered_by_pytorch_with_its_own_source_shown(check: Check):
    answer = check.answer()
    assert answer.correct_option in check.options and answer.shown_value
    assert check.code.startswith(f"def {check.compute.__name__}()")
    assert "torch." in check.code


def test_the_zero_grad_check_shows_gradients_adding_up():
    answer = checks.ZERO_GRAD.answer()
    assert answer.correct_option == checks.PILE_UP
    assert answer.shown_value == "tensor([12.,  2.]) then tensor([24.,  4.]) then tensor([12.,  2.])"
    assert "optimizer.zero_grad()" in checks.ZERO_GRAD.code


def test_the_lessons_checks_keep_their_answers():
    assert checks.LOOP_ORDER.answer().correct_option == "zero_grad, forward, backward, step"
    assert checks.STATE_DICT_ROUND_TRIP.answer().correct_option == "identical predictions"


def test_a_refusal_is_an_explained_error_for_the_shared_panel():
    session = TrainingSession(dataclasses.replace(PRESET, n=200))
    with pytest.raises(CheckpointRefused) as refused:
        read_checkpoint(b"not a checkpoint at all", session.model)
    explained = refused.value.explained
    assert isinstance(explained, ExplainedError) and explained.kind == "Refused"
    assert explained.title == refused.value.title and explained.message == str(refused.value)
    assert explained.explanation.endswith("your model is unchanged.")
