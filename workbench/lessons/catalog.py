"""Guided lessons: short sequences of steps, each a lesson link, a sentence or two, and a check.

The lessons follow the course material: a tensor's three properties, reshaping and memory,
autograd and the chain rule, accumulation and zero_grad, no_grad, a training loop written from
scratch (y = 3x1 - 2x2 + 5), the training-loop rhythm with nn.Module and an optimizer,
DataLoader batching, saving and loading, and the table of training pitfalls. Each step's check
is one of the checks in a `checks.py` (a tool's, or `workbench/lessons/checks.py` for those only
a lesson asks), written once and answered by PyTorch when revealed; the step's link opens the
experiment on whose page the answer can be read.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from workbench.autograd_graph import checks as autograd
from workbench.autograd_graph.graph import format_tensor
from workbench.batch_iterator import checks as batches
from workbench.common.checks import Check
from workbench.common.formatting import human_bytes
from workbench.lessons.checks import (DATA_MUTATION, DEFAULT_DEVICE, DEVICE_MISMATCH, FLOAT_TARGETS,
                                      GRADIENT_SIGNS, LOSS_AT_ZERO, NO_NO_GRAD, NO_ZEROING, ONE_STEP,
                                      SCALER_LEAK, SIGMOID_FLOOR, SIXTY_STEPS, SOFTMAX_FLOOR,
                                      SUMMED_LOSS, TRAIN_MODE_EVAL, BATCHNORM_TRAIN_MODE, SEEDING,
                                      regression_data)
from workbench.moons_trainer import checks as training
from workbench.moons_trainer.pitfalls import PITFALLS, other_device
from workbench.tensor_inspector import checks as tensors


@dataclass(frozen=True)
class Step:
    title: str
    text: str
    tool: str                         # the page's url_path
    params: dict[str, str] = field(default_factory=dict)
    check: Check | None = None
    # A fact the opened page must show, computed by PyTorch (the lessons' tests look for it).
    shows: Callable[[], str] | None = None
    # Where on the opened page the experiment is, when a link cannot open it: a tab of the page,
    # and for the moons trainer's pitfall lab the pitfall to pick (a key of PITFALLS).
    tab: str = ""
    pitfall: str = ""


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    tool: str
    summary: str
    steps: tuple[Step, ...]
    # What the learner takes away, shown with the lesson's summary after the last step (words
    # only: the numbers of the summary are the checks' answers, computed when it is shown).
    takeaway: str = ""


# ---------------------------------------------------------------------------- programs and facts
# The autograd page runs these programs; the facts below recompute, in plain PyTorch, what the
# page must then show (the lessons' tests look for them on the opened page).

ACCUMULATE = ("w = torch.tensor(3.0, requires_grad=True)\n"
              "L = w ** 2\n"
              "for call in range(3):\n"
              "    L.backward(retain_graph=True)   # keep the graph for the next call\n"
              "    print('after call', call + 1, 'w.grad =', w.grad)\n")
UPDATE_WITHOUT_NO_GRAD = ("w = torch.tensor(3.0, requires_grad=True)\n"
                          "L = w ** 2\n"
                          "L.backward()\n"
                          "w -= 0.1 * w.grad   # an update, but autograd is still recording\n")
REBIND_UPDATE = ("w = torch.tensor(3.0, requires_grad=True)\n"
                 "L = w ** 2\n"
                 "L.backward()\n"
                 "w = w - 0.1 * w.grad   # a new tensor named w, made by a recorded operation\n"
                 "L = w ** 2\n"
                 "L.backward()\n"
                 "print('w.is_leaf =', w.is_leaf, ' w.grad_fn =', w.grad_fn)\n")

DATA = ("X = torch.randn(64, 2)\n"
        "y = X @ torch.tensor([3.0, -2.0]) + 5   # the rule to learn: y = 3*x1 - 2*x2 + 5\n"
        "w = torch.zeros(2, requires_grad=True)\n"
        "b = torch.zeros(1, requires_grad=True)\n")
FORWARD = DATA + ("pred = X @ w + b\n"
                  "L = ((pred - y) ** 2).mean()\n")
ONE_STEP_PROGRAM = DATA + ("lr = 0.1\n"
                   "L = ((X @ w + b - y) ** 2).mean()\n"
                   "L.backward()\n"
                   "print('L before the step:', L.item())\n"
                   "with torch.no_grad():\n"
                   "    w -= lr * w.grad\n"
                   "    b -= lr * b.grad\n"
                   "print('w =', w, 'b =', b)\n"
                   "L = ((X @ w + b - y) ** 2).mean()\n"
                   "print('L after one step:', L.item())\n")
NO_ZEROING_PROGRAM = DATA + ("lr = 0.1\n"
                     "for step in range(2):\n"
                     "    L = ((X @ w + b - y) ** 2).mean()\n"
                     "    L.backward()\n"
                     "    print('step', step + 1, 'w.grad =', w.grad)\n"
                     "    with torch.no_grad():\n"
                     "        w -= lr * w.grad\n"
                     "        b -= lr * b.grad\n"
                     "    # missing here: w.grad.zero_() and b.grad.zero_()\n")
FULL_LOOP = DATA + ("lr = 0.1\n"
                    "for block in range(6):\n"
                    "    for i in range(10):\n"
                    "        L = ((X @ w + b - y) ** 2).mean()   # forward and loss\n"
                    "        L.backward()                        # backward\n"
                    "        with torch.no_grad():               # step\n"
                    "            w -= lr * w.grad\n"
                    "            b -= lr * b.grad\n"
                    "        w.grad.zero_()                      # zero_grad\n"
                    "        b.grad.zero_()\n"
                    "    print('after', 10 * (block + 1), 'steps: w =', w, 'b =', b, 'L =', L.item())\n")


def grad_after_three_retained_calls() -> str:
    w = torch.tensor(3.0, requires_grad=True)
    L = w ** 2
    for _ in range(3):
        L.backward(retain_graph=True)
    return f"after call 3 w.grad = {str(w.grad)}"


def error_of_update_without_no_grad() -> str:
    w = torch.tensor(3.0, requires_grad=True)
    (w ** 2).backward()
    try:
        w -= 0.1 * w.grad
    except RuntimeError as exc:
        return str(exc).splitlines()[0]
    return "no error"


def _start() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    X, y = regression_data()
    return X, y, torch.zeros(2, requires_grad=True), torch.zeros(1, requires_grad=True)


def _loss(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return ((X @ w + b - y) ** 2).mean()


def loss_at_zero_shown() -> str:
    return format_tensor(_loss(*_start()))


def w_grad_at_zero_shown() -> str:
    X, y, w, b = _start()
    _loss(X, y, w, b).backward()
    return format_tensor(w.grad)


def loss_after_one_step_printed() -> str:
    X, y, w, b = _start()
    _loss(X, y, w, b).backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    return f"L after one step: {_loss(X, y, w, b).item()}"


def w_grad_without_zeroing_printed() -> str:
    X, y, w, b = _start()
    for _ in range(2):
        _loss(X, y, w, b).backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
    return f"step 2 w.grad = {str(w.grad)}"


def weights_after_sixty_printed() -> str:
    X, y, w, b = _start()
    for _ in range(60):
        _loss(X, y, w, b).backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()
    return f"w = {str(w.detach())} b = {str(b.detach())}"


# What the pitfall lab must show after its run, recomputed here in plain PyTorch.

def softmax_floor_shown() -> str:
    """Cross entropy of a one-hot row read as logits: the floor of pitfall 3, for either class."""
    return f"{nn.CrossEntropyLoss()(torch.eye(2), torch.tensor([0, 1])).item():.4f}"


def device_error_shown() -> str:
    """PyTorch's error for a CPU layer fed a batch on the lab's other device (meta without a GPU)."""
    other, _ = other_device(torch.device("cpu"))
    try:
        nn.Linear(2, 64)(torch.zeros(32, 2, device=other))
    except RuntimeError as exc:
        return str(exc).splitlines()[0]
    return "no error"


def in_place_error_shown() -> str:
    """The start of autograd's refusal when a tensor saved for backward was changed in place."""
    w = torch.ones(3, requires_grad=True)
    v = w * 1                          # a non-leaf, saved by the square below
    loss = (v ** 2).sum()
    with torch.no_grad():
        v.mul_(0.999)
    try:
        loss.backward()
    except RuntimeError as exc:
        return str(exc).split(":")[0]
    return "no error"


