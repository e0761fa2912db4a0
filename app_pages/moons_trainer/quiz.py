"""The moons trainer's knowledge check: what optimizer.zero_grad() prevents, asked of PyTorch."""
from __future__ import annotations

from components.knowledge_check import Revealed
from workbench.moons.pitfalls import ZERO_GRAD_CODE, zero_grad_demo

ZERO_GRAD_QUESTION = ("The training loop calls `optimizer.zero_grad()` before `loss.backward()`. "
                      "What goes wrong without it?")
ZERO_GRAD_OPTIONS = (
    "Each backward() adds to .grad, so gradients of earlier batches pile up",
    "backward() fails: .grad must be emptied first",
    "optimizer.step() updates each weight twice",
    "Nothing: backward() overwrites .grad anyway",
)


def zero_grad_reveal() -> Revealed:
    demo = zero_grad_demo()
    doubled = all(abs(b - 2 * a) < 1e-4 for a, b in zip(demo.grad_after_one, demo.grad_after_two,
                                                         strict=True))
    correct = ZERO_GRAD_OPTIONS[0] if doubled else ZERO_GRAD_OPTIONS[3]
    return Revealed(
        correct_option=correct,
        shown_value=(f"tensor({demo.grad_after_one}) then tensor({demo.grad_after_two}) "
                     f"then tensor({demo.grad_after_zero_grad})"),
        explanation=("The same loss, backpropagated twice, left **twice** the gradient in `.grad`: "
                     "`backward()` accumulates (`+=`) so that gradients from several losses can be "
                     "combined. In a training loop that means every step would use the sum of all "
                     "earlier batches' gradients. `zero_grad()` resets them (to `None` by default), "
                     "and the third call shows the single-batch gradient again. See it break a "
                     "real run in the pitfall lab."),
        code=ZERO_GRAD_CODE)
