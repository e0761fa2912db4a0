"""Issue 13 items 6, 7, 10, 11 and 18 of the autograd page, each checked against PyTorch run
directly in the test: define-by-run (if/else, while, comparisons), refusals that name their line
and column in Python's words, a failed backward() call that changed nothing, the final `.grad`
of every leaf as `print` writes it, and torch.inference_mode()."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from workbench.autograd_graph.checks import INFERENCE_TENSOR, INFERENCE_OPTIONS
from workbench.autograd_graph.graph import format_tensor
from workbench.autograd_graph.interpreter import Limits, run_program
from workbench.autograd_graph.presets import PRESETS_BY_KEY
from workbench.autograd_graph.session import leaf_names, program_script, run_session
from workbench.autograd_graph.settings import AutogradSettings, preset_settings
from workbench.common.errors import explain

from app_pages.autograd_graph.view import accumulation_row, source_with_caret


def recorded_ops(tensor: torch.Tensor) -> list[str]:
    """The node names PyTorch recorded behind `tensor`, walked directly."""
    names, seen, stack = [], set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        stack.extend(child for child, _ in node.next_functions)
    return sorted(names)


def python_error(source: str) -> BaseException:
    """What plain Python (with real torch) raises for `source`: the test's own ground truth."""
    try:
        exec(source, {"torch": torch})  # noqa: S102 - the test's own, fixed programs
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError("the program ran in plain Python")


# ---------------------------------------------------------------------------- item 18

@pytest.mark.parametrize("x", [1.5, -1.5, 0.0])
def test_the_branch_preset_records_the_graph_of_the_branch_that_ran(x):
    code = PRESETS_BY_KEY["branch"].code.replace("torch.tensor(1.5,", f"torch.tensor({x},")
    result = run_session(AutogradSettings(code=code, backward=1))
    assert result.error is None
    direct_x = torch.tensor(x, requires_grad=True)
    direct_y = direct_x ** 2 if direct_x > 0 else torch.sin(direct_x) * 3
    direct_loss = direct_y + 1
    assert sorted(result.final_graph.op_names) == recorded_ops(direct_loss)
    (expected,) = torch.autograd.grad(direct_loss, direct_x)
    assert result.final_grads == [("x.grad", str(expected))]
    decision = result.decisions[0]
    assert decision.kind == "if" and decision.condition == "x > 0"
    assert (decision.true, decision.false) == ((1, 0) if bool(torch.tensor(x) > 0) else (0, 1))


def test_the_graph_differs_with_the_input_value():
    graphs = {}
    for x in (1.5, -1.5):
        code = PRESETS_BY_KEY["branch"].code.replace("torch.tensor(1.5,", f"torch.tensor({x},")
        graphs[x] = sorted(run_session(AutogradSettings(code=code)).final_graph.op_names)
    assert graphs[1.5] != graphs[-1.5]
    assert "PowBackward0" in graphs[1.5] and "SinBackward0" in graphs[-1.5]


@pytest.mark.parametrize("x", [3.0, 0.5, 40.0, -7.0])
def test_the_while_preset_records_one_node_per_round(x):
    code = PRESETS_BY_KEY["while_loop"].code.replace("torch.tensor(3.0,", f"torch.tensor({x},")
    result = run_session(AutogradSettings(code=code))
    assert result.error is None
    direct_x = torch.tensor(x, requires_grad=True)
    y, rounds = direct_x, 0
    while y.abs() < 100:
        y, rounds = y * 2, rounds + 1
    assert result.output_name == "y"
    assert result.final_graph.op_names.count("MulBackward0") == rounds
    (expected,) = torch.autograd.grad(y, direct_x)
    assert result.final_grads == [("x.grad", str(expected))]
    assert result.printed[0].text == f"rounds: {rounds} y = {y.item()}"
    assert (result.decisions[0].true, result.decisions[0].false) == (rounds, 1)
    assert f"the body ran {rounds} time" in result.decisions[0].summary()


