"""The class as one experiment: a grid of moons trainer settings, one cell per learner.

The teacher picks one or two settings of the moons trainer and a few values of each (say the
learning rate x the hidden width, 3 x 3). Every value is read through the trainer's settings
table (workbench/moons_trainer/settings.py), so a cell is a valid experiment and its link opens
exactly it. The cells are numbered row by row (the first setting's values are the rows); the
store hands them out round-robin in seat order and gives a late joiner the least-filled cell.

A posted run belongs to a cell only when it trained exactly the cell's settings (`same_run`):
a learner who changed a setting trained their own run, not the cell's. Pure functions: no
database, no streamlit.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from workbench.moons_trainer.settings import TABLE, MoonsSettings
from workbench.tools import MOONS_TRAINER

# The settings a teacher may sweep: the ones a class asks about, each a single value in a link.
SWEEPABLE = ("lr", "hidden", "opt", "act", "batch", "epochs", "noise", "n", "wd", "dropout",
             "reg", "reg_rate", "features", "seed", "split", "dataset")
# Read from the link but not part of the run: the same run at every speed and view.
NOT_THE_RUN = ("speed", "net", "discrete")
MAX_VALUES = 6                   # per setting: 6 x 6 = 36 cells, more than a class has learners
MAX_LOSS_POINTS = 60             # a cell's loss curve as stored: at most this many epochs
VALUE_SEPARATOR = re.compile(r"[;\s]+")   # "8 16 32", "0.01; 0.1": a comma belongs to `hidden`
TRAINER_PATH = MOONS_TRAINER.url_path


class SweepRefused(ValueError):
    """A sweep the teacher asked for that cannot run; the message says why."""


@dataclass(frozen=True)
class Axis:
    name: str                    # the settings table's link name, e.g. "lr"
    values: tuple[str, ...]      # as the table writes them, e.g. ("0.01", "0.1", "1")

    @property
    def label(self) -> str:
        return TABLE[self.name].label


@dataclass(frozen=True)
class Cell:
    index: int                   # 0-based, row by row
    values: tuple[str, ...]      # one per axis
    settings: MoonsSettings
    link: str                    # /moons_trainer?<its settings>

    @property
    def number(self) -> int:
        return self.index + 1


@dataclass(frozen=True)
class Grid:
    base: MoonsSettings
    axes: tuple[Axis, ...]       # one or two

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns): the first axis's values are the rows."""
        rows = len(self.axes[0].values)
        return rows, len(self.axes[1].values) if len(self.axes) > 1 else 1

    @property
    def size(self) -> int:
        rows, columns = self.shape
        return rows * columns

    def cells(self) -> list[Cell]:
        rows, columns = self.shape
        found = []
        for index in range(self.size):
            row, column = divmod(index, columns)
            values = (self.axes[0].values[row],) + (
                (self.axes[1].values[column],) if len(self.axes) > 1 else ())
            query = {**TABLE.write(self.base), **{a.name: v for a, v in zip(self.axes, values, strict=True)}}
            settings, problems = TABLE.read(query)
            assert not problems, problems          # values were read through the table
            found.append(Cell(index, values, settings, trainer_link(settings)))
        return found

    def cell(self, index: int) -> Cell:
        return self.cells()[index]

    def describe(self, cell: Cell) -> str:
        """`lr 0.1 x hidden 16 (3 of 9)`: which cell, in the settings' link names."""
        words = " x ".join(f"{axis.name} {value or '(empty)'}"
                           for axis, value in zip(self.axes, cell.values, strict=True))
        return f"{words} ({cell.number} of {self.size})"

    def to_json(self) -> str:
        return json.dumps({"base": TABLE.write(self.base),
                           "axes": [[a.name, list(a.values)] for a in self.axes]}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Grid:
        data = json.loads(text)
        base, _ = TABLE.read(data["base"])
        return cls(base, tuple(Axis(name, tuple(values)) for name, values in data["axes"]))


def trainer_link(settings: MoonsSettings) -> str:
    """The moons trainer's link to `settings`, written as the page's own share link is
    (components.classroom.lesson_url: the same encoding)."""
    encoded = urlencode(TABLE.write(settings), quote_via=quote, safe=",()[]:-.")
    return f"/{TRAINER_PATH}" + (f"?{encoded}" if encoded else "")


def settings_of_link(link: str) -> MoonsSettings | None:
    """The settings a moons trainer link trains; None for another page or a link with a value
    the table refuses (that link would not train what it says)."""
    parts = urlsplit(link)
    if parts.path.strip("/") != TRAINER_PATH:
        return None
    settings, problems = TABLE.read(dict(parse_qsl(parts.query, keep_blank_values=True)))
    return None if problems else settings


def _the_run(settings: MoonsSettings) -> MoonsSettings:
    return dataclasses.replace(settings, **{TABLE[name].field: getattr(TABLE.defaults, TABLE[name].field)
                                            for name in NOT_THE_RUN})


def same_run(a: MoonsSettings, b: MoonsSettings) -> bool:
    """Whether two settings train the same run (the pace and the views aside)."""
    return _the_run(a) == _the_run(b)


def parse_axis(name: str, typed: str) -> Axis:
    """An axis from the teacher's typed values ("0.01 0.1 1"), each read through the settings
    table: SweepRefused names the first value the table refuses, or a repeated one."""
    if name not in SWEEPABLE:
        raise SweepRefused(f"`{name}` is not a setting a sweep can vary.")
    raws = [v for v in VALUE_SEPARATOR.split(str(typed).strip()) if v]
    if not raws:
        raise SweepRefused(f"Type at least one value of {TABLE[name].label} (separated by spaces).")
    if len(raws) > MAX_VALUES:
        raise SweepRefused(f"At most {MAX_VALUES} values of one setting ({len(raws)} typed).")
    param = TABLE[name]
    values: list[str] = []
    for raw in raws:
        try:
            value = param.parse(raw)
        except ValueError as exc:
            raise SweepRefused(f"{param.label}: `{raw[:40]}` cannot be used: {exc}.") from None
        if _clamped(raw, value):
            raise SweepRefused(f"{param.label}: `{raw[:40]}` is outside what the trainer takes "
                               f"(from {param.lo:g} to {param.hi:g}).")
        written = param.format(value)
        if written in values:
            raise SweepRefused(f"{param.label}: {written} is typed twice.")
        values.append(written)
    return Axis(name, tuple(values))


def _clamped(raw: str, value: object) -> bool:
    """Whether the table moved a typed number into its range (a link does that quietly; a
    teacher's grid must not: the cell would say one value and train another)."""
    try:
        if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
            return tuple(int(v) for v in raw.split(",") if v.strip()) != value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(raw) != value
    except ValueError:
        return False
    return False


def make_grid(base_link: str, axes: Sequence[tuple[str, str]]) -> Grid:
    """The teacher's grid: a base experiment (a moons trainer link or its query; empty: the
    preset) and one or two (setting, typed values)."""
    base_link = str(base_link or "").strip()
    query = urlsplit(base_link).query if "?" in base_link or base_link.startswith("/") else base_link
    base, problems = TABLE.read(dict(parse_qsl(query, keep_blank_values=True)))
    if problems:
        raise SweepRefused(f"The base experiment's link: {problems[0]}")
    if not 1 <= len(axes) <= 2:
        raise SweepRefused("A sweep varies one setting or two.")
    parsed = tuple(parse_axis(name, typed) for name, typed in axes)
    if len(parsed) == 2 and parsed[0].name == parsed[1].name:
        raise SweepRefused("Pick two different settings (or only one).")
    grid = Grid(base, parsed)
    cells = grid.cells()
    if any(cell.settings.regression or cell.settings.drawn for cell in cells):
        raise SweepRefused("A sweep compares test accuracy: its cells need a classification "
                           "dataset that is generated (not drawn, not regression).")
    return grid


def assign_round_robin(seats: Sequence[int], size: int) -> dict[int, int]:
    """Seat -> cell index: in seat order, cell 0, 1, ..., size-1, 0, 1, ..."""
    return {seat: place % size for place, seat in enumerate(sorted(seats))}


def least_filled(counts: Mapping[int, int], size: int) -> int:
    """The cell a late joiner gets: the fewest learners, the lowest number on a tie."""
    return min(range(size), key=lambda index: (counts.get(index, 0), index))


def compact_losses(losses: Sequence[float]) -> list[float]:
    """A per-epoch loss curve as stored: at most MAX_LOSS_POINTS, evenly picked (the last epoch
    always kept), rounded to 5 significant digits; a value that is not finite is dropped."""
    finite = [float(x) for x in losses if math.isfinite(x)]
    if len(finite) > MAX_LOSS_POINTS:
        step = (len(finite) - 1) / (MAX_LOSS_POINTS - 1)
        finite = [finite[round(i * step)] for i in range(MAX_LOSS_POINTS)]
    return [float(f"{x:.5g}") for x in finite]


@dataclass(frozen=True)
class CellResult:
    """What a cell holds: its kept runs' test accuracies and loss curves, oldest first."""
    cell: Cell
    learners: int                # assigned to it
    accuracies: tuple[float, ...] = ()
    losses: tuple[tuple[float, ...], ...] = ()

    @property
    def trained(self) -> bool:
        return bool(self.accuracies)

    @property
    def accuracy(self) -> float | None:
        """The first kept run's test accuracy (every run of one cell trains the same run)."""
        return self.accuracies[0] if self.accuracies else None


@dataclass(frozen=True)
class SweepBoard:
    number: int                  # the class's sweep number (a new sweep, a new number)
    grid: Grid
    results: tuple[CellResult, ...]

    @property
    def trained(self) -> int:
        return sum(result.trained for result in self.results)


def sweep_digest(board: SweepBoard | None) -> str:
    """Equal digests draw the same sweep board (built once per change and class)."""
    return hashlib.blake2b(repr(board).encode(), digest_size=16).hexdigest()
