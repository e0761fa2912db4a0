"""Op chains as a fuzzer types them into `?ops=` (the settings table's `examples` for that
parameter, links.TextParam): the chain's own methods (chain.ALLOWED_METHODS) with arguments in
and far out of range, indexing, and now and then text that only looks like a chain (attribute
access, star arguments, keywords, a call repeated until the text is long)."""
from __future__ import annotations

import random

from workbench.common.hostile_text import HOSTILE
from workbench.tensor_inspector.chain import ALLOWED_METHODS

NOT_A_CHAIN = (
    "__class__", "view(*x)", "view(1e400)", "(((((", "t()" * 200, "view(-1).__class__",
    "t().t().t()", "[::-1]", "[None]", "[..., 0]", "[1:2, ::2]", "view(x=1)", "reshape(-1, -1)",
)
ARGUMENTS = (-3, -2, -1, 0, 1, 2, 3, 4, 6, 24, 10**9, 2**63)
INDICES = ("0", ":", "::2", "1:", "None", "...", "-1", "::-1", "99")


def op_chain_example(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return rng.choice(HOSTILE + NOT_A_CHAIN)
    parts = []
    for _ in range(rng.randint(1, 6)):
        name = rng.choice((*ALLOWED_METHODS, "[]"))
        args = [str(rng.choice(ARGUMENTS)) for _ in range(rng.randint(0, 4))]
        if name == "[]":
            parts.append("[" + ", ".join(rng.choice(INDICES) for _ in range(rng.randint(1, 3))) + "]")
        elif name == "unflatten":
            sizes = rng.choice(("2, -1", "-1, -1", "0", "3, 8"))
            parts.append(f".unflatten({rng.choice(args or ['0'])}, ({sizes}))")
        else:
            parts.append(f".{name}({', '.join(args)})")
    return "".join(parts).lstrip(".")
