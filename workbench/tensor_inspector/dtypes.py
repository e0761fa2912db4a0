"""What each dtype can hold: bits, the sign/exponent/mantissa split, range and resolution.

Every number comes from PyTorch (`itemsize`, `torch.finfo`, `torch.iinfo`, and a value rounded
into the dtype); only the "used for" sentences are words. A floating-point number is stored as
a sign bit, an exponent (the range: how large or small) and a mantissa (the precision: how many
significant bits). `finfo.eps` is the gap between 1 and the next number, 2**-mantissa_bits.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from workbench.tensor_inspector.settings import DTYPES

USED_FOR: dict[str, str] = {
    "float32": "the default: model weights, activations, gradients",
    "float16": "half precision: inference and mixed-precision training on GPUs (needs loss scaling)",
    "bfloat16": "float32's range in 16 bits: LLM training and inference on modern accelerators",
    "float64": "scientific computing, checking gradients numerically; rarely for deep learning",
    "int64": "class labels and indices (what `cross_entropy` and embeddings expect)",
    "int32": "indices and counts when memory matters",
    "int16": "audio samples, compact integer data",
    "int8": "quantized weights and activations",
    "uint8": "image pixels 0-255, quantized data",
    "bool": "masks: attention masks, padding masks, selections with `x[mask]`",
    "complex64": "signals and Fourier transforms (two float32: real and imaginary parts)",
}


@dataclass(frozen=True)
class DtypeInfo:
    name: str
    bits: int
    itemsize: int
    kind: str                       # "floating point", "integer", "boolean", "complex"
    sign_bits: int | None
    exponent_bits: int | None
    mantissa_bits: int | None
    smallest: str
    largest: str
    resolution: str                 # gap between 1 and the next number, or 1 for integers
    one_tenth: str                  # 0.1 as this dtype stores it
    used_for: str

    @property
    def split(self) -> str:
        if self.exponent_bits is None:
            return "-"
        return f"{self.sign_bits} + {self.exponent_bits} + {self.mantissa_bits}"


def _float_split(dtype: torch.dtype) -> tuple[int, int, int]:
    info = torch.finfo(dtype)
    mantissa = round(-math.log2(info.eps))
    return 1, info.bits - 1 - mantissa, mantissa


def dtype_info(name: str) -> DtypeInfo:
    dtype = DTYPES[name]
    itemsize = torch.empty((), dtype=dtype).element_size()
    one_tenth = torch.tensor(0.1, dtype=torch.float64).to(dtype)
    stored = f"{one_tenth.double().item():.17g}" if dtype.is_floating_point else \
        str(one_tenth.item())
    if dtype.is_complex:
        part = torch.float32 if dtype == torch.complex64 else torch.float64
        info = torch.finfo(part)
        sign, exponent, mantissa = _float_split(part)
        return DtypeInfo(name, itemsize * 8, itemsize, "complex (two floats)", sign * 2,
                         exponent * 2, mantissa * 2, f"{info.min:.4g} (each part)",
                         f"{info.max:.4g} (each part)", f"{info.eps:.3g}",
                         str(one_tenth.item()), USED_FOR[name])
    if dtype.is_floating_point:
        info = torch.finfo(dtype)
        sign, exponent, mantissa = _float_split(dtype)
        return DtypeInfo(name, info.bits, itemsize, "floating point", sign, exponent, mantissa,
                         f"{info.min:.4g}", f"{info.max:.4g}", f"{info.eps:.3g}", stored,
                         USED_FOR[name])
    if dtype == torch.bool:
        return DtypeInfo(name, itemsize * 8, itemsize, "boolean (one byte each)", None, None, None,
                         "False", "True", "-", stored, USED_FOR[name])
    iinfo = torch.iinfo(dtype)
    return DtypeInfo(name, iinfo.bits, itemsize, "integer", 1 if iinfo.min < 0 else 0, None, None,
                     f"{iinfo.min:,}", f"{iinfo.max:,}", "1", stored, USED_FOR[name])


def dtype_table() -> list[DtypeInfo]:
    return [dtype_info(name) for name in DTYPES]


def nbytes_of(shape: tuple[int, ...], dtype: str) -> int | None:
    """nbytes of this shape and dtype, from a meta tensor; None when PyTorch cannot count it."""
    try:
        return torch.empty(shape, dtype=DTYPES[dtype], device="meta").nbytes
    except RuntimeError:
        return None
