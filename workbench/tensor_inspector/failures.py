"""Errors as content: PyTorch's message, why it happened, and one-click fixes.

The title and explanation of an error come from the app's one table
(`workbench.common.errors.RULES`, via `explain`); this module adds what only the inspector
knows: the memory walk of the tensor that `view` refused, and fixes that rewrite the chain.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from workbench.common.errors import ExplainedError, explain
from workbench.tensor_inspector.chain import Step, apply_step, format_chain
from workbench.tensor_inspector.facts import NEW_MEMORY, StepView, walk_positions
from workbench.tensor_inspector.factory import number_text, shape_text
from workbench.tensor_inspector.settings import TensorSettings

@dataclass(frozen=True)
class Fix:
    """A one-click change of the settings that resolves an error."""

    label: str
    changes: tuple[tuple[str, object], ...]


@dataclass
class Failure:
    """An error a learner caused, as content: PyTorch's message, why, and fixes."""

    error: ExplainedError
    fixes: tuple[Fix, ...] = ()
    step_number: int | None = None     # 1-based step of the chain; None for building x
    label: str = ""


def too_large_failure(exc: RuntimeError, settings: TensorSettings) -> Failure:
    explained = ExplainedError(
        "PyTorch cannot address a tensor this large", str(exc).strip(),
        f"A tensor of shape {shape_text(settings.shape)} and dtype {settings.dtype} would hold "
        f"{math.prod(settings.shape):.3g} elements. PyTorch counts a storage's size in bytes with "
        "a 64-bit integer, so no tensor can need more than 2^63 - 1 bytes (about 9.2 exabytes), "
        "not even on the `meta` device, which allocates nothing.",
        ("make one of the sizes smaller, or use fewer dimensions",), type(exc).__name__)
    return Failure(explained, (Fix("Use shape (4, 6)", (("shape", (4, 6)),)),), None, "x")


def _replace_step(steps: tuple[Step, ...], number: int, new: list[Step]) -> str:
    return format_chain(list(steps[:number - 1]) + new + list(steps[number:]))


def step_failure(exc: BaseException, steps: tuple[Step, ...], number: int,
                 before: StepView) -> Failure:
    step = steps[number - 1]
    message = str(exc).strip()
    base = explain(exc)
    fixes: list[Fix] = []
    facts = before.facts
    drop = Fix(f"Drop step {number} ({step.text})", (("ops", _replace_step(steps, number, [])),))
    if "view size is not compatible" in message:
        as_reshape = Step(text=step.text.replace("view", "reshape", 1), method="reshape",
                          args=step.args, kwargs=step.kwargs)
        contiguous = Step(text="contiguous()", method="contiguous")
        fixes = [Fix(f"Use {as_reshape.text} (copies only if it must)",
                     (("ops", _replace_step(steps, number, [as_reshape])),)),
                 Fix(f"Call contiguous() first, then {step.text}",
                     (("ops", _replace_step(steps, number, [contiguous, step])),))]
        made_by = before.step
        if made_by is not None and made_by.method == "clone" and not dict(made_by.kwargs):
            row_major = Step(text="clone(memory_format=torch.contiguous_format)", method="clone",
                             kwargs=(("memory_format", torch.contiguous_format),))
            fixes.append(Fix(f"Use {row_major.text} in step {number - 1}",
                             (("ops", _replace_step(steps, number - 1, [row_major])),)))
        walk = walk_positions(facts.shape, facts.stride, facts.storage_offset, 9)
        more = ", ..." if facts.numel > len(walk) else ""
        explanation = (
            f"`{before.label}` has shape {facts.shape} and strides {facts.stride}: it is "
            f"{'not ' if not facts.is_contiguous else ''}contiguous. Read row by row, its "
            f"elements sit at storage positions {', '.join(map(str, walk))}{more} (the memory "
            "walk below). `view` never copies: it can only put new sizes and strides over the "
            "*same* storage, and the dimensions it would merge here span non-contiguous "
            "memory, so no single stride walks them in order. `reshape` gives the same shape by "
            "copying the elements into fresh row-major memory when it must; `contiguous()` "
            "makes that copy explicitly, after which `view` works."
            + (f" `{before.label}` is itself a copy, yet not contiguous (strides {facts.stride}): "
               "new memory is not the same as row-major memory"
               + (" (`clone()` copies with `memory_format=torch.preserve_format` by default)"
                  if made_by.method == "clone" else "") + "."
               if made_by is not None and facts.memory == NEW_MEMORY and not facts.is_contiguous
               else ""))
        return Failure(ExplainedError(base.title, message, explanation, base.fixes, base.kind),
                       tuple(fixes), number, before.label + step.code())
    if "step must be greater than zero" in message:
        explained = ExplainedError(
            "PyTorch has no negative strides", message,
            "A slice that walks backwards (`[::-1]`) would need a negative stride. NumPy allows "
            "that; PyTorch does not, so strides are always zero or positive. `flip(dim)` gives "
            "the reversed order by copying the data into new memory.",
            ("use `flip(0)` (or the dimension you meant) instead of a negative step",), base.kind)
        items = step.index or ()
        full = slice(None)
        reverse_dims = [d for d, item in enumerate(items) if item == slice(None, None, -1)]
        # flip(d) replaces the whole step only when the rest of it selects everything.
        if len(reverse_dims) == 1 and all(item == full for d, item in enumerate(items)
                                          if d != reverse_dims[0]):
            flip = Step(text=f"flip({reverse_dims[0]})", method="flip", args=(reverse_dims[0],))
            fixes.append(Fix(f"Use {flip.text} (a copy)",
                             (("ops", _replace_step(steps, number, [flip])),)))
        return Failure(explained, (*fixes, drop), number, before.label + step.code())
    if "is invalid for input of size" in message and step.method in ("view", "reshape"):
        fixes.extend(_infer_size_fixes(steps, number, before))
    return Failure(base, (*fixes, drop), number, before.label + step.code())


