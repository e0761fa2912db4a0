"""The moons trainer's knowledge checks, and those of the training lesson, each written once.

Each `compute` function is the code the learner reads after committing: it asks PyTorch for the
answer, so what is shown is exactly what ran. This module never imports streamlit.
"""
from __future__ import annotations

import io

import torch
from torch import nn

from workbench.common.checks import Answer, Check

PILE_UP = "Each backward() adds to .grad, so gradients of earlier batches pile up"
OVERWRITES = "Nothing: backward() overwrites .grad anyway"


def zero_grad_demo() -> Answer:
    weight = torch.tensor([1.0, -2.0], requires_grad=True)
    x = torch.tensor([3.0, 0.5])
    optimizer = torch.optim.SGD([weight], lr=0.1)

    (weight * x).sum().square().backward()       # first batch
    first = weight.grad.clone()
    (weight * x).sum().square().backward()       # second batch, no zero_grad()
    second = weight.grad.clone()
    optimizer.zero_grad()                        # .grad is None again
    (weight * x).sum().square().backward()       # after zero_grad()
    after_zero_grad = weight.grad.clone()

    piled_up = torch.allclose(second, 2 * first)
    return Answer(
        PILE_UP if piled_up else OVERWRITES,
        f"{first} then {second} then {after_zero_grad}",
        "The same loss, backpropagated twice, left **twice** the gradient in `.grad`: "
        "`backward()` accumulates (`+=`) so that gradients from several losses can be "
        "combined. In a training loop that means every step would use the sum of all earlier "
        "batches' gradients. `zero_grad()` resets them (to `None` by default), and the third "
        "call shows the single-batch gradient again. See it break a real run in the pitfall lab.")


ZERO_GRAD = Check(
    "mt_zero_grad",
    "The training loop calls `optimizer.zero_grad()` before `loss.backward()`. "
    "What goes wrong without it?",
    (PILE_UP, "backward() fails: .grad must be emptied first",
     "optimizer.step() updates each weight twice", OVERWRITES),
    zero_grad_demo)


RIGHT_ORDER = "zero_grad, forward, backward, step"
WRONG_ORDER = "forward, step, backward, zero_grad"


def training_step_order() -> Answer:
    trained = {}
    for order in (RIGHT_ORDER, WRONG_ORDER):     # run each order for 5 steps on the same model
        with torch.random.fork_rng():            # leaves the server's global random state alone
            torch.manual_seed(0)
            model = nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.ones(4, 2), torch.zeros(4, 1)
        start = nn.functional.mse_loss(model(x), y).item()
        for _ in range(5):
            for call in order.split(", "):
                if call == "zero_grad":
                    optimizer.zero_grad()        # .grad = None
                elif call == "forward":
                    loss = nn.functional.mse_loss(model(x), y)
                elif call == "backward":
                    loss.backward()              # fill .grad of every parameter
                else:
                    optimizer.step()             # update the parameters, using .grad
        trained[order] = (start, nn.functional.mse_loss(model(x), y).item())
    learns = [order for order, (start, end) in trained.items() if end < start]
    return Answer(learns[0] if len(learns) == 1 else "neither",
                  "; ".join(f"{order}: loss {start:.4f} -> {end:.4f}"
                            for order, (start, end) in trained.items()),
                  "Clear old gradients, compute the loss, fill .grad, then let the optimizer use "
                  "it. In the other order, `step()` runs before this batch's `backward()` and "
                  "`zero_grad()` then clears what backward filled, so every step finds no "
                  "gradient and the loss never moves.")


LOOP_ORDER = Check(
    "training_loop_order",
    "In which order does one training step call these?",
    (WRONG_ORDER, RIGHT_ORDER),
    training_step_order)


def state_dict_round_trip() -> Answer:
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    buffer = io.BytesIO()                        # a file in memory
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)

    fresh = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    fresh.load_state_dict(torch.load(buffer, weights_only=True))

    x = torch.randn(5, 2, generator=torch.Generator().manual_seed(0))
    same = torch.equal(model(x), fresh(x))
    return Answer("identical predictions" if same else "different predictions",
                  f"torch.equal: {same}",
                  "The state_dict holds every parameter and every persistent buffer (a buffer "
                  "registered with `persistent=False` stays out); a fresh instance of the same "
                  "architecture that loads it computes exactly the same function.")


