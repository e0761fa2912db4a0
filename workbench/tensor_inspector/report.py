"""The layout of a tensor, and of each op applied to it, as PyTorch reports it.

A tensor is a view over a flat *storage*: `shape` says how many indices each dimension has,
`stride` says how many storage elements one step along each dimension moves, and
`storage_offset` says where element (0, 0, ...) lives. The element at index (i, j, k) is read
from storage position `offset + i*stride[0] + j*stride[1] + k*stride[2]`. Ops such as `t`,
`permute` or slicing only write new sizes/strides/offset over the same storage (a *view*);
`view` refuses when no strides can describe the new shape, `reshape` then copies.

Facts for any shape come from the `meta` device, which computes shapes, strides and PyTorch's
errors without allocating memory. Values are only made real below `MAX_VALUES` elements per
step; each real step also runs on a twin tensor of *origin ids* (the storage position every
element had in the tensor we built), so pictures can colour an element the same wherever the
chain moves it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from workbench.tensor_inspector.chain import ChainSyntaxError, Step, apply_step, parse_chain
from workbench.common.errors import ExplainedError
from workbench.tensor_inspector.factory import build_tensor
from workbench.tensor_inspector.facts import NEW_MEMORY, SAME, Facts, StepView, facts_of
from workbench.tensor_inspector.failures import Failure, build_failure, step_failure, too_large_failure
from workbench.tensor_inspector.settings import DTYPES, TensorSettings

# Values are made real only when every step has at most MAX_VALUES elements (2 MiB of float64)
# and all steps together at most MAX_TOTAL_VALUES (a chain of copies stays within ~16 MiB,
# origin ids included). Above that, facts come from `meta` alone.
MAX_VALUES = 262_144
MAX_TOTAL_VALUES = 4 * MAX_VALUES


@dataclass
class Inspection:
    settings: TensorSettings
    steps: tuple[Step, ...] = ()
    views: list[StepView] = field(default_factory=list)
    chain_failure: Failure | None = None   # the chain could not be parsed or a step failed
    build_failure: Failure | None = None   # the factory refused this dtype
    materialized: bool = False
    largest_numel: int = 0
    total_numel: int = 0

    @property
    def result(self) -> StepView:
        return self.views[-1]


def inspect(settings: TensorSettings, device: torch.device | str = "cpu") -> Inspection:
    """Facts of x and of every step of the chain; values too when they are small enough."""
    report = Inspection(settings)
    try:
        report.steps = parse_chain(settings.ops)
    except ChainSyntaxError as exc:
        report.chain_failure = Failure(ExplainedError(
            "This chain cannot be read", str(exc),
            "The inspector reads a chain of the allowed tensor methods with whole-number "
            "arguments, and indexing with slices, whole numbers, `None` and `...`, for example "
            "`transpose(0, 1).reshape(4, -1)[:, 1:3]`. It never runs typed text as code.",
            ("check the spelling of each method and its parentheses",), "Refused"))
    try:
        meta = torch.empty(settings.shape, dtype=DTYPES[settings.dtype], device="meta")
    except RuntimeError as exc:      # more bytes than an int64 can count: PyTorch refuses
        report.build_failure = too_large_failure(exc, settings)
        return report
    meta_views, meta_failure = _run_chain(meta, None, report.steps)
    report.largest_numel = max(v.facts.numel for v in meta_views)
    report.total_numel = sum(v.facts.numel for v in meta_views)
    if report.largest_numel <= MAX_VALUES and report.total_numel <= MAX_TOTAL_VALUES:
        try:
            real = build_tensor(settings, device)
        except (RuntimeError, TypeError, ValueError) as exc:
            report.build_failure = build_failure(exc, settings)
        else:
            ids = torch.arange(real.numel(), dtype=torch.int64, device=device).reshape(real.shape)
            report.views, failure = _run_chain(real, ids, report.steps)
            report.materialized = True
            report.chain_failure = report.chain_failure or failure
            return report
    elif settings.fill not in ("zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like"):
        # The factory never runs at this size; try it on one element to surface dtype errors.
        try:
            build_tensor(_one_element(settings), device)
        except (RuntimeError, TypeError, ValueError) as exc:
            report.build_failure = build_failure(exc, settings)
    report.views = meta_views
    report.chain_failure = report.chain_failure or meta_failure
    return report


def _one_element(settings: TensorSettings) -> TensorSettings:
    return replace(settings, shape=(1,))


def _run_chain(x: torch.Tensor, ids: torch.Tensor | None,
               steps: tuple[Step, ...]) -> tuple[list[StepView], Failure | None]:
    views = [StepView("x", None, facts_of(x), x, ids)]
    for number, step in enumerate(steps, start=1):
        before = views[-1]
        label = before.label + step.code()
        try:
            out = apply_step(before.tensor, step)
            out_ids = apply_step(before.origin, step) if before.origin is not None else None
        except (RuntimeError, IndexError, ValueError, TypeError) as exc:
            return views, step_failure(exc, steps, number, before)
        views.append(StepView(label, step, facts_of(out, before.tensor), out, out_ids,
                              step_note(step, before.facts, facts_of(out, before.tensor))))
    return views, None


def step_note(step: Step, before: Facts, after: Facts) -> str:
    """A sentence on what this step did to memory, for the facts table."""
    if step.method == "squeeze" and after.shape == before.shape and (step.args or step.kwargs):
        return ("the dimension asked for does not have size 1, so squeeze left the shape as it was "
                "(PyTorch does not raise here)")
    if after.memory == SAME:
        return f"{step.method}() returned the tensor itself: nothing to do, nothing copied"
    if 0 in after.stride and 0 not in before.stride and after.numel > 1:
        return "stride 0: every index along that dimension reads the same storage element"
    if after.memory == NEW_MEMORY:
        first = ("reshape had to copy (no strides over the old storage give this shape)"
                 if step.method == "reshape" else "a copy")
        return first + copy_layout(step, before, after)
    if step.method == "reshape":
        return "reshape returned a view: the strides allowed it, nothing was copied"
    if after.storage_offset != before.storage_offset:
        return "a view that starts later in the same storage (storage offset moved)"
    if after.stride != before.stride and sorted(after.stride) == sorted(before.stride) \
            and len(after.stride) == len(before.stride):
        return "a view: the same strides in a new order, no data moved"
    return "a view: new sizes and strides over the same storage"



def memory_order(shape: tuple[int, ...], stride: tuple[int, ...]) -> tuple[int, ...]:
    """The dimensions from outermost to innermost in memory (largest stride first); dimensions
    of size 1 are left out, since their stride is never used."""
    used = [d for d, size in enumerate(shape) if size > 1]
    return tuple(sorted(used, key=lambda d: -stride[d]))


def copy_layout(step: Step, before: Facts, after: Facts) -> str:
    """How a copy laid out its new storage, read from its strides and is_contiguous()."""
    dense = after.storage_elements == after.numel
    where = "new storage" + (" without gaps" if dense and not after.is_contiguous else "")
    asked = dict(step.kwargs).get("memory_format")
    if after.is_contiguous:
        text = f": {where}, in row-major order (`is_contiguous()` is True)"
        if step.method == "clone" and asked is None and not before.is_contiguous:
            text += (". `clone()` copies with `memory_format=torch.preserve_format`, which keeps "
                     "its input's strides only when they cover memory without gaps or overlaps; "
                     "these did not, and the copy came out row-major")
        return text
    same_order = memory_order(after.shape, after.stride) == memory_order(before.shape, before.stride)
    text = (f": {where}, but **not** row-major: strides {after.stride}"
            + (" keep the input's order of dimensions in memory" if same_order else "")
            + ", so `is_contiguous()` is False and a later `view()` that merges dimensions can "
              "fail")
    if step.method == "clone" and asked is not torch.contiguous_format:
        text += (". `clone()` copies with `memory_format=torch.preserve_format` (its default), "
                 "which keeps that order; `clone(memory_format=torch.contiguous_format)` or "
                 "`contiguous()` gives a row-major copy")
    else:
        text += "; `contiguous()` gives a row-major copy"
    return text
