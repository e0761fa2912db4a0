"""Broadcasting and matmul shapes: two shapes in, PyTorch's result shape (or its error) out.

Broadcasting lines two shapes up from the right. At each position the sizes must be equal, or
one of them 1 (it is stretched, by a stride of 0, never copied), or missing (treated as 1).
`a @ b` broadcasts only the leading *batch* dimensions; the last two are a matrix product
(n, k) @ (k, m) -> (n, m), and a 1-D operand is a vector (a 1 is added, then removed again).
The result comes from PyTorch itself, on `meta` tensors, so no size can use up memory.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

MAX_REAL = 65_536     # elements per operand computed on real CPU tensors

EQUAL, STRETCH_LEFT, STRETCH_RIGHT, MISMATCH, INNER, ROWS, COLS = (
    "equal", "left stretched", "right stretched", "mismatch", "inner (k)", "rows (n)", "cols (m)")


@dataclass(frozen=True)
class AlignedDim:
    """One column of the aligned shapes; `left`/`right` are None where that shape is shorter."""

    left: int | None
    right: int | None
    result: int | None
    rule: str
    matrix: bool = False      # one of matmul's last two positions


@dataclass(frozen=True)
class Combination:
    combine: str                        # "broadcast" (a + b) or "matmul" (a @ b)
    left: tuple[int, ...]
    right: tuple[int, ...]
    result: tuple[int, ...] | None
    error: str | None
    columns: list[AlignedDim]
    notes: list[str]
    # a + b: each operand expanded to the result shape, without copying (stride 0 where stretched)
    expanded_strides: tuple[tuple[int, ...], tuple[int, ...]] | None = None

    @property
    def expression(self) -> str:
        return "a @ b" if self.combine == "matmul" else "a + b"


PRESETS: dict[str, tuple[tuple[int, ...], tuple[int, ...], str]] = {
    "attention scores (B,H,T,d) @ (B,H,d,T)": ((2, 4, 8, 16), (2, 4, 16, 8), "matmul"),
    "linear layer (batch, in) @ (in, out)": ((64, 128), (128, 10), "matmul"),
    "batched matrices @ one matrix (10,3,4) @ (4,5)": ((10, 3, 4), (4, 5), "matmul"),
    "matrix @ vector (3,4) @ (4,)": ((3, 4), (4,), "matmul"),
    "inner sizes differ (3,4) @ (3,4)": ((3, 4), (3, 4), "matmul"),
    "outer sum (3,1) + (1,4)": ((3, 1), (1, 4), "broadcast"),
    "per-channel bias (8,3,32,32) + (3,1,1)": ((8, 3, 32, 32), (3, 1, 1), "broadcast"),
    "add a row (5,4) + (4,)": ((5, 4), (4,), "broadcast"),
    "the NumPy docs example (8,1,6,1) + (7,1,5)": ((8, 1, 6, 1), (7, 1, 5), "broadcast"),
    "does not broadcast (3,4) + (4,3)": ((3, 4), (4, 3), "broadcast"),
}


def _rule(left: int | None, right: int | None) -> str:
    if left is None or right is None or left == right:
        return EQUAL if left == right else (STRETCH_LEFT if left is None else STRETCH_RIGHT)
    if left == 1:
        return STRETCH_LEFT
    if right == 1:
        return STRETCH_RIGHT
    return MISMATCH


def _align(left: tuple[int, ...], right: tuple[int, ...],
           result: tuple[int, ...] | None) -> list[AlignedDim]:
    width = max(len(left), len(right))
    pad_l = (None,) * (width - len(left)) + tuple(left)
    pad_r = (None,) * (width - len(right)) + tuple(right)
    out = (None,) * width if result is None else (None,) * (width - len(result)) + tuple(result)
    return [AlignedDim(a, b, r, _rule(a, b)) for a, b, r in zip(pad_l, pad_r, out, strict=True)]


def _result(left: tuple[int, ...], right: tuple[int, ...], combine: str,
            device: str) -> tuple[tuple[int, ...] | None, str | None]:
    try:
        # Inside the try: a shape of more bytes than int64 can count is refused at creation.
        a, b = torch.zeros(left, device=device), torch.zeros(right, device=device)
        return tuple((a @ b if combine == "matmul" else a + b).shape), None
    except RuntimeError as exc:
        return None, str(exc).strip()


def combine_shapes(left: tuple[int, ...], right: tuple[int, ...], combine: str) -> Combination:
    """What PyTorch says `a + b` or `a @ b` gives for these shapes."""
    result, error = _result(left, right, combine, "meta")
    # Repeat on real zero-filled CPU tensors when they (and the result) are small, so the error
    # reads exactly as on a CPU: `meta` words some of the same mistakes differently.
    small = max(math.prod(left), math.prod(right), math.prod(result or ())) <= MAX_REAL
    if small:
        result, error = _result(left, right, combine, "cpu")
    if combine != "matmul":
        notes = ["sizes are compared from the right; a missing size counts as 1"]
        expanded = None
        if result is not None:
            expanded = tuple(tuple(torch.empty(shape, device="meta").expand(result).stride())
                             for shape in (left, right))
        return Combination(combine, tuple(left), tuple(right), result, error,
                           _align(left, right, result), notes, expanded)  # type: ignore[arg-type]
    return _matmul(tuple(left), tuple(right), result, error)


def _matmul(left: tuple[int, ...], right: tuple[int, ...], result: tuple[int, ...] | None,
            error: str | None) -> Combination:
    notes: list[str] = []
    if not left or not right:
        notes.append("matmul needs at least one dimension on each side")
        return Combination("matmul", left, right, result, error, [], notes)
    mat_l = left[-2:] if len(left) >= 2 else (1, left[0])
    mat_r = right[-2:] if len(right) >= 2 else (right[0], 1)
    if len(left) == 1:
        notes.append(f"a is a vector: treated as a 1x{left[0]} row, and that 1 is dropped again")
    if len(right) == 1:
        notes.append(f"b is a vector: treated as a {right[0]}x1 column, and that 1 is dropped again")
    batch_l, batch_r = left[:-2], right[:-2]
    batch_out = None
    if result is not None:
        kept = (len(left) >= 2) + (len(right) >= 2)   # n and m survive only for matrices
        batch_out = result[:len(result) - kept]
    columns = _align(batch_l, batch_r, batch_out)
    n, m = mat_l[0], mat_r[1]
    ok = result is not None
    columns.append(AlignedDim(mat_l[0], None, n if ok and len(left) >= 2 else None, ROWS, True))
    columns.append(AlignedDim(mat_l[1], mat_r[0], None, INNER if mat_l[1] == mat_r[0] else MISMATCH,
                              True))
    columns.append(AlignedDim(None, mat_r[1], m if ok and len(right) >= 2 else None, COLS, True))
    if batch_l or batch_r:
        notes.append("the leading (batch) dimensions broadcast like a + b")
    notes.append("the last two are a matrix product: (n, k) @ (k, m) -> (n, m); k must match")
    return Combination("matmul", left, right, result, error, columns, notes)
