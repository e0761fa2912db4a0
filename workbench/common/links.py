"""Settings tables: one per tool, read from and written to URL query parameters.

A tool's table (its `settings.py`, in the spirit of TensorFlow Playground's `state.ts`) names,
for each field of its settings dataclass, the public link name, how to read it (type, range or
choices), the widget's label and help. The default is the dataclass's own. Everything else is
derived from it: the widgets (`components/settings_form.py`), the lesson links, `hide=`, the
share panel and the parameter tables of docs/lesson-links.md (`workbench/common/readme.py`).

Unlike Playground, every value is validated and clamped here: a link on a slide is untrusted
input. A bad value never stops the page; it falls back to the default and the problem is
reported in words. Each kind of parameter also writes the raw values a fuzzer sends it
(`Param.example`), so that both link fuzzers (tests/app/test_fuzz_links.py, bench/fuzz.py) try
what each kind is likely to get wrong from one place.
"""
from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from workbench.common.hostile_text import HOSTILE, random_text

Settings = TypeVar("Settings")

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})
MAX_RAW_LENGTH = 4000
SHORT_TEXT = 40          # a fixed text longer than this is not repeated in the fixed-settings note
MAX_SEED = 2**31 - 1        # torch.Generator takes any int64; this keeps links short


@dataclass(frozen=True)
class Widget:
    """How a setting is drawn. `kind` is one of number, slider, select, radio, segmented,
    toggle, checkbox, text, text_area; `choice_labels` names choices in words."""

    kind: str = ""
    step: float | None = None
    format: str | None = None
    choice_labels: Mapping[str, str] | None = None


class Param:
    """One setting: its public link `name`, the settings `field` it fills, its widget's `label`
    and `help`, and how the widget looks."""

    default_widget = "text"

    def __init__(self, name: str, field: str | None = None, help: str = "", *, label: str = "",
                 widget: Widget | None = None, meaning: str = "", readme_default: str = "") -> None:
        self.name = name
        self.field = field or name
        self.help = help
        self.label = label or name
        self.widget = widget or Widget()
        # One line for docs/lesson-links.md and the share panel; the widget's help when not given.
        self.meaning = meaning or help
        self.readme_default = readme_default      # docs/lesson-links.md's words for a long default

    @property
    def kind(self) -> str:
        return self.widget.kind or self.default_widget

    def values_text(self) -> str:
        """The accepted values in words, for docs/lesson-links.md's tables."""
        return "text"

    def parse(self, raw: str) -> Any:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def format(self, value: Any) -> str:
        return str(value)

    def example(self, rng: random.Random) -> str:
        """One raw value of `?<name>=` for a fuzzer, drawn with `rng` (a seeded `random.Random`,
        or Hypothesis's `st.randoms()`, so that a failure reproduces): mostly one of this kind's
        own (`typed_example`), otherwise text no table expects or random characters."""
        pick = rng.random()
        if pick < 0.2:
            return rng.choice(HOSTILE)
        if pick < 0.3:
            return random_text(rng, 12)
        return self.typed_example(rng)

    def typed_example(self, rng: random.Random) -> str:
        """A value of this kind: valid ones, the edges of its range and past them, the spellings
        a person types. Each kind writes its own."""
        return random_text(rng, 80)


def number_example(rng: random.Random, lo: float, hi: float, whole: bool) -> str:
    """A number for a range [lo, hi]: inside it, on and next to its edges, or far outside (the
    int64 and float limits), written as a person or a program would."""
    pick = rng.random()
    if pick < 0.45:
        value: float = rng.randint(int(lo), int(hi)) if whole else rng.uniform(lo, hi)
    elif pick < 0.75:
        step = 1 if whole else max((hi - lo) * 1e-6, 1e-12)
        value = rng.choice((lo, hi, lo - step, hi + step, lo + step, hi - step, 0, -0.0))
    else:
        value = rng.choice((-1, -hi, hi * 10, hi * 1000, 2**31, 2**63, 2**64, -(2**63) - 1, 10**30))
    if whole and rng.random() < 0.85:
        return str(int(value))
    return rng.choice((repr(float(value)), f"{value:g}", f"{value:.3e}"))


