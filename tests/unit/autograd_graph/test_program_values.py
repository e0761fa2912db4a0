"""program_values.py: the words a refusal uses for a value, and the short source text of a label."""
from __future__ import annotations

import ast

import pytest
import torch

from workbench.autograd_graph.program_values import TORCH, is_number, kind_of, source_text


@pytest.mark.parametrize("value, kind", [
    (None, "None"), (torch.ones(2), "a tensor"), (True, "a number"), (3, "a number"), (2.5, "a number"),
    ("s", "a string"), ([1], "a list"), ((1,), "a list"), (torch.Size([2]), "a list"),
    (TORCH, "the module `torch`"), (torch.nn.Linear(2, 1), "the model"), ({}, "a dict"),
    (torch.float32, "a dtype"),
])
def test_each_value_has_its_word(value, kind):
    assert kind_of(value) == kind


def test_numbers_are_ints_and_floats():
    assert is_number(3) and is_number(2.5) and is_number(True)
    assert not is_number(torch.ones(1)) and not is_number("3")


def test_source_text_is_the_expression_shortened_to_forty_characters():
    short = ast.parse("w * x + b", mode="eval").body
    assert source_text(short) == "w * x + b"
    long = ast.parse(" + ".join(f"x{i}" for i in range(20)), mode="eval").body
    text = source_text(long)
    assert len(text) == 40 and text.endswith("...") and ast.unparse(long).startswith(text[:37])


def test_torch_stands_for_the_name_and_nothing_else():
    assert repr(TORCH) == "torch"
    assert not hasattr(TORCH, "load")
