"""Knowledge checks about tensors: the Tensor inspector's and the tensors lesson's, each once.

Each answer is computed by PyTorch when the learner commits; the learner then reads the
function below that computed it.
"""
from __future__ import annotations

import torch

from workbench.common.checks import Answer, Check
from workbench.common.formatting import human_bytes


def stride_of_2x3() -> Answer:
    x = torch.zeros(2, 3)
    return Answer(str(x.stride()), f"x.stride() = {x.stride()}",
                  "Moving one row skips 3 elements of storage; moving one column skips 1.")


def stride_after_t() -> Answer:
    x = torch.zeros(2, 3)
    strides = x.t().stride()
    return Answer(str(strides), f"x.t().stride() = {strides}",
                  "`t()` swaps the strides along with the sizes and copies nothing: the same "
                  "storage, read in another order.")


def view_after_t() -> Answer:
    x = torch.arange(6).view(2, 3)
    try:
        x.t().view(-1)
    except RuntimeError as exc:
        return Answer("No: PyTorch raises a RuntimeError", str(exc).split(".")[0],
                      "`x.t()` reads memory column by column (strides (1, 3)); one flat stride "
                      "cannot walk that order, and `view` never copies. `reshape` copies when it "
                      "must, so `x.t().reshape(-1)` works.")
    return Answer("Yes: a flat view of its 6 elements", "no error")


def reshape_copies() -> Answer:
    x = torch.arange(6).view(2, 3)
    y = x.t().reshape(-1)
    shares = y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    answer = "it shares x's storage" if shares else "it is a copy"
    return Answer(answer, f"same storage: {shares}; y = {y.tolist()}",
                  "`reshape` returns a view when the strides allow it, and a contiguous copy "
                  "otherwise, as here.")


def bf16_bytes() -> Answer:
    x = torch.empty(64, 128, dtype=torch.bfloat16, device="meta")
    nbytes = x.element_size() * x.numel()
    return Answer(human_bytes(nbytes),
                  f"{x.numel():,} elements x {x.element_size()} bytes = {nbytes:,} bytes",
                  "bfloat16 keeps float32's 8-bit exponent (same range) with a 7-bit mantissa, "
                  "in 2 bytes.")


def permute_strides() -> Answer:
    x = torch.empty(2, 3, 4, 5)
    strides = x.permute(0, 2, 3, 1).stride()
    return Answer(str(strides), f"x.permute(0, 2, 3, 1).stride() = {strides}",
                  "permute reorders the strides exactly like the sizes: the channel stride 20 "
                  "moves to the end. No data moves, so the result is not contiguous.")


STRIDE_OF_2X3 = Check("ti_stride", "`x = torch.zeros(2, 3)`. What is `x.stride()`?",
                      ("(3, 1)", "(1, 3)", "(2, 3)"), stride_of_2x3)
T_STRIDE = Check("ti_t_stride", "`x = torch.zeros(2, 3)` has strides `(3, 1)`. What is "
                 "`x.t().stride()`?", ("(3, 1)", "(1, 3)", "(2, 1)", "(1, 2)"), stride_after_t)
VIEW_AFTER_T = Check("ti_view", "`x = torch.arange(6).view(2, 3)`. Does `x.t().view(-1)` work?",
                     ("Yes: a flat view of its 6 elements", "Yes, but it makes a copy",
                      "No: PyTorch raises a RuntimeError"), view_after_t)
RESHAPE_COPIES = Check("ti_reshape", "`x = torch.arange(6).view(2, 3)`. Does "
                       "`x.t().reshape(-1)` share x's storage?",
                       ("it shares x's storage", "it is a copy"), reshape_copies)
BF16_BYTES = Check("ti_bf16", "How many bytes does a `(64, 128)` bfloat16 tensor take?",
                   ("8 KiB", "16 KiB", "32 KiB", "64 KiB"), bf16_bytes)
PERMUTE_STRIDES = Check("ti_permute", "`x` has shape `(2, 3, 4, 5)` and strides "
                        "`(60, 20, 5, 1)`. What are the strides of `x.permute(0, 2, 3, 1)`?",
                        ("(60, 20, 5, 1)", "(60, 5, 1, 20)", "(1, 5, 20, 60)", "(20, 5, 1, 60)"),
                        permute_strides)

# The four on the Tensor inspector's page, in the order it shows them.
PAGE_CHECKS = (T_STRIDE, VIEW_AFTER_T, BF16_BYTES, PERMUTE_STRIDES)
# The tensors lesson's five steps, in order (for workbench/lessons/catalog.py).
LESSON_CHECKS = (STRIDE_OF_2X3, T_STRIDE, VIEW_AFTER_T, RESHAPE_COPIES, BF16_BYTES)