class IntParam(Param):
    default_widget = "number"

    def __init__(self, name: str, lo: int, hi: int, field: str | None = None, help: str = "",
                 **presentation: Any) -> None:
        super().__init__(name, field, help, **presentation)
        self.lo, self.hi = lo, hi

    def parse(self, raw: str) -> int:
        try:
            value = int(raw.strip())
        except ValueError:
            raise ValueError(f"expected a whole number from {self.lo} to {self.hi}") from None
        return min(max(value, self.lo), self.hi)

    def values_text(self) -> str:
        return f"{self.lo} to {self.hi:,}" if self.hi != MAX_SEED else f"{self.lo} to 2**31-1"

    def typed_example(self, rng: random.Random) -> str:
        return number_example(rng, self.lo, self.hi, whole=True)


class FloatParam(Param):
    default_widget = "number"

    def __init__(self, name: str, lo: float, hi: float, field: str | None = None, help: str = "",
                 **presentation: Any) -> None:
        super().__init__(name, field, help, **presentation)
        self.lo, self.hi = lo, hi

    def parse(self, raw: str) -> float:
        try:
            value = float(raw.strip())
        except ValueError:
            raise ValueError(f"expected a number from {self.lo:g} to {self.hi:g}") from None
        if not math.isfinite(value):
            raise ValueError("expected a finite number")
        # `+ 0.0` turns -0.0 into 0.0: max(-0.0, 0.0) keeps the -0.0, and NumPy's `scale < 0`
        # check (noise) is not the only code that tells them apart.
        return min(max(value, self.lo), self.hi) + 0.0

    def format(self, value: Any) -> str:
        return f"{value:g}"

    def values_text(self) -> str:
        return f"{self.lo:g} to {self.hi:g}"

    def typed_example(self, rng: random.Random) -> str:
        return number_example(rng, self.lo, self.hi, whole=False)


class BoolParam(Param):
    default_widget = "toggle"

    def values_text(self) -> str:
        return "1 or 0"

    def parse(self, raw: str) -> bool:
        word = raw.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        raise ValueError("expected 1/0 or true/false")

    def format(self, value: Any) -> str:
        return "1" if value else "0"

    def typed_example(self, rng: random.Random) -> str:
        return rng.choice(("1", "0", "true", "false", "yes", "no", "on", "off", "TRUE", " 1 ", "2",
                           "-1", ""))


class ChoiceParam(Param):
    default_widget = "select"

    def __init__(self, name: str, choices: Sequence[str], field: str | None = None, help: str = "",
                 **presentation: Any) -> None:
        super().__init__(name, field, help, **presentation)
        self.choices = tuple(choices)

    def parse(self, raw: str) -> str:
        lowered = {c.lower(): c for c in self.choices}
        value = lowered.get(raw.strip().lower())
        if value is None:
            raise ValueError("expected one of " + ", ".join(self.choices))
        return value

    def values_text(self) -> str:
        return ", ".join(f"`{c}`" for c in self.choices)

    def choice_label(self, choice: str) -> str:
        labels = self.widget.choice_labels or {}
        return labels.get(choice, choice)

    def typed_example(self, rng: random.Random) -> str:
        return _spelled(rng, rng.choice(self.choices))


def _spelled(rng: random.Random, choice: str) -> str:
    """A choice as typed: as written (most often), in another case, padded, or one letter too many."""
    return rng.choice((choice, choice, choice, choice.upper(), choice.lower(), f" {choice} ", choice + "x"))


class ChoiceSetParam(Param):
    """Some of a fixed set of choices, comma-separated, such as `x1,x2,sin_x1`: kept in the
    table's order without repeats, so one selection has one link; at least one."""
    default_widget = "pills"

    def __init__(self, name: str, choices: Sequence[str], field: str | None = None, help: str = "",
                 **presentation: Any) -> None:
        super().__init__(name, field, help, **presentation)
        self.choices = tuple(choices)

    def parse(self, raw: str) -> tuple[str, ...]:
        lowered = {c.lower(): c for c in self.choices}
        picked = set()
        for part in (p.strip() for p in raw.split(",")):
            if not part:
                continue
            if part.lower() not in lowered:
                raise ValueError(f"{part[:40]!r} is not one of " + ", ".join(self.choices))
            picked.add(lowered[part.lower()])
        if not picked:
            raise ValueError("expected at least one of " + ", ".join(self.choices))
        return self.canonical(picked)

    def canonical(self, picked: Iterable[str]) -> tuple[str, ...]:
        """`picked` in the table's order, each once (unknown names dropped)."""
        chosen = set(picked)
        return tuple(c for c in self.choices if c in chosen)

    def format(self, value: Any) -> str:
        return ",".join(value)

    def values_text(self) -> str:
        return "one or more of " + ", ".join(f"`{c}`" for c in self.choices) + ", comma-separated"

    def typed_example(self, rng: random.Random) -> str:
        # None, some, or more than there are (so some repeat), each spelled as typed.
        count = rng.randint(0, len(self.choices) + 1)
        return ",".join(_spelled(rng, rng.choice(self.choices)) for _ in range(count))

    def choice_label(self, choice: str) -> str:
        labels = self.widget.choice_labels or {}
        return labels.get(choice, choice)


