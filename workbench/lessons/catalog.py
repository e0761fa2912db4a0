"""Guided lessons: short sequences of steps, each a lesson link, a sentence or two, and a check.

The lessons follow the course material: a tensor's three properties, reshaping and memory,
autograd and the chain rule, accumulation and zero_grad, no_grad, the training-loop rhythm,
DataLoader batching, saving and loading. Each step's check is one of its tool's checks
(`workbench/<tool>/checks.py`), written once and answered by PyTorch when revealed.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from workbench.autograd import checks as autograd
from workbench.batches import checks as batches
from workbench.common.checks import Check
from workbench.common.formatting import human_bytes
from workbench.moons import checks as training
from workbench.tensors import checks as tensors


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


LESSONS: tuple[Lesson, ...] = (
    Lesson("tensors", "Tensors and their memory", "tensor_inspector",
           "Shape, dtype and device; strides; why view can fail where reshape works.", (
               Step("Make a (2, 3) tensor", "A tensor is a view of a flat storage: its shape and "
                    "strides say how to walk it.", "tensor_inspector", {"shape": "2,3"},
                    tensors.STRIDE_OF_2X3,
                    shows=lambda: str(torch.zeros(2, 3).stride())),
               Step("Transpose it", "`t()` copies nothing: watch the logical grid jump through "
                    "the storage strip.", "tensor_inspector", {"shape": "2,3", "ops": "t()"},
                    tensors.T_STRIDE,
                    shows=lambda: str(torch.zeros(2, 3).t().stride())),
               Step("Try view(-1)", "Flattening the transposed tensor with `view`: why does it fail?",
                    "tensor_inspector", {"shape": "2,3", "ops": "t().view(-1)"},
                    tensors.VIEW_AFTER_T,
                    shows=lambda: tensors.VIEW_AFTER_T.compute().shown_value[:60]),
               Step("Fix it with reshape", "`reshape` returns a view when it can and a copy when it "
                    "must.", "tensor_inspector", {"shape": "2,3", "ops": "t().reshape(-1)"},
                    tensors.RESHAPE_COPIES,
                    shows=lambda: str(tuple(torch.zeros(2, 3).t().reshape(-1).shape))),
               Step("Count the bytes", "dtype decides the bytes per element.", "tensor_inspector",
                    {"shape": "64,128", "dtype": "bfloat16"},
                    tensors.BF16_BYTES,
                    shows=lambda: human_bytes(
                        torch.empty(64, 128, dtype=torch.bfloat16, device="meta").nbytes)),
           )),
    Lesson("autograd", "Autograd and the chain rule", "autograd_graph",
           "The graph PyTorch records, gradients flowing back, accumulation and no_grad.", (
               Step("A derivative", "y = x^2 + 3x + 1 at x = 2. Step through backward and watch "
                    "the gradient reach x.", "autograd_graph",
                    {"code": "x = torch.tensor(2.0, requires_grad=True)\ny = x**2 + 3*x + 1",
                     "backward": "1"},
                    autograd.DY_DX_QUADRATIC),
               Step("The chain rule", "y = wx + b, L = (y - 10)^2: the gradient of L reaches w "
                    "through y.", "autograd_graph",
                    {"code": "x = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
                             "b = torch.tensor(1.0, requires_grad=True)\ny = w * x + b\nL = (y - 10) ** 2",
                     "backward": "1"},
                    autograd.W_GRAD_LINEAR),
               Step("Gradients accumulate", "Call backward() three times on L = w^2 at w = 3 (with "
                    "retain_graph=True, so the graph survives each call).",
                    "autograd_graph",
                    {"code": "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2", "backward": "3",
                     "retain": "1"},
                    autograd.THREE_BACKWARD),
               Step("Updates go inside no_grad", "A manual update changes a leaf in place; autograd "
                    "must not record it.", "autograd_graph",
                    {"code": "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\nL.backward()\n"
                             "with torch.no_grad():\n    w -= 0.1 * w.grad\nw.grad.zero_()",
                     "backward": "0"},
                    autograd.UPDATE_OUTSIDE_NO_GRAD),
           )),
    Lesson("training", "The training loop", "moons_trainer",
           "Data, model, loss, optimizer: the rhythm forward, backward, step, zero_grad.", (
               Step("The data", "Two interleaving moons with noise; the scaler is fit on the "
                    "training split only.", "moons_trainer", {"dataset": "moons", "noise": "0.25"},
                    None),
               Step("The loop's rhythm", "Press Play: each step is zero_grad, forward, backward, "
                    "step.", "moons_trainer", {"dataset": "moons", "epochs": "30"},
                    training.LOOP_ORDER),
               Step("Save and load", "The state_dict is the model's parameters by name.",
                    "moons_trainer", {"dataset": "moons"},
                    training.STATE_DICT_ROUND_TRIP),
           )),
    Lesson("batching", "DataLoader batching", "batch_iterator",
           "How a DataLoader turns a dataset into batches, epoch after epoch.", (
               Step("Batches per epoch", "20 samples in batches of 6.", "batch_iterator",
                    {"n": "20", "batch": "6", "shuffle": "0"},
                    batches.BATCHES_PER_EPOCH),
               Step("drop_last", "The short last batch can be dropped.", "batch_iterator",
                    {"n": "20", "batch": "6", "shuffle": "0", "drop_last": "1"},
                    batches.BATCHES_WITH_DROP_LAST),
               Step("Shuffling", "shuffle=True draws a new order every epoch from the generator.",
                    "batch_iterator", {"n": "20", "batch": "6", "shuffle": "1", "epochs": "2"},
                    batches.RESHUFFLE),
           )),
)


def lesson_by_key(key: str) -> Lesson | None:
    return next((lesson for lesson in LESSONS if lesson.key == key), None)
