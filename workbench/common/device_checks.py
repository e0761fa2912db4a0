"""The home page's knowledge check: what happens when tensors on two devices meet."""
from __future__ import annotations

import torch

from workbench.common.checks import Answer, Check


def add_across_devices() -> Answer:
    a = torch.ones(2, device="cpu")
    b = torch.ones(2, device="meta")  # stands in for a GPU tensor on a machine without one
    try:
        result = a + b
    except (RuntimeError, NotImplementedError) as exc:
        return Answer("PyTorch raises an error", str(exc).splitlines()[0],
                      "PyTorch never copies between devices implicitly: move one side with "
                      "`.to(device)` first. (The `meta` device stands in for a GPU here; on a "
                      "real GPU the message names `cuda:0` and `cpu`.)")
    return Answer("It works and gives a CPU tensor", str(result))


DEVICE_MISMATCH = Check(
    "home_device_mismatch",
    "A tensor on the CPU is added to a tensor on another device. What happens?",
    ("It works and gives a CPU tensor", "PyTorch copies both to the GPU", "PyTorch raises an error"),
    add_across_devices,
)
