"""The pitfall lab: each broken loop differs from the correct one in the way the lesson says.

Every expected number is computed here with PyTorch, from the labels, the trained models or a
small model of the same mechanism.
"""
from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from torch import nn

from workbench.moons_trainer import pitfalls
from workbench.moons_trainer.data import as_tensors, make_dataset, split_and_scale
from workbench.moons_trainer.pitfalls import (
    CE_CHECK,
    FLOOR,
    GRAD_ERROR,
    GRAD_NORM,
    LAB_SETTINGS,
    LOOPS,
    PITFALL_KEYS,
    PITFALLS,
    train_mode_verdict,
    REPEATS,
    SAVED_TENSORS,
    VERSION,
    describe_total,
    graph_size,
    other_device,
    run_loop,
    run_pitfall,
)

QUICK = dataclasses.replace(LAB_SETTINGS, n=600, epochs=8)
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def results():
    out = {key: run_pitfall(key, settings=QUICK) for key in PITFALL_KEYS}
    out["no_zero_grad:AdamW"] = run_pitfall("no_zero_grad", settings=QUICK, optimizer="AdamW")
    return out


def quick_split():
    data = make_dataset(QUICK.dataset, QUICK.n, QUICK.noise, QUICK.seed)
    return split_and_scale(data, QUICK.fractions, QUICK.seed)


def test_the_lab_covers_the_lessons_ten_pitfalls_each_with_its_number():
    assert sorted(p.number for p in PITFALLS) == list(range(1, 11))
    assert all(p.label.startswith(f"{p.number}. ") for p in PITFALLS)


def test_every_pitfall_has_its_own_loop():
    assert set(LOOPS) == set(PITFALL_KEYS)


def test_a_run_stops_at_the_step_cap_in_the_middle_of_an_epoch(monkeypatch):
    monkeypatch.setattr(pitfalls, "MAX_LAB_STEPS", 30)
    run = run_loop(LOOPS["no_eval"], QUICK, CPU, "capped", broken=False)
    per_epoch = math.ceil(len(quick_split().y_train) / QUICK.batch)
    assert 30 % per_epoch != 0                        # the cap falls inside an epoch...
    assert len(run.train_loss) == len(run.val_acc) == math.ceil(30 / per_epoch)   # ...which still counts
    assert run.error is None and run.test_acc > 0.5


def test_describe_total_says_whether_the_sum_keeps_a_graph():
    assert describe_total(1.5) == "float: 1.50"
    w = torch.ones(1, requires_grad=True)
    assert describe_total(0.0 + (w * 2).sum()) == "Tensor: tensor(2.00, grad_fn=<AddBackward0>)"


def test_every_pitfall_has_a_correct_run_that_learns(results):
    for result in results.values():
        assert result.correct.error is None
        assert result.correct.test_acc > 0.8
        assert result.finding


def test_no_zero_grad_explodes_with_sgd_and_oscillates_with_adamw(results):
    sgd, adamw = results["no_zero_grad"], results["no_zero_grad:AdamW"]
    assert sgd.option == "SGD" and adamw.option == "AdamW"
    assert max(sgd.broken.train_loss) > 100 * sgd.correct.train_loss[-1]
    assert "explodes" in sgd.finding
    assert max(adamw.broken.train_loss) < 10 * max(adamw.correct.train_loss)      # bounded
    rises = sum(b > a for a, b in zip(adamw.broken.train_loss, adamw.broken.train_loss[1:], strict=False))
    assert rises >= 1 and adamw.broken.train_loss[-1] > adamw.correct.train_loss[-1]
    assert "oscillates" in adamw.finding and f"{rises} of" in adamw.finding


def test_sigmoid_before_bce_floor_is_set_by_the_class_balance(results):
    r = results["sigmoid_before_bce"]
    y = torch.tensor(quick_split().y_train)
    per_class = torch.nn.functional.softplus(torch.tensor([0.0, -1.0]))   # class 0: log 2, class 1
    floor = float(per_class[y].mean())
    assert r.broken.floor == pytest.approx(floor, abs=1e-6)
    assert min(r.broken.train_loss) > floor > float(per_class[1])        # above the class-1 bound
    assert r.correct.train_loss[-1] < floor
    assert f"{floor:.3f}" in r.finding


