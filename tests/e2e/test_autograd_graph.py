"""A lesson link to the autograd page opens in Chromium with the graph drawn and steppable."""
import re
from urllib.parse import quote

import pytest
import torch
from playwright.sync_api import expect

from tests.e2e.clean import assert_clean
from tests.e2e.waiting import wait_clickable
from harness.chromium import open_path, wait_drawn, wait_settled
from workbench.autograd_graph.graph import format_tensor

pytestmark = pytest.mark.e2e

LESSON = ("x = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
          "b = torch.tensor(1.0, requires_grad=True)\ny = w * x + b\nL = (y - 10) ** 2\n")


def test_lesson_link_draws_the_graph_and_steps_to_the_gradient(page, app_url):
    open_path(page, app_url, f"/autograd_graph?code={quote(LESSON)}&backward=1&layout=LR")
    chart = page.locator(".wb-graph").first
    expect(chart).to_be_visible()
    expect(chart.locator("svg")).to_be_visible()
    expect(chart).to_contain_text("MulBackward0")
    expect(chart).to_contain_text("AccumulateGrad")
    assert_clean(page, "the lesson link")

    x, w, b = torch.tensor(2.0), torch.tensor(3.0, requires_grad=True), torch.tensor(1.0, requires_grad=True)
    grad_w = torch.autograd.grad((w * x + b - 10) ** 2, w)[0]
    next_node = page.get_by_role("button", name="Next node")
    for step in range(1, 7):  # the engine runs six nodes for this program
        next_node.click()
        # Wait for this step's story before the next click, so no click lands mid-rerun.
        expect(page.get_by_text(f"Step {step} of 6.", exact=False)).to_be_visible()
    wait_settled(page)
    expect(next_node).to_be_disabled()
    expect(chart).to_contain_text(f".grad {format_tensor(grad_w)}")
    expect(page.get_by_text("Done.", exact=False)).to_be_visible()
    assert_clean(page, "after the last step")


def test_a_typed_program_comes_back_after_the_sidebar(page, app_url):
    open_path(page, app_url, "/autograd_graph")
    typed = "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2 +"   # still being fixed
    box = page.locator(".st-key-ag_code textarea")
    box.fill(typed)
    box.press("Control+Enter")
    expect(page.get_by_text("not valid Python", exact=False).first).to_be_visible()
    wait_settled(page)

    nav = page.locator("[data-testid=stSidebarNav]")
    nav.get_by_text("Tensor inspector").click()
    expect(page).to_have_url(re.compile(r"/tensor_inspector"))
    wait_settled(page)
    nav.get_by_text("Autograd graph").click()
    expect(page).to_have_url(re.compile(r"/autograd_graph\?.*code="))
    expect(page.locator(".st-key-ag_code textarea")).to_have_value(typed)
    expect(page.get_by_text("not valid Python", exact=False).first).to_be_visible()



def test_final_gradients_after_the_programs_own_backward_calls_are_selectable_text(page, app_url):
    program = ("w = torch.tensor([1.0, -2.0], requires_grad=True)\nL = (w ** 3).sum()\n"
               "for i in range(3):\n    L.backward(retain_graph=True)\n")
    open_path(page, app_url, f"/autograd_graph?code={quote(program)}&backward=0")
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    loss = (w ** 3).sum()
    for _ in range(3):
        loss.backward(retain_graph=True)
    expected = f"w.grad = {w.grad!s}"
    block = page.locator(".wb-code").filter(has_text=expected)
    # Folded until the learner has predicted them (issue 27): one click opens them.
    expect(block).to_be_hidden()
    wait_drawn(page)
    page.locator("[data-testid=stExpander]").filter(has_text="The gradients after the run") \
        .locator("summary").click()
    expect(block).to_be_visible()
    expect(block).to_contain_text(expected)
    wait_drawn(page)
    # Real text in the page, not pixels in a canvas: a triple click selects the line. Clicked
    # once the block has stayed put and is what a click hits: on a loaded machine the clicks
    # landed on the label above the block while the page still moved, and on the knowledge
    # check below it while the expander's opening animation slid it across the block.
    # A layout change between the wait and the clicks (a busy machine drawing late) can still
    # move the line: three tries, each after the wait; text that cannot be selected fails all.
    line = block.locator("code")
    selections = []
    for _ in range(3):
        line.scroll_into_view_if_needed()
        wait_clickable(page, line)
        line.click(click_count=3)
        selections.append(page.evaluate("() => window.getSelection().toString()"))
        if expected in selections[-1]:
            break
    assert expected in selections[-1], selections


def test_a_program_error_names_python_and_the_line_and_draws_no_stray_node(page, app_url):
    """Issue 27: a NameError read "NameError from PyTorch" over a lone "output" box, with
    "set Call backward() to 1 or more" when it was 1 (the program had stopped first)."""
    code = "w = torch.tensor(3.0, requires_grad=True)\nL = w * q\n"
    open_path(page, app_url, f"/autograd_graph?code={quote(code)}&backward=1")
    panel = page.locator(".st-key-ag_error")
    expect(panel).to_contain_text("NameError from Python:")
    expect(panel).to_contain_text("line 2")
    main = page.locator(".st-key-autograd_graph_main")
    expect(main).to_contain_text("stopped at line 2")
    expect(main.locator(".wb-graph")).to_have_count(0)
    expect(page.get_by_text("to 1 or more", exact=False)).to_have_count(0)
    assert_clean(page, "the failed program")


def test_the_program_box_types_like_a_code_editor(page, app_url):
    """Monospace, Enter keeps the indentation and adds a level after a colon, Shift+Tab and
    Tab move a line by one level, and Esc then Tab leaves the box (issue 27)."""
    open_path(page, app_url, "/autograd_graph")
    page.wait_for_function("() => document.__codeKeys && document.__codeKeys.size > 0")
    box = page.locator(".st-key-ag_code textarea")
    assert "monospace" in box.evaluate("(b) => getComputedStyle(b).fontFamily")
    box.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.type("w = torch.tensor(3.0, requires_grad=True)")
    page.keyboard.press("Enter")
    page.keyboard.type("if w > 0:")
    page.keyboard.press("Enter")
    page.keyboard.type("L = w * 2")
    program = "w = torch.tensor(3.0, requires_grad=True)\nif w > 0:\n    L = w * 2"
    expect(box).to_have_value(program)
    page.keyboard.press("Shift+Tab")              # the whole line, wherever the caret is
    expect(box).to_have_value(program.replace("    L", "L"))
    page.keyboard.press("Home")
    page.keyboard.press("Tab")                    # at the caret, as in any editor
    expect(box).to_have_value(program)
    assert page.evaluate("document.activeElement.tagName") == "TEXTAREA"
    described = box.get_attribute("aria-describedby")
    assert described and "Esc" in page.locator(f"#{described.split()[-1]}").text_content()
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.tagName") != "TEXTAREA"
    box.click()
    page.keyboard.press("Control+Enter")          # Streamlit's text area commits its value
    wait_settled(page)
    chart = page.locator(".wb-graph").first
    expect(chart).to_contain_text("MulBackward0")
    assert_clean(page, "the typed program")
