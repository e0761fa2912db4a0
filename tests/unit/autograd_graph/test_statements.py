"""statements.py: statements run in order with Python's meaning (checked against plain Python and
PyTorch), `if` and `while` keep what the data decided, each statement counts as a step, and a
problem without a position of its own is placed at its statement."""
from __future__ import annotations

import ast

import pytest
import torch

from workbench.autograd_graph.interpreter import Interpreter
from workbench.autograd_graph.language import DEFAULT_LIMITS, Limits, ProgramRefused
from workbench.autograd_graph.problems import ProgramFailed
from workbench.autograd_graph.statements import Decision


def run_source(source: str, limits: Limits = DEFAULT_LIMITS, **bindings) -> Interpreter:
    interpreter = Interpreter(limits=limits, bindings=bindings)
    interpreter.budget.start()
    interpreter.statements.run_block(ast.parse(source).body)
    return interpreter


def plain(source: str, **bindings) -> dict:
    """What Python itself, with real torch, leaves in the names: the test's ground truth."""
    names = {"torch": torch, **bindings}
    exec(source, names)  # noqa: S102 - the test's own, fixed programs
    return names


PROGRAM = """\
y = x * 2
for i in range(3):
    if y.sum() > 10:
        y = y - 1
    else:
        y = y * 3
n = 0
while n < 4:
    n += 1
"""


def test_a_program_computes_what_python_and_pytorch_compute():
    x = torch.tensor([1.0, 2.0])
    run = run_source(PROGRAM, x=x)
    expected = plain(PROGRAM, x=x)
    assert torch.equal(run.env["y"], expected["y"]) and run.env["n"] == expected["n"] == 4
    assert run.env["i"] == expected["i"]


def test_if_and_while_keep_what_the_data_decided():
    x = torch.tensor([1.0, 2.0])
    run = run_source(PROGRAM, x=x)
    sums, y = [], x * 2
    for _ in range(3):
        sums.append(y.sum().item())
        y = y - 1 if y.sum() > 10 else y * 3
    decisions = {key: (d.kind, d.condition, d.true, d.false) for key, d in run.decisions.items()}
    above = sum(s > 10 for s in sums)
    assert decisions == {(3, 5): ("if", "y.sum() > 10", above, len(sums) - above),
                         (8, 1): ("while", "n < 4", 4, 1)}


def test_each_statement_and_each_later_while_test_is_a_step():
    run = run_source(PROGRAM, x=torch.ones(2))
    # y, for, 3 x (if + one branch), n, while (its first test), 4 x n += 1, 4 later tests
    assert run.statements_run == 1 + 1 + 3 * 2 + 1 + 1 + 4 + 4


def test_a_decision_says_what_the_data_decided():
    assert Decision(1, "while", "n < 4", true=4, false=1).summary() == (
        "the body ran 4 times, then the condition was false")
    assert Decision(1, "while", "n < 4", true=100).summary() == (
        "the body ran 100 times; the condition was still true when the page stopped the loop")
    assert Decision(1, "if", "y > 0", true=1, false=2).summary() == (
        "true once: the `if` branch ran; false 2 times: the `else` branch ran (or nothing, where "
        "there is none)")


def test_an_in_place_update_keeps_the_tensor_and_is_recorded():
    x = torch.tensor([1.0, 2.0])
    run = run_source("y = x * 1\nz = y\ny *= x", x=x)
    assert run.env["y"] is run.env["z"]
    assert torch.equal(run.env["y"], x * 1 * x)
    assert run.catalog.ops[-1].label == "y *= ..." and run.catalog.ops[-1].line == 3


def test_a_while_loop_stops_at_the_page_s_limit():
    with pytest.raises(ProgramRefused) as refused:
        run_source("n = 0\nwhile n >= 0:\n    n += 1", limits=Limits(max_loop_iterations=5))
    assert refused.value.kind == "limit" and (refused.value.line, refused.value.col) == (2, 1)
    assert refused.value.message.startswith("this `while` loop's condition was still true after 5 rounds")


@pytest.mark.parametrize("source, line, col, message", [
    ("x = 1\ntorch = 2", 2, 1, "`torch` is a reserved name"),
    ("for i in range(1.5):\n    pass", 1, 1, "range(...) needs whole numbers"),
    ("if 1:\n    for i in range(200):\n        pass", 2, 5,
     "a loop may run at most 100 times (this one: 200)"),
])
def test_a_refusal_is_placed_at_its_statement(source, line, col, message):
    with pytest.raises(ProgramRefused) as refused:
        run_source(source)
    assert (refused.value.line, refused.value.col, refused.value.message) == (line, col, message)


def test_a_failure_of_python_s_is_placed_at_its_statement_in_python_s_words():
    with pytest.raises(ProgramFailed) as failed:
        run_source("x = 1\nmissing += 1")
    with pytest.raises(NameError) as python_says:
        plain("missing += 1")
    assert (failed.value.line, failed.value.col) == (2, 1)
    assert str(failed.value.error) == str(python_says.value)


def test_a_condition_pytorch_cannot_decide_fails_at_the_condition():
    x = torch.tensor([1.0, -1.0])
    with pytest.raises(RuntimeError) as pytorch_says:
        bool(x > 0)
    with pytest.raises(ProgramFailed) as failed:
        run_source("if x > 0:\n    y = x", x=x)
    assert (failed.value.line, failed.value.col) == (1, 4)
    assert str(failed.value.error) == str(pytorch_says.value)
