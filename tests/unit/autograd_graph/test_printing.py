"""printing.py: print writes what Python's print writes for the values a program has (no heap
address, a large tensor by its shape), one line per call, cut to its characters and its lines."""
from __future__ import annotations

import pytest
import torch

from workbench.autograd_graph.budget import Budget
from workbench.autograd_graph.language import Limits, ProgramRefused
from workbench.autograd_graph.printing import MAX_PRINTED_CHARS, Printed, Printer, show_value
from workbench.autograd_graph.problems import Position
from workbench.autograd_graph.program_values import TORCH


def printer(max_print_lines: int = 200, line: int = 1) -> Printer:
    position = Position(line)
    budget = Budget(Limits(max_print_lines=max_print_lines), position)
    budget.start()
    return Printer(budget, position)


def test_values_are_shown_as_print_writes_them():
    w = torch.tensor([1.5, -2.0], requires_grad=True)
    for value in (w * 2, 3, 2.5, "a string", None, torch.float32, w.shape):
        expected = str(value.detach()) if isinstance(value, torch.Tensor) else str(value)
        assert show_value(value) == expected
    assert show_value(TORCH) == "<module 'torch'>"


def test_a_large_tensor_is_shown_by_its_shape():
    big = torch.ones(11, 10)
    assert big.numel() > 100
    assert show_value(big) == f"tensor of shape {tuple(big.shape)}"


def test_a_node_is_shown_by_pytorch_s_name_without_an_address():
    y = torch.ones(2, requires_grad=True).exp()
    assert "0x" in repr(y.grad_fn)
    assert show_value(y.grad_fn) == f"<{y.grad_fn.name()}>"
    assert show_value(object()) == "<object>"


def test_print_joins_its_arguments_like_python():
    out = printer(line=3)
    a = torch.ones(2)
    out.print(["x", ["x", (1,)], a], {})
    assert out.printed == [Printed(3, f"x {['x', (1,)]} {a}")]


def test_a_long_line_is_cut_and_a_long_list_formatted_only_as_far_as_it_shows():
    out = printer()
    long = ["y" * 300] * 50
    out.print([long], {})
    assert len(out.printed[0].text) == MAX_PRINTED_CHARS
    assert out.printed[0].text == str(long)[:MAX_PRINTED_CHARS]
    budget = [10]
    assert out.show(list(range(100)), budget) == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...]"


def test_print_refuses_keywords_and_lines_past_the_limit():
    out = printer(max_print_lines=2)
    with pytest.raises(ProgramRefused, match="print\\(\\.\\.\\.\\) takes no keyword arguments here"):
        out.print(["a"], {"sep": ","})
    out.print(["a"], {})
    out.print(["b"], {})
    with pytest.raises(ProgramRefused) as refused:
        out.print(["c"], {})
    assert refused.value.kind == "limit" and refused.value.message == "at most 2 lines may be printed"
    assert [p.text for p in out.printed] == ["a", "b"]
