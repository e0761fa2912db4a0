"""Gradient accumulation, the cost of batching, and the pictures drawn from a run."""
from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from app_pages.batch_iterator.figures import class_counts_html, pipeline_stages
from workbench.batch_iterator.accumulation import (
    AccumulationResult,
    ParameterGradients,
    accumulation_data,
    compare_accumulation,
    small_mlp,
)
from workbench.batch_iterator.cost import (
    BatchingCost,
    measure_batching_cost,
    per_sample_loader,
    tensor_dataset,
    whole_batch_loader,
)
from workbench.batch_iterator.datasets import make_dataset
from workbench.batch_iterator.runs import run_loader
from workbench.batch_iterator.settings import BatchSettings
from workbench.batch_iterator.story import (
    describe_batch_sampler,
    describe_collate,
    describe_sampler,
    empty_loader_words,
    grid_story,
)


def _data(n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    dataset = make_dataset(BatchSettings(n=n, seed=seed))
    return dataset.features, dataset.labels


def test_four_micro_batches_of_eight_give_the_gradient_of_one_batch_of_32():
    features, labels = _data(32)
    result = compare_accumulation(features, labels, micro_batches=4)
    assert result.micro_batch_sizes == (8, 8, 8, 8)
    assert result.allclose
    assert abs(result.loss_full - result.loss_accumulated) < 1e-5
    for p in result.parameters:
        # Forgetting to scale each micro-batch's mean loss multiplies the gradient by 4.
        assert abs(p.unscaled_norm - 4 * p.full_norm) <= 1e-4 * max(1.0, p.full_norm)


def test_uneven_micro_batches_still_agree_when_scaled_by_their_share():
    features, labels = _data(30)
    result = compare_accumulation(features, labels, micro_batches=4)
    assert result.micro_batch_sizes == (8, 8, 8, 6)
    assert result.allclose


def test_accumulation_leaves_the_learners_model_untouched():
    model = small_mlp(3)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    features, labels = _data(32)
    compare_accumulation(features, labels, model=model)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())


def test_a_single_logit_model_uses_binary_cross_entropy():
    model = torch.nn.Sequential(torch.nn.Linear(2, 1))
    features, labels = _data(32)
    assert compare_accumulation(features, labels, model=model).allclose


def test_the_difference_is_blamed_on_rounding_or_on_dropout_as_measured():
    """The trainer's model with dropout: the batch and the micro-batches draw different masks,
    and in eval mode the two agree; without dropout the difference is rounding."""
    from workbench.moons_trainer.model import build_model

    features, labels = _data(32)
    calm = compare_accumulation(features, labels, model=small_mlp(1))
    assert calm.allclose and not calm.random_in_train and calm.eval_max_abs_difference is None
    assert calm.why_they_differ().endswith("float32 rounding, the additions happen in a different order")
    generator = torch.Generator().manual_seed(0)
    dropping = build_model((16, 16), "ReLU", 0.5, torch.device("cpu"), generator)
    noisy = compare_accumulation(features, labels, model=dropping)
    assert not noisy.allclose and noisy.random_in_train
    assert noisy.eval_max_abs_difference is not None and noisy.eval_max_abs_difference < 1e-5
    assert noisy.max_abs_difference > 1e3 * noisy.eval_max_abs_difference
    assert "dropout masks" in noisy.why_they_differ() and "rounding" not in noisy.why_they_differ()
    dropping.eval()      # the comparison runs in train mode whatever the learner's model is in
    assert compare_accumulation(features, labels, model=dropping).random_in_train


def test_a_difference_with_no_dropout_to_blame_is_not_called_rounding():
    """The third outcome: not allclose and nothing random in the model (as a broken
    accumulation, unscaled micro-batch losses say, would measure)."""
    gradients = ParameterGradients("w", (2,), full_norm=1.0, accumulated_norm=4.0,
                                   max_abs_difference=3.0, unscaled_norm=4.0)
    broken = AccumulationResult((8, 8), 0.5, 0.5, (gradients,), allclose=False, model_name="mlp")
    assert broken.why_they_differ() == "largest difference 3.0e+00, more than float32 rounding accounts for"


@settings(max_examples=30, deadline=None)
@given(samples=st.integers(1, 200), batch_size=st.integers(1, 64), seed=st.integers(0, 10_000))
def test_whole_batch_fetching_yields_the_same_batches(samples, batch_size, seed):
    dataset = tensor_dataset(samples, seed=seed)
    slow = list(per_sample_loader(dataset, batch_size, torch.Generator().manual_seed(seed)))
    fast = list(whole_batch_loader(dataset, batch_size, torch.Generator().manual_seed(seed)))
    assert len(slow) == len(fast)
    for (x1, y1), (x2, y2) in zip(slow, fast, strict=True):
        assert torch.equal(x1, x2) and torch.equal(y1, y2)


def test_cost_measurement_reports_every_figure():
    cost = measure_batching_cost(samples=256, batch_size=16, repeats=1)
    assert cost.same_batches
    assert min(cost.per_sample_us, cost.whole_batch_us, cost.bare_us) > 0
    assert cost.ratio == cost.per_sample_us / cost.whole_batch_us
    assert cost.bare_loop_words() in (BatchingCost(256, 16, 2.0, 1.0, 0.5, True).bare_loop_words(),
                                      BatchingCost(256, 16, 2.0, 1.0, 1.5, True).bare_loop_words())


