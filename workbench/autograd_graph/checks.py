"""The autograd knowledge checks, on the autograd page and in the autograd lesson.

Each answer is computed by PyTorch when the learner reveals it; the learner reads the function
that computed it, so each function is written as the teaching code it is.
"""
from __future__ import annotations

import warnings

import torch

from workbench.common.checks import Answer, Check


def dy_dx_at_2() -> Answer:
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 2 + 3 * x + 1
    y.backward()
    return Answer(f"{x.grad.item():g}", f"x.grad = {x.grad}",
                  "dy/dx = 2x + 3 = 7 at x = 2. x is used twice, so two gradients add up in x.grad.")


DY_DX_QUADRATIC = Check(
    "ag_dy_dx_quadratic",
    "`x = torch.tensor(2.0, requires_grad=True)`, `y = x**2 + 3*x + 1`, `y.backward()`. "
    "What is `x.grad`, that is dy/dx at x = 2?",
    ("4", "7", "11"), dy_dx_at_2)


def w_grad_of_linear() -> Answer:
    x = torch.tensor(2.0)
    w = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(1.0, requires_grad=True)
    y = w * x + b
    loss = (y - 10) ** 2
    loss.backward()
    return Answer(f"{w.grad.item():g}", f"w.grad = {w.grad}, b.grad = {b.grad}",
                  "dL/dy = 2(y − 10) = −6; y = wx + b, so dL/dw = −6 · x = −12: the chain rule, "
                  "node by node.")


W_GRAD_LINEAR = Check(
    "ag_w_grad_linear",
    "x = 2, w = 3 and b = 1 (only w and b require grad), `y = w * x + b`, "
    "`L = (y - 10) ** 2`, `L.backward()`. What is `w.grad`?",
    ("-12", "-6", "12"), w_grad_of_linear)


def three_backward_calls() -> Answer:
    w = torch.tensor(3.0, requires_grad=True)
    loss = w ** 2
    for _ in range(3):
        loss.backward(retain_graph=True)
    return Answer(f"{w.grad.item():.1f}", f"w.grad = {w.grad}",
                  "Each backward() adds dL/dw = 2w = 6 into w.grad: 6, then 12, then 18. Nothing "
                  "is overwritten; zero the gradient between steps to start again from 0.")


THREE_BACKWARD = Check(
    "ag_three_backward",
    "`w = torch.tensor(3.0, requires_grad=True)`, `L = w ** 2`, then "
    "`L.backward(retain_graph=True)` three times. What is `w.grad`?",
    ("6.0", "12.0", "18.0", "an error"), three_backward_calls)


NO_GRAD_OPTIONS = ("Only for speed: the result is the same",
                   "Otherwise PyTorch refuses: w is a leaf that requires grad",
                   "It zeroes w.grad after the update")


def update_outside_no_grad() -> Answer:
    w = torch.tensor(3.0, requires_grad=True)
    (w ** 2).backward()
    try:
        w -= 0.1 * w.grad          # no torch.no_grad() around it
    except RuntimeError as exc:
        return Answer(NO_GRAD_OPTIONS[1], str(exc).splitlines()[0],
                      "An update is not part of the model, so it must not be recorded. Outside "
                      "`torch.no_grad()` PyTorch would have to record `w -= ...` in the graph, "
                      "which for a leaf that requires grad it refuses. Inside `no_grad()` the "
                      "update changes `w` in place and `w` stays a leaf.")
    return Answer(NO_GRAD_OPTIONS[0], f"no error: {w}")


UPDATE_OUTSIDE_NO_GRAD = Check(
    "ag_no_grad_update",
    "Why does the manual update `w -= lr * w.grad` go inside `with torch.no_grad():`?",
    NO_GRAD_OPTIONS, update_outside_no_grad)

REBIND_OPTIONS = ("w.grad is the new gradient, 4.8",
                  "w.grad is None: w is no longer a leaf",
                  "PyTorch refuses the update, as for `w -= ...`")


def rebinding_update() -> Answer:
    w = torch.tensor(3.0, requires_grad=True)
    (w ** 2).backward()
    w = w - 0.1 * w.grad           # no error: a new tensor, made by an operation autograd recorded
    (w ** 2).backward()            # the second step's forward and backward
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # PyTorch warns that .grad of a non-leaf is unused
        grad = w.grad
    option = REBIND_OPTIONS[1] if grad is None and not w.is_leaf else REBIND_OPTIONS[0]
    return Answer(option, f"w.is_leaf = {w.is_leaf}, w.grad_fn = {type(w.grad_fn).__name__}, "
                          f"w.grad = {grad}",
                  "`w = w - lr * w.grad` is not an in-place update: it makes a new tensor and "
                  "names it `w`. Made by a recorded operation, the new `w` has a grad_fn and is no "
                  "longer a leaf, so the next `backward()` fills no `.grad` on it (the gradient "
                  "flows back into the old leaf instead) and the step after finds `w.grad` None. "
                  "Update in place, `w -= lr * w.grad`, inside `torch.no_grad()`.")


REBIND_UPDATE = Check(
    "ag_rebind_update",
    "`w = w - 0.1 * w.grad` (outside `no_grad`, after a first backward at w = 3 of L = w^2), "
    "then the same forward and backward again. What is `w.grad` now?",
    REBIND_OPTIONS, rebinding_update)

INFERENCE_OPTIONS = ("It works: b is simply a constant, as under no_grad",
                     "PyTorch raises: an inference tensor cannot be saved for backward",
                     "It works, but L does not require grad")


def inference_tensor_in_autograd() -> Answer:
    w = torch.tensor(3.0, requires_grad=True)
    with torch.inference_mode():
        b = w * 2                  # an inference tensor: b.is_inference() is True
    try:
        loss = w * b               # autograd must save b to compute dL/dw = b
    except RuntimeError as exc:
        return Answer(INFERENCE_OPTIONS[1],
                      f"b.is_inference() = {b.is_inference()}; {str(exc).split('.')[0]}.",
                      "`torch.no_grad()` only stops recording; `torch.inference_mode()` also makes "
                      "its results *inference tensors*, without the version counter autograd "
                      "relies on. They can be read later, but autograd refuses to save one for "
                      "backward. Use `no_grad()` for what will meet autograd again, or `b.clone()`.")
    return Answer(INFERENCE_OPTIONS[2] if not loss.requires_grad else INFERENCE_OPTIONS[0],
                  f"no error: {loss}")


INFERENCE_TENSOR = Check(
    "ag_inference_tensor",
    "`w = torch.tensor(3.0, requires_grad=True)`; `b = w * 2` inside `with torch.inference_mode():`; "
    "then, outside it, `L = w * b`. What happens?",
    INFERENCE_OPTIONS, inference_tensor_in_autograd)

PAGE_CHECKS = (THREE_BACKWARD, UPDATE_OUTSIDE_NO_GRAD, INFERENCE_TENSOR)
LESSON_CHECKS = (DY_DX_QUADRATIC, W_GRAD_LINEAR, THREE_BACKWARD, UPDATE_OUTSIDE_NO_GRAD,
                 REBIND_UPDATE, INFERENCE_TENSOR)
