"""What PyTorch reports about a tensor (shape, dtype, device, stride, offset, storage), and one
step's view."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from workbench.tensor_inspector.chain import Step

NEW_MEMORY, VIEW, SAME = "new memory", "view", "same tensor"


@dataclass(frozen=True)
class Facts:
    """What PyTorch reports about one tensor, and how it relates to the tensor it came from."""

    shape: tuple[int, ...]
    dtype: str
    itemsize: int
    numel: int
    nbytes: int
    stride: tuple[int, ...]
    storage_offset: int
    storage_elements: int
    storage_bytes: int
    is_contiguous: bool
    memory: str                  # NEW_MEMORY, VIEW (shares storage) or SAME (the very tensor)
    device: str                  # str(tensor.device): "cpu", "cuda:0", "mps:0", or "meta"

    def line(self, name: str) -> str:
        """One line of text; the generated script prints exactly this for each step."""
        return (f"{name}: shape={self.shape} dtype={self.dtype} device={self.device} "
                f"stride={self.stride} "
                f"offset={self.storage_offset} contiguous={self.is_contiguous} "
                f"numel={self.numel} nbytes={self.nbytes} storage={self.storage_elements} elements "
                f"({self.storage_bytes} bytes) memory={self.memory}")


def storage_root(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor that owns the storage `tensor` looks at (itself unless it is a view)."""
    return tensor._base if tensor._base is not None else tensor


def memory_relation(result: torch.Tensor, source: torch.Tensor | None) -> str:
    """Does `result` share `source`'s storage? `_base` works on `meta` tensors too."""
    if source is None:
        return NEW_MEMORY
    if result is source:
        return SAME
    return VIEW if storage_root(result) is storage_root(source) else NEW_MEMORY


def facts_of(tensor: torch.Tensor, source: torch.Tensor | None = None) -> Facts:
    storage_bytes = tensor.untyped_storage().nbytes()
    return Facts(
        shape=tuple(tensor.shape), dtype=str(tensor.dtype), itemsize=tensor.element_size(),
        numel=tensor.numel(), nbytes=tensor.nbytes, stride=tuple(tensor.stride()),
        storage_offset=tensor.storage_offset(),
        storage_elements=storage_bytes // tensor.element_size(), storage_bytes=storage_bytes,
        is_contiguous=tensor.is_contiguous(), memory=memory_relation(tensor, source),
        device=str(tensor.device))


@dataclass
class StepView:
    label: str                         # the code so far, e.g. "x.t()"
    step: Step | None                  # None for x itself
    facts: Facts
    tensor: torch.Tensor               # real when `Inspection.materialized`, else on `meta`
    origin: torch.Tensor | None = None  # origin ids with the same layout (real runs only)
    note: str = ""


def walk_positions(shape: tuple[int, ...], stride: tuple[int, ...], offset: int,
                    limit: int) -> list[int]:
    """Storage positions of the first `limit` elements in row-major order, without allocating."""
    if math.prod(shape) == 0:
        return []
    flat = torch.arange(min(limit, math.prod(shape)), dtype=torch.int64)
    index = torch.unravel_index(flat, shape) if shape else ()
    positions = torch.full_like(flat, offset)
    for i, s in zip(index, stride, strict=True):
        positions += i * s
    return positions.tolist()