def test_softmax_before_cross_entropy_has_a_floor_and_smaller_gradients(results):
    r = results["softmax_before_ce"]
    floor = float(-torch.log_softmax(torch.tensor([1.0, 0.0]), dim=0)[0])   # best softmax input: one-hot
    assert r.broken.floor == pytest.approx(floor, abs=1e-6)
    assert min(r.broken.train_loss) > floor
    assert r.correct.train_loss[-1] < floor
    assert float(r.broken.facts[GRAD_NORM]) < float(r.correct.facts[GRAD_NORM])
    ce, nll = r.correct.facts[CE_CHECK].split(" vs ")
    assert ce == nll                                  # CrossEntropyLoss = nll_loss(log_softmax)
    assert r.correct.facts[FLOOR] == "0.0000"


def test_device_mismatch_shows_pytorchs_own_error(results):
    r = results["device_mismatch"]
    other, _ = other_device(CPU)
    with pytest.raises(RuntimeError) as raised:
        nn.Linear(2, 3)(torch.zeros(4, 2, device=other))
    assert r.broken.error is not None and r.broken.error.message == str(raised.value)
    assert "different devices" in r.broken.error.title
    assert str(other) in r.finding


def test_no_eval_evaluates_the_same_weights_both_ways_and_says_how_they_compare(results):
    r = results["no_eval"]
    assert r.broken.train_loss == r.correct.train_loss          # trained alike: the same weights
    for a, b in zip(r.correct.model.parameters(), r.broken.model.parameters(), strict=True):
        assert torch.equal(a, b)
    x_val, y_val = as_tensors(*(lambda s: (s.scaled(s.x_val), s.y_val))(quick_split()), CPU)
    model = r.broken.model
    model.eval()
    with torch.no_grad():
        eval_acc = float(((model(x_val) > 0).float() == y_val).float().mean())
    assert r.correct.repeats == [eval_acc] * REPEATS
    model.train()
    model.set_dropout_generator(torch.Generator().manual_seed(0))
    with torch.no_grad():
        train_mode = {float(((model(x_val) > 0).float() == y_val).float().mean()) for _ in range(REPEATS)}
    assert len(train_mode) > 1                                  # train mode: a new answer each call
    assert len(set(r.broken.repeats)) > 1 and len(r.broken.repeats) == REPEATS
    assert train_mode_verdict(r.broken.repeats, r.correct.repeats[0]) in r.finding
    mean = sum(r.broken.repeats) / REPEATS
    assert ("lower on average" in r.finding) == (mean < eval_acc)
    for value in (min(r.broken.repeats), max(r.broken.repeats)):
        assert f"{100 * value:.1f}%" in r.finding


def test_validation_without_no_grad_saves_tensors_for_backward(results):
    r = results["no_no_grad"]
    split = quick_split()
    x_val, _ = as_tensors(split.scaled(split.x_val), split.y_val, CPU)
    model = r.broken.model.eval()
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        out = model(x_val)
    assert out.requires_grad and len(packed) > 0
    assert int(r.broken.facts[SAVED_TENSORS]) == len(packed)
    assert r.correct.facts[SAVED_TENSORS] == "0"
    assert r.broken.test_acc == r.correct.test_acc and r.broken.train_loss == r.correct.train_loss
    assert "half" not in r.finding


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


def test_scaler_on_all_data_changes_the_scaler(results):
    r = results["scaler_on_all"]
    assert r.broken.facts["scaler mean"] != r.correct.facts["scaler mean"]


def test_data_mutation_is_a_silent_wrong_gradient_and_no_grad_is_refused(results):
    r = results["data_mutation"]
    assert r.broken.error is None and r.broken.train_loss
    assert float(r.broken.facts[GRAD_ERROR].split()[0]) > 0
    assert float(r.correct.facts[GRAD_ERROR].split()[0]) == 0
    before, after = r.broken.facts[VERSION].split(" -> ")
    assert before == after                                      # .data: the counter never moved
    # The mechanism, on a model of our own: .data is silent and wrong, no_grad is refused.
    net = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
    x = torch.randn(8, 2, generator=torch.Generator().manual_seed(1))
    loss = net(x).square().mean()
    (true,) = torch.autograd.grad(loss, [net[0].weight], retain_graph=True)
    net[2].weight.data.mul_(0.5)
    loss.backward()
    assert not torch.allclose(net[0].weight.grad, true)
    loss = net(x).square().mean()
    with torch.no_grad():
        net[2].weight.mul_(0.5)
    with pytest.raises(RuntimeError) as raised:
        loss.backward()
    assert r.third is not None and r.third.error is not None
    assert "modified by an inplace operation" in str(raised.value)
    assert "modified by an inplace operation" in r.third.error.message
    assert r.third.error.title == "A tensor saved for backward was changed in place"


