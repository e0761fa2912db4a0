"""`print` in a learner's program: the lines it writes, formatted only as far as they are shown.

A printed line is cut to `MAX_PRINTED_CHARS`, and a list is formatted item by item until that many
characters are written, with the deadline checked between items, so printing a large shared list
costs no more than the line it shows. No heap address is ever written (`show_value`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import torch

from workbench.autograd_graph.budget import Budget
from workbench.autograd_graph.language import ProgramRefused
from workbench.autograd_graph.problems import Position
from workbench.autograd_graph.program_values import TORCH

MAX_PRINTED_CHARS = 2000


# ` at 0x7f...`: where CPython's default repr puts an object's heap address.
_ADDRESS = re.compile(r" (object )?at 0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class Printed:
    line: int
    text: str


class Printer:
    """Runs the program's `print(...)` calls and keeps what they wrote."""

    def __init__(self, budget: Budget, position: Position) -> None:
        self.budget = budget
        self.limits = budget.limits
        self.position = position
        self.printed: list[Printed] = []

    def print(self, args: list[Any], kwargs: dict[str, Any]) -> None:
        if kwargs:
            raise ProgramRefused(self.position.line, "print(...) takes no keyword arguments here")
        if len(self.printed) >= self.limits.max_print_lines:
            raise self.budget.limit(f"at most {self.limits.max_print_lines} lines may be printed")
        budget = [MAX_PRINTED_CHARS]
        parts = []
        for arg in args:
            parts.append(self.show(arg, budget))
            if budget[0] <= 0:
                break
        self.printed.append(Printed(self.position.line, " ".join(parts)[:MAX_PRINTED_CHARS]))
        return None

    def show(self, value: Any, budget: list[int], *, nested: bool = False) -> str:
        """`str(value)` as print writes it, stopped once `budget[0]` characters are written.

        A list of 10,000 tensors would otherwise be formatted in full (seconds of CPU, outside
        any limit) before being cut to one line; here the deadline is checked between items.
        """
        self.budget.tick()
        if budget[0] <= 0:
            return "..."
        if isinstance(value, list | tuple) and not isinstance(value, torch.Size):
            opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
            items = []
            for item in value:
                if budget[0] <= 0:
                    items.append("...")
                    break
                items.append(self.show(item, budget, nested=True))
            text = opening + ", ".join(items) + ("," if len(items) == 1 and closing == ")" else "") \
                + closing
        elif nested and isinstance(value, str):
            text = repr(value)  # Python writes `['a']` for a list, where print('a') writes a
        else:
            text = show_value(value)
        budget[0] -= len(text)
        return text


def show_value(value: Any) -> str:
    """What print writes for one value that is not a list.

    Never a heap address: `print(y.grad_fn)` in Python writes `<AddBackward0 object at 0x7f...>`,
    a number that changes from run to run and differs between the page and the learner's own
    script; it teaches nothing. The node is shown by the name PyTorch gives it, `<AddBackward0>`,
    and any other object's address is left out the same way.
    """
    if isinstance(value, torch.Tensor):
        return str(value.detach()) if value.numel() <= 100 else f"tensor of shape {tuple(value.shape)}"
    if value is TORCH:
        return "<module 'torch'>"
    if value is None or isinstance(value, str | int | float | torch.dtype | torch.Size):
        return str(value)  # a learner's own string is written as it is, whatever it says
    if isinstance(value, torch.autograd.graph.Node):
        return f"<{value.name().split('::')[-1]}>"
    return _ADDRESS.sub("", str(value))