def test_an_endless_while_stops_at_the_round_cap_with_a_clear_message():
    source = "x = torch.tensor(0.0, requires_grad=True)\ny = x\nwhile y.abs() < 100:\n    y = y * 2\n"
    outcome = run_program(source)
    refused = outcome.refused
    assert refused is not None and refused.kind == "limit"
    assert (refused.line, refused.col) == (3, 1)
    cap = Limits().max_loop_iterations
    assert f"still true after {cap} rounds" in refused.message
    decision = next(iter(outcome.interpreter.decisions.values()))
    assert decision.true == cap and decision.false == 0
    assert "still true when the page stopped" in decision.summary()


def test_a_slow_while_loop_hits_the_time_limit():
    limits = Limits(max_seconds=0.05, max_statements_run=10 ** 6, max_loop_iterations=10 ** 6,
                    max_total_numel=10 ** 9)
    outcome = run_program("x = torch.ones(100, 100)\nn = 0\nwhile n < 10 ** 6:\n    y = (x @ x).sum()\n"
                          "    n += 1", limits=limits)
    assert outcome.refused is not None and "longer than" in outcome.refused.message


def test_comparisons_and_their_chains_are_pythons_and_pytorchs():
    a, b = torch.tensor([1.0, 5.0, 3.0]), torch.tensor([2.0, 2.0, 3.0])
    outcome = run_program("a = torch.tensor([1.0, 5.0, 3.0])\nb = torch.tensor([2.0, 2.0, 3.0])\n"
                          "lt = a < b\nge = a >= b\neq = a == b\nne = a != b\n"
                          "s = torch.tensor(0.5)\nchain = 0 < s < 1\nout = 0 < s > 1\n"
                          "both = (a > 0).all() and (b > 0).any()\nneg = not (a > 4).any()\n"
                          "pick = torch.where(a > b, a, b)\nn = 2 if s > 0 else 3\n"
                          "nothing = s.grad is None")
    assert outcome.ok, outcome.refused or outcome.failed
    env = outcome.env
    for name, expected in (("lt", a < b), ("ge", a >= b), ("eq", a == b), ("ne", a != b),
                           ("pick", torch.where(a > b, a, b))):
        assert torch.equal(env[name], expected), name
    s = torch.tensor(0.5)
    assert bool(env["chain"]) is bool(0 < s < 1)
    assert bool(env["out"]) is bool(0 < s > 1)
    assert bool(env["both"]) is bool((a > 0).all() and (b > 0).any())
    assert env["neg"] is (not (a > 4).any())
    assert env["n"] == (2 if s > 0 else 3) and env["nothing"] is True


@pytest.mark.parametrize("source", [
    "x = torch.ones(3)\nif x > 0:\n    y = 1",
    "a = torch.ones(3)\nc = 0 < a < 2",
    "a = torch.ones(3)\nwhile a:\n    a = a - 1",
    "a = torch.ones(3)\nc = not a",
])
def test_bool_of_a_multi_element_tensor_is_pytorchs_error_explained(source):
    expected = python_error(source)
    outcome = run_program(source)
    assert outcome.failed is not None
    assert type(outcome.failed.error) is type(expected)
    assert str(outcome.failed.error) == str(expected)
    explained = explain(outcome.failed.error)
    assert explained.title == "A tensor of several elements is neither true nor false"
    assert any(".all()" in fix for fix in explained.fixes)
    assert outcome.failed.line == 2


# ---------------------------------------------------------------------------- item 7

@pytest.mark.parametrize("source,marker", [
    ("w = torch.tensor(1.0)\ny = w % 2", "w % 2"),
    ("w = torch.tensor(1.0)\nok = w in [1]", "w in [1]"),
    ("w = torch.tensor(1.0)\nb = w is w", "w is w"),
    ("w = torch.tensor(1.0)\nif w > 0:\n    y = ~w", "~w"),
    ("w = torch.tensor(1.0)\nif w > 0:\n    y = w.numpy()", "w.numpy"),
    ("w = torch.tensor(1.0)\nwhile w < 2:\n    break", "break"),
    ("w = torch.tensor(1.0)\ny = {1: w}", "{1: w}"),
    ("w = torch.tensor(1.0)\ny = w ** 2\n\nz = (y + 1\n", "(y"),
])
def test_refusals_name_the_right_line_and_column_in_pythons_words(source, marker):
    outcome = run_program(source)
    problem = outcome.refused or outcome.failed
    assert problem is not None
    line = next(i for i, text in enumerate(source.splitlines(), 1) if marker in text)
    col = source.splitlines()[line - 1].index(marker) + 1
    assert (problem.line, problem.col) == (line, col), str(problem)
    for ast_name in ("Mod", "In", "Is", "Invert", "Break", "Dict", "Gt", "Compare", "BinOp"):
        assert f"`{ast_name}`" not in str(problem)


