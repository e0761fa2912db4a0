"""Programs as a fuzzer types them into `?code=` (the settings table's `examples` for that
parameter, links.TextParam): programs the page's language runs, some that it refuses (imports,
dunder access, lambdas, comprehensions, a loop that never ends) and some at its limits (a
billion elements, a deep loop, 90 lines, 200 nested parentheses), joined, or with their line
ends changed; now and then text that is no program at all."""
from __future__ import annotations

import random

from workbench.common.hostile_text import HOSTILE

PROGRAMS = (
    "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2",
    "x = torch.tensor(2.0, requires_grad=True)\ny = x**2 + 3*x + 1",
    "x = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
    "b = torch.tensor(1.0, requires_grad=True)"
    "\ny = w * x + b\nL = (y - 10) ** 2",
    "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\nL.backward()\nwith torch.no_grad():\n"
    "    w -= 0.1 * w.grad\nw.grad.zero_()",
    "x = torch.ones(100, 100, requires_grad=True)\ny = (x @ x).sum()",
    "w = torch.tensor(1.0, requires_grad=True)\nfor i in range(100):\n"
    "    for j in range(100):\n        w = w * 1.0",
    "w = torch.tensor(1.0, requires_grad=True)\nL = w / 0",
    "w = torch.tensor(1.0, requires_grad=True)\nL = w ** 1e9",
    "w = torch.randn(10000, requires_grad=True)\nL = (w * w).sum()",
    "w = torch.tensor([], requires_grad=True)\nL = w.sum()",
    "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\nL.backward()\nL.backward()",
    "L = model(X).sum()",
    "y = model(X)\nL = ((y - y) ** 2).mean()",
    "import os",
    "().__class__.__bases__[0].__subclasses__()",
    "w = torch.tensor(3.0)\nw.__class__",
    "lambda: 0",
    "[i for i in range(10)]",
    "while True:\n    pass",
    "if 1:\n    x = 1",
    "x = torch.zeros(1000000000)",
    "x = torch.ones(3, requires_grad=True)\ny = x.view(1, 3).expand(100, 3)\nL = y.sum()",
    "x = torch.tensor(2.0, requires_grad=True)\ny = x.detach() * x\nL = y",
    "with torch.no_grad():\n    x = torch.tensor(2.0, requires_grad=True) * 2\nL = x",
    "x = torch.tensor(2.0, requires_grad=True)\nx.backward()",
    "print(torch.__version__)",
    "x = torch.tensor(2.0, requires_grad=True)\nprint(x)\nprint(x * 2)",
    "x = 1\n" * 90,
    "(" * 200 + ")" * 200,
    "x = torch.tensor(1.0, requires_grad=True)\n" + "x = x * 1.0\n" * 79,
    "ẋ = torch.tensor(1.0, requires_grad=True)\nL = ẋ * 2",
    "x =",
    "\n\n\n",
    "x = torch.tensor(float('nan'))",
    "x = torch.tensor(2.0, requires_grad=True)\ny = torch.sin(x) * torch.exp(x)\n"
    "z = y.log()\nL = z + x.relu()",
)


def program_example(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return rng.choice(HOSTILE)
    program = rng.choice(PROGRAMS)
    if rng.random() < 0.3:
        program += "\n" + rng.choice(PROGRAMS)
    if rng.random() < 0.1:
        program = program.replace("\n", rng.choice(("\r\n", "\r", "\n\n", ";")))
    return program
