"""The pitfall lab: each broken loop differs from the correct one in the way the lesson says."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from workbench.moons.pitfalls import LAB_SETTINGS, PITFALL_KEYS, graph_size, run_pitfall

QUICK = dataclasses.replace(LAB_SETTINGS, n=600, epochs=8)


@pytest.fixture(scope="module")
def results():
    return {key: run_pitfall(key, settings=QUICK) for key in PITFALL_KEYS}


def test_every_pitfall_has_a_correct_run_that_learns(results):
    for result in results.values():
        assert result.correct.error is None
        assert result.correct.test_acc > 0.8
        assert result.finding


def test_no_zero_grad_trains_worse(results):
    r = results["no_zero_grad"]
    assert r.broken.train_loss[-1] > r.correct.train_loss[-1]


def test_sigmoid_before_bce_cannot_go_below_its_floor(results):
    r = results["sigmoid_before_bce"]
    floor = torch.nn.functional.softplus(torch.tensor(-1.0)).item()    # log(1 + e^-1)
    assert min(r.broken.train_loss) > floor
    assert r.correct.train_loss[-1] < floor


def test_no_eval_with_dropout_gives_different_answers_for_the_same_data(results):
    r = results["no_eval"]
    first, second = r.broken.facts["val accuracy, evaluated twice"].split(" then ")
    assert first != second
    first, second = r.correct.facts["val accuracy, evaluated twice"].split(" then ")
    assert first == second


def test_scaler_on_all_data_changes_the_scaler(results):
    r = results["scaler_on_all"]
    assert r.broken.facts["scaler mean"] != r.correct.facts["scaler mean"]


def test_accumulating_the_loss_tensor_keeps_a_growing_graph(results):
    r = results["accumulate_tensor"]
    after_one = int(r.broken.facts["graph nodes kept alive by total_loss after 1 epoch"].replace(",", ""))
    at_end = int(r.broken.facts["graph nodes kept alive by total_loss at the end"].replace(",", ""))
    assert at_end > after_one > 0
    assert r.correct.facts["graph nodes kept alive by total_loss at the end"] == "0"
    assert r.broken.test_acc == r.correct.test_acc       # same parameters: only memory differs


def test_float_targets_for_cross_entropy_are_refused_with_pytorchs_message(results):
    r = results["float_targets"]
    assert r.broken.error is not None and not r.broken.train_loss
    with pytest.raises(RuntimeError) as raised:
        torch.nn.CrossEntropyLoss()(torch.zeros(2, 2), torch.tensor([0.0, 1.0]))
    assert r.broken.error.message == str(raised.value)


def test_the_lab_never_touches_the_global_rng():
    before = torch.get_rng_state()
    for key in ("no_eval", "float_targets"):
        run_pitfall(key, settings=dataclasses.replace(QUICK, epochs=2))
    assert torch.equal(torch.get_rng_state(), before)


def test_graph_size_counts_nodes():
    x = torch.ones(3, requires_grad=True)
    assert graph_size(x.detach()) == 0
    assert graph_size((x * 2).sum()) >= 2