def _infer_size_fixes(steps: tuple[Step, ...], number: int, before: StepView) -> list[Fix]:
    """For `view(5, 4)` on 24 elements: offer `view(5, -1)` or `view(-1, 4)` when PyTorch
    (on `meta`) accepts them, so the learner sees -1 work out the missing size."""
    step = steps[number - 1]
    sizes = step.args[0] if len(step.args) == 1 and isinstance(step.args[0], tuple) else step.args
    if not sizes or not all(isinstance(s, int) for s in sizes) or step.kwargs:
        return []
    probe = torch.empty(before.facts.shape, device="meta")
    fixes = []
    for position in (len(sizes) - 1, 0) if len(sizes) > 1 else (0,):
        candidate = tuple(-1 if i == position else s for i, s in enumerate(sizes))
        new = Step(text=f"{step.method}({', '.join(map(str, candidate))})", method=step.method,
                   args=candidate)
        try:
            apply_step(probe, new)
        except (RuntimeError, ValueError):
            continue
        fixes.append(Fix(f"Let PyTorch infer a size: {new.text}",
                         (("ops", _replace_step(steps, number, [new])),)))
    return fixes


def build_failure(exc: BaseException, settings: TensorSettings) -> Failure:
    message = str(exc).strip()
    fixes: list[Fix] = []
    if "not implemented for" in message or "out of bounds for" in message \
            or "handles only" in message:
        explained = ExplainedError(
            f"torch.{settings.fill} cannot make {settings.dtype} values", message,
            "Each factory fills a tensor with numbers of a kind: `rand`/`randn` draw real numbers "
            "(floating point or complex), `randint` draws whole numbers, `arange`/`linspace` "
            "count. A dtype that cannot hold that kind of number is refused.",
            (), type(exc).__name__)
        fixes.append(Fix("Use dtype float32", (("dtype", "float32"),)))
        if settings.dtype not in ("complex64",):
            fixes.append(Fix("Fill with randint instead", (("fill", "randint"),)))
    elif "without overflow" in message:
        explained = ExplainedError(
            f"{number_text(settings.value)} does not fit in {settings.dtype}", message,
            "Every integer dtype has a range (see the dtype table below): `int8` holds -128..127, "
            "`uint8` 0..255. PyTorch refuses a fill value outside it instead of wrapping around.",
            (), type(exc).__name__)
        fixes.append(Fix("Fill with 1", (("value", 1.0),)))
    else:
        explained = explain(exc)
    fixes.append(Fix("Fill with zeros", (("fill", "zeros"),)))
    return Failure(explained, tuple(fixes), None, "x")

