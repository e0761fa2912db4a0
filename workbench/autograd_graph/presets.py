"""The autograd page's examples: each a program with the backward calls it wants and one line
of what it teaches. The first is the default program.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    key: str
    title: str
    code: str
    backward: int = 1
    retain: bool = False
    zero: bool = False
    lesson: str = ""
    uses_model: bool = False


PRESETS: tuple[Preset, ...] = (
    Preset("linear", "y = wx + b, L = (y − 10)²",
           "x = torch.tensor(2.0)\n"
           "w = torch.tensor(3.0, requires_grad=True)\n"
           "b = torch.tensor(1.0, requires_grad=True)\n"
           "y = w * x + b\n"
           "L = (y - 10) ** 2\n",
           lesson="dL/dy = 2(y − 10) = −6; y = wx + b, so dL/dw = −6 · x = −12 and dL/db = −6."),
    Preset("polynomial", "y = x² + 3x + 1 at x = 2",
           "x = torch.tensor(2.0, requires_grad=True)\n"
           "y = x ** 2 + 3 * x + 1\n",
           lesson="dy/dx = 2x + 3 = 7 at x = 2. x is used twice, so two gradients add up in x.grad."),
    Preset("accumulate", "L = w², backward three times",
           "w = torch.tensor(3.0, requires_grad=True)\n"
           "L = w ** 2\n",
           backward=3, retain=True,
           lesson="Each backward() adds 2w = 6 into w.grad: 6, 12, 18. Tick *zero the gradients* "
                  "to see the cure."),
    Preset("manual_update", "manual update loop with torch.no_grad()",
           "w = torch.tensor(3.0, requires_grad=True)\n"
           "lr = 0.1\n"
           "for step in range(3):\n"
           "    L = w ** 2\n"
           "    L.backward()\n"
           "    print('step', step, 'L =', L.item(), 'w.grad =', w.grad.item())\n"
           "    with torch.no_grad():\n"
           "        w -= lr * w.grad   # an update, not part of the model: not recorded\n"
           "    w.grad.zero_()         # or the next backward() adds to this gradient\n"
           "L = w ** 2\n",
           backward=0,
           lesson="The update runs under torch.no_grad(), so it is not recorded and w stays a leaf; "
                  "w.grad.zero_() stops the gradients from piling up."),
    Preset("detach", "detach() and torch.no_grad()",
           "x = torch.tensor(2.0, requires_grad=True)\n"
           "y = x ** 2\n"
           "z = y.detach()        # same value as y, but no history\n"
           "with torch.no_grad():\n"
           "    s = x * 10        # computed, but not recorded\n"
           "L = y * z\n",
           lesson="The gradient reaches x only through y: dL/dx = z · 2x = 16, not 32, because "
                  "z = y.detach() is a constant to autograd."),
    Preset("linear_model", "train y = 3x₁ − 2x₂ + 5 for a few steps",
           "X = torch.randn(16, 2)\n"
           "y = X @ torch.tensor([3.0, -2.0]) + 5\n"
           "w = torch.zeros(2, requires_grad=True)\n"
           "b = torch.zeros(1, requires_grad=True)\n"
           "lr = 0.2\n"
           "for step in range(15):\n"
           "    L = ((X @ w + b - y) ** 2).mean()\n"
           "    L.backward()\n"
           "    with torch.no_grad():\n"
           "        w -= lr * w.grad\n"
           "        b -= lr * b.grad\n"
           "    w.grad.zero_()\n"
           "    b.grad.zero_()\n"
           "print('w =', w, 'b =', b)\n"
           "pred = X @ w + b\n"
           "L = ((pred - y) ** 2).mean()\n",
           backward=0,
           lesson="Fifteen steps of gradient descent move w towards [3, −2] and b towards 5."),
    Preset("branch", "define-by-run: if/else on a tensor's value",
           "x = torch.tensor(1.5, requires_grad=True)   # try -1.5: another graph\n"
           "if x > 0:\n"
           "    y = x ** 2             # recorded only when x > 0\n"
           "else:\n"
           "    y = torch.sin(x) * 3   # recorded only when x <= 0\n"
           "L = y + 1\n",
           lesson="`if x > 0:` asks `bool(x > 0)`, and PyTorch records only the branch that ran: "
                  "x ** 2 gives a PowBackward0 node, sin(x) * 3 gives SinBackward0 and "
                  "MulBackward0. Change x to a negative number and the graph changes with it."),
    Preset("while_loop", "define-by-run: a while loop as long as the data says",
           "x = torch.tensor(3.0, requires_grad=True)   # try 0.5 or 40.0\n"
           "y = x\n"
           "n = 0\n"
           "while y.abs() < 100:     # how many rounds depends on x\n"
           "    y = y * 2            # each round records one more MulBackward0\n"
           "    n += 1\n"
           "print('rounds:', n, 'y =', y.item())\n",
           lesson="The loop doubles y until |y| reaches 100, so the number of MulBackward0 nodes, "
                  "and x.grad = 2 ** rounds, depend on x. With x = 0 the condition never turns "
                  "false and the page stops the loop at its round limit."),
    Preset("inference_mode", "no_grad, inference_mode and detach side by side",
           "w = torch.tensor(3.0, requires_grad=True)\n"
           "with torch.no_grad():\n"
           "    a = w * 2          # not recorded; a normal tensor\n"
           "with torch.inference_mode():\n"
           "    b = w * 2          # not recorded; an inference tensor\n"
           "c = w.detach() * 2     # cut from the graph; a normal tensor\n"
           "print('no_grad:        requires_grad', a.requires_grad, 'is_inference', a.is_inference())\n"
           "print('inference_mode: requires_grad', b.requires_grad, 'is_inference', b.is_inference())\n"
           "print('detach:         requires_grad', c.requires_grad, 'is_inference', c.is_inference())\n"
           "L = w * a + w * c      # fine: a and c are constants to autograd\n"
           "L2 = w * b             # autograd must save b for backward: refused\n",
           backward=0,
           lesson="All three give values autograd does not track. Only inference_mode also makes "
                  "inference tensors (is_inference() is True), and autograd refuses to save one "
                  "for backward: the last line fails with PyTorch's own error."),
    Preset("moons", "the moons model on one batch",
           "# model: the MLP from the moons trainer (or a fresh one)\n"
           "# X, y: one batch of 16 training points and their 0/1 labels\n"
           "logits = model(X)\n"
           "L = torch.binary_cross_entropy_with_logits(logits, y).mean()\n",
           uses_model=True,
           lesson="Every weight and bias of the network is a leaf; one backward() fills all their "
                  ".grad, which is what an optimizer step then uses."),
    Preset("err_no_grad", "mistake: backward on a tensor that needs no grad",
           "x = torch.tensor(2.0)\n"
           "y = x ** 2\n",
           lesson="Nothing requires grad, so PyTorch recorded no graph to walk back through."),
    Preset("err_non_scalar", "mistake: backward on a non-scalar output",
           "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
           "y = x ** 2\n",
           lesson="Reduce to a scalar first (y.sum()), or pass a gradient of y's shape."),
    Preset("err_non_leaf", "mistake: .grad of a non-leaf",
           "w = torch.tensor(3.0, requires_grad=True)\n"
           "y = w * 2\n"
           "L = y ** 2\n"
           "L.backward()\n"
           "print('w.grad =', w.grad)\n"
           "print('y.grad =', y.grad)\n",
           backward=0,
           lesson="Only leaves keep .grad. Add `y.retain_grad()` before `L.backward()` to keep y's."),
    Preset("err_in_place", "mistake: in-place change of a saved tensor",
           "w = torch.tensor(3.0, requires_grad=True)\n"
           "y = w.exp()          # ExpBackward0 saves its result y\n"
           "y += 1               # ...which this line changes in place\n"
           "L = y * 2\n",
           lesson="exp's derivative is its own result, so autograd saved y; the in-place += bumped "
                  "y's version counter and backward() refuses the stale value."),
    Preset("err_twice", "mistake: a second backward() without retain_graph",
           "w = torch.tensor(3.0, requires_grad=True)\n"
           "L = w ** 2\n",
           backward=2,
           lesson="The first backward() frees what the graph saved; pass retain_graph=True to keep it."),
)
PRESETS_BY_KEY: dict[str, Preset] = {p.key: p for p in PRESETS}
DEFAULT_PRESET = PRESETS[0]


def matching_preset(code: str) -> Preset | None:
    """The preset whose program this is (ignoring surrounding blank space), if any."""
    for preset in PRESETS:
        if preset.code.strip() == code.strip():
            return preset
    return None
