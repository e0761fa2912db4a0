"""What a graph still holds: the tensors its nodes saved for backward, and whether backward()
has freed them. A sum of loss tensors (`total += loss`) keeps every batch's nodes alive; whether
that costs memory depends on this, so the pages measure it rather than say it."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class SavedTensors:
    nodes: int          # autograd nodes reachable from the tensor's grad_fn
    saved: int          # tensors those nodes saved for backward
    held: int           # of which still readable: not freed by a backward() through them


def graph_nodes(tensor: torch.Tensor) -> Iterator[Any]:
    """Every autograd node `tensor` keeps alive through its grad_fn, each once."""
    seen: set[int] = set()
    stack = [tensor.grad_fn] if tensor.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(n for n, _ in node.next_functions if n is not None)


def saved_tensors_held(tensor: torch.Tensor) -> SavedTensors:
    """Walk `tensor`'s graph and try each node's saved tensors (`_saved_*`): PyTorch raises for
    one that a backward() without retain_graph freed."""
    nodes = saved = held = 0
    for node in graph_nodes(tensor):
        nodes += 1
        for name in dir(node):
            if not name.startswith("_saved_") or name.startswith("_saved_raw"):
                continue
            try:
                value = getattr(node, name)
            except RuntimeError:            # freed by backward()
                saved += 1
                continue
            if torch.is_tensor(value):
                saved += 1
                held += 1
    return SavedTensors(nodes, saved, held)