def test_the_issues_example_if_on_line_two_runs_now():
    outcome = run_program("w = torch.tensor(2.0, requires_grad=True)\nif w > 0:\n    L = w * 3\n")
    assert outcome.ok
    w = torch.tensor(2.0, requires_grad=True)
    assert torch.equal(outcome.env["L"].detach(), (w * 3).detach())


@pytest.mark.parametrize("source", ["x = 1\ny = z + 1", "x = 3\nx += q",
                                    "x = torch.tensor(-1.0)\nif x > 0:\n    y = x * 2\nz = y + 1"])
def test_an_undefined_name_is_pythons_name_error(source):
    expected = python_error(source)
    outcome = run_program(source)
    assert outcome.refused is None and outcome.failed is not None
    assert isinstance(outcome.failed.error, NameError)
    assert str(outcome.failed.error) == str(expected)
    result = run_session(AutogradSettings(code=source))
    assert result.error.title == "That name has no value yet"
    assert "limits" not in result.error.explanation
    bad = str(expected).split("'")[1]
    line = next(i for i, text in enumerate(source.splitlines(), 1)
                if "=" in text and bad in text.split("=", 1)[1])
    assert result.error_line == line
    assert result.error_col == source.splitlines()[line - 1].rindex(bad) + 1


def test_a_limit_and_a_language_refusal_are_told_apart():
    limit = run_session(AutogradSettings(code="x = torch.ones(3)\nfor i in range(1000):\n    x = x + 1"))
    assert "stopped at one of the page's limits" in limit.error.title
    assert limit.error.title.startswith("Line 2, column 1")
    language = run_session(AutogradSettings(code="x = torch.ones(3)\ny = x.numpy()"))
    assert language.error.title == "Line 2, column 5: not accepted here"
    assert "Nothing of the program ran" in language.error.explanation


def test_the_caret_sits_under_the_column():
    shown = source_with_caret("y = w % 2", 2, 5)
    code_line, caret = shown.splitlines()
    assert code_line[caret.index("^"):].startswith("w % 2")


# ---------------------------------------------------------------------------- item 6

def test_a_failed_second_call_is_a_row_that_changed_nothing():
    code = "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\n"
    result = run_session(AutogradSettings(code=code, backward=2))
    first, second = result.traces
    assert first.finished and not second.finished
    w = torch.tensor(3.0, requires_grad=True)
    loss = w ** 2
    loss.backward()
    with pytest.raises(RuntimeError) as freed:
        loss.backward()
    assert str(second.error) == str(freed.value)
    assert second.changed == [] and first.changed == ["w"]
    row = accumulation_row(second)
    assert row["result"] == "failed: changed nothing"
    assert row["w.grad"] == f"{format_tensor(w.grad)} (unchanged)"
    assert accumulation_row(first)["result"] == "ran"
    assert accumulation_row(first)["w.grad"] == format_tensor(w.grad)
    assert result.final_grads == [("w.grad", str(w.grad))]


def test_a_failed_call_inside_the_program_changes_nothing_either():
    code = ("w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\nL.backward()\nL.backward()\n")
    result = run_session(AutogradSettings(code=code, backward=0))
    assert result.error_line == 4 and result.error_col == 1
    assert [t.finished for t in result.traces] == [True, False]
    assert accumulation_row(result.traces[1])["result"] == "failed: changed nothing"
    w = torch.tensor(3.0, requires_grad=True)
    (w ** 2).backward()
    assert result.final_grads == [("w.grad", str(w.grad))]


