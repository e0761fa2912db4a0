"""Guided lessons: short sequences of steps, each a lesson link, a sentence or two, and a check.

The lessons follow the course material: a tensor's three properties, reshaping and memory,
autograd and the chain rule, accumulation and zero_grad, no_grad, the training-loop rhythm,
DataLoader batching, saving and loading. Every answer is computed by PyTorch when revealed.
"""
from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from workbench.common.checks import Revealed
from workbench.common.formatting import human_bytes


@dataclass(frozen=True)
class Check:
    question: str
    options: tuple[str, ...]
    answer: Callable[[], Revealed]


@dataclass(frozen=True)
class Step:
    title: str
    text: str
    tool: str                         # the page's url_path
    params: dict[str, str] = field(default_factory=dict)
    check: Check | None = None
    # A fact the opened page must show, computed by PyTorch (the lessons' tests look for it).
    shows: Callable[[], str] | None = None


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    tool: str
    summary: str
    steps: tuple[Step, ...]


# --- answers, each computed by PyTorch when the learner reveals it --------------------------

def _stride_of_2x3() -> Revealed:
    x = torch.zeros(2, 3)
    return Revealed(str(x.stride()), f"x.stride() = {x.stride()}",
                    "Moving one row skips 3 elements of storage; moving one column skips 1.",
                    "x = torch.zeros(2, 3)\nx.stride()")


def _stride_after_t() -> Revealed:
    x = torch.zeros(2, 3)
    return Revealed(str(x.t().stride()), f"x.t().stride() = {x.t().stride()}",
                    "`t()` swaps the strides and copies nothing: the same storage, read in "
                    "another order.", "x = torch.zeros(2, 3)\nx.t().stride()")


def _view_after_t() -> Revealed:
    x = torch.arange(6).view(2, 3)
    code = "x = torch.arange(6).view(2, 3)\nx.t().view(-1)"
    try:
        x.t().view(-1)
    except RuntimeError as exc:
        return Revealed("RuntimeError", str(exc),
                        "The transposed rows are not contiguous in memory, and `view` never "
                        "copies. `reshape(-1)` copies when it must.", code)
    return Revealed("a flat view of 6 elements", "no error", "", code)


def _reshape_copies() -> Revealed:
    x = torch.arange(6).view(2, 3)
    y = x.t().reshape(-1)
    shares = y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    answer = "it shares x's storage" if shares else "it is a copy"
    return Revealed(answer, f"same storage: {shares}; y = {y.tolist()}",
                    "`reshape` returns a view when the strides allow it, and a contiguous copy "
                    "otherwise, as here.",
                    "x = torch.arange(6).view(2, 3)\ny = x.t().reshape(-1)\n"
                    "y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()")


def _bf16_bytes() -> Revealed:
    x = torch.empty(64, 128, dtype=torch.bfloat16, device="meta")
    nbytes = x.element_size() * x.numel()
    return Revealed(f"{nbytes:,} bytes", f"{x.numel()} elements x {x.element_size()} bytes = {nbytes}",
                    "bfloat16 keeps float32's 8-bit exponent (same range) with a 7-bit mantissa, "
                    "in 2 bytes.",
                    "x = torch.empty(64, 128, dtype=torch.bfloat16)\nx.element_size() * x.numel()")


def _dy_dx_quadratic() -> Revealed:
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 2 + 3 * x + 1
    y.backward()
    return Revealed(f"{x.grad.item():g}", f"x.grad = {x.grad}", "dy/dx = 2x + 3 = 7 at x = 2.",
                    "x = torch.tensor(2.0, requires_grad=True)\ny = x**2 + 3*x + 1\ny.backward()\nx.grad")


def _w_grad_linear() -> Revealed:
    x = torch.tensor(2.0)
    w = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(1.0, requires_grad=True)
    loss = (w * x + b - 10) ** 2
    loss.backward()
    return Revealed(f"{w.grad.item():g}", f"w.grad = {w.grad}, b.grad = {b.grad}",
                    "dL/dw = 2(y - 10) * x = 2 * (-3) * 2 = -12: the chain rule, node by node.",
                    "x = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
                    "b = torch.tensor(1.0, requires_grad=True)\nL = (w * x + b - 10) ** 2\n"
                    "L.backward()\nw.grad")


def _grad_after_three_backwards() -> Revealed:
    w = torch.tensor(3.0, requires_grad=True)
    for _ in range(3):
        (w ** 2).backward()
    return Revealed(f"{w.grad.item():g}", f"w.grad = {w.grad}",
                    "Each backward() adds 2w = 6 into w.grad: gradients accumulate until you "
                    "zero them.",
                    "w = torch.tensor(3.0, requires_grad=True)\nfor _ in range(3):\n"
                    "    (w ** 2).backward()\nw.grad")