def test_the_lab_never_touches_the_global_rng():
    before = torch.get_rng_state()
    for key in ("no_eval", "float_targets", "softmax_before_ce"):
        run_pitfall(key, settings=dataclasses.replace(QUICK, epochs=2))
    assert torch.equal(torch.get_rng_state(), before)


def test_graph_size_counts_nodes():
    x = torch.ones(3, requires_grad=True)
    assert graph_size(x.detach()) == 0
    assert graph_size((x * 2).sum()) >= 2


def test_the_train_mode_verdict_follows_the_scores_both_ways():
    """Lower, higher, level, and the same every call: the words come from the numbers."""
    assert train_mode_verdict([0.90, 0.92, 0.91], 0.95) == \
        "noisier and lower on average, by 4.0 points (every one of them below the eval score)"
    assert train_mode_verdict([0.90, 0.97, 0.92], 0.95).endswith("(2 of the 3 below the eval score)")
    higher = train_mode_verdict([0.96, 0.98], 0.95)
    assert higher.startswith("noisier, and here higher on average, by 2.0 points")
    assert train_mode_verdict([0.94, 0.96], 0.95) == "noisier, and the same on average"
    assert train_mode_verdict([0.95, 0.95], 0.95) == "the same at every call, and the same on average"


def test_pitfall_7_counts_the_saved_tensors_its_sum_still_holds(results):
    from workbench.moons_trainer.pitfalls import SAVED_HELD

    r = results["accumulate_tensor"]
    held, _, saved = r.broken.facts[SAVED_HELD].partition(" of ")
    assert held == "0" and int(saved.replace(",", "")) > 0      # backward() ran every step
    assert "freed every tensor they had saved" in r.finding


def test_batchnorm_in_train_mode_uses_the_batch_and_moves_its_running_statistics():
    """Both ways: eval mode normalises with the running statistics and changes nothing; train
    mode with the batch's own, so a point depends on its batch-mates, and running_mean moves."""
    from workbench.moons_trainer.pitfalls import (BN_NEIGHBOURS, BN_RUNNING, BN_STATISTICS,
                                                  batchnorm_evaluation)

    generator = torch.Generator().manual_seed(0)
    x_train, x_val = torch.randn(300, 2, generator=generator), torch.randn(20, 2, generator=generator)
    evaluated = batchnorm_evaluation(x_train, x_val, broken=False)
    assert evaluated[BN_STATISTICS] == "the running mean and variance"
    assert float(evaluated[BN_NEIGHBOURS]) == 0 and float(evaluated[BN_RUNNING]) == 0
    in_train = batchnorm_evaluation(x_train, x_val, broken=True)
    assert in_train[BN_STATISTICS] == "the 4 points' own mean and variance"
    assert float(in_train[BN_NEIGHBOURS]) > 0.01 and float(in_train[BN_RUNNING]) > 0


def test_the_accuracy_words_follow_the_two_accuracies_both_ways():
    assert pitfalls.accuracy_words(0.95, 0.95) == "The test accuracy is the same"
    assert pitfalls.accuracy_words(0.95, 0.9501) == "The test accuracy is the same"   # 0.01 points
    assert pitfalls.accuracy_words(0.95, 0.93) == "The broken run's test accuracy is 2.0 points lower"
    assert pitfalls.accuracy_words(0.93, 0.95) == "The broken run's test accuracy is 2.0 points higher"


