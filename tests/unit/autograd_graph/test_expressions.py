"""expressions.py: an expression evaluates to what PyTorch and Python compute for it, each tensor
op is recorded under its source text, and a problem is placed at the node that raised it, in
PyTorch's or Python's own words."""
from __future__ import annotations

import ast

import pytest
import torch

from workbench.autograd_graph.interpreter import Interpreter
from workbench.autograd_graph.language import DEFAULT_LIMITS, Limits, ProgramRefused
from workbench.autograd_graph.problems import PYTHON, PYTORCH, ProgramFailed


def evaluator(limits: Limits = DEFAULT_LIMITS, **bindings):
    interpreter = Interpreter(limits=limits, bindings=bindings)
    interpreter.budget.start()
    return interpreter


def node(source: str) -> ast.expr:
    return ast.parse(source, mode="eval").body


def evaluate(interpreter: Interpreter, source: str):
    return interpreter.expressions.evaluate(node(source))


def test_tensor_arithmetic_is_pytorch_s_and_each_op_is_recorded():
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    x = torch.tensor([3.0, 0.5])
    run = evaluator(w=w, x=x)
    result = evaluate(run, "(w * x + 1).exp() @ x")
    assert torch.equal(result, (w * x + 1).exp() @ x)
    assert [op.label for op in run.catalog.ops] == ["w * x", "w * x + 1", "(w * x + 1).exp()",
                                                    "(w * x + 1).exp() @ x"]
    assert run.total_numel == sum(op.result.numel() for op in run.catalog.ops)


def test_numbers_follow_python_within_the_page_s_limits():
    run = evaluator()
    assert evaluate(run, "2 ** -2") == 2 ** -2
    assert evaluate(run, "7 / 2 - 1") == 7 / 2 - 1
    with pytest.raises(ProgramRefused) as refused:
        evaluate(run, "2 ** 65")
    assert refused.value.kind == "limit" and refused.value.message == "exponents are limited to ±64"
    with pytest.raises(ProgramRefused, match="cannot combine a string and a number"):
        evaluate(run, "'a' + 1")


def test_and_or_not_and_conditionals_are_python_s():
    run = evaluator(x=torch.tensor([2.0]))
    for source in ("0 or 3", "2 and 0", "not 0", "1 if 0 else 2", "1 < 2 < 3", "3 < 2 < 1"):
        assert evaluate(run, source) == eval(source)  # noqa: S307 - fixed, number-only expressions
    assert torch.equal(evaluate(run, "x > 1 and x"), torch.tensor([2.0]))


def test_a_chained_comparison_asks_pytorch_for_bool_of_the_middle_result():
    x, y, z = torch.tensor([1.0, 2.0]), torch.tensor([2.0, 1.0]), torch.tensor([3.0, 3.0])
    with pytest.raises(RuntimeError) as pytorch_says:
        bool(x < y)
    run = evaluator(x=x, y=y, z=z)
    with pytest.raises(ProgramFailed) as failed:
        evaluate(run, "x < y < z")
    assert failed.value.origin == PYTORCH and str(failed.value.error) == str(pytorch_says.value)


def test_indexing_and_attributes_are_pytorch_s():
    x = torch.arange(12.0).reshape(3, 4)
    run = evaluator(x=x)
    assert torch.equal(evaluate(run, "x[1:, ::2]"), x[1:, ::2])
    assert torch.equal(evaluate(run, "x[None, ..., 0]"), x[None, ..., 0])
    assert torch.equal(evaluate(run, "x.T"), x.T)
    assert evaluate(run, "x.shape[1]") == x.shape[1]
    with pytest.raises(ProgramRefused, match="an index must be a whole number or a slice"):
        evaluate(run, "x[1.5]")


def test_grad_of_a_non_leaf_is_none_with_a_note_that_says_why():
    w = torch.ones(2, requires_grad=True)
    run = evaluator(w=w)
    run.env["y"] = w * 2
    run.catalog.name(run.env["y"], "y")
    assert evaluate(run, "y.grad") is None
    (note,) = run.notes
    assert note.title == "`y.grad` is None" and "`y.retain_grad()`" in note.text


def test_a_problem_is_placed_at_the_node_that_raised_it():
    run = evaluator()
    with pytest.raises(ProgramFailed) as failed:
        evaluate(run, "1 + missing")
    assert (failed.value.line, failed.value.col, failed.value.origin) == (1, 5, PYTHON)
    assert str(failed.value.error) == "name 'missing' is not defined"
    with pytest.raises(ProgramFailed) as failed:
        evaluate(run, "[1, 2][5]")
    with pytest.raises(IndexError) as python_says:
        [1, 2][5]
    assert str(failed.value.error) == str(python_says.value) and failed.value.col == 1


def test_calls_go_to_print_torch_and_tensor_methods():
    x = torch.tensor([1.0, 4.0])
    run = evaluator(x=x)
    assert torch.equal(evaluate(run, "torch.sqrt(x).sum()"), torch.sqrt(x).sum())
    assert evaluate(run, "print(x)") is None and run.printed[-1].text == str(x)
    with pytest.raises(ProgramRefused, match="`len\\(...\\)` is not available here"):
        evaluate(run, "len(x)")