class IntListParam(Param):
    """Comma-separated whole numbers such as `64,32`; `empty_ok` allows an empty list."""

    def __init__(self, name: str, lo: int, hi: int, max_len: int, field: str | None = None,
                 empty_ok: bool = False, help: str = "",
                 **presentation: Any) -> None:
        super().__init__(name, field, help, **presentation)
        self.lo, self.hi, self.max_len, self.empty_ok = lo, hi, max_len, empty_ok

    def parse(self, raw: str) -> tuple[int, ...]:
        parts = [p.strip() for p in raw.strip().strip("()[]").split(",") if p.strip()]
        if not parts and not self.empty_ok:
            raise ValueError("expected at least one number")
        if len(parts) > self.max_len:
            raise ValueError(f"expected at most {self.max_len} numbers")
        try:
            values = [int(p) for p in parts]
        except ValueError:
            raise ValueError(f"expected comma-separated whole numbers such as {self.lo},{self.hi}") from None
        return tuple(min(max(v, self.lo), self.hi) for v in values)

    def format(self, value: Any) -> str:
        return ",".join(str(v) for v in value)

    def values_text(self) -> str:
        empty = ", or empty" if self.empty_ok else ""
        return f"up to {self.max_len} of {self.lo} to {self.hi:,}, comma-separated{empty}"

    def typed_example(self, rng: random.Random) -> str:
        if rng.random() < 0.75:     # none, some, or one number too many
            return ",".join(str(self._number(rng)) for _ in range(rng.randint(0, self.max_len + 1)))
        a, b = self._number(rng), self._number(rng)
        return rng.choice((f"{a},,{b}", ",", f"{a}, {b}", f" {a} , {b} ", f"{a};{b}", f"({a},{b})",
                           f"[{a},{b}]", f"{a}x{b}", f"{a}.0,{b}", f"{a},{b},", f",{a}", f"1e3,{b}",
                           f"-0,{a}", f"{a},nan", "inf", "１,２", "١٢", f"{a},{b}" * 200,
                           f"{a}," * 100 + f"{b}"))

    def _number(self, rng: random.Random) -> int:
        """Mostly a small number in range (64 at most: shapes and widths a page draws quickly),
        else an edge, past one, or past int64."""
        if rng.random() < 0.7:
            return rng.randint(self.lo, max(self.lo, min(self.hi, 64)))
        return rng.choice((self.lo, self.hi, self.lo - 1, self.hi + 1, -1, 0, 2**31, 2**63, 10**18))


class TextParam(Param):
    """Free text up to `max_len` characters. A text with a language of its own (an op chain, a
    program) brings its own fuzzing `examples`, written beside the language: random characters
    would almost never get past its parser."""

    def __init__(self, name: str, max_len: int, field: str | None = None, help: str = "", *,
                 examples: Callable[[random.Random], str] | None = None,
                 **presentation: Any) -> None:
        super().__init__(name, field, help, **presentation)
        self.max_len = max_len
        self.examples = examples

    def parse(self, raw: str) -> str:
        if len(raw) > self.max_len:
            raise ValueError(f"longer than {self.max_len} characters")
        return raw

    def values_text(self) -> str:
        return f"text, at most {self.max_len:,} characters"

    def typed_example(self, rng: random.Random) -> str:
        if self.examples is not None:
            return self.examples(rng)
        if rng.random() < 0.1:      # at the length cap and one past it
            return "x" * rng.choice((self.max_len, self.max_len + 1))
        return random_text(rng, 80)


