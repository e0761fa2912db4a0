"""What a copy's note says about its layout, and each tensor's device, checked against PyTorch.

A copy is new memory, not necessarily row-major memory: `clone()` copies with
`memory_format=torch.preserve_format`, and `flip()` lays its result out in its input's order of
dimensions. Every expectation below is computed by PyTorch here, on real tensors.
"""
from __future__ import annotations

import pytest
import torch

from workbench.tensor_inspector.chain import ChainSyntaxError, parse_chain
from workbench.tensor_inspector.codegen import tensor_script
from workbench.tensor_inspector.facts import NEW_MEMORY
from workbench.tensor_inspector.report import inspect
from workbench.tensor_inspector.settings import TensorSettings

ISSUE_CASES = [
    # (shape, chain, the copy computed with plain PyTorch calls)
    ((4, 6), "t().clone()", lambda x: x.t().clone()),
    ((2, 3, 4), "permute(2, 0, 1).flip(1)", lambda x: x.permute(2, 0, 1).flip(1)),
]


@pytest.mark.parametrize("shape, ops, reference", ISSUE_CASES, ids=[c[1] for c in ISSUE_CASES])
def test_a_copy_of_a_non_contiguous_tensor_is_described_by_its_real_strides(shape, ops, reference):
    x = torch.arange(float(torch.Size(shape).numel())).reshape(shape)
    expected = reference(x)
    step = inspect(TensorSettings(shape=shape, ops=ops)).result
    assert step.facts.memory == NEW_MEMORY
    assert step.facts.stride == expected.stride()
    assert step.facts.is_contiguous == expected.is_contiguous()
    assert not expected.is_contiguous()        # the case the issue is about
    assert str(expected.stride()) in step.note
    assert "row-major order" not in step.note and "**not** row-major" in step.note


def test_the_clone_note_names_preserve_format_and_pytorch_agrees():
    x = torch.arange(24.0).reshape(4, 6)
    note = inspect(TensorSettings(shape=(4, 6), ops="t().clone()")).result.note
    assert "memory_format=torch.preserve_format" in note
    # What the note says clone() does by default is what PyTorch does:
    assert x.t().clone().stride() == x.t().clone(memory_format=torch.preserve_format).stride()
    assert x.t().clone(memory_format=torch.contiguous_format).is_contiguous()
    assert "clone(memory_format=torch.contiguous_format)" in note


def test_the_view_after_clone_fails_and_is_explained_with_a_row_major_clone_as_a_fix():
    x = torch.arange(24.0).reshape(4, 6)
    with pytest.raises(RuntimeError) as caught:
        x.t().clone().view(-1)
    report = inspect(TensorSettings(shape=(4, 6), ops="t().clone().view(-1)"))
    failure = report.chain_failure
    assert failure.step_number == 3 and failure.error.message == str(caught.value)
    assert "preserve_format" in failure.error.explanation
    assert str(x.t().clone().stride()) in failure.error.explanation
    chains = [dict(fix.changes)["ops"] for fix in failure.fixes]
    assert "t().clone(memory_format=torch.contiguous_format).view(-1)" in chains
    for chain in chains:                     # every fix works, and gives PyTorch's values
        fixed = inspect(TensorSettings(shape=(4, 6), ops=chain))
        assert fixed.chain_failure is None, chain
        assert torch.equal(fixed.result.tensor, x.t().reshape(-1))


CHAINS = ["t().clone()", "t().contiguous()", "t().reshape(-1)", "clone()", "flip(0)", "t().flip(1)",
          "expand(4, 6, 6)[:, :, 0].clone()", "[:, ::2].t().clone()", "[:, ::2].flip(0)",
          "unsqueeze(0).expand(3, 4, 6).clone()", "t().clone(memory_format=torch.contiguous_format)",
          "t().clone(memory_format=torch.preserve_format)", "t()[1:4].clone()"]


def _reference(x: torch.Tensor, chain: str) -> torch.Tensor:
    """The chain applied with plain tensor calls (no inspector code)."""
    out = x
    for step in parse_chain(chain):
        out = out[step.index] if step.is_index else \
            getattr(out, step.method)(*step.args, **dict(step.kwargs))
    return out


@pytest.mark.parametrize("chain", CHAINS)
def test_every_copy_note_agrees_with_is_contiguous(chain):
    shape = (4, 6) if not chain.startswith("expand") else (6,)
    x = torch.arange(float(torch.Size(shape).numel())).reshape(shape)
    report = inspect(TensorSettings(shape=shape, ops=chain))
    assert report.chain_failure is None
    expected = _reference(x, chain)
    step = report.result
    assert step.facts.stride == expected.stride()
    if step.facts.memory == NEW_MEMORY:
        assert ("in row-major order" in step.note) == expected.is_contiguous(), step.note
        if not expected.is_contiguous():
            assert str(expected.stride()) in step.note


