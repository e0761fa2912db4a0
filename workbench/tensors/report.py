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

import math
from dataclasses import dataclass, field, replace

import torch

from workbench.tensors.chain import ChainSyntaxError, Step, apply_step, format_chain, parse_chain
from workbench.common.errors import ExplainedError, explain
from workbench.common.links import (
    ChoiceParam,
    FloatParam,
    IntListParam,
    IntParam,
    LinkSchema,
    TextParam,
)

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "float64": torch.float64, "int64": torch.int64, "int32": torch.int32, "int16": torch.int16,
    "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool, "complex64": torch.complex64,
}
RANDOM_FILLS = ("rand", "randn", "randint", "rand_like", "randn_like", "randint_like")
FILLS = ("arange", "zeros", "ones", "full", "empty", "rand", "randn", "randint", "linspace",
         "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
         "randint_like")
MAX_RANK = 5
MAX_DIM_SIZE = 10**9
# Values are made real only when every step has at most MAX_VALUES elements (2 MiB of float64)
# and all steps together at most MAX_TOTAL_VALUES (a chain of copies stays within ~16 MiB,
# origin ids included). Above that, facts come from `meta` alone.
MAX_VALUES = 262_144
MAX_TOTAL_VALUES = 4 * MAX_VALUES
RANDINT_HIGH = 10


@dataclass(frozen=True)
class TensorSettings:
    """Everything on the page: the tensor, the chain, and the two shapes to combine."""

    shape: tuple[int, ...] = (4, 6)
    dtype: str = "float32"
    fill: str = "arange"
    value: float = 7.0               # for full / full_like
    seed: int = 0                    # for the random fills
    ops: str = ""
    lhs: tuple[int, ...] = (8, 1, 6, 1)
    rhs: tuple[int, ...] = (7, 1, 5)
    combine: str = "broadcast"       # or "matmul"


LINK_SCHEMA = LinkSchema(TensorSettings, [
    IntListParam("shape", 0, MAX_DIM_SIZE, MAX_RANK, empty_ok=True,
                 help="sizes, e.g. 2,3,4; empty for a scalar"),
    ChoiceParam("dtype", list(DTYPES), help="e.g. float16"),
    ChoiceParam("fill", FILLS, help="the factory that fills the tensor"),
    FloatParam("value", -1e6, 1e6, help="the fill value of full / full_like"),
    IntParam("seed", 0, 2**31 - 1, help="seed of the generator for random fills"),
    TextParam("ops", 300, help="the op chain as typed, e.g. t().view(-1)"),
    IntListParam("lhs", 0, 4096, 6, empty_ok=True, help="left shape of the broadcasting section"),
    IntListParam("rhs", 0, 4096, 6, empty_ok=True, help="right shape of the broadcasting section"),
    ChoiceParam("combine", ["broadcast", "matmul"], help="a + b or a @ b"),
])


# --- building the tensor ------------------------------------------------------------------

