"""The home page's device-mismatch demonstration raises for the reason the lesson gives.

Every expectation is computed here by PyTorch: the stand-in is honest only if the same ops on the
same devices raise the same messages, and the 0-dim exception really is one.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from workbench.common.device import best_device
from workbench.common.device_checks import (
    DEVICE_MISMATCH,
    cross_device_demo,
    stand_in_for,
)


def _error(run) -> str:
    with pytest.raises(RuntimeError) as caught:
        run()
    return str(caught.value).splitlines()[0]


def test_without_a_gpu_meta_stands_in_and_the_page_says_so():
    demo = cross_device_demo(torch.device("cpu"))       # a learner computing on the CPU
    assert demo.simulated and demo.other == str(torch.ones(1, device="meta").device)
    if not torch.cuda.is_available():     # the real answer to "give me a CUDA tensor" here
        with pytest.raises((AssertionError, RuntimeError)) as caught:
            torch.ones(2, device="cuda")
        assert demo.no_gpu is not None and demo.no_gpu.raised
        assert demo.no_gpu.outcome == str(caught.value).strip().splitlines()[0]


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
def test_non_scalar_tensors_on_two_devices_raise_pytorchs_own_error(device):
    demo = cross_device_demo(torch.device(device))
    other = torch.device(demo.other)
    a, b = torch.ones(2, 3), torch.ones(2, 3, device=other)
    meetings = {m.code: m for m in demo.meetings}
    for code, run in {"a + b": lambda: a + b, "a * b": lambda: a * b,
                      "torch.cat([a, b])": lambda: torch.cat([a, b])}.items():
        expected = _error(run)
        assert meetings[code].raised and meetings[code].error_type == "RuntimeError"
        assert meetings[code].outcome == expected
        # the reason the lesson gives: the message is about devices, naming both of them
        assert "device" in expected and "cpu" in expected and other.type in expected


def test_a_zero_dim_cpu_tensor_is_the_exception_and_moving_first_works():
    demo = cross_device_demo(torch.device("cpu"))
    other = torch.device(demo.other)
    meetings = {m.code: m for m in demo.meetings}
    b = torch.ones(2, 3, device=other)
    scalar_result = torch.tensor(2.0) + b           # PyTorch allows this: no exception here
    assert not meetings["torch.tensor(2.0) + b"].raised
    assert str(scalar_result.device) in meetings["torch.tensor(2.0) + b"].outcome
    moved = torch.ones(2, 3).to(b.device) + b
    assert not meetings["a.to(b.device) + b"].raised
    assert str(moved.device) in meetings["a.to(b.device) + b"].outcome


def test_the_knowledge_check_is_answered_by_the_real_error():
    answer = DEVICE_MISMATCH.answer()
    other = stand_in_for(best_device())
    expected = _error(lambda: torch.ones(2, 3) + torch.ones(2, 3, device=other))
    assert answer.correct_option == "PyTorch raises an error"
    assert answer.shown_value == expected
    if other.type == "meta":
        assert "stood in" in answer.explanation
    assert "a + b" in DEVICE_MISMATCH.code and "torch.ones(2, 3" in DEVICE_MISMATCH.code


@pytest.mark.spawns
def test_the_demo_script_prints_what_the_page_shows(tmp_path):
    demo = cross_device_demo(torch.device("cpu"))
    out = subprocess.run([sys.executable, "-c", demo.code], capture_output=True, text=True,
                         timeout=120, check=True, cwd=tmp_path).stdout.splitlines()
    meetings = {m.code: m for m in demo.meetings}
    assert out[0] == f"a + b -> {meetings['a + b'].outcome}"
    assert out[2] == f"a.to(b.device) + b -> {demo.other}"
