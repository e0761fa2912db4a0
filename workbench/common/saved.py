"""What a graph still holds: the tensors its nodes saved for backward, and whether backward()
has freed them. A sum of loss tensors (`total += loss`) keeps every batch's nodes alive; whether
that costs memory depends on this, so the pages measure it rather than say it."""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class SavedTensors:
    nodes: int          # autograd nodes reachable from the tensor's grad_fn
    saved: int          # tensors those nodes saved for backward
    held: int           # of which still readable: not freed by a backward() through them


def saved_tensors_held(tensor: torch.Tensor) -> SavedTensors:
    """Walk `tensor`'s graph and try each node's saved tensors (`_saved_*`): PyTorch raises for
    one that a backward() without retain_graph freed."""
    seen: set[int] = set()
    saved = held = 0
    stack = [tensor.grad_fn] if tensor.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
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
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return SavedTensors(len(seen), saved, held)
