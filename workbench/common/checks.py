"""What a knowledge check reveals once the learner has committed to an answer."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Revealed:
    correct_option: str          # one of the options offered
    shown_value: str             # what PyTorch printed, e.g. "tensor(18.)"
    explanation: str = ""
    code: str = ""               # the PyTorch lines that produced it