def test_the_bare_loop_is_called_the_floor_only_when_it_measured_fastest():
    fastest = BatchingCost(2048, 32, per_sample_us=2.0, whole_batch_us=0.4, bare_us=0.2, same_batches=True)
    assert fastest.bare_loop_words().startswith("is the floor")
    noisy = BatchingCost(2048, 32, per_sample_us=2.0, whole_batch_us=0.4, bare_us=0.5, same_batches=True)
    assert "floor" not in noisy.bare_loop_words() and "slower" in noisy.bare_loop_words()


def test_class_counts_bars_add_up_to_each_batch_and_stand_as_tall_as_it():
    run = run_loader(BatchSettings(n=30, batch_size=4, epochs=2, sampler="weighted", shuffle=False))
    markup = class_counts_html(run)
    bars = re.findall(r'<div class="bar" title="epoch (\d+), batch (\d+): (\d+) of class 0, '
                      r'(\d+) of class 1">(.*?)</div>', markup)
    assert [(int(e), int(b), int(c0) + int(c1)) for e, b, c0, c1, _ in bars] == \
        [(r.epoch, r.number, r.size) for r in run.records]
    tallest = max(r.size for r in run.records)
    for (_, _, c0, c1, parts), record in zip(bars, run.records, strict=True):
        heights = [float(h) for h in re.findall(r"height:([\d.]+)%", parts)]
        assert sum(heights) == pytest.approx(100 * record.size / tallest, abs=0.02)
        assert len(heights) == (int(c0) > 0) + (int(c1) > 0)
    assert 'role="img"' in markup and "aria-label=" in markup


def test_pipeline_names_every_stage_with_the_current_values():
    s = BatchSettings(n=20, batch_size=6)
    run = run_loader(s)
    stages = pipeline_stages(run, run.records[0], describe_sampler(s, 20),
                             describe_batch_sampler(s), describe_collate(s))
    assert [title for _, title, _ in stages] == ["Dataset", "Sampler", "BatchSampler",
                                                 "__getitem__", "collate_fn", "batch"]
    bodies = dict((key, body) for key, _, body in stages)
    assert str(list(run.records[0].indices)).replace("'", "") in bodies["batch_sampler"]
    assert f"len = {run.dataset_size}" in bodies["dataset"]
    assert "epoch 0, batch 0" in bodies["batch"]


def test_grid_story_explains_reshuffling_and_drop_last():
    shuffled = grid_story(run_loader(BatchSettings(drop_last=True)))
    assert "differ from epoch 0" in shuffled[0]
    assert "drop_last=True" in shuffled[1]
    ordered = grid_story(run_loader(BatchSettings(shuffle=False)))
    assert "same batches" in ordered[0]


def test_item_and_tensor_listings_show_what_getitem_and_collate_made():
    from app_pages.batch_iterator.listings import items_listing, tensor_listing

    s = BatchSettings(n=12, batch_size=5, augment=True)
    dataset = make_dataset(s)
    record = run_loader(s).records[0]
    items = items_listing(dataset, record, limit=4)
    for index in record.indices[:4]:
        assert f"dataset[{index}]\n# -> {{'index': tensor({index})" in items
    assert "1 more items" in items and "noise" not in items
    tensors = tensor_listing(record)
    assert repr(record.tensors["x"]) in tensors and "# [5, 2] float32" in tensors
    assert repr(record.tensors["noise"]) in tensors


def test_accumulation_data_is_the_loaders_first_32_samples_of_epoch_0():
    settings = BatchSettings(n=40, batch_size=8, shuffle=True, seed=3)
    run = run_loader(settings)
    data = accumulation_data(run, settings, None)
    order: list[int] = []
    for record in run.epoch_records(0):
        order += [i for i in record.indices if i not in order]
    dataset = make_dataset(settings)
    assert torch.equal(data.features, dataset.features[order[:32]])
    assert torch.equal(data.labels, dataset.labels[order[:32]])
    assert data.source == "the first 32 samples your loader yields in epoch 0"


def test_accumulation_data_without_a_run_takes_32_points_in_order():
    settings = BatchSettings(n=10)
    data = accumulation_data(None, settings, None)
    dataset = make_dataset(BatchSettings(n=32))
    assert len(data.labels) == 32 and torch.equal(data.features, dataset.features[:32])
    assert data.source == "32 samples of the points dataset"


def test_the_empty_loader_words_say_fewer_than_batch_size_only_when_it_is():
    """The page's empty loader (N=4, batch_size=6, drop_last) with PyTorch's own run, then the
    outcomes its numbers cannot reach there."""
    s = BatchSettings(n=4, batch_size=6, drop_last=True)
    run = run_loader(s)
    assert len(torch.utils.data.DataLoader(range(4), batch_size=6, drop_last=True)) == 0
    words = empty_loader_words(run.summaries()[0].draws, s.batch_size, s.drop_last)
    assert words == ("Every epoch has 4 indices, fewer than `batch_size=6`, and `drop_last=True` "
                     "drops the only, short, batch.")
    assert "fewer than" not in empty_loader_words(8, 6, True)
    assert "drop_last=True` drops" not in empty_loader_words(4, 6, False)
    assert empty_loader_words(0, 6, True).startswith("The sampler draws no indices")
