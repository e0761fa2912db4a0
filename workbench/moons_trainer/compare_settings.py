"""A comparison link's one setting, `vs=`: the pinned run's overrides of the moons table.

Apart from compare.py, which trains and judges the two runs, so that what reads the links
(workbench/tools.py, so every page's first run) does not import the training code and with it
scikit-learn: about 2.8 s of a cold server's first page (python -X importtime), learner waiting.
This module never imports streamlit.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from workbench.common.links import LinkSchema, TextParam
from workbench.moons_trainer.settings import TABLE as MOONS_TABLE

SEPARATOR = ";"
# Settings that change how a run is shown, never what it computes: nothing to compare.
VIEW_ONLY = ("speed", "net", "discrete")
MAX_OVERRIDES = 8


class OverridesParam(TextParam):
    """`opt:SGD;lr:0.05`: moons settings as `name:value`, each read (and clamped) by the moons
    table's own parameter, kept in the table's order; empty means no comparison."""

    def parse(self, raw: str) -> tuple[tuple[str, str], ...]:  # type: ignore[override]
        super().parse(raw)                      # the length cap
        names = [p.name for p in MOONS_TABLE.params if p.name not in VIEW_ONLY]
        picked: dict[str, str] = {}
        parts = [part.strip() for part in raw.split(SEPARATOR) if part.strip()]
        if len(parts) > MAX_OVERRIDES:
            raise ValueError(f"expected at most {MAX_OVERRIDES} settings")
        for part in parts:
            name, colon, value = part.partition(":")
            name = name.strip().lower()
            if not colon:
                raise ValueError(f"expected name:value pairs such as opt:SGD, got {part[:40]!r}")
            if name in VIEW_ONLY:
                raise ValueError(f"{name} changes how a run is shown, not the run")
            if name not in names:
                raise ValueError(f"{name[:40]!r} is not a moons trainer setting (one of "
                                 + ", ".join(names) + ")")
            if name in picked:
                raise ValueError(f"{name} is named twice")
            param = MOONS_TABLE[name]
            try:
                picked[name] = param.format(param.parse(value))
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        return tuple((n, picked[n]) for n in names if n in picked)

    def format(self, value: object) -> str:
        return SEPARATOR.join(f"{name}:{text}" for name, text in value)  # type: ignore[attr-defined]

    def values_text(self) -> str:
        return "`name:value` pairs of the settings above, separated by `;`"

    def typed_example(self, rng: random.Random) -> str:
        """A few `name:value` pairs, each value a moons parameter's own example; now and then
        one pair too many, a setting that only changes the view, an unknown name, a pair
        without its colon, or a name twice."""
        count = rng.randint(0, 3) if rng.random() < 0.9 else MAX_OVERRIDES + 1
        pairs = []
        for _ in range(count):
            param = rng.choice(MOONS_TABLE.params)
            pairs.append(f"{param.name}:{param.example(rng)}")
        if rng.random() < 0.15:
            pairs.append(rng.choice((f"{VIEW_ONLY[0]}:1", "zzz:1", "opt", ":", "opt:SGD;opt:Adam")))
        rng.shuffle(pairs)
        return SEPARATOR.join(pairs)


@dataclass(frozen=True)
class Comparison:
    """What a comparison link asks for: the pinned run's settings that differ from the link's."""

    vs: tuple[tuple[str, str], ...] = ()


TABLE: LinkSchema[Comparison] = LinkSchema(Comparison, [
    OverridesParam("vs", 400, label="Compare with",
                   help="Pins a first run with these settings changed, e.g. opt:SGD; the link's "
                        "own settings are the second run, from the same data and initial weights.",
                   meaning="a comparison: a pinned first run with these settings overridden (e.g. "
                           "`opt:SGD`, or `opt:SGD;lr:0.05`), the link's own settings the second "
                           "run, from the same data and initial weights; Play trains both"),
])
