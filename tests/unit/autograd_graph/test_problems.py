"""problems.py: PyTorch's own error, raised inside `from_pytorch`, reaches the page as a failure of
PyTorch's at the current line, word for word; the page's own refusals pass through unchanged."""
from __future__ import annotations

import pytest
import torch

from workbench.autograd_graph.language import ProgramRefused
from workbench.autograd_graph.problems import PYTHON, PYTORCH, Position, ProgramFailed, from_pytorch


def pytorch_error() -> RuntimeError:
    try:
        torch.ones(2) + torch.ones(3)
    except RuntimeError as exc:
        return exc
    raise AssertionError("PyTorch broadcast two and three elements")


def test_an_error_inside_is_pytorch_s_failure_in_its_own_words():
    expected = pytorch_error()
    with pytest.raises(ProgramFailed) as failed:
        with from_pytorch(4):
            torch.ones(2) + torch.ones(3)
    assert failed.value.origin == PYTORCH and failed.value.line == 4 and failed.value.col is None
    assert str(failed.value.error) == str(expected)
    assert str(failed.value) == f"line 4: {expected}"


@pytest.mark.parametrize("problem", [ProgramRefused(2, "no"), ProgramFailed(2, ValueError("x")),
                                     RecursionError("deep")])
def test_the_page_s_own_problems_pass_through_unchanged(problem):
    with pytest.raises(type(problem)) as raised:
        with from_pytorch(7):
            raise problem
    assert raised.value is problem


def test_a_failure_names_its_position_and_defaults_to_python():
    failed = ProgramFailed(3, NameError("name 'q' is not defined"), col=5)
    assert failed.origin == PYTHON
    assert str(failed) == "line 3, column 5: name 'q' is not defined"


def test_a_run_starts_at_line_one():
    assert Position().line == 1
