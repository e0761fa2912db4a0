"""The autograd page, issue 13 items 6, 7, 10, 11, 18, through the real router in AppTest; every
expected value is computed by PyTorch in the test."""
from __future__ import annotations

import torch

from tests.app.apptest import code_blocks, assert_clean, open_page, shown_text
from workbench.autograd_graph.graph import format_tensor
from workbench.autograd_graph.presets import PRESETS_BY_KEY
from workbench.autograd_graph.settings import TABLE, preset_settings

PAGE = "app_pages/autograd_graph/page.py"


def _codes(at) -> list[str]:
    return code_blocks(at)


def test_a_failed_second_call_is_a_row_that_says_so_and_nothing_claims_an_addition():
    code = "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\n"
    at = open_page(PAGE, query={"code": code, "backward": "2"})
    assert_clean(at)
    w = torch.tensor(3.0, requires_grad=True)
    (w ** 2).backward()
    table = at.dataframe[0].value
    assert list(table["result"]) == ["ran", "failed: changed nothing"]
    assert list(table["w.grad"]) == [format_tensor(w.grad), f"{format_tensor(w.grad)} (unchanged)"]
    text = shown_text(at)
    assert "Call 2 **failed**" in text and "Nothing was added" in text
    assert "**adds** into" not in text
    assert f"w.grad = {w.grad!s}" in _codes(at)


def test_with_retain_graph_the_second_call_adds_and_the_prose_says_so():
    code = "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\n"
    at = open_page(PAGE, query={"code": code, "backward": "2", "retain": "1"})
    assert_clean(at)
    w = torch.tensor(3.0, requires_grad=True)
    loss = w ** 2
    loss.backward(retain_graph=True)
    loss.backward()
    assert list(at.dataframe[0].value["result"]) == ["ran", "ran"]
    assert "**adds** into" in shown_text(at)
    assert f"w.grad = {w.grad!s}" in _codes(at)


def test_an_undefined_name_is_named_with_its_line_and_column():
    code = "w = torch.tensor(3.0, requires_grad=True)\nL = w * scale\n"
    at = open_page(PAGE, query={"code": code})
    assert_clean(at)
    try:
        exec(code, {"torch": torch})  # noqa: S102 - the test's own program, for Python's message
    except NameError as exc:
        expected = str(exc)
    text = shown_text(at)
    assert expected in text
    column = code.splitlines()[1].index("scale") + 1
    assert f"line 2, column {column}" in text
    assert "went past one of the page's limits" not in text and "limits" not in at.error[0].value
    assert any(c.endswith(" " * (len("  2 | ") + column - 1) + "^") for c in _codes(at))


def test_a_refusal_names_its_line_and_column_in_pythons_words():
    code = "w = torch.tensor(3.0, requires_grad=True)\nif w > 0:\n    L = w % 2\n"
    at = open_page(PAGE, query={"code": code})
    assert_clean(at)
    column = code.splitlines()[2].index("w % 2") + 1
    text = shown_text(at)
    assert f"Line 3, column {column}: not accepted here" in text
    assert "the operator `%`" in text
    for ast_name in ("`Mod`", "`Gt`", "`If`", "BinOp"):
        assert ast_name not in text


def test_final_gradients_are_text_after_a_program_that_calls_backward_several_times():
    code = ("w = torch.tensor([1.0, -2.0], requires_grad=True)\nb = torch.tensor(0.5, requires_grad=True)\n"
            "for i in range(3):\n    L = (w ** 2 * b).sum()\n    L.backward()\n")
    at = open_page(PAGE, query={"code": code, "backward": "0"})
    assert_clean(at)
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    b = torch.tensor(0.5, requires_grad=True)
    for _ in range(3):
        (w ** 2 * b).sum().backward()
    assert f"w.grad = {w.grad!s}\nb.grad = {b.grad!s}" in _codes(at)
    assert any(s.value == "Final gradients" for s in at.subheader)


def test_the_define_by_run_preset_draws_a_different_graph_for_another_value():
    preset = PRESETS_BY_KEY["branch"]
    dots, texts = {}, {}
    for x in (1.5, -1.5):
        settings = preset_settings(preset)
        settings.code = preset.code.replace("torch.tensor(1.5,", f"torch.tensor({x},")
        at = open_page(PAGE, query=TABLE.write(settings))
        assert_clean(at)
        dots[x] = at.get("graphviz_chart")[0].proto.spec
        texts[x] = shown_text(at)
        xt = torch.tensor(x, requires_grad=True)
        loss = (xt ** 2 if xt > 0 else torch.sin(xt) * 3) + 1
        loss.backward()
        assert f"x.grad = {xt.grad!s}" in _codes(at)
    assert "PowBackward0" in dots[1.5] and "PowBackward0" not in dots[-1.5]
    assert "SinBackward0" in dots[-1.5] and "SinBackward0" not in dots[1.5]
    assert "What the data decided" in texts[1.5]
    assert "line 2, `if x > 0:` true once: the `if` branch ran" in texts[1.5]
    assert "false once: the `else` branch ran" in texts[-1.5]


def test_an_endless_while_is_stopped_with_the_round_limit_named():
    code = "x = torch.tensor(0.0, requires_grad=True)\ny = x\nwhile y.abs() < 100:\n    y = y * 2\n"
    at = open_page(PAGE, query={"code": code})
    assert_clean(at)
    text = shown_text(at)
    assert "Line 3, column 1: stopped at one of the page's limits" in text
    assert "still true after 100 rounds" in text


def test_bool_of_a_multi_element_tensor_shows_pytorchs_error_explained():
    code = "x = torch.tensor([1.0, -1.0], requires_grad=True)\nif x > 0:\n    y = x * 2\n"
    at = open_page(PAGE, query={"code": code})
    assert_clean(at)
    try:
        bool(torch.tensor([1.0, -1.0]) > 0)
    except RuntimeError as exc:
        expected = str(exc)
    text = shown_text(at)
    assert expected in text
    assert "A tensor of several elements is neither true nor false" in text
    assert "(line 2, column 4)" in text


def test_the_inference_mode_preset_and_its_check():
    link = TABLE.write(preset_settings(PRESETS_BY_KEY["inference_mode"]))
    at = open_page(PAGE, query=link)
    assert_clean(at)
    w = torch.tensor(3.0, requires_grad=True)
    with torch.inference_mode():
        b = w * 2
    try:
        w * b
    except RuntimeError as exc:
        expected = str(exc)
    text = shown_text(at)
    assert expected in text
    assert "An inference tensor entered a computation autograd records" in text
    assert f"is_inference {b.is_inference()}" in text
    options = at.radio(key="kc_ag_inference_tensor_choice").options
    at.radio(key="kc_ag_inference_tensor_choice").set_value(options[1]).run()
    at.button(key="kc_ag_inference_tensor_commit").click().run()
    assert_clean(at)
    assert any("Right" in s.value for s in at.success)