def shape_text(shape: tuple[int, ...]) -> str:
    """A shape as Python writes a tuple: (), (5,), (4, 6)."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def factory_code(settings: TensorSettings) -> list[str]:
    """The Python lines that build `x`, exactly as `build_tensor` builds it."""
    shape, dtype, n = shape_text(settings.shape), f"torch.{settings.dtype}", math.prod(settings.shape)
    fill, lines = settings.fill, []
    if fill in RANDOM_FILLS:
        lines.append(f"g = torch.Generator().manual_seed({settings.seed})  # your own random stream")
    if fill.endswith("_like"):
        lines.append(f"like = torch.empty({shape}, dtype={dtype})  # any tensor with the wanted "
                     "shape and dtype")
        args = {"zeros_like": "like", "ones_like": "like", "empty_like": "like",
                "full_like": f"like, {_number_text(settings.value)}",
                "rand_like": "like, generator=g", "randn_like": "like, generator=g",
                "randint_like": f"like, {_randint_high(settings.dtype)}, generator=g"}[fill]
        lines.append(f"x = torch.{fill}({args})")
    elif fill == "arange":
        if settings.dtype in ("bool", "complex64"):   # arange cannot count in these dtypes
            lines.append(f"x = torch.arange({n}).reshape({shape}).to({dtype})")
        else:
            lines.append(f"x = torch.arange({n}, dtype={dtype}).reshape({shape})")
    elif fill == "linspace":
        lines.append(f"x = torch.linspace(0, 1, {n}, dtype={dtype}).reshape({shape})")
    elif fill == "full":
        lines.append(f"x = torch.full({shape}, {_number_text(settings.value)}, dtype={dtype})")
    elif fill in ("rand", "randn"):
        lines.append(f"x = torch.{fill}({shape}, generator=g, dtype={dtype})")
    elif fill == "randint":
        lines.append(f"x = torch.randint(0, {_randint_high(settings.dtype)}, {shape}, generator=g, "
                     f"dtype={dtype})")
    else:
        lines.append(f"x = torch.{fill}({shape}, dtype={dtype})")
    return lines


def _randint_high(dtype: str) -> int:
    return 2 if dtype == "bool" else RANDINT_HIGH


def build_tensor(settings: TensorSettings, device: torch.device | str = "cpu") -> torch.Tensor:
    """The real tensor of `settings` (the caller checks its size first)."""
    shape, dtype, fill = settings.shape, DTYPES[settings.dtype], settings.fill
    n = math.prod(shape)
    generator = torch.Generator(device=device).manual_seed(settings.seed) if fill in RANDOM_FILLS \
        else None
    value = int(settings.value) if float(settings.value).is_integer() else settings.value
    if fill.endswith("_like"):
        like = torch.empty(shape, dtype=dtype, device=device)
        if fill in ("zeros_like", "ones_like", "empty_like"):
            return getattr(torch, fill)(like)
        if fill == "full_like":
            return torch.full_like(like, value)
        if fill == "randint_like":
            return torch.randint_like(like, _randint_high(settings.dtype), generator=generator)
        return getattr(torch, fill)(like, generator=generator)
    if fill == "arange":
        if settings.dtype in ("bool", "complex64"):
            return torch.arange(n, device=device).reshape(shape).to(dtype)
        return torch.arange(n, dtype=dtype, device=device).reshape(shape)
    if fill == "linspace":
        return torch.linspace(0, 1, n, dtype=dtype, device=device).reshape(shape)
    if fill == "full":
        return torch.full(shape, value, dtype=dtype, device=device)
    if fill in ("rand", "randn"):
        return getattr(torch, fill)(shape, generator=generator, dtype=dtype, device=device)
    if fill == "randint":
        return torch.randint(0, _randint_high(settings.dtype), shape, generator=generator,
                             dtype=dtype, device=device)
    return getattr(torch, fill)(shape, dtype=dtype, device=device)


# --- facts ---------------------------------------------------------------------------------

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

    def line(self, name: str) -> str:
        """One line of text; the generated script prints exactly this for each step."""
        return (f"{name}: shape={self.shape} dtype={self.dtype} stride={self.stride} "
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
        is_contiguous=tensor.is_contiguous(), memory=memory_relation(tensor, source))


# --- running the chain ---------------------------------------------------------------------

@dataclass(frozen=True)
class Fix:
    """A one-click change of the settings that resolves an error."""

    label: str
    changes: tuple[tuple[str, object], ...]


@dataclass
class StepView:
    label: str                         # the code so far, e.g. "x.t()"
    step: Step | None                  # None for x itself
    facts: Facts
    tensor: torch.Tensor               # real when `Inspection.materialized`, else on `meta`
    origin: torch.Tensor | None = None  # origin ids with the same layout (real runs only)
    note: str = ""


@dataclass
class Failure:
    """An error a learner caused, as content: PyTorch's message, why, and fixes."""

    error: ExplainedError
    fixes: tuple[Fix, ...] = ()
    step_number: int | None = None     # 1-based step of the chain; None for building x
    label: str = ""


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
            ("check the spelling of each method and its parentheses",), "Syntax"))
    try:
        meta = torch.empty(settings.shape, dtype=DTYPES[settings.dtype], device="meta")
    except RuntimeError as exc:      # more bytes than an int64 can count: PyTorch refuses
        report.build_failure = _too_large_failure(exc, settings)
        return report
    meta_views, meta_failure = _run_chain(meta, None, report.steps)
    report.largest_numel = max(v.facts.numel for v in meta_views)
    report.total_numel = sum(v.facts.numel for v in meta_views)
    if report.largest_numel <= MAX_VALUES and report.total_numel <= MAX_TOTAL_VALUES:
        try:
            real = build_tensor(settings, device)
        except (RuntimeError, TypeError, ValueError) as exc:
            report.build_failure = _build_failure(exc, settings)
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
            report.build_failure = _build_failure(exc, settings)
    report.views = meta_views
    report.chain_failure = report.chain_failure or meta_failure
    return report


