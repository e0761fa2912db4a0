"""Knowledge checks: a question, its options, and a function that asks PyTorch for the answer.

Each check is written once, in its tool's `checks.py`, as a plain function that computes the
answer with PyTorch and returns an `Answer`. The code the learner sees after committing is that
function's own source (`Check.code`), so what is shown is exactly what ran. Lessons reuse the
tools' checks by importing them; nothing is written twice.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from workbench.common.source import source_of


@dataclass(frozen=True)
class Answer:
    correct_option: str          # one of the check's options
    shown_value: str             # what PyTorch printed, e.g. "tensor(18.)"
    explanation: str = ""


@dataclass(frozen=True)
class Check:
    key: str                     # the widget keys' stem; unique in the app
    question: str
    options: tuple[str, ...]
    compute: Callable[[], Answer]
    # Who computes the answer, as the page says it ("PyTorch computed it..."): a check whose
    # function calls no torch function says which library it asks (a test checks each).
    computed_by: str = "PyTorch"

    @property
    def code(self) -> str:
        """The source of `compute`, as the learner reads it."""
        return source_of(self.compute)

    def answer(self) -> Answer:
        answer = self.compute()
        if answer.correct_option not in self.options:
            raise ValueError(f"check {self.key!r}: {answer.correct_option!r} is not an option")
        return answer
