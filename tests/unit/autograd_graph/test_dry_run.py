"""dry_run.py: an oversized result is refused before PyTorch allocates it, with the size PyTorch
itself gives the result; small operands skip the meta-device probe; creators are sized from their
arguments; what a call is given is bounded and of kinds PyTorch takes."""
from __future__ import annotations

import pytest
import torch

from workbench.autograd_graph.budget import Budget
from workbench.autograd_graph.dry_run import DryRun, extent, to_meta
from workbench.autograd_graph.language import Limits, ProgramRefused
from workbench.autograd_graph.problems import Position

LIMIT = 10_000


def dry_run(max_numel: int = LIMIT) -> DryRun:
    position = Position(4)
    budget = Budget(Limits(max_numel=max_numel), position)
    budget.start()
    return DryRun(budget, position)


def meta(*shape: int) -> torch.Tensor:
    return torch.empty(*shape, device="meta")


def test_an_oversized_result_is_refused_with_the_size_pytorch_gives_it():
    a, b = torch.ones(1000, 1), torch.ones(1, 1000)
    expected = torch.matmul(meta(1000, 1), meta(1, 1000)).numel()
    with pytest.raises(ProgramRefused) as refused:
        dry_run().check_result_size(torch.matmul, (a, b))
    assert refused.value.kind == "limit" and refused.value.line == 4
    assert refused.value.message == (f"the result would have {expected:,} elements; at most "
                                     f"{LIMIT:,} are allowed here")


def test_an_empty_operand_does_not_hide_a_large_result():
    empty = torch.ones(0, 20_000)
    assert empty.numel() == 0 and meta(0, 20_000).sum(0).numel() > LIMIT
    with pytest.raises(ProgramRefused, match="the result would have"):
        dry_run().check_result_size(lambda x: x.sum(0), (empty,))


def test_small_operands_skip_the_probe_and_large_ones_run_it_on_meta():
    devices = []

    def probe(x, y):
        devices.append(x.device.type)
        return x + y

    dry_run().check_result_size(probe, (torch.ones(3), torch.ones(3)))
    assert devices == []
    dry_run().check_result_size(probe, (torch.ones(200), torch.ones(200)))
    assert devices == ["meta"]


def test_a_probe_that_fails_leaves_the_error_to_the_real_call():
    a, b = torch.ones(200, 3), torch.ones(200, 4)
    with pytest.raises(RuntimeError):
        torch.matmul(meta(200, 3), meta(200, 4))
    dry_run().check_result_size(torch.matmul, (a, b))  # no refusal: PyTorch's error is the lesson


def test_to_meta_keeps_shapes_strides_and_sharing():
    a = torch.ones(3, 4).t()
    shared = [a, a]
    converted = to_meta([shared, shared, (a, 2)])
    assert converted[0] is converted[1] and converted[0][0] is converted[0][1] is converted[2][0]
    assert converted[0][0].device.type == "meta"
    assert converted[0][0].shape == a.shape and converted[0][0].stride() == a.stride()
    assert converted[2][1] == 2


@pytest.mark.parametrize("shape", [(3, 4), (0, 5), (2, 0, 0), ()])
def test_extent_counts_sizes_of_zero_as_one(shape):
    tensor = torch.ones(shape)
    nonzero = torch.ones(tuple(max(size, 1) for size in shape))
    assert extent(tensor) == nonzero.numel()


@pytest.mark.parametrize("name, args, kwargs", [
    ("ones", [100, 100], {}), ("zeros", [(50, 200)], {}), ("full", [(100, 100), 2.0], {}),
    ("eye", [100], {}), ("arange", [0, 20_000, 2], {}), ("linspace", [0, 1, LIMIT], {}),
])
def test_a_creator_within_the_limit_passes(name, args, kwargs):
    made = getattr(torch, name)(*args, **kwargs, device="meta")
    assert made.numel() <= LIMIT
    dry_run().check_creation(name, list(args), dict(kwargs))


@pytest.mark.parametrize("name, args", [
    ("ones", [101, 100]), ("full", [(100, 101), 2.0]), ("eye", [100, 101]),
    ("arange", [0, 20_001, 2]), ("linspace", [0, 1, LIMIT + 1]),
])
def test_a_creator_past_the_limit_is_refused_with_the_count_pytorch_would_make(name, args):
    count = getattr(torch, name)(*args, device="meta").numel()
    with pytest.raises(ProgramRefused) as refused:
        dry_run().check_creation(name, list(args), {})
    assert refused.value.message == (f"torch.{name} would make {count:,} elements; at most "
                                     f"{LIMIT:,} are allowed here")


@pytest.mark.parametrize("name, args, message", [
    ("ones", [2.5], "torch.ones takes whole-number sizes"),
    ("zeros", [-1], "sizes cannot be negative"),
    ("arange", [0, 10, 0], "torch.arange takes numbers and a non-zero step"),
    ("linspace", [0, 1, 2.5], "torch.linspace needs `steps`, a whole number"),
    ("tensor", [], "torch.tensor takes one value or list"),
])
def test_a_creator_given_the_wrong_arguments_is_refused(name, args, message):
    with pytest.raises(ProgramRefused) as refused:
        dry_run().check_creation(name, args, {})
    assert refused.value.message == message and refused.value.kind == "language"


def test_operands_are_bounded_together_and_must_be_values_pytorch_takes():
    numbers = list(range(60))
    dry_run(max_numel=100).check_operands((torch.ones(2), numbers, None, slice(1), torch.float32))
    with pytest.raises(ProgramRefused, match="one call may be given at most 100 numbers"):
        dry_run(max_numel=100).check_operands((numbers, numbers))
    with pytest.raises(ProgramRefused) as refused:
        dry_run().check_operands((torch.ones(2), [{"a": 1}]))
    assert refused.value.message == "a dict cannot be passed to PyTorch here"