def _too_large_failure(exc: RuntimeError, settings: TensorSettings) -> Failure:
    explained = ExplainedError(
        "PyTorch cannot address a tensor this large", str(exc).strip(),
        f"A tensor of shape {shape_text(settings.shape)} and dtype {settings.dtype} would hold "
        f"{math.prod(settings.shape):.3g} elements. PyTorch counts a storage's size in bytes with "
        "a 64-bit integer, so no tensor can need more than 2^63 - 1 bytes (about 9.2 exabytes), "
        "not even on the `meta` device, which allocates nothing.",
        ("make one of the sizes smaller, or use fewer dimensions",), type(exc).__name__)
    return Failure(explained, (Fix("Use shape (4, 6)", (("shape", (4, 6)),)),), None, "x")


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
            return views, _step_failure(exc, steps, number, before)
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
        if step.method == "reshape":
            return "reshape had to copy: no strides over the old storage give this shape"
        return "a copy: new storage laid out in row-major order"
    if step.method == "reshape":
        return "reshape returned a view: the strides allowed it, nothing was copied"
    if after.storage_offset != before.storage_offset:
        return "a view that starts later in the same storage (storage offset moved)"
    if after.stride != before.stride and sorted(after.stride) == sorted(before.stride) \
            and len(after.stride) == len(before.stride):
        return "a view: the same strides in a new order, no data moved"
    return "a view: new sizes and strides over the same storage"


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


# --- errors as content ---------------------------------------------------------------------

def _replace_step(steps: tuple[Step, ...], number: int, new: list[Step]) -> str:
    return format_chain(list(steps[:number - 1]) + new + list(steps[number:]))


def _step_failure(exc: BaseException, steps: tuple[Step, ...], number: int,
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
            "makes that copy explicitly, after which `view` works.")
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
    titles = {
        "is out of bounds for dimension": ("That index is past the end of the dimension",
                                           "Indices run from 0 to size-1 (or -size to -1 from the "
                                           "end). Slices are forgiving and stop at the end; a "
                                           "single index is not."),
        "number of dimensions in the tensor input does not match": (
            "permute needs every dimension exactly once",
            "`permute` takes a new order for all the dimensions, e.g. `permute(0, 2, 3, 1)` for a "
            "4-D tensor. To swap just two dimensions use `transpose(i, j)`."),
        "only one dimension can be inferred": (
            "Only one size may be -1",
            "`-1` asks PyTorch to work out that size from numel(); with two unknown sizes the "
            "answer is not unique."),
        "expects a tensor with <= 2 dimensions": (
            "t() is for matrices",
            "`t()` transposes a tensor of rank 0, 1 or 2. For more dimensions say which two to "
            "swap with `transpose(i, j)`, or give a full order with `permute`."),
        "exceeds dimension size": (
            "The window runs past the end",
            "`narrow(dim, start, length)` needs start + length <= size of that dimension."),
        "start_dim cannot come after end_dim": (
            "flatten's range is backwards",
            "`flatten(start_dim, end_dim)` merges dimensions start_dim..end_dim; start_dim must "
            "come first (after counting negative dims from the end)."),
        "invalid combination of arguments": (
            "These arguments do not fit this op",
            "PyTorch lists above the argument forms it accepts for this method."),
        "missing 1 required positional": (
            "An argument is missing",
            "PyTorch's message names the argument this method still needs."),
    }
    for pattern, (title, explanation) in titles.items():
        if pattern in message:
            base = ExplainedError(title, message, explanation, (), base.kind)
            break
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


def _build_failure(exc: BaseException, settings: TensorSettings) -> Failure:
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
            f"{_number_text(settings.value)} does not fit in {settings.dtype}", message,
            "Every integer dtype has a range (see the dtype table below): `int8` holds -128..127, "
            "`uint8` 0..255. PyTorch refuses a fill value outside it instead of wrapping around.",
            (), type(exc).__name__)
        fixes.append(Fix("Fill with 1", (("value", 1.0),)))
    else:
        explained = explain(exc)
    fixes.append(Fix("Fill with zeros", (("fill", "zeros"),)))
    return Failure(explained, tuple(fixes), None, "x")


def parse_shape(text: str, max_rank: int = MAX_RANK) -> tuple[int, ...]:
    """A typed shape such as `2, 3, 4`, `(5,)` or `` (a scalar), checked and never clamped."""
    parts = [p.strip() for p in text.strip().strip("()[]").split(",")]
    parts = [p for p in parts if p]
    if len(parts) > max_rank:
        raise ValueError(f"at most {max_rank} dimensions (rank 0 to {max_rank})")
    sizes = []
    for part in parts:
        try:
            size = int(part)
        except ValueError:
            raise ValueError(f"`{part}` is not a whole number; write sizes like 2, 3, 4") from None
        if not 0 <= size <= MAX_DIM_SIZE:
            raise ValueError(f"each size must be from 0 to {MAX_DIM_SIZE:,}; got {size}")
        sizes.append(size)
    return tuple(sizes)
