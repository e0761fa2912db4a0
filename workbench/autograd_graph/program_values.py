"""The values a learner's program handles, as the interpreter names them to the learner.

The name `torch` stands for `TORCH`, which has no attributes of its own (the interpreter looks up
what the program may use in catalog.py); `kind_of` is the word a refusal uses for a value.
"""
from __future__ import annotations

import ast
from typing import Any

import torch


class _TorchNamespace:
    """Stands for the name `torch` inside programs; it has no attributes of its own."""

    def __repr__(self) -> str:
        return "torch"


TORCH = _TorchNamespace()


def is_number(value: Any) -> bool:
    return isinstance(value, int | float)


def kind_of(value: Any) -> str:
    """What a refusal calls `value`: `a tensor`, `a number`, `the model`..."""
    if value is None:
        return "None"
    if isinstance(value, torch.Tensor):
        return "a tensor"
    if isinstance(value, bool | int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if value is TORCH:
        return "the module `torch`"
    if isinstance(value, torch.nn.Module):
        return "the model"
    return f"a {type(value).__name__}"


def source_text(node: ast.AST) -> str:
    """Short source text of an expression, for labels (ast.unparse writes; it never runs code)."""
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."