STATE_DICT_ROUND_TRIP = Check(
    "training_state_dict_round_trip",
    "A fresh model loads the saved state_dict. Its predictions are...",
    ("identical predictions", "different predictions"),
    state_dict_round_trip)

HOOK_BOTH = "Both: model(x) just calls model.forward(x)"
HOOK_CALL_ONLY = "Only model(x): forward() skips the hooks"


def forward_hook_calls() -> Answer:
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    ran: list[str] = []
    model.register_forward_hook(lambda module, inputs, output: ran.append("hook"))
    x = torch.ones(3, 2)

    model(x)                   # nn.Module.__call__: pre-hooks, forward, then forward hooks
    after_call = len(ran)
    model.forward(x)           # only the forward method of this module
    after_forward = len(ran) - after_call

    return Answer(
        HOOK_CALL_ONLY if after_call == 1 and after_forward == 0 else HOOK_BOTH,
        f"model(x): the hook ran {after_call} time(s); model.forward(x): {after_forward} time(s)",
        "`model(x)` goes through `nn.Module.__call__`, which runs the module's pre-hooks, its "
        "`forward`, then its forward hooks. `model.forward(x)` runs only the method, so this "
        "module's hooks are skipped (its submodules are still called through `__call__`, so "
        "theirs run). Tools that rely on hooks (feature extraction, profiling, some "
        "wrappers) only work when you call the module.")


FORWARD_HOOK = Check(
    "mt_forward_hook",
    "A forward hook is registered on `model`. Which of `model(x)` and `model.forward(x)` runs it?",
    (HOOK_BOTH, HOOK_CALL_ONLY, "Only model.forward(x)", "Neither: hooks run during backward"),
    forward_hook_calls)

CHECKS = (ZERO_GRAD, LOOP_ORDER, STATE_DICT_ROUND_TRIP, FORWARD_HOOK)


VANISHING_OPTIONS = ("about the same size", "about 10 times smaller", "100 times smaller or less",
                     "larger")


def vanishing_gradient_demo() -> Answer:
    from workbench.moons_trainer.model import build_model
    x = torch.randn(256, 2, generator=torch.Generator().manual_seed(0))
    y = (x[:, 0] * x[:, 1] > 0).float()          # XOR-like labels
    ratio = {}
    for act in ("Sigmoid", "ReLU"):              # the same deep, narrow network, the same weights
        model = build_model((8, 8, 8, 8), act, 0.0, torch.device("cpu"),
                            torch.Generator().manual_seed(42))
        nn.BCEWithLogitsLoss()(model(x), y).backward()
        first, last = model.net[0].weight.grad, model.net[-1].weight.grad
        ratio[act] = (first.abs().mean() / last.abs().mean()).item()
    sigmoid = ratio["Sigmoid"]
    option = (VANISHING_OPTIONS[3] if sigmoid > 3 else VANISHING_OPTIONS[0] if sigmoid > 0.3
              else VANISHING_OPTIONS[1] if sigmoid > 0.01 else VANISHING_OPTIONS[2])
    return Answer(
        option,
        f"first / last mean |grad|: Sigmoid {ratio['Sigmoid']:.1e}, ReLU {ratio['ReLU']:.2g}",
        "Backpropagation multiplies the gradient, layer by layer, by the activation's slope and "
        "the layer's weights. Sigmoid's slope is at most 0.25, so after four Sigmoid layers "
        "little is left for the first layer; ReLU's slope is 1 wherever a unit is active. With "
        "plain SGD a weight moves by lr times its gradient, so the first layers barely move.")


VANISHING_GRADIENT = Check(
    "mt_vanishing_gradient",
    "A 2 -> 8 -> 8 -> 8 -> 8 -> 1 network with Sigmoid between the layers, one batch, one "
    "`backward()`. The first layer's mean |gradient|, next to the last layer's, is...",
    VANISHING_OPTIONS,
    vanishing_gradient_demo)