def _update_without_no_grad() -> Revealed:
    w = torch.tensor(3.0, requires_grad=True)
    (w ** 2).backward()
    code = ("w = torch.tensor(3.0, requires_grad=True)\n(w ** 2).backward()\n"
            "w -= 0.1 * w.grad   # outside torch.no_grad()")
    try:
        w -= 0.1 * w.grad
    except RuntimeError as exc:
        return Revealed("PyTorch raises an error", str(exc),
                        "The update is not part of the model: inside `torch.no_grad()` it is "
                        "not recorded, and a leaf may be changed in place.", code)
    return Revealed("it works", str(w), "", code)


def _loop_order() -> Revealed:
    calls: list[str] = []
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.ones(4, 2), torch.zeros(4, 1)
    optimizer.zero_grad()
    calls.append("zero_grad")
    loss = nn.functional.mse_loss(model(x), y)
    calls.append("forward")
    loss.backward()
    calls.append("backward")
    before = model.weight.detach().clone()
    optimizer.step()
    calls.append("step")
    changed = not torch.equal(before, model.weight)
    shown = " -> ".join(calls) + f" (weights changed: {changed})"
    return Revealed("zero_grad, forward, backward, step", shown,
                    "Clear old gradients, compute the loss, fill .grad, then let the optimizer "
                    "use it.", "optimizer.zero_grad()\nloss = loss_fn(model(x), y)\nloss.backward()\n"
                    "optimizer.step()")


def _state_dict_round_trip() -> Revealed:
    generator = torch.Generator().manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    fresh = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    fresh.load_state_dict(torch.load(buffer, weights_only=True))
    x = torch.randn(5, 2, generator=generator)
    same = torch.equal(model(x), fresh(x))
    return Revealed("identical predictions" if same else "different predictions", f"torch.equal: {same}",
                    "The state_dict holds every parameter and buffer; a fresh instance of the same "
                    "architecture that loads it computes exactly the same function.",
                    "torch.save(model.state_dict(), path)\n"
                    "fresh.load_state_dict(torch.load(path, weights_only=True))\n"
                    "torch.equal(model(x), fresh(x))")


def _batches_per_epoch(drop_last: bool) -> Callable[[], Revealed]:
    def answer() -> Revealed:
        loader = torch.utils.data.DataLoader(list(range(20)), batch_size=6, drop_last=drop_last)
        sizes = [len(batch) for batch in loader]
        return Revealed(str(len(loader)), f"len(loader) = {len(loader)}; batch sizes {sizes}",
                        "20 = 3 x 6 + 2: the last 2 samples form a short batch"
                        + (", which drop_last throws away." if drop_last else "."),
                        f"loader = DataLoader(range(20), batch_size=6, drop_last={drop_last})\nlen(loader)")
    return answer


def _reshuffle() -> Revealed:
    generator = torch.Generator().manual_seed(0)
    loader = torch.utils.data.DataLoader(list(range(20)), batch_size=6, shuffle=True, generator=generator)
    first = [batch.tolist() for batch in loader][0]
    second = [batch.tolist() for batch in loader][0]
    return Revealed("different" if first != second else "the same", f"epoch 1: {first}; epoch 2: {second}",
                    "A RandomSampler draws a new permutation from the generator each time the "
                    "loader is iterated.", "for epoch in range(2):\n    print(next(iter(loader)))")