def test_the_trained_alike_words_follow_the_weights_both_ways():
    generator = torch.Generator().manual_seed(0)
    first, second = nn.Linear(2, 1), nn.Linear(2, 1)
    with torch.no_grad():
        for a, b in zip(first.parameters(), second.parameters(), strict=True):
            a.copy_(torch.randn(a.shape, generator=generator))
            b.copy_(a)
    assert pitfalls.same_weights(first, second)
    assert pitfalls.trained_alike_words(first, second).startswith("Both runs trained alike")
    with torch.no_grad():
        second.bias.add_(1e-6)
    assert not pitfalls.same_weights(first, second)
    assert "different weights" in pitfalls.trained_alike_words(first, second)
    assert not pitfalls.same_weights(first, None)
    assert not pitfalls.same_weights(first, nn.Sequential(nn.Linear(2, 1), nn.Linear(1, 1)))


def test_the_graph_kept_words_say_whether_the_parameters_differ_both_ways():
    model = nn.Linear(2, 1)
    other = nn.Linear(2, 1)
    with torch.no_grad():
        other.weight.copy_(model.weight + 1)
        other.bias.copy_(model.bias)
    facts = {pitfalls.KEPT_AT_THE_END: "120", pitfalls.SAVED_HELD: "0 of 40"}
    correct = pitfalls.LabRun("correct", model=model)
    same = pitfalls._graph_kept(correct, pitfalls.LabRun("broken", facts=facts, model=model), "")
    differ = pitfalls._graph_kept(correct, pitfalls.LabRun("broken", facts=facts, model=other), "")
    assert "The parameters are the same either way" in same and "parameters differ" not in same
    assert "The parameters differ" in differ and "same" not in differ
    holding = dict(facts, **{pitfalls.SAVED_HELD: "12 of 40"})
    held = pitfalls._graph_kept(correct, pitfalls.LabRun("broken", facts=holding, model=model), "")
    assert "with 12 of 40 of the tensors they saved" in held and "freed every tensor" not in held
    assert "freed every tensor they had saved" in same


def test_the_loss_words_say_oscillates_only_when_the_loss_rose():
    assert pitfalls.rises_words("3 of 7") == "but it oscillates: it rose in 3 of 7 epochs"
    assert "oscillates" not in pitfalls.rises_words("0 of 7")
    assert "fell in every epoch" in pitfalls.rises_words("0 of 7")
    correct = pitfalls.LabRun("correct", train_loss=[0.6, 0.4, 0.3])
    calm = pitfalls.LabRun("broken", train_loss=[0.7, 0.5, 0.35], facts={"epochs whose loss rose": "0 of 2"})
    words = pitfalls._exploded_or_oscillated(correct, calm, "AdamW")
    assert "does not explode" in words and "fell in every epoch" in words and "above" in words
    wild = pitfalls.LabRun("broken", train_loss=[0.7, 80.0, 0.2], facts={"epochs whose loss rose": "1 of 2"})
    assert "explodes" in pitfalls._exploded_or_oscillated(correct, wild, "SGD")


def test_the_silent_gradient_words_follow_the_error_and_the_counter_both_ways():
    silent = pitfalls.silent_gradient_words("0.012 (3% of the largest entry)", "5 -> 5")
    assert "differs from the true gradient" in silent and "did not move (5 -> 5)" in silent
    honest = pitfalls.silent_gradient_words("0 (0% of the largest entry)", "5 -> 6")
    assert "equals the true gradient" in honest and "moved (5 -> 6)" in honest
    assert "differs" not in honest and "did not" not in honest


def test_the_lab_findings_use_the_words_of_their_own_numbers(results):
    no_eval = results["no_eval"]
    assert pitfalls.trained_alike_words(no_eval.correct.model, no_eval.broken.model) in no_eval.finding
    assert "Both runs trained alike" in no_eval.finding           # pitfall 5 trains the same weights
    for key in ("no_no_grad", "scaler_on_all"):
        r = results[key]
        assert pitfalls.accuracy_words(r.correct.test_acc, r.broken.test_acc) in r.finding
    kept = results["accumulate_tensor"]
    assert "The parameters are the same either way" in kept.finding
    mutation = results["data_mutation"]
    assert pitfalls.silent_gradient_words(mutation.broken.facts[GRAD_ERROR],
                                          mutation.broken.facts[VERSION]) in mutation.finding
    adamw = results["no_zero_grad:AdamW"]
    assert pitfalls.rises_words(adamw.broken.facts["epochs whose loss rose"]) in adamw.finding
