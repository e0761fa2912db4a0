"""What goes wrong while a program runs, and where the run is when it does.

`ProgramRefused` (language.py) is the page's own refusal; `ProgramFailed` here is PyTorch's or
Python's error, which is the lesson. `Position` is the line the run is at, shared by the
interpreter's parts: a problem raised without a node of its own is placed there (the statement or
expression around it then gives the column), and each op record is given that line.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from workbench.autograd_graph.language import ProgramRefused, where

PYTORCH, PYTHON = "PyTorch", "Python"


class ProgramFailed(Exception):
    """PyTorch or Python itself raised while running `line`; `origin` says which: PyTorch when
    the error came out of a call into PyTorch (an op, a creator, backward(), the model, a
    tensor's truth value), Python otherwise (a name not defined yet, 1 / 0 on numbers)."""

    def __init__(self, line: int, error: BaseException, *, col: int | None = None,
                 origin: str = PYTHON) -> None:
        super().__init__(str(error))
        self.line = line
        self.col = col
        self.error = error
        self.origin = origin

    def __str__(self) -> str:
        return f"{where(self.line, self.col)}: {self.error}"


@contextmanager
def from_pytorch(line: int) -> Iterator[None]:
    """An error raised inside this block came from a call into PyTorch (the interpreter's own
    refusals and limits pass through unchanged)."""
    try:
        yield
    except (ProgramRefused, ProgramFailed, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - PyTorch's own error is the lesson
        raise ProgramFailed(line, exc, origin=PYTORCH) from None


@dataclass
class Position:
    """The line the run is at: the statement being run (a `while` test's line while it is tested)."""

    line: int = 1