LESSONS: tuple[Lesson, ...] = (
    Lesson("tensors", "Tensors and their memory", "tensor_inspector",
           "Shape, dtype and device; strides; why view can fail where reshape works.", (
               Step("Make a (2, 3) tensor", "A tensor is a view of a flat storage: its shape and "
                    "strides say how to walk it.", "tensor_inspector", {"shape": "2,3"},
                    Check("What is x.stride() for a fresh (2, 3) tensor?", ("(3, 1)", "(1, 3)", "(2, 3)"),
                          _stride_of_2x3),
                    shows=lambda: str(torch.zeros(2, 3).stride())),
               Step("Transpose it", "`t()` copies nothing: watch the logical grid jump through "
                    "the storage strip.", "tensor_inspector", {"shape": "2,3", "ops": "t()"},
                    Check("What is x.t().stride()?", ("(3, 1)", "(1, 3)", "(1, 2)"), _stride_after_t),
                    shows=lambda: str(torch.zeros(2, 3).t().stride())),
               Step("Try view(-1)", "Flattening the transposed tensor with `view`: why does it fail?",
                    "tensor_inspector", {"shape": "2,3", "ops": "t().view(-1)"},
                    Check("What does x.t().view(-1) do?", ("a flat view of 6 elements", "RuntimeError"),
                          _view_after_t),
                    shows=lambda: _view_after_t().shown_value[:60]),
               Step("Fix it with reshape", "`reshape` returns a view when it can and a copy when it "
                    "must.", "tensor_inspector", {"shape": "2,3", "ops": "t().reshape(-1)"},
                    Check("Does x.t().reshape(-1) share x's storage?",
                          ("it shares x's storage", "it is a copy"), _reshape_copies),
                    shows=lambda: str(tuple(torch.zeros(2, 3).t().reshape(-1).shape))),
               Step("Count the bytes", "dtype decides the bytes per element.", "tensor_inspector",
                    {"shape": "64,128", "dtype": "bfloat16"},
                    Check("How many bytes does a (64, 128) bfloat16 tensor take?",
                          ("8,192 bytes", "16,384 bytes", "32,768 bytes"), _bf16_bytes),
                    shows=lambda: human_bytes(
                        torch.empty(64, 128, dtype=torch.bfloat16, device="meta").nbytes)),
           )),
    Lesson("autograd", "Autograd and the chain rule", "autograd_graph",
           "The graph PyTorch records, gradients flowing back, accumulation and no_grad.", (
               Step("A derivative", "y = x^2 + 3x + 1 at x = 2. Step through backward and watch "
                    "the gradient reach x.", "autograd_graph",
                    {"code": "x = torch.tensor(2.0, requires_grad=True)\ny = x**2 + 3*x + 1",
                     "backward": "1"},
                    Check("What is dy/dx at x = 2?", ("4", "7", "11"), _dy_dx_quadratic)),
               Step("The chain rule", "y = wx + b, L = (y - 10)^2: the gradient of L reaches w "
                    "through y.", "autograd_graph",
                    {"code": "x = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
                             "b = torch.tensor(1.0, requires_grad=True)\ny = w * x + b\nL = (y - 10) ** 2",
                     "backward": "1"},
                    Check("What is w.grad?", ("-12", "-6", "12"), _w_grad_linear)),
               Step("Gradients accumulate", "Call backward() three times on L = w^2 at w = 3 (with "
                    "retain_graph=True, so the graph survives each call).",
                    "autograd_graph",
                    {"code": "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2", "backward": "3",
                     "retain": "1"},
                    Check("What is w.grad after three backward() calls?", ("6", "18", "27"),
                          _grad_after_three_backwards)),
               Step("Updates go inside no_grad", "A manual update changes a leaf in place; autograd "
                    "must not record it.", "autograd_graph",
                    {"code": "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\nL.backward()\n"
                             "with torch.no_grad():\n    w -= 0.1 * w.grad\nw.grad.zero_()",
                     "backward": "0"},
                    Check("What happens to `w -= 0.1 * w.grad` outside torch.no_grad()?",
                          ("it works", "PyTorch raises an error"), _update_without_no_grad)),
           )),
    Lesson("training", "The training loop", "moons_trainer",
           "Data, model, loss, optimizer: the rhythm forward, backward, step, zero_grad.", (
               Step("The data", "Two interleaving moons with noise; the scaler is fit on the "
                    "training split only.", "moons_trainer", {"dataset": "moons", "noise": "0.25"},
                    None),
               Step("The loop's rhythm", "Press Play: each step is zero_grad, forward, backward, "
                    "step.", "moons_trainer", {"dataset": "moons", "epochs": "30"},
                    Check("In which order does one training step call these?",
                          ("forward, step, backward, zero_grad", "zero_grad, forward, backward, step"),
                          _loop_order)),
               Step("Save and load", "The state_dict is the model's parameters by name.",
                    "moons_trainer", {"dataset": "moons"},
                    Check("A fresh model loads the saved state_dict. Its predictions are...",
                          ("identical predictions", "different predictions"), _state_dict_round_trip)),
           )),
    Lesson("batching", "DataLoader batching", "batch_iterator",
           "How a DataLoader turns a dataset into batches, epoch after epoch.", (
               Step("Batches per epoch", "20 samples in batches of 6.", "batch_iterator",
                    {"n": "20", "batch": "6", "shuffle": "0"},
                    Check("How many batches does one epoch yield?", ("3", "4", "6"),
                          _batches_per_epoch(False))),
               Step("drop_last", "The short last batch can be dropped.", "batch_iterator",
                    {"n": "20", "batch": "6", "shuffle": "0", "drop_last": "1"},
                    Check("And with drop_last=True?", ("3", "4"), _batches_per_epoch(True))),
               Step("Shuffling", "shuffle=True draws a new order every epoch from the generator.",
                    "batch_iterator", {"n": "20", "batch": "6", "shuffle": "1", "epochs": "2"},
                    Check("Are the first batches of epoch 1 and epoch 2 the same?",
                          ("the same", "different"), _reshuffle)),
           )),
)


def lesson_by_key(key: str) -> Lesson | None:
    return next((lesson for lesson in LESSONS if lesson.key == key), None)