class PointsParam(Param):
    """Labelled points on a bounded plane, such as `0:-1.2,0.5_0.3,1~1:2,1.5` (the Moons
    trainer's drawn data): for each class, `<class>:` and its points `x,y` joined by `_`; the
    classes joined by `~`. Every character is one a link keeps as it is. Each coordinate is
    rounded to `step` and must lie in [-bound, bound]; at most `max_points` points, so the
    longest value (`longest()`) stays under MAX_RAW_LENGTH. Within a class the points keep their
    order, each once; the value is a tuple of (x, y, class). Its widget is the page's own plane
    (kind `plane`): the settings form draws none, and keeps the last value the page gave it."""

    CLASSES = (0, 1)
    default_widget = "plane"

    def __init__(self, name: str, bound: float, step: float, max_points: int,
                 field: str | None = None, help: str = "", **presentation: Any) -> None:
        super().__init__(name, field, help, **presentation)
        self.bound, self.step, self.max_points = bound, step, max_points
        self.per_unit = round(1 / step)           # grid positions per unit (20 for 0.05)
        if abs(self.per_unit * step - 1) > 1e-9:
            raise ValueError("step must divide 1")
        self.decimals = len(f"{step:g}".split(".")[1]) if "." in f"{step:g}" else 0

    def snap(self, value: float) -> float:
        """`value` on the grid: rounded to the step (half away from zero), as a float that prints
        and compares exactly the same every time."""
        ticks = math.floor(abs(value) * self.per_unit + 0.5)
        return round(math.copysign(ticks, value) / self.per_unit, self.decimals) + 0.0

    def number(self, value: float) -> str:
        """A grid value in the shortest plain form: `1.25`, `-0.5`, `2`, `0`."""
        text = f"{value:.{self.decimals}f}".rstrip("0").rstrip(".") if self.decimals else f"{value:.0f}"
        return "0" if text in ("-0", "") else text

    def parse(self, raw: str) -> tuple[tuple[float, float, int], ...]:
        points: list[tuple[float, float, int]] = []
        seen: set[tuple[float, float, int]] = set()
        for group in raw.strip().split("~"):
            group = group.strip()
            if not group:
                continue
            label, colon, body = group.partition(":")
            if not colon or label.strip() not in ("0", "1"):
                raise ValueError(f"{group[:20]!r}: each class starts with 0: or 1:, such as "
                                 "0:-1.2,0.5_0.3,1")
            cls = int(label)
            for part in body.split("_"):
                part = part.strip()
                if not part:
                    continue
                xy = part.split(",")
                try:
                    x, y = (float(v) for v in xy) if len(xy) == 2 else (math.nan, math.nan)
                except ValueError:
                    x = y = math.nan
                if not (math.isfinite(x) and math.isfinite(y)):
                    raise ValueError(f"{part[:20]!r} is not a point x,y such as -1.2,0.5")
                if max(abs(x), abs(y)) > self.bound:
                    raise ValueError(f"{part[:20]!r} is off the plane: x and y go from "
                                     f"{-self.bound:g} to {self.bound:g}")
                point = (self.snap(x), self.snap(y), cls)
                if point not in seen:
                    seen.add(point)
                    points.append(point)
                if len(points) > self.max_points:
                    raise ValueError(f"more than {self.max_points} points")
        return tuple(p for c in self.CLASSES for p in points if p[2] == c)

    def format(self, value: Any) -> str:
        groups = []
        for cls in self.CLASSES:
            pairs = [f"{self.number(x)},{self.number(y)}" for x, y, c in value if c == cls]
            if pairs:
                groups.append(f"{cls}:" + "_".join(pairs))
        return "~".join(groups)

    def longest(self) -> str:
        """The longest value this parameter writes: `max_points` points at the plane's corner,
        each with its own negative coordinates (for the test that it fits in a link)."""
        widest = self.snap(-(self.bound - self.step))      # -2.95 for a bound of 3, step 0.05
        half = self.max_points // 2
        return self.format([(widest, widest, 0)] * half + [(widest, widest, 1)] * (self.max_points - half))

    def typed_example(self, rng: random.Random) -> str:
        """Drawn points: on and off the plane and its grid, few (too few to train: the drawing
        alone) and many (up to past the cap), classes unknown or repeated, pieces missing; now
        and then the longest value the page writes."""
        if rng.random() < 0.05:
            return self.longest()
        bound = self.bound

        def coordinate() -> str:
            if rng.random() < 0.97:
                return f"{rng.uniform(-bound, bound):.2f}"
            return rng.choice((f"{rng.uniform(-2 * bound, 2 * bound):g}", f"{bound:g}", f"{-bound:g}",
                               f"{bound + 0.1:g}", "", "nan", "-0", "1e9", "x"))

        groups = []
        for _ in range(rng.randint(0, 3)):
            count = rng.choice((0, 1, 5, 12, 40, 60, self.max_points // 2 + 1))
            points = "_".join(f"{coordinate()},{coordinate()}" for _ in range(count))
            groups.append(f"{rng.choice(('0', '1', '1', '0', '2', ''))}:{points}")
        return "~".join(groups)

    def values_text(self) -> str:
        return (f"up to {self.max_points} points `x,y` (each from {-self.bound:g} to "
                f"{self.bound:g}, rounded to {self.step:g}) joined by `_`, after `0:` or `1:` for "
                "their class, the classes joined by `~`; empty: none")


@dataclass(frozen=True)
class LinkProblem:
    param: str
    raw: str
    reason: str

    def __str__(self) -> str:
        shown = self.raw if len(self.raw) <= 40 else self.raw[:37] + "..."
        return f"`{self.param}={shown}` was ignored: {self.reason}; the default is used."


class LinkSchema(Generic[Settings]):
    """Reads and writes one settings dataclass through its table of parameters."""

    def __init__(self, settings_type: type[Settings], params: Sequence[Param]) -> None:
        fields = {f.name for f in dataclasses.fields(settings_type)}  # type: ignore[arg-type]
        for p in params:
            if p.field not in fields:
                raise ValueError(f"{settings_type.__name__} has no field {p.field!r} for ?{p.name}=")
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise ValueError("duplicate parameter names")
        self.settings_type = settings_type
        self.params = tuple(params)
        self.defaults = settings_type()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def __getitem__(self, name: str) -> Param:
        """The parameter with link name `name`."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def labels(self) -> dict[str, str]:
        """Link name -> widget label, for the share panel's check boxes."""
        return {p.name: p.label for p in self.params}

    def default_text(self, p: Param) -> str:
        return p.format(getattr(self.defaults, p.field))

    def markdown_table(self) -> str:
        """docs/lesson-links.md's table of this tool's link parameters."""
        rows = ["| parameter | setting | values | default |", "| --- | --- | --- | --- |"]
        for p in self.params:
            default = self.default_text(p)
            default = p.readme_default or (f"`{default}`" if default else "(empty)")
            meaning = f"{p.label}: {p.meaning}" if p.meaning and p.meaning != p.label else p.label
            rows.append(f"| `{p.name}` | {meaning.replace('|', '/')} | {p.values_text()} | {default} |")
        return "\n".join(rows)

    def read(self, query: Mapping[str, str]) -> tuple[Settings, list[LinkProblem]]:
        """Settings from a URL's parameters; unknown names are not this schema's business."""
        values: dict[str, Any] = {}
        problems: list[LinkProblem] = []
        for p in self.params:
            raw = query.get(p.name)
            if raw is None:
                continue
            if len(raw) > MAX_RAW_LENGTH:
                problems.append(LinkProblem(p.name, raw, f"longer than {MAX_RAW_LENGTH} characters"))
                continue
            try:
                values[p.field] = p.parse(raw)
            except ValueError as exc:
                problems.append(LinkProblem(p.name, raw, str(exc)))
        return dataclasses.replace(self.defaults, **values), problems  # type: ignore[type-var]

    def fixed_settings(self, settings: Settings, hidden: Iterable[str]) -> list[tuple[str, str]]:
        """(label, value) of each hidden control of this table, in the table's order: what a
        shared link fixed, in the words the widgets use. A long or multi-line text (a program)
        is not repeated: the page shows it read-only."""
        hidden = set(hidden)
        fixed = []
        for p in self.params:
            if p.name not in hidden:
                continue
            value = getattr(settings, p.field)
            if isinstance(p, ChoiceParam):
                shown = p.choice_label(value)
            elif isinstance(p, BoolParam):
                shown = "on" if value else "off"
            elif isinstance(p, PointsParam):
                shown = f"{len(value)} point{'s' if len(value) != 1 else ''}"   # drawn on the page
            else:
                shown = p.format(value)
            if isinstance(p, TextParam) and ("\n" in shown or len(shown) > SHORT_TEXT):
                shown = "as shown on the page"
            fixed.append((p.label, shown or "(empty)"))
        return fixed

    def write(self, settings: Settings) -> dict[str, str]:
        """The parameters that differ from the defaults, so links stay short and readable."""
        out: dict[str, str] = {}
        for p in self.params:
            value = getattr(settings, p.field)
            if value != getattr(self.defaults, p.field):
                out[p.name] = p.format(value)
        return out
