"""Building x: the factory call of the settings, as Python lines and as a real tensor."""
from __future__ import annotations

import math

import torch

from workbench.tensor_inspector.settings import DTYPES, RANDOM_FILLS, TensorSettings

RANDINT_HIGH = 10


def shape_text(shape: tuple[int, ...]) -> str:
    """A shape as Python writes a tuple: (), (5,), (4, 6)."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def number_text(value: float) -> str:
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
                "full_like": f"like, {number_text(settings.value)}",
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
        lines.append(f"x = torch.full({shape}, {number_text(settings.value)}, dtype={dtype})")
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
