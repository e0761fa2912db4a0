"""pytorch_calls.py: every tensor a program computes is PyTorch's own result (checked against a
direct call), counted and recorded; random creators draw from the run's seeded generator; the
model and backward() run as PyTorch runs them, within the page's limits."""
from __future__ import annotations

import ast

import pytest
import torch

from workbench.autograd_graph.interpreter import Interpreter
from workbench.autograd_graph.language import DEFAULT_LIMITS, Limits, ProgramRefused
from workbench.autograd_graph.problems import PYTORCH, ProgramFailed


def started(limits: Limits = DEFAULT_LIMITS, **kwargs) -> Interpreter:
    interpreter = Interpreter(limits=limits, **kwargs)
    interpreter.budget.start()
    return interpreter


def call_node(source: str) -> ast.Call:
    node = ast.parse(source, mode="eval").body
    assert isinstance(node, ast.Call)
    return node


def test_random_creators_draw_from_the_run_s_seeded_generator():
    run = started(seed=3)
    first = run.calls.torch_function("randn", [2, 3], {"requires_grad": True})
    second = run.calls.torch_function("rand", [4], {})
    generator = torch.Generator().manual_seed(3)
    assert torch.equal(first, torch.randn(2, 3, generator=generator))
    assert torch.equal(second, torch.rand(4, generator=generator))
    assert first.requires_grad and first.is_leaf and not second.requires_grad
    assert run.total_numel == first.numel() + second.numel()
    assert [op.label for op in run.catalog.ops] == ["torch.randn", "torch.rand"]


def test_a_creator_s_own_error_is_pytorch_s():
    run = started()
    with pytest.raises(TypeError) as pytorch_says:
        torch.full((2,), "a")
    with pytest.raises(ProgramFailed) as failed:
        run.calls.torch_function("full", [(2,), "a"], {})
    assert failed.value.origin == PYTORCH and str(failed.value.error) == str(pytorch_says.value)


def test_apply_returns_pytorch_s_result_counted_and_recorded_with_its_operands():
    run = started()
    a, b = torch.ones(2, 3, requires_grad=True), torch.full((3, 4), 2.0)
    result = run.calls.apply(torch.matmul, (a, b), {}, "a @ b", check=True)
    assert torch.equal(result, torch.matmul(a, b))
    assert run.total_numel == result.numel()
    (record,) = run.catalog.ops
    assert record.label == "a @ b" and record.inputs == (a, b)


def test_a_method_returning_several_tensors_is_refused():
    run = started()
    x = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
    assert isinstance(x.max(0), tuple)
    with pytest.raises(ProgramRefused) as refused:
        run.calls.tensor_method(x, "max", [0], {}, call_node("x.max(0)"))
    assert refused.value.message == "`x.max(0)` returns several tensors; that is not supported here"


def test_tensor_methods_are_pytorch_s_and_detach_says_why_it_left_the_graph():
    run = started()
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    assert torch.equal(run.calls.tensor_method(w, "clamp", [], {"min": 0.0}, call_node("w.clamp(min=0.0)")),
                       w.clamp(min=0.0))
    assert run.calls.tensor_method(w, "numel", [], {}, call_node("w.numel()")) == w.numel()
    cut = run.calls.tensor_method(w, "detach", [], {}, call_node("w.detach()"))
    assert not cut.requires_grad and run.catalog.reason_of(cut) == "made by detach(): cut from the graph"
    with pytest.raises(ProgramRefused, match="`.numpy\\(...\\)` is not accepted"):
        run.calls.tensor_method(w, "numpy", [], {}, call_node("w.numpy()"))


def test_backward_runs_the_page_s_runner_at_the_current_line_and_counts_it():
    calls = []

    def runner(tensor, gradient, retain, line, interpreter):
        calls.append((line, retain, interpreter))
        tensor.backward(gradient=gradient, retain_graph=retain)

    run = started(limits=Limits(max_backward_calls=1), backward=runner)
    w = torch.tensor([1.0, 3.0], requires_grad=True)
    loss = (w ** 2).sum()
    run.position.line = 6
    run.calls.backward(loss, [], {"retain_graph": True})
    assert calls == [(6, True, run)] and run.backward_calls == 1
    fresh = w.detach().clone().requires_grad_()
    (expected,) = torch.autograd.grad((fresh ** 2).sum(), fresh)
    assert torch.equal(w.grad, expected)
    with pytest.raises(ProgramRefused, match="at most 1 backward\\(\\) calls"):
        run.calls.backward(loss, [], {})
    with pytest.raises(ProgramRefused, match="accepts `gradient=` and `retain_graph=` only"):
        run.calls.backward(loss, [], {"inputs": [w]})


def test_the_model_is_pytorch_s_and_its_activations_are_counted():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    features = torch.randn(5, 2)
    run = started(bindings={"model": model})
    result = run.calls.call_model([features], {})
    assert torch.equal(result, model(features))
    widths = [p.shape[0] for p in model.parameters() if p.dim() == 2]
    assert run.total_numel == 2 * features.shape[0] * sum(widths) + result.numel()
    assert run.catalog.ops[-1].label == "model(...)"
    with pytest.raises(ProgramRefused, match="call the model with one tensor"):
        run.calls.call_model([features, features], {})


def test_an_in_place_update_is_pytorch_s_counted_and_recorded():
    run = started()
    y, x = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    expected = y.clone().add_(x)
    run.calls.apply_in_place(torch.Tensor.add_, y, x, "y += ...")
    assert torch.equal(y, expected) and run.total_numel == y.numel()
    assert run.catalog.ops[-1].inputs == (y, x)
