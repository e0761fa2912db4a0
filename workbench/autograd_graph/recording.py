"""What a run leaves for the graph beside the tensors: how each tensor was made, and notes.

Each tensor the program computes is recorded with the tensors it came from (`OpRecord`) in a
`Catalog`, which also keeps the learner's names for tensors and why a tensor is not in the backward
graph. The graph walker (graph.py) puts these names on PyTorch's nodes. `Note`s say something worth
knowing about a line that is not an error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from workbench.autograd_graph.budget import flat_tensors
from workbench.autograd_graph.problems import Position


@dataclass
class OpRecord:
    """One tensor the program computed, and the tensors it was computed from."""

    line: int
    label: str                      # e.g. "w * x", "torch.relu", ".sum"
    result: torch.Tensor
    inputs: tuple[torch.Tensor, ...]
    grad_enabled: bool


@dataclass
class Catalog:
    """What the interpreter saw: names from the program, and how each tensor was made.

    The graph walker uses it to put the learner's names on PyTorch's nodes and to say why a
    tensor is not in the backward graph.
    """

    names: dict[int, str] = field(default_factory=dict)            # id(tensor) -> latest name
    tensors: dict[int, torch.Tensor] = field(default_factory=dict)  # keeps ids valid
    ops: list[OpRecord] = field(default_factory=list)
    reasons: dict[int, str] = field(default_factory=dict)          # id(tensor) -> why no graph
    order: list[str] = field(default_factory=list)                 # names, last-assigned last
    made_by: dict[int, OpRecord] = field(default_factory=dict)     # id(grad_fn) -> its op

    def keep(self, tensor: torch.Tensor) -> None:
        self.tensors[id(tensor)] = tensor

    def name(self, tensor: torch.Tensor, name: str) -> None:
        self.keep(tensor)
        self.names[id(tensor)] = name
        if name in self.order:
            self.order.remove(name)
        self.order.append(name)

    def name_of(self, tensor: torch.Tensor) -> str | None:
        return self.names.get(id(tensor))

    def reason_of(self, tensor: torch.Tensor) -> str | None:
        return self.reasons.get(id(tensor))

    def add(self, record: OpRecord) -> None:
        self.ops.append(record)
        if record.result.grad_fn is not None:
            self.made_by[id(record.result.grad_fn)] = record

    def producer(self, grad_fn: Any) -> OpRecord | None:
        """The op record whose result still carries this grad_fn (not after an in-place change)."""
        record = self.made_by.get(id(grad_fn))
        if record is not None and record.result.grad_fn is grad_fn:
            return record
        return None


@dataclass(frozen=True)
class Note:
    """Something worth saying about a line that is not an error (e.g. `.grad` of a non-leaf)."""

    line: int
    title: str
    text: str


class Recorder:
    """Fills the run's catalog and notes, each entry placed at the line the run is at."""

    def __init__(self, position: Position) -> None:
        self.position = position
        self.catalog = Catalog()
        self.notes: list[Note] = []

    def record(self, label: str, result: torch.Tensor, inputs: tuple[Any, ...]) -> None:
        """`result` was computed from the tensors in `inputs`; say why, if it is not in the graph."""
        self.catalog.keep(result)
        tensors = tuple(flat_tensors(inputs))
        for tensor in tensors:
            self.catalog.keep(tensor)
        self.catalog.add(OpRecord(self.position.line, label, result, tensors, torch.is_grad_enabled()))
        if not result.requires_grad and id(result) not in self.catalog.reasons:
            if result.is_inference():
                self.catalog.reasons[id(result)] = ("made inside torch.inference_mode(): an "
                                                    "inference tensor, never recorded")
            elif not torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
                self.catalog.reasons[id(result)] = "made inside torch.no_grad(): not recorded"

    def detached(self, result: torch.Tensor) -> None:
        self.catalog.reasons[id(result)] = "made by detach(): cut from the graph"

    def note(self, title: str, text: str) -> None:
        self.notes.append(Note(self.position.line, title, text))
