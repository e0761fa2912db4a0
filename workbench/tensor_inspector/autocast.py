"""Mixed precision on the CPU: what `torch.autocast("cpu", dtype=torch.bfloat16)` does to dtypes.

Inside the `with` block autocast picks a dtype per op: matrix products and linear layers run in
bfloat16 (their float32 inputs are rounded to bfloat16 first), a few ops that need the range or
precision (losses such as `mse_loss`) run in float32, and the rest follow their inputs, with the
usual type promotion when bfloat16 meets float32. Your tensors are never changed: `w` stays
float32 and so does `w.grad`. Every dtype and error below is what PyTorch returns here; how much
faster bfloat16 is depends on the hardware, and this page measures nothing about speed.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

AUTOCAST_DTYPE = torch.bfloat16


@dataclass(frozen=True)
class Inputs:
    a: torch.Tensor        # (4, 8) float32
    b: torch.Tensor        # (8, 3) float32
    w: torch.Tensor        # (3, 8) float32 weights, requires_grad
    target: torch.Tensor   # (4, 3) float32


@dataclass(frozen=True)
class Op:
    code: str
    why: str
    run: Callable[[Inputs], torch.Tensor]


OPS: tuple[Op, ...] = (
    Op("a @ b", "a matrix product: autocast rounds both float32 inputs to bfloat16 and runs it "
       "in bfloat16", lambda i: i.a @ i.b),
    Op("F.linear(a, w)", "a linear layer: the same as a matrix product",
       lambda i: F.linear(i.a, i.w)),
    Op("torch.relu(a @ b)", "relu is not on autocast's CPU lists: it follows its bfloat16 input",
       lambda i: torch.relu(i.a @ i.b)),
    Op("a @ b + target", "bfloat16 + float32: ordinary type promotion gives float32",
       lambda i: i.a @ i.b + i.target),
    Op("F.mse_loss(a @ b, target)", "a loss: autocast on the CPU runs mse_loss in float32, even "
       "with a bfloat16 input", lambda i: F.mse_loss(i.a @ i.b, i.target)),
    Op("torch.exp(a)", "not on autocast's CPU lists (on CUDA's, exp runs in float32 too), "
       "float32 input: stays float32",
       lambda i: torch.exp(i.a)),
)


@dataclass(frozen=True)
class OpRow:
    code: str
    inside: str            # result dtype inside autocast
    outside: str           # result dtype of the same op without autocast
    max_error: float       # max |result - float64 result|, inside autocast
    max_error_outside: float
    why: str


@dataclass(frozen=True)
class Rounding:
    a00: float             # a[0, 0] as float32 stores it
    a00_bf16: float        # the same number rounded to bfloat16 (what autocast feeds a @ b)
    product_float64: float
    product_float32: float
    product_autocast: float
    eps_bf16: float
    eps_float32: float

    @property
    def significant_bits_bf16(self) -> int:
        """Stored mantissa bits plus the implicit leading 1: eps = 2**-(bits - 1)."""
        return round(-math.log2(self.eps_bf16)) + 1


@dataclass(frozen=True)
class AutocastReport:
    seed: int
    rows: list[OpRow]
    rounding: Rounding
    w_dtype: str           # after the forward pass inside autocast
    grad_dtype: str        # w.grad after backward(), outside autocast
    enabled_inside: bool   # torch.is_autocast_enabled("cpu") inside the block
    mixed_error: str       # a bfloat16 @ float32 product without autocast: PyTorch's message
    code: str
    itemsize_autocast: int = 2   # bytes per element of AUTOCAST_DTYPE (element_size())
    itemsize_float32: int = 4


def make_inputs(seed: int) -> Inputs:
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(4, 8, generator=g)
    b = torch.randn(8, 3, generator=g)
    w = torch.randn(3, 8, generator=g).requires_grad_()
    target = torch.randn(4, 3, generator=g)
    return Inputs(a, b, w, target)


def _as_float64(inputs: Inputs) -> Inputs:
    return Inputs(*(t.detach().double() for t in (inputs.a, inputs.b, inputs.w, inputs.target)))


def _max_error(result: torch.Tensor, reference: torch.Tensor) -> float:
    return (result.detach().double() - reference).abs().max().item()


def autocast_report(seed: int = 0) -> AutocastReport:
    inputs = make_inputs(seed)
    exact = _as_float64(inputs)
    rows = []
    for op in OPS:
        reference = op.run(exact)
        with torch.autocast("cpu", dtype=AUTOCAST_DTYPE):
            inside = op.run(inputs)
        outside = op.run(inputs)
        rows.append(OpRow(op.code, str(inside.dtype), str(outside.dtype),
                          _max_error(inside, reference), _max_error(outside, reference), op.why))
    with torch.autocast("cpu", dtype=AUTOCAST_DTYPE):
        enabled = torch.is_autocast_enabled("cpu")
        product = inputs.a @ inputs.b
        loss = F.mse_loss(F.linear(inputs.a, inputs.w), inputs.target)
    loss.backward()
    assert inputs.w.grad is not None
    try:
        inputs.a.to(AUTOCAST_DTYPE) @ inputs.b
    except RuntimeError as exc:
        mixed_error = str(exc).strip()
    else:      # a PyTorch that promotes here would make this row say so
        mixed_error = ""
    rounding = Rounding(
        a00=inputs.a[0, 0].item(), a00_bf16=inputs.a[0, 0].to(AUTOCAST_DTYPE).item(),
        product_float64=(exact.a @ exact.b)[0, 0].item(),
        product_float32=(inputs.a @ inputs.b)[0, 0].item(), product_autocast=product[0, 0].item(),
        eps_bf16=torch.finfo(AUTOCAST_DTYPE).eps, eps_float32=torch.finfo(torch.float32).eps)
    return AutocastReport(seed, rows, rounding, str(inputs.w.dtype), str(inputs.w.grad.dtype),
                          enabled, mixed_error, autocast_script(seed),
                          torch.empty((), dtype=AUTOCAST_DTYPE).element_size(),
                          inputs.a.element_size())


def autocast_script(seed: int) -> str:
    """A script that prints, for each op, the dtype inside and outside autocast (as the page)."""
    ops = "\n".join(f"    ({op.code!r}, lambda: {op.code})," for op in OPS)
    return f'''import torch
import torch.nn.functional as F

g = torch.Generator().manual_seed({seed})
a = torch.randn(4, 8, generator=g)
b = torch.randn(8, 3, generator=g)
w = torch.randn(3, 8, generator=g).requires_grad_()
target = torch.randn(4, 3, generator=g)

ops = [
{ops}
]
for code, op in ops:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        inside = op()
    print(f"{{code}}: inside autocast {{inside.dtype}}, outside {{op().dtype}}")

with torch.autocast("cpu", dtype=torch.bfloat16):
    loss = F.mse_loss(F.linear(a, w), target)
loss.backward()
print("w:", w.dtype, "w.grad:", w.grad.dtype)   # autocast never changes your tensors
print("a[0, 0]:", a[0, 0].item(), "as bfloat16:", a[0, 0].bfloat16().item())
'''