# The vanishing-gradients lesson's link: deep and narrow, with plain SGD, which (unlike Adam) moves
# each weight by lr times its gradient, so a vanishing gradient shows as weights that stay put.
VANISHING_SIGMOID = {"hidden": "8,8,8,8", "act": "Sigmoid", "opt": "SGD", "lr": "0.1",
                     "epochs": "50"}


def pitfall_title(key: str) -> str:
    return next(p.title for p in PITFALLS if p.key == key)


def _pitfall(number: int, key: str, text: str, check: Check,
             shows: Callable[[], str] | None = None) -> Step:
    """A step of the pitfalls lesson: the moons trainer's pitfall lab, on pitfall `key`."""
    return Step(f"Pitfall {number}: {pitfall_title(key)}", text, "moons_trainer", {}, check,
                shows=shows, tab="Pitfall lab", pitfall=key)


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
               Step("Where it lives", "The third property next to shape and dtype: the `device`. "
                    "Read it in the facts table: the page builds x on this server's device (its "
                    "script says so with `.to(...)` where that is not the CPU). In your own "
                    "code, `torch.zeros(2, 3)` names no device: where does PyTorch put it?",
                    "tensor_inspector", {"shape": "2,3", "fill": "zeros"},
                    DEFAULT_DEVICE),      # the check runs torch.zeros(2, 3) itself
           ),
           takeaway="A tensor is a flat storage plus a recipe to walk it: shape, strides and an "
                    "offset. `t()`, `permute` and slicing change only the recipe; `view` needs a "
                    "recipe that one set of strides can express, `reshape` copies when there is "
                    "none. dtype sets the bytes per element, and `device` says whose memory holds "
                    "them."),
    Lesson("autograd", "Autograd and the chain rule", "autograd_graph",
           "The graph PyTorch records, gradients flowing back, accumulation and no_grad.", (
               Step("A derivative", "y = x^2 + 3x + 1 at x = 2. Step through backward and watch "
                    "the gradient reach x.", "autograd_graph",
                    {"code": "x = torch.tensor(2.0, requires_grad=True)\ny = x**2 + 3*x + 1",
                     "backward": "1"},
                    autograd.DY_DX_QUADRATIC,
                    shows=lambda: autograd.DY_DX_QUADRATIC.compute().correct_option),
               Step("The chain rule", "y = wx + b, L = (y - 10)^2: the gradient of L reaches w "
                    "through y.", "autograd_graph",
                    {"code": "x = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
                             "b = torch.tensor(1.0, requires_grad=True)\ny = w * x + b\nL = (y - 10) ** 2",
                     "backward": "1"},
                    autograd.W_GRAD_LINEAR,
                    shows=lambda: autograd.W_GRAD_LINEAR.compute().correct_option),
               Step("Gradients accumulate", "The program calls `L.backward(retain_graph=True)` three "
                    "times on the same graph of L = w^2 at w = 3: `retain_graph=True` keeps what the "
                    "graph saved, so the next call can run through it again. Watch `w.grad` after "
                    "each call, then delete `retain_graph=True` and see the second call fail.",
                    "autograd_graph", {"code": ACCUMULATE, "backward": "0"},
                    autograd.THREE_BACKWARD,
                    shows=grad_after_three_retained_calls),
               Step("Updates go inside no_grad", "This manual update runs while autograd is still "
                    "recording: read PyTorch's refusal, then indent `w -= 0.1 * w.grad` under "
                    "`with torch.no_grad():` and run it again.", "autograd_graph",
                    {"code": UPDATE_WITHOUT_NO_GRAD, "backward": "0"},
                    autograd.UPDATE_OUTSIDE_NO_GRAD,
                    shows=error_of_update_without_no_grad),
               Step("Rebinding is not updating", "`w = w - 0.1 * w.grad` raises nothing, and that "
                    "is the trouble: it makes a new tensor and calls it `w`. Read the graph: the "
                    "new `w` has a grad_fn, so it is no longer a leaf, and the second "
                    "`backward()` leaves no gradient on it.", "autograd_graph",
                    {"code": REBIND_UPDATE, "backward": "0"}, autograd.REBIND_UPDATE,
                    shows=lambda: "w.is_leaf = False"),
           ),
           takeaway="While you compute, PyTorch records each operation on tensors that require "
                    "grad; `backward()` walks that graph from the output and applies the chain rule "
                    "node by node. Gradients add into `.grad`; `backward()` frees the tensors the "
                    "graph saved, so a second call through a graph that saved any (`w * w` does, "
                    "`w + 1` does not) needs `retain_graph=True`; and an update "
                    "of the weights belongs inside `torch.no_grad()`."),
    Lesson("from_scratch", "A training loop from scratch", "autograd_graph",
           "Learn y = 3x1 - 2x2 + 5 with two leaf tensors and autograd: forward, loss, backward, "
           "step, zero_grad.", (
               Step("Forward and loss", "64 points follow y = 3x1 - 2x2 + 5; the model `X @ w + b` "
                    "starts at w = 0, b = 0. Read the value of L in the graph.", "autograd_graph",
                    {"code": FORWARD, "backward": "0"}, LOSS_AT_ZERO, shows=loss_at_zero_shown),
               Step("Backward", "One `backward()` fills `w.grad` and `b.grad`. Step through it and "
                    "compare each gradient's sign with the weight it should reach.",
                    "autograd_graph", {"code": FORWARD, "backward": "1"}, GRADIENT_SIGNS,
                    shows=w_grad_at_zero_shown),
               Step("Step", "Move each weight against its gradient, inside `torch.no_grad()` so "
                    "that the update is not recorded, and compute the loss again.",
                    "autograd_graph", {"code": ONE_STEP_PROGRAM, "backward": "0"}, ONE_STEP,
                    shows=loss_after_one_step_printed),
               Step("zero_grad", "Two steps with the zeroing left out. Compare the printed "
                    "`w.grad` of step 2 with the table of each call, then add "
                    "`w.grad.zero_()` and `b.grad.zero_()` at the end of the loop.",
                    "autograd_graph", {"code": NO_ZEROING_PROGRAM, "backward": "0"}, NO_ZEROING,
                    shows=w_grad_without_zeroing_printed),
               Step("The whole loop", "Sixty steps of the four-beat rhythm. The printed weights "
                    "approach 3, -2 and 5 block by block: how close do they get?",
                    "autograd_graph", {"code": FULL_LOOP, "backward": "0"}, SIXTY_STEPS,
                    shows=weights_after_sixty_printed),
           ),
           takeaway="Every training loop is this rhythm: a forward pass and a loss, `backward()` "
                    "to fill `.grad`, an update of the weights against the gradient inside "
                    "`torch.no_grad()`, and zeroing the gradients before the next step. On data "
                    "that follow the rule exactly, the weights close in on 3, -2 and 5: after "
                    "sixty steps they are close, not exactly there. `torch.optim` and "
                    "`nn.Module` package the same four beats, as the next lesson shows."),
    Lesson("training", "The training loop", "moons_trainer",
           "Data, model, loss, optimizer: the rhythm forward, backward, step, zero_grad.", (
               Step("The data", "Two interleaving moons with noise; the scaler is fit on the "
                    "training split only.", "moons_trainer", {"dataset": "moons", "noise": "0.25"},
                    None),
               Step("The loop's rhythm", "Press Play: each step is zero_grad, forward, backward, "
                    "step. The *Code* tab holds the loop that runs, line by line.",
                    "moons_trainer", {"dataset": "moons", "epochs": "30"},
                    training.LOOP_ORDER, tab="Code"),
               Step("Seeds and generators", "The seed sets where every random draw starts. "
                    "Train with seed 0, press Reset and train again: the same curve. Change "
                    "the seed: another run. The trainer never uses the global seed; its weights, "
                    "batches and dropout each draw from a `torch.Generator` of their own.",
                    "moons_trainer", {"dataset": "moons", "seed": "0"}, SEEDING),
               Step("Save and load", "The state_dict is every parameter and persistent buffer "
                    "by name (BatchNorm's running mean is a buffer). Train, "
                    "then save and load it in the *Checkpoints* tab.",
                    "moons_trainer", {"dataset": "moons"},
                    training.STATE_DICT_ROUND_TRIP, tab="Checkpoints"),
           ),
           takeaway="`nn.Module` holds the parameters, the loss compares logits with labels, and "
                    "the optimizer does the update: the same zero_grad, forward, backward, step, "
                    "now over batches from a DataLoader. The `state_dict` is every parameter and "
                    "persistent buffer by name, and a fresh model that loads it computes the same function."),
    Lesson("gradients", "Vanishing gradients", "moons_trainer",
           "A deep, narrow Sigmoid network against the same network with ReLU: how big are the "
           "gradients that reach the first layer?", (
               Step("Deep Sigmoid", "Four hidden layers of 8 Sigmoid units, trained by plain "
                    "SGD. Press Play, then open the *Weights & gradients* tab: each layer's "
                    "gradient magnitudes over the epochs, first layer on top. Read the sentence "
                    "under the title: how much smaller is the first layer's gradient than the "
                    "last layer's?", "moons_trainer", VANISHING_SIGMOID,
                    training.VANISHING_GRADIENT, tab="Weights & gradients"),
               Step("The same with ReLU", "Only the activation changes. Sigmoid's slope is at "
                    "most 0.25, so each layer the gradient passes back through shrinks it; "
                    "ReLU's slope is 1 wherever a unit is active. Train again and compare the "
                    "first layer's gradients and weights with the Sigmoid run's.",
                    "moons_trainer", {**VANISHING_SIGMOID, "act": "ReLU"},
                    tab="Weights & gradients"),
           ),
           takeaway="Backpropagation multiplies, layer by layer, by each activation's slope and "
                    "each layer's weights. Sigmoid's slope is at most 0.25, so in a deep Sigmoid "
                    "network the gradient that reaches the first layer is orders of magnitude "
                    "smaller than the last layer's, and plain SGD, which moves a weight by lr "
                    "times its gradient, leaves the first layers almost where they started. ReLU "
                    "passes the gradient through unchanged wherever a unit is active, which is "
                    "one reason deep networks use it."),
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
           ),
           takeaway="A DataLoader asks its sampler for an order of indices, cuts it into batches "
                    "and collates each batch into tensors. One epoch has ceil(N / batch_size) "
                    "batches, one fewer with `drop_last=True` when the last is short, and "
                    "`shuffle=True` draws a new order from the generator every epoch."),
    Lesson("pitfalls", "Training pitfalls", "moons_trainer",
           "The lesson's table of mistakes, each run next to the correct loop in the pitfall lab.", (
               _pitfall(1, "no_zero_grad", "Leave out `optimizer.zero_grad()` and every step uses "
                        "the sum of all gradients so far. Run it and watch the loss curve.",
                        training.ZERO_GRAD),
               _pitfall(2, "sigmoid_before_bce", "`BCEWithLogitsLoss` applies the sigmoid itself; "
                        "a model that applies one too hands it numbers in (0, 1). Where does the "
                        "broken run's loss level off?", SIGMOID_FLOOR),
               _pitfall(3, "softmax_before_ce", "`CrossEntropyLoss`, the multi-class loss, applies "
                        "`log_softmax` itself; here a softmax comes first. Read the broken run's "
                        "floor and its first gradient against the correct run's.", SOFTMAX_FLOOR,
                        shows=softmax_floor_shown),
               _pitfall(4, "device_mismatch", "The model on one device, the batch on another. "
                        "Read PyTorch's error, and which device the lab put the batch on (where "
                        "the server has no GPU, `meta` stands in for one).", DEVICE_MISMATCH,
                        shows=device_error_shown),
               _pitfall(5, "no_eval", "Dropout stays on without `model.eval()`. Compare the lab's "
                        "evaluations of the same weights with and without it.", TRAIN_MODE_EVAL),
               _pitfall(5, "no_eval", "BatchNorm is the other layer `model.eval()` changes: read "
                        "the last three facts, a `BatchNorm1d` evaluated on 4 points in train "
                        "mode and in eval mode.", BATCHNORM_TRAIN_MODE),
               _pitfall(6, "no_no_grad", "Validation after `model.eval()` but outside "
                        "`torch.no_grad()`: the lab counts the tensors, and their bytes, that one "
                        "validation pass saves for backward.", NO_NO_GRAD),
               _pitfall(7, "accumulate_tensor", "`total_loss += loss` instead of `loss.item()`: "
                        "the lab counts the graph nodes that `total_loss` keeps alive.",
                        SUMMED_LOSS),
               _pitfall(8, "float_targets", "`CrossEntropyLoss` with one logit per class, fed "
                        "float labels: read PyTorch's own error.", FLOAT_TARGETS),
               _pitfall(9, "scaler_on_all", "The scaler fit on all the data instead of the "
                        "training split: compare the two scalers' mean and std.", SCALER_LEAK),
               _pitfall(10, "data_mutation", "A hand-written weight decay between the forward "
                        "pass and `backward()`, through `.data`, next to the same change under "
                        "`torch.no_grad()`: compare the gradient error, the version counter and "
                        "PyTorch's refusal.", DATA_MUTATION, shows=in_place_error_shown),
           ),
           takeaway="Most training mistakes raise no error: the loop runs and the numbers are "
                    "quietly wrong. Zero the gradients every step; hand `BCEWithLogitsLoss` and "
                    "`CrossEntropyLoss` raw logits, without a sigmoid or softmax first; keep the "
                    "model and each batch on one device; evaluate after `model.eval()` and inside "
                    "`torch.no_grad()`; sum `loss.item()` rather than the tensor; give each loss "
                    "the target dtype it wants; fit preprocessing on the training split only; "
                    "and change parameters after `optimizer.step()` under `torch.no_grad()`, "
                    "never through `.data` between forward and backward."),
)


def lesson_by_key(key: str) -> Lesson | None:
    return next((lesson for lesson in LESSONS if lesson.key == key), None)


def next_lesson(lesson: Lesson) -> Lesson | None:
    """The lesson after `lesson` in the course's order; None after the last."""
    keys = [item.key for item in LESSONS]
    index = keys.index(lesson.key)
    return LESSONS[index + 1] if index + 1 < len(LESSONS) else None