# ---------------------------------------------------------------------------- item 10

PROGRAMS_CALLING_BACKWARD = {
    "once": "w = torch.tensor(3.0, requires_grad=True)\nb = torch.tensor(1.0, requires_grad=True)\n"
            "L = (w * 2 + b) ** 2\nL.backward()\n",
    "three times": "w = torch.tensor([1.0, -2.0], requires_grad=True)\nL = (w ** 3).sum()\n"
                   "for i in range(3):\n    L.backward(retain_graph=True)\n",
    "in a training loop": PRESETS_BY_KEY["linear_model"].code,
    "with a branch": "w = torch.tensor(-2.0, requires_grad=True)\nu = torch.tensor(5.0, requires_grad=True)\n"
                     "for i in range(2):\n    if w > 0:\n        L = w * u\n    else:\n        L = w ** 2\n"
                     "    L.backward()\n    with torch.no_grad():\n        w += 3\n",
}


@pytest.mark.spawns
@pytest.mark.parametrize("code", PROGRAMS_CALLING_BACKWARD.values(), ids=PROGRAMS_CALLING_BACKWARD)
def test_final_gradients_are_what_the_program_prints(code):
    settings = AutogradSettings(code=code, backward=1)
    result = run_session(settings)
    assert result.error is None and result.program_calls_backward and result.page_calls == 0
    script = program_script(settings, result.output_name, page_calls=result.page_calls,
                            leaves=leaf_names(result.interpreter.env))
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    shown = [f"{label} = {text}" for label, text in result.final_grads]
    assert shown and ran.stdout.splitlines()[-len(shown):] == shown


# ---------------------------------------------------------------------------- item 11

def test_the_inference_mode_preset_says_what_pytorch_says():
    preset = PRESETS_BY_KEY["inference_mode"]
    result = run_session(preset_settings(preset))
    w = torch.tensor(3.0, requires_grad=True)
    with torch.no_grad():
        a = w * 2
    with torch.inference_mode():
        b = w * 2
    c = w.detach() * 2
    for text, tensor in zip((p.text for p in result.printed), (a, b, c), strict=True):
        assert text.endswith(f"requires_grad {tensor.requires_grad} is_inference {tensor.is_inference()}")
    assert [a.is_inference(), b.is_inference(), c.is_inference()] == [False, True, False]
    with pytest.raises(RuntimeError) as refused:
        w * b
    assert result.error.message == str(refused.value)
    assert result.error.title == "An inference tensor entered a computation autograd records"
    assert result.error_line == len(preset.code.strip().splitlines())
    # b is drawn outside the graph, with the reason
    reasons = {node.title: node.note for node in result.final_graph.nodes}
    assert "inference_mode" in reasons.get("b", "")


@pytest.mark.parametrize("line,pattern", [
    ("b.requires_grad_()", "An inference tensor cannot start requiring grad"),
    ("b.add_(1)", "An inference tensor cannot be changed in place outside inference mode"),
])
def test_other_inference_tensor_errors_are_explained(line, pattern):
    source = f"with torch.inference_mode():\n    b = torch.ones(2)\n{line}"
    expected = python_error(source)
    outcome = run_program(source)
    assert outcome.failed is not None and str(outcome.failed.error) == str(expected)
    assert explain(outcome.failed.error).title == pattern


def test_inference_mode_is_not_no_grad_inside_the_language():
    outcome = run_program("with torch.inference_mode():\n    x = torch.ones(2)\n    on = x.is_inference()\n"
                          "with torch.no_grad():\n    y = torch.ones(2)\n")
    assert outcome.ok
    with torch.inference_mode():
        x = torch.ones(2)
    assert outcome.env["on"] is x.is_inference()
    assert outcome.env["y"].is_inference() is False


def test_the_inference_check_is_answered_by_pytorch():
    w = torch.tensor(3.0, requires_grad=True)
    with torch.inference_mode():
        b = w * 2
    try:
        w * b
        expected = INFERENCE_OPTIONS[0]
    except RuntimeError:
        expected = INFERENCE_OPTIONS[1]
    assert INFERENCE_TENSOR.answer().correct_option == expected