def test_meta_facts_of_a_huge_copy_keep_the_same_layout_rule():
    big = torch.empty(10000, 10000, 10000, device="meta").permute(2, 0, 1).clone()
    report = inspect(TensorSettings(shape=(10000, 10000, 10000), ops="permute(2, 0, 1).clone()"))
    assert not report.materialized
    assert report.result.facts.stride == big.stride()
    assert ("**not** row-major" in report.result.note) == (not big.is_contiguous())


@pytest.mark.parametrize("text", [
    "clone(memory_format=torch.channels_last)", "clone(memory_format=os.system)",
    "clone(memory_format=torch.contiguous_format.__class__)", "view(memory_format=torch.contiguous_format)",
    "clone(memory_format=contiguous_format)", "clone(memory_format=1)", "clone(torch.contiguous_format)",
    "clone(memory_format=torch.preserve_format())",
])
def test_memory_format_accepts_only_two_names_for_two_methods(text):
    with pytest.raises(ChainSyntaxError):
        parse_chain(text)


def test_memory_format_is_a_plain_torch_value_and_round_trips():
    (step,) = parse_chain("clone(memory_format=torch.contiguous_format)")
    assert step.kwargs == (("memory_format", torch.contiguous_format),)
    assert step.code() == ".clone(memory_format=torch.contiguous_format)"
    (step,) = parse_chain("contiguous(memory_format=torch.contiguous_format)")
    assert step.method == "contiguous"


# --- item 9: each tensor's device is a fact --------------------------------------------------

def test_every_step_reports_the_device_pytorch_gives():
    report = inspect(TensorSettings(shape=(4, 6), ops="t().clone().flatten()"))
    x = torch.arange(24.0).reshape(4, 6)
    expected = [x, x.t(), x.t().clone(), x.t().clone().flatten()]
    assert [v.facts.device for v in report.views] == [str(t.device) for t in expected]
    assert all(f"device={t.device}" in v.facts.line(v.label) for v, t in zip(report.views, expected,
                                                                              strict=True))


def test_a_huge_tensor_says_its_facts_come_from_meta():
    report = inspect(TensorSettings(shape=(10000, 10000, 10000)))
    assert report.result.facts.device == str(torch.empty(1, device="meta").device)


def test_the_script_prints_the_device():
    code = tensor_script(TensorSettings(shape=(4, 6), ops="t()"), materialized=True, failing_step=None)
    assert "device={t.device}" in code



STEP_NOTES = [
    # (chain on a (2, 3) tensor, the same chain in PyTorch, the note's start, what PyTorch's
    # result says is true of that step)
    ("reshape(3, 2)", lambda x: x.reshape(3, 2), "reshape returned a view",
     lambda x, y: y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()),
    ("t().reshape(6)", lambda x: x.t().reshape(6), "reshape had to copy",
     lambda x, y: y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()),
    ("contiguous()", lambda x: x.contiguous(), "contiguous() returned the tensor itself",
     lambda x, y: y is x),
    ("unsqueeze(0).expand(3, 2, 3)", lambda x: x.unsqueeze(0).expand(3, 2, 3),
     "stride 0: every index", lambda x, y: 0 in y.stride()),
    ("squeeze(0)", lambda x: x.squeeze(0), "the dimension asked for does not have size 1",
     lambda x, y: y.shape == x.shape),
    ("[1:]", lambda x: x[1:], "a view that starts later",
     lambda x, y: y.storage_offset() > x.storage_offset()),
    ("t()", lambda x: x.t(), "a view: the same strides in a new order",
     lambda x, y: y.stride() == x.stride()[::-1]),
    ("view(3, 2)", lambda x: x.view(3, 2), "a view: new sizes and strides",
     lambda x, y: y.stride() == (2, 1)),
]


@pytest.mark.parametrize("ops, chain, note, pytorch_agrees", STEP_NOTES, ids=[c[0] for c in STEP_NOTES])
def test_each_step_note_is_the_one_pytorchs_result_calls_for(ops, chain, note, pytorch_agrees):
    """step_note's verdicts (view or copy, itself, stride 0, offset moved...) each reached with a
    real tensor, and PyTorch's own result of the chain confirms the one given."""
    x = torch.arange(6.0).reshape(2, 3)
    assert pytorch_agrees(x, chain(x))
    assert inspect(TensorSettings(shape=(2, 3), ops=ops)).result.note.startswith(note)
