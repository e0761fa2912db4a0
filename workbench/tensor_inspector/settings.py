"""The Tensor inspector's settings table: every control of the page, its link name, range,
label and help, written once.

The page draws its widgets from `TABLE` (components/settings_form.py), lesson links are read and
written with it, and docs/lesson-links.md's parameter table is generated from it. The link names (shape,
dtype, fill, value, seed, ops, lhs, rhs, combine) are public: teachers type them into slides.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from workbench.tensor_inspector.chain import ALLOWED_METHODS
from workbench.tensor_inspector.link_examples import op_chain_example
from workbench.common.links import (
    MAX_SEED,
    ChoiceParam,
    FloatParam,
    IntListParam,
    IntParam,
    LinkSchema,
    TextParam,
    Widget,
)

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "float64": torch.float64, "int64": torch.int64, "int32": torch.int32, "int16": torch.int16,
    "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool, "complex64": torch.complex64,
}
RANDOM_FILLS = ("rand", "randn", "randint", "rand_like", "randn_like", "randint_like")
VALUE_FILLS = ("full", "full_like")
FILLS = ("arange", "zeros", "ones", "full", "empty", "rand", "randn", "randint", "linspace",
         "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
         "randint_like")
MAX_RANK = 5
MAX_DIM_SIZE = 10**9
# The broadcasting section's two shapes: one more dimension, and sizes a picture can show.
MAX_OPERAND_RANK = 6
MAX_OPERAND_SIZE = 4096


def parse_shape(text: str, max_rank: int = MAX_RANK, max_size: int = MAX_DIM_SIZE) -> tuple[int, ...]:
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
        if not 0 <= size <= max_size:
            raise ValueError(f"each size must be from 0 to {max_size:,}; got {size}")
        sizes.append(size)
    return tuple(sizes)


class ShapeParam(IntListParam):
    """A tensor shape: comma-separated sizes, empty for a scalar. Refused (never clamped) when
    a size is out of range, so a typo never silently becomes another shape."""

    def __init__(self, name: str, hi: int, max_rank: int, **presentation) -> None:
        super().__init__(name, 0, hi, max_rank, empty_ok=True, **presentation)

    def parse(self, raw: str) -> tuple[int, ...]:
        return parse_shape(raw, max_rank=self.max_len, max_size=self.hi)

    def typed_example(self, rng: random.Random) -> str:
        """Often a shape the page draws in full, from a scalar up to the highest rank, with the
        sizes that show a layout (0, 1, odd, powers of two); otherwise IntListParam's sizes at
        and past the range (refused here, not clamped), too many of them, odd spellings."""
        if rng.random() < 0.4:
            sizes = (rng.choice((0, 1, 2, 3, 4, 6, 7, 16)) for _ in range(rng.randint(0, self.max_len)))
            return ",".join(map(str, sizes))
        return super().typed_example(rng)


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


TABLE = LinkSchema(TensorSettings, [
    ShapeParam("shape", MAX_DIM_SIZE, MAX_RANK,
               label="Shape (sizes separated by commas; empty for a scalar)",
               help="Rank 0 to 5, e.g. `2, 3, 4`. Any size is fine: above the value cap only "
                    "the facts are computed (on `meta`).",
               meaning="rank 0 to 5, e.g. `2,3,4`; `shape=` makes a scalar"),
    ChoiceParam("dtype", list(DTYPES), label="dtype",
                help="The kind of number each element holds; see the dtype table.",
                meaning="the element type, e.g. `bfloat16`"),
    ChoiceParam("fill", FILLS, label="Filled by",
                help="arange numbers the elements 0, 1, 2, ... in memory order, so you can read "
                     "positions; the *_like factories copy shape and dtype from another tensor.",
                meaning="the factory that makes x; `arange` numbers the elements in memory order"),
    FloatParam("value", -1e6, 1e6, label="Fill value",
               help="The value of every element for `full` and `full_like`.",
               meaning="the fill value of full / full_like"),
    IntParam("seed", 0, MAX_SEED, label="Seed of your generator",
             help="A torch.Generator of your own: the same seed gives the same numbers, and "
                  "nobody else's numbers change.",
             meaning="seed of the generator for random fills"),
    TextParam("ops", 300, examples=op_chain_example,
              label="Op chain applied to x (typed text is parsed, never run)",
              help="Allowed: " + ", ".join(ALLOWED_METHODS) + " with whole-number arguments "
                   "(clone and contiguous also take `memory_format=torch.contiguous_format` or "
                   "`torch.preserve_format`), and indexing with slices, whole numbers, None and "
                   "`...`.",
              meaning="the op chain as typed, e.g. `t().view(-1)`: "
                      + ", ".join(ALLOWED_METHODS) + " and slicing"),
    ShapeParam("lhs", MAX_OPERAND_SIZE, MAX_OPERAND_RANK, label="shape of a",
               help=f"Up to {MAX_OPERAND_RANK} sizes from 0 to {MAX_OPERAND_SIZE}.",
               meaning="the left operand of the broadcasting/matmul section"),
    ShapeParam("rhs", MAX_OPERAND_SIZE, MAX_OPERAND_RANK, label="shape of b",
               help=f"Up to {MAX_OPERAND_RANK} sizes from 0 to {MAX_OPERAND_SIZE}.",
               meaning="the right operand of the broadcasting/matmul section"),
    ChoiceParam("combine", ["broadcast", "matmul"], label="op",
                help="a + b broadcasts elementwise; a @ b multiplies matrices (batched).",
                widget=Widget(kind="segmented",
                              choice_labels={"broadcast": "a + b", "matmul": "a @ b"}),
                meaning="`broadcast` is `a + b`, `matmul` is `a @ b`"),
])
