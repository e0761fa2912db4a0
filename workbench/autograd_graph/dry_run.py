"""Checks before PyTorch is called: what a call is given, and how large its result would be.

A call's operands are bounded and must be values PyTorch takes; a creator's size is computed from
its arguments; any other op on large operands is first run on the `meta` device, which gives the
result's shape without allocating it, so an oversized result is refused before it exists.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from workbench.autograd_graph.budget import Budget, distinct_leaves, flat_tensors, measure
from workbench.autograd_graph.language import ProgramRefused
from workbench.autograd_graph.problems import Position
from workbench.autograd_graph.program_values import is_number, kind_of


class DryRun:
    """The checks a call into PyTorch passes first; each refuses with the page's words."""

    def __init__(self, budget: Budget, position: Position) -> None:
        self.budget = budget
        self.limits = budget.limits
        self.position = position

    def check_operands(self, values: tuple[Any, ...]) -> None:
        """Everything one call passes to PyTorch: bounded in size, then each value's kind.

        Each list is bounded by its literal, but a call takes many: `x.view(z, z, z, ...)` with
        600 copies of a 10,000-number list would be walked (checked, flattened, copied to the
        meta device) 6 million times. All of a call's values together get a list's bound.
        """
        limit = self.limits.max_numel
        count, lists = measure(values, limit, self.budget.tick)
        if count > limit or lists > limit:
            raise self.budget.limit(f"one call may be given at most {limit} numbers and tensors, and "
                                    f"{limit} lists, each counted as often as it appears")
        for value in distinct_leaves(values, self.budget.tick):
            if not (value is None or isinstance(value, torch.Tensor | int | float | bool | str
                                                | slice | torch.dtype | torch.Size)
                    or value is Ellipsis):
                raise ProgramRefused(self.position.line, f"{kind_of(value)} cannot be passed to PyTorch here")

    def check_result_size(self, function: Callable[..., Any], args: tuple[Any, ...],
                          kwargs: dict[str, Any] | None = None) -> None:
        """Run the op on the `meta` device first: the result's shape, without allocating.

        Skipped when the operands are so small that no accepted operation can exceed the limit:
        broadcasting, matmul, outer, cat, stack and reductions all make at most the product of
        the operands' *extents* elements, where a size of 0 counts as 1 and each operand as at
        least 2. Counting numel instead would let an empty tensor through: `torch.ones(0, N)`
        has no elements, but `.sum(0)` of it has N.
        """
        bound = 1
        for tensor in flat_tensors(list(args) + list((kwargs or {}).values())):
            bound *= max(extent(tensor), 2)
            if bound > self.limits.max_numel:  # stop: the product of 10,000 extents is huge
                break
        else:
            return
        made: dict[int, Any] = {}
        meta_args = tuple(to_meta(a, made) for a in args)
        meta_kwargs = {k: to_meta(v, made) for k, v in (kwargs or {}).items()}
        try:
            with torch.no_grad():
                shape_probe = function(*meta_args, **meta_kwargs)
        except Exception:  # noqa: BLE001 - the real call raises PyTorch's own error; inputs are bounded
            return
        if isinstance(shape_probe, torch.Tensor) and shape_probe.numel() > self.limits.max_numel:
            raise self.budget.limit(f"the result would have {shape_probe.numel():,} elements; "
                                    f"at most {self.limits.max_numel:,} are allowed here")

    def check_creation(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> None:
        """`torch.<name>(*args, **kwargs)`, a creator: the size it would make, from its arguments."""
        line = self.position.line
        limit = self.limits.max_numel
        if "device" in kwargs or "generator" in kwargs:  # pragma: no cover - KEYWORDS refuses both
            raise ProgramRefused(line, "device and generator are chosen by the page")
        if name == "tensor":
            if len(args) != 1:
                raise ProgramRefused(line, "torch.tensor takes one value or list")
            count, lists = measure(args[0], limit, self.budget.tick)
            if lists > limit:
                raise self.budget.limit(f"torch.tensor would walk more than {limit:,} lists; at most "
                                        f"{limit:,} are allowed here")
        elif name == "arange":
            bounds = {"start": 0, "end": None, "step": 1}
            given = dict(zip(("end",) if len(args) == 1 else ("start", "end", "step"), args, strict=False))
            bounds.update(given)
            bounds.update({k: v for k, v in kwargs.items() if k in bounds})
            start, end, step = bounds["start"], bounds["end"], bounds["step"]
            if not (is_number(start) and is_number(end) and is_number(step)) or step == 0:
                raise ProgramRefused(line, "torch.arange takes numbers and a non-zero step")
            count = max(0, math.ceil((end - start) / step))
        elif name == "linspace":
            steps = args[2] if len(args) > 2 else kwargs.get("steps")
            if not isinstance(steps, int) or isinstance(steps, bool):
                raise ProgramRefused(line, "torch.linspace needs `steps`, a whole number")
            count = steps
        else:
            shape_args = args[:-1] if name == "full" and "fill_value" not in kwargs else args
            if len(shape_args) == 1 and isinstance(shape_args[0], list | tuple | torch.Size):
                shape_args = list(shape_args[0])
            if name == "eye":
                shape_args = [args[0], args[1] if len(args) > 1 else args[0]] if args else []
            if not all(isinstance(s, int) and not isinstance(s, bool) for s in shape_args):
                raise ProgramRefused(line, f"torch.{name} takes whole-number sizes")
            if any(s < 0 for s in shape_args):
                raise ProgramRefused(line, "sizes cannot be negative")
            count = math.prod(shape_args)
        if count > limit:
            # torch.tensor's count stopped once it passed the limit: only a lower bound is known.
            made = f"more than {limit:,}" if name == "tensor" else f"{count:,}"
            raise self.budget.limit(f"torch.{name} would make {made} elements; at most "
                                    f"{limit:,} are allowed here")


def to_meta(value: Any, made: dict[int, Any] | None = None) -> Any:
    """`value` with each tensor replaced by a meta tensor of its shape and strides.

    Memoized by id: a list or tensor the program passes several times (`[a, a, a]`, `b = [a, a]`)
    is converted once and shared, as it is in the real call.
    """
    made = {} if made is None else made
    if id(value) in made:
        return made[id(value)]
    if isinstance(value, torch.Tensor):
        converted: Any = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype,
                                             device="meta")
    elif isinstance(value, list | tuple) and not isinstance(value, torch.Size):
        converted = type(value)(to_meta(v, made) for v in value)
    else:
        return value
    made[id(value)] = converted
    return converted


def extent(tensor: torch.Tensor) -> int:
    """numel with every size of 0 counted as 1: a bound on what an op can make from it."""
    return math.prod(max(size, 1) for size in tensor.shape)


def warm_up() -> None:
    """Load PyTorch's meta-device kernels once per process (about 2 s the first time), so a
    learner's first run is not charged for it against the time limit."""
    probe = torch.empty(2, 2, device="meta")
    with torch.no_grad():
        ((probe * probe + 1) ** 2 @ probe).sum().view(1)


warm_up()
