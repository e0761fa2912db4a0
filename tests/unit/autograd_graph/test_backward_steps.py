"""Presets, the step-through and random programs: every gradient equals direct PyTorch."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app_pages.autograd_graph.drawing import to_dot
from workbench.autograd_graph.graph import build_graph, format_tensor
from workbench.autograd_graph.checks import THREE_BACKWARD, UPDATE_OUTSIDE_NO_GRAD
from workbench.autograd_graph.interpreter import run_program
from workbench.autograd_graph.presets import PRESETS
from workbench.autograd_graph.session import fresh_moons_bindings, program_script, run_session
from workbench.autograd_graph.settings import AutogradSettings, preset_settings

DUMP = """
# %% dump for the test
import json as _json
_grads = {n: (v.grad.tolist() if v.grad is not None else None) for n, v in list(globals().items())
          if isinstance(v, torch.Tensor) and v.is_leaf and v.requires_grad and not n.startswith('_')}
if 'model' in globals():
    _grads.update({'model.' + n: (p.grad.tolist() if p.grad is not None else None)
                   for n, p in model.named_parameters()})
print('@@GRADS@@' + _json.dumps(_grads))
"""


def run_script(source: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120)


def session_grads(result) -> dict[str, torch.Tensor | None]:
    interpreter = result.interpreter
    grads = {name: value.grad for name, value in interpreter.env.items()
             if isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad}
    if interpreter.model is not None:
        grads.update({f"model.{n}": p.grad for n, p in interpreter.model.named_parameters()})
    return grads


@pytest.mark.spawns
@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_preset_gradients_equal_the_same_program_run_directly(preset):
    chosen = preset_settings(preset)
    bindings = fresh_moons_bindings() if preset.uses_model else None
    result = run_session(chosen, bindings=bindings)
    script = program_script(chosen, result.output_name, page_calls=result.page_calls)
    ran = run_script(script + DUMP)
    if result.error is not None:
        # The same program fails in plain Python with PyTorch's same message.
        assert ran.returncode != 0
        assert result.error.message.splitlines()[0] in ran.stderr
        return
    assert ran.returncode == 0, ran.stderr
    direct = json.loads(ran.stdout.split("@@GRADS@@")[1])
    ours = session_grads(result)
    assert set(ours) <= set(direct)
    assert any(g is not None for g in ours.values())
    for name, grad in ours.items():
        if grad is None:
            assert direct[name] is None, name
        else:
            torch.testing.assert_close(grad, torch.tensor(direct[name], dtype=grad.dtype), msg=name)


def test_the_lesson_example_gives_minus_twelve_and_minus_six():
    result = run_session(preset_settings(PRESETS[0]))
    x, w, b = torch.tensor(2.0), torch.tensor(3.0, requires_grad=True), torch.tensor(1.0, requires_grad=True)
    loss = (w * x + b - 10) ** 2
    expected_w, expected_b = torch.autograd.grad(loss, (w, b))
    trace = result.traces[0]
    torch.testing.assert_close(trace.leaf_grads["w"], expected_w)
    torch.testing.assert_close(trace.leaf_grads["b"], expected_b)
    # While stepping, w's leaf shows its gradient exactly once AccumulateGrad for w has run.
    step_w = next(s for s in trace.steps if s.leaf_name == "w")
    leaf_key = step_w.leaf_key
    assert leaf_key not in trace.overlay(step_w.index - 1).leaf_grads
    assert trace.overlay(step_w.index).leaf_grads[leaf_key] == format_tensor(expected_w)
    assert format_tensor(expected_w) in to_dot(trace.graph, trace.overlay(step_w.index))


def test_accumulation_six_twelve_eighteen_and_the_cure():
    chosen = preset_settings(next(p for p in PRESETS if p.key == "accumulate"))
    grown = run_session(chosen)
    w = torch.tensor(3.0, requires_grad=True)
    once = torch.autograd.grad(w ** 2, w)[0]
    assert [h["w"] for h in grown.leaf_history] == [format_tensor(once * k) for k in (1, 2, 3)]
    zeroed = run_session(AutogradSettings(chosen.code, 3, True, True))
    assert [h["w"] for h in zeroed.leaf_history] == [format_tensor(once)] * 3
    assert THREE_BACKWARD.answer().shown_value == f"w.grad = {once * 3}"


def test_the_zeroed_calls_words_say_the_same_gradient_only_when_the_calls_left_it():
    """Both ways with PyTorch's own traces: zeroed calls leave 6 each time, accumulating ones
    leave 6, 12, 18; the words follow the recorded gradients."""
    from app_pages.autograd_graph.view import zeroed_calls_words
    from workbench.autograd_graph.backward_steps import same_gradients

    chosen = preset_settings(next(p for p in PRESETS if p.key == "accumulate"))
    zeroed = run_session(AutogradSettings(chosen.code, 3, True, True)).traces
    grown = run_session(chosen).traces
    assert len(zeroed) == len(grown) == 3
    assert same_gradients(zeroed) and not same_gradients(grown)
    assert "every call gives the same gradient" in zeroed_calls_words(zeroed)
    differ = zeroed_calls_words(grown)
    assert "not all the same" in differ and "the same gradient" not in differ


def test_a_program_that_calls_backward_itself_gets_no_extra_calls():
    result = run_session(AutogradSettings("w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\n"
                                          "L.backward()\n", 2))
    assert result.error is None and result.program_calls_backward and result.page_calls == 0
    assert len(result.traces) == 1 and result.traces[0].line == 3


def test_second_backward_without_retain_graph_shows_pytorchs_error():
    result = run_session(AutogradSettings("w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\n", 2))
    assert result.error is not None and "second time" in result.error.message
    assert len(result.leaf_history) == 1
    assert result.traces[1].error is not None


@pytest.mark.parametrize("source, words", [
    ("x = torch.tensor(2.0)\ny = x ** 2\n", "does not require grad"),
    ("x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 2\n", "scalar outputs"),
    ("w = torch.tensor(1.0, requires_grad=True)\ny = w.exp()\ny += 1\nL = y * 2\n", "inplace"),
])
def test_learner_errors_are_pytorchs_own_messages_explained(source, words):
    result = run_session(AutogradSettings(source, 1))
    assert result.error is not None
    assert words in result.error.message
    assert result.error.explanation


def test_grad_of_a_non_leaf_is_none_with_retain_grad_as_the_fix():
    outcome = run_program("w = torch.tensor(3.0, requires_grad=True)\ny = w * 2\nL = y ** 2\n"
                          "L.backward()\nprint(y.grad)")
    assert outcome.ok
    assert outcome.interpreter.printed[-1].text == "None"
    assert "retain_grad" in outcome.interpreter.notes[0].text
    kept = run_program("w = torch.tensor(3.0, requires_grad=True)\ny = w * 2\ny.retain_grad()\n"
                       "L = y ** 2\nL.backward()\nprint(y.grad)")
    w = torch.tensor(3.0, requires_grad=True)
    y = w * 2
    assert kept.interpreter.printed[-1].text == str(torch.autograd.grad(y ** 2, y)[0])


def test_manual_update_outside_no_grad_is_refused_by_pytorch():
    assert "leaf Variable" in UPDATE_OUTSIDE_NO_GRAD.answer().shown_value


def test_graph_names_constants_and_tensors_outside_the_graph():
    result = run_session(preset_settings(next(p for p in PRESETS if p.key == "detach")))
    graph = result.traces[0].graph
    kinds = {node.title: node for node in graph.nodes}
    assert kinds["x"].kind == "leaf"
    assert kinds["z"].kind == "constant" and "detach" in kinds["z"].note
    assert kinds["s"].kind == "outside" and "no_grad" in kinds["s"].note
    assert {"MulBackward0", "PowBackward0", "AccumulateGrad"} <= set(graph.op_names)


def test_walk_visits_exactly_the_nodes_backward_runs():
    result = run_session(preset_settings(PRESETS[0]))
    trace = result.traces[0]
    ran = sorted(step.key for step in trace.steps)
    drawn = sorted(node.key for node in trace.graph.nodes if node.kind in ("op", "accumulate"))
    assert ran == drawn


def test_dot_text_is_well_formed_and_escapes_names():
    outcome = run_program("w = torch.tensor(1.0, requires_grad=True)\nL = (w * 2).sum()\nprint('<b>')")
    build = build_graph(outcome.env["L"], outcome.interpreter.catalog, outcome.env)
    dot = to_dot(build.model, scale=1.5, direction="LR")
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}")
    assert "rankdir=LR" in dot


# ---------------------------------------------------------------------------- random programs

LEAF_SOURCE = ("a = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)\n"
               "b = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)\n"
               "c = torch.tensor([[0.5], [-0.4]], dtype=torch.float64, requires_grad=True)\n")
UNARY = {"sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
         "abs": torch.abs, "neg": torch.neg}
BINARY = {"+": torch.add, "-": torch.sub, "*": torch.mul}


def expressions():
    leaf = st.sampled_from(["a", "b", "c"]).map(lambda n: (n, ("leaf", n)))
    constant = st.floats(-2, 2, allow_nan=False).map(lambda v: (f"({round(v, 3)!r})", ("const", round(v, 3))))

    def extend(inner):
        unary = st.tuples(st.sampled_from(sorted(UNARY)), inner.filter(_has_leaf), st.booleans()).map(
            lambda t: (f"({t[1][0]}).{t[0]}()" if t[2] else f"torch.{t[0]}({t[1][0]})",
                       ("unary", t[0], t[1][1])))
        binary = st.tuples(st.sampled_from(sorted(BINARY)), inner, inner).map(
            lambda t: (f"({t[1][0]} {t[0]} {t[2][0]})", ("binary", t[0], t[1][1], t[2][1])))
        square = inner.map(lambda e: (f"({e[0]}) ** 2", ("square", e[1])))
        safe_div = st.tuples(inner, inner).map(
            lambda t: (f"({t[0][0]} / (1 + ({t[1][0]}) ** 2))", ("div", t[0][1], t[1][1])))
        return st.one_of(unary, binary, square, safe_div)

    return st.recursive(st.one_of(leaf, constant), extend, max_leaves=8).filter(_has_leaf)


def _has_leaf(expression) -> bool:
    return "'leaf'" in repr(expression[1])


def evaluate(tree, leaves):
    kind = tree[0]
    if kind == "leaf":
        return leaves[tree[1]]
    if kind == "const":
        return tree[1]
    if kind == "unary":
        value = evaluate(tree[2], leaves)
        value = value if isinstance(value, torch.Tensor) else torch.tensor(value, dtype=torch.float64)
        return UNARY[tree[1]](value)
    if kind == "binary":
        return BINARY[tree[1]](*torch.broadcast_tensors(*[_t(evaluate(t, leaves)) for t in tree[2:]]))
    if kind == "square":
        return _t(evaluate(tree[1], leaves)) ** 2
    if kind == "div":
        return _t(evaluate(tree[1], leaves)) / (1 + _t(evaluate(tree[2], leaves)) ** 2)
    raise AssertionError(kind)


def _t(value):
    return value if isinstance(value, torch.Tensor) else torch.tensor(value, dtype=torch.float64)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions())
def test_random_programs_match_direct_pytorch(expression):
    text, tree = expression
    source = LEAF_SOURCE + f"L = ({text}).sum()\n"
    result = run_session(AutogradSettings(source, 1))
    leaves = {"a": torch.tensor(0.7, dtype=torch.float64, requires_grad=True),
              "b": torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True),
              "c": torch.tensor([[0.5], [-0.4]], dtype=torch.float64, requires_grad=True)}
    direct = _t(evaluate(tree, leaves)).sum()
    if not direct.requires_grad:
        assert result.error is not None and "does not require grad" in result.error.message
        return
    assert result.error is None, result.error
    direct.backward()
    for name, leaf in leaves.items():
        ours = result.interpreter.env[name].grad
        if leaf.grad is None:
            assert ours is None
        else:
            torch.testing.assert_close(ours, leaf.grad)
    # The step-through saw the same gradients: what reached each AccumulateGrad is the leaf's grad.
    trace = result.traces[-1]
    for step in trace.steps:
        if step.leaf_name is not None:
            torch.testing.assert_close(step.leaf_after, leaves[step.leaf_name].grad)
            torch.testing.assert_close(step.received, leaves[step.leaf_name].grad)


TOKENS = ["x", "w", "=", "torch.tensor(", "torch.ones(", "2.0", "3", ")", "(", ",", "requires_grad=True",
          "+", "*", "**", "@", ".sum()", ".backward()", ".grad", "\n", "    ", "with torch.no_grad():",
          "for i in range(3):", "print(", "]", "[", ".view(", "-1", ".t()", "_", "__class__", "'s'"]


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)))
def test_no_program_raises_an_unhandled_exception(source):
    result = run_session(AutogradSettings(source, 1))
    assert result.error is None or result.error.message


def test_recording_stops_at_its_budget_but_backward_still_runs():
    from workbench.autograd_graph.backward_steps import BackwardRecorder

    recorder = BackwardRecorder(max_elements=10)
    outcome = run_program("w = torch.ones(8, requires_grad=True)\nfor i in range(3):\n"
                          "    L = (w * 2).sum()\n    L.backward()\n", backward=recorder)
    assert outcome.ok
    assert [t.recorded for t in recorder.traces] == [True, False, False]
    assert recorder.traces[1].steps == []
    w = torch.ones(8, requires_grad=True)
    torch.testing.assert_close(outcome.env["w"].grad, 3 * torch.autograd.grad((w * 2).sum(), w)[0])
    torch.testing.assert_close(recorder.traces[2].leaf_grads["w"], outcome.env["w"].grad)


def test_saved_tensors_are_what_pytorch_saved():
    result = run_session(AutogradSettings("w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\n", 1))
    node = next(n for n in result.traces[0].graph.nodes if n.title == "PowBackward0")
    w = torch.tensor(3.0, requires_grad=True)
    grad_fn = (w ** 2).grad_fn
    assert f"self = {format_tensor(grad_fn._saved_self)}" in node.saved
    assert f"exponent = {grad_fn._saved_exponent}" in node.saved
    dot = to_dot(result.traces[0].graph, show_saved=True)
    assert "saved self = 3" in dot
    # After backward() without retain_graph the same node has freed them.
    assert any("freed" in item for item in build_graph(result.interpreter.env["L"],
                                                         result.interpreter.catalog).model.node("f0").saved)


def test_a_saved_tensor_changed_in_place_is_named_as_such():
    result = run_session(preset_settings(next(p for p in PRESETS if p.key == "err_in_place")))
    exp_node = next(n for n in result.traces[0].graph.nodes if n.title == "ExpBackward0")
    assert exp_node.saved == ("result: changed in place since saved",)


def test_a_tensor_used_twice_receives_the_sum_of_both_gradients():
    result = run_session(preset_settings(next(p for p in PRESETS if p.key == "polynomial")))
    step = next(s for s in result.traces[0].steps if s.leaf_name == "x")
    assert len(step.arrivals) == 2
    x = torch.tensor(2.0, requires_grad=True)
    parts = [torch.autograd.grad(x ** 2, x)[0], torch.autograd.grad(3 * x, x)[0]]
    assert sorted(value for value, _ in step.arrivals) == sorted(format_tensor(p) for p in parts)
    assert "**sum**" in step.story()
    torch.testing.assert_close(step.received, parts[0] + parts[1])


def test_the_failed_call_words_follow_which_grads_the_call_changed():
    """A refused call that changed nothing says so; one that failed midway names the `.grad` it
    had already added into and the ones it left alone."""
    from app_pages.autograd_graph.view import failed_call_words
    from workbench.autograd_graph.backward_steps import BackwardTrace

    before = {"w": torch.tensor(1.0), "b": torch.tensor(2.0)}
    untouched = BackwardTrace(2, 0, "L", None, None, False, error=RuntimeError("refused"),
                              leaf_grads=dict(before), leaf_grads_before=dict(before))
    assert untouched.changed == [] and "Nothing was added" in failed_call_words(untouched)
    midway = BackwardTrace(2, 0, "L", None, None, False, error=RuntimeError("refused"),
                           leaf_grads={"w": torch.tensor(4.0), "b": torch.tensor(2.0)},
                           leaf_grads_before=dict(before))
    words = failed_call_words(midway)
    assert midway.changed == ["w"] and "already added into `w.grad`" in words
    assert "`b.grad` kept its value" in words and "Nothing was added" not in words
