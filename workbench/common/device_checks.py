"""The home page's knowledge check and demonstration: what happens when tensors on two devices meet.

The rule the lesson teaches (DEVICE_RULE, written once, each clause tested against PyTorch): an
operation that computes (arithmetic, a layer) needs its tensors on one device and does not move
them; a 0-dim CPU tensor joins any device like a Python number; and the copies PyTorch does make
across devices are the ones the code asks for (`.to()`, `copy_()`, slice assignment), besides a
CPU index tensor indexing a tensor elsewhere.

With a GPU (CUDA or MPS) the demonstration is real. Without one, nothing here can make a CUDA
tensor (`torch.ones(2, device="cuda")` itself fails, and the page shows how), so a `meta` tensor
stands in for the GPU one: `meta` is a device too (shapes, no memory), and PyTorch refuses to mix
it with CPU tensors for the same reason. Its message is worded differently from CUDA's, and the
page says which one it shows. Only elementwise ops are used for the stand-in: they check devices
on `meta` as on CUDA.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from workbench.common.checks import Answer, Check
from workbench.common.device import best_device



# The rule as the pages say it. tests/unit/common/test_device_checks_rule.py runs each clause.
DEVICE_RULE = ("An operation that computes (arithmetic, a layer, a loss) needs all its tensors on one "
               "device, and PyTorch does not move one there for you: move it first with "
               "`.to(device)`. A 0-dim CPU tensor such as `torch.tensor(2.0)` is the exception, "
               "joining a tensor on any device like a Python number. Copies across devices happen "
               "only where the code asks: `.to()`, `copy_()` and slice assignment (`gpu[:2] = cpu`) "
               "copy, and a CPU index tensor may index a tensor on another device.")


def stand_in_for(device: torch.device) -> torch.device:
    """The GPU the demonstration uses: `device` itself if it is one, else the `meta` device."""
    return device if device.type not in ("cpu", "meta") else torch.device("meta")


@dataclass(frozen=True)
class Meeting:
    code: str
    raised: bool
    outcome: str                 # PyTorch's message, or the result's device and shape
    error_type: str | None = None


@dataclass(frozen=True)
class CrossDeviceDemo:
    other: str                   # the other device: "cuda:0", "mps:0", or "meta" (simulated)
    simulated: bool              # True when no GPU answers and `meta` stands in
    no_gpu: Meeting | None       # what asking for a CUDA tensor here gives, when simulated
    meetings: list[Meeting]
    code: str


def _meet(code: str, run: Callable[[], torch.Tensor]) -> Meeting:
    try:
        result = run()
    except (RuntimeError, NotImplementedError, AssertionError) as exc:
        return Meeting(code, True, str(exc).strip().splitlines()[0], type(exc).__name__)
    return Meeting(code, False, f"a tensor of shape {tuple(result.shape)} on {result.device}")


def cross_device_demo(device: torch.device) -> CrossDeviceDemo:
    """CPU tensors meeting tensors on `device` (or on `meta` where no GPU answers)."""
    other = stand_in_for(device)
    a = torch.ones(2, 3)                          # on the CPU
    b = torch.ones(2, 3, device=other)            # on the other device
    scalar = torch.tensor(2.0)                    # 0-dim, on the CPU
    meetings = [
        _meet("a + b", lambda: a + b),
        _meet("a * b", lambda: a * b),
        _meet("torch.cat([a, b])", lambda: torch.cat([a, b])),
        _meet("torch.tensor(2.0) + b", lambda: scalar + b),
        _meet("a.to(b.device) + b", lambda: a.to(b.device) + b),
    ]
    simulated = other.type == "meta"
    no_gpu = _meet('torch.ones(2, device="cuda")', lambda: torch.ones(2, device="cuda")) \
        if simulated and not torch.cuda.is_available() else None
    return CrossDeviceDemo(str(b.device), simulated, no_gpu, meetings, demo_code(str(other)))


def demo_code(other: str) -> str:
    where = ("# no GPU here: the meta device stands in for one" if other == "meta"
             else "# a real GPU")
    return f'''import torch

other = torch.device({other!r})   {where}
a = torch.ones(2, 3)               # on the CPU
b = torch.ones(2, 3, device=other)
for code, op in [("a + b", lambda: a + b),
                 ("torch.tensor(2.0) + b", lambda: torch.tensor(2.0) + b),
                 ("a.to(b.device) + b", lambda: a.to(b.device) + b)]:
    try:
        print(code, "->", op().device)
    except RuntimeError as err:
        print(code, "->", err)
'''


def add_across_devices() -> Answer:
    other = stand_in_for(best_device())   # a GPU if one answers; else meta stands in for it
    a = torch.ones(2, 3)                  # on the CPU
    b = torch.ones(2, 3, device=other)
    try:
        result = a + b
    except RuntimeError as exc:
        simulated = other.type == "meta"
        return Answer("PyTorch raises an error", str(exc).splitlines()[0],
                      DEVICE_RULE
                      + (" No GPU answers on this server, so a `meta` tensor stood in for the "
                         "GPU one, and the message above is the one PyTorch gives for `meta`; a "
                         "real GPU words it differently (the lesson quotes \"Expected all tensors "
                         "to be on the same device\")." if simulated else ""))
    if result.device.type == "cpu":
        return Answer("It works and gives a CPU tensor", str(result.device))
    return Answer("PyTorch copies both to the GPU", str(result.device))


DEVICE_MISMATCH = Check(
    "home_device_mismatch",
    "A (2, 3) tensor on the CPU is added to a (2, 3) tensor on a GPU: `a + b`. What happens?",
    ("It works and gives a CPU tensor", "PyTorch copies both to the GPU", "PyTorch raises an error"),
    add_across_devices,
)
