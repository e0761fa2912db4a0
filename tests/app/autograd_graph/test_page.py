"""The autograd page through the real router, in Streamlit's AppTest."""
from __future__ import annotations

import pytest
import torch

from tests.app.apptest import code_blocks, assert_clean, open_page, shown_text
from workbench.autograd_graph.graph import format_tensor
from workbench.autograd_graph.presets import PRESETS
from workbench.autograd_graph.settings import TABLE, preset_settings

PAGE = "app_pages/autograd_graph/page.py"


def _dot(at) -> str:
    charts = at.get("graphviz_chart")
    assert charts, "no graph drawn"
    return charts[0].proto.spec


def _lesson_grads():
    x, w, b = torch.tensor(2.0), torch.tensor(3.0, requires_grad=True), torch.tensor(1.0, requires_grad=True)
    return torch.autograd.grad((w * x + b - 10) ** 2, (w, b))


def test_default_page_draws_the_graph_and_steps_to_w_grad():
    at = open_page(PAGE)
    assert_clean(at)
    grad_w, grad_b = _lesson_grads()
    assert f".grad {format_tensor(grad_w)}" not in _dot(at)      # before stepping: None
    next_button = next(b for b in at.button if b.label == "Next node")
    for _ in range(6):
        next_button = next(b for b in at.button if b.label == "Next node")
        next_button.click()
        at.run()
    assert_clean(at)
    dot = _dot(at)
    assert f".grad {format_tensor(grad_w)}" in dot
    assert f".grad {format_tensor(grad_b)}" in dot
    assert "Done." in shown_text(at)


def test_lesson_link_with_three_backward_calls_shows_accumulation():
    code = "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\n"
    at = open_page(PAGE, query={"code": code, "backward": "3", "retain": "1"})
    assert_clean(at)
    assert at.text_area(key="ag_code").value == code
    w = torch.tensor(3.0, requires_grad=True)
    once = torch.autograd.grad(w ** 2, w)[0]
    table = at.dataframe[0].value
    assert list(table["w.grad"]) == [format_tensor(once * k) for k in (1, 2, 3)]
    assert "adds" in shown_text(at)


def test_refused_program_is_explained_on_the_page():
    at = open_page(PAGE, query={"code": "import os\nos.system('echo hi')"})
    assert_clean(at)
    text = shown_text(at)
    assert "Line 1" in text and "imports" in text
    assert "Traceback" not in text


def test_bad_link_values_fall_back_with_a_warning():
    at = open_page(PAGE, query={"backward": "lots", "layout": "diagonal"})
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "backward=lots" in warnings and "layout=diagonal" in warnings
    assert at.get("graphviz_chart")


def test_second_backward_without_retain_graph_shows_the_explained_error():
    code = "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\n"
    at = open_page(PAGE, query={"code": code, "backward": "2"})
    assert_clean(at)
    text = shown_text(at)
    assert "Trying to backward through the graph a second time" in text
    assert "retain_graph=True" in text


@pytest.mark.parametrize("body,refused", [("L = w ** 2", True), ("L = w + 1", False)])
def test_the_retain_graph_note_says_what_the_calls_did(body, refused):
    """A graph that saved tensors refuses a second call; one that saved none runs it again:
    PyTorch decides, and the note under the table follows."""
    code = f"w = torch.tensor(3.0, requires_grad=True)\n{body}\n"
    w = torch.tensor(3.0, requires_grad=True)
    L = w ** 2 if refused else w + 1
    L.backward()
    try:
        L.backward()
        pytorch_refused = False
    except RuntimeError:
        pytorch_refused = True
    assert pytorch_refused == refused
    at = open_page(PAGE, query={"code": code, "backward": "3"})
    assert_clean(at)
    text = shown_text(at)
    assert ("Call 2 was refused" in text) == refused
    assert ("All 3 calls ran without `retain_graph=True`" in text) == (not refused)
    assert "a second call through the same graph fails" not in text


def test_hidden_code_control_shows_the_program_read_only():
    at = open_page(PAGE, query={"hide": "code,backward"})
    assert_clean(at)
    assert not [t for t in at.text_area if t.key == "ag_code"]
    assert not [n for n in at.number_input if n.key == "ag_backward"]
    assert at.get("graphviz_chart")


def test_moons_preset_without_a_trainer_uses_a_fresh_mlp():
    at = open_page(PAGE)
    at.selectbox(key="ag_preset").set_value("moons").run()
    assert_clean(at)
    assert "fresh 2-8-1 MLP" in shown_text(at)
    assert "AddmmBackward0" in _dot(at)


def test_knowledge_check_is_answered_by_pytorch():
    at = open_page(PAGE)
    at.radio(key="kc_ag_three_backward_choice").set_value("18.0").run()
    at.button(key="kc_ag_three_backward_commit").click().run()
    assert_clean(at)
    w = torch.tensor(3.0, requires_grad=True)
    expected = 3 * torch.autograd.grad(w ** 2, w)[0]
    assert f"{expected.item():.1f}" in shown_text(at)
    assert any("Right" in s.value for s in at.success)


def test_moons_preset_reads_the_trainers_shared_model_without_touching_it():
    from components.state import SharedModel

    generator = torch.Generator().manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1),
                                torch.nn.Flatten(0))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator))
    features = torch.randn(40, 2, generator=generator)
    labels = (features[:, 0] > 0).float()
    before = [p.detach().clone() for p in model.parameters()]

    at = open_page(PAGE)
    at.session_state["learner::shared_model"] = SharedModel(model, features, labels, "a 2-4-1 test MLP")
    at.selectbox(key="ag_preset").set_value("moons").run()
    assert_clean(at)
    assert "your moons trainer's model (a 2-4-1 test MLP)" in shown_text(at)
    assert "model.0.weight" in _dot(at) and "AddmmBackward0" in _dot(at)
    # The trainer's own model is untouched: same weights, no gradients, still in training mode.
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert all(p.grad is None for p in model.parameters()) and model.training
    # And the gradients shown are those of the same model on the same batch, asked of PyTorch.
    twin = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1),
                               torch.nn.Flatten(0))
    twin.load_state_dict(model.state_dict())
    loss = torch.binary_cross_entropy_with_logits(twin(features[:16]), labels[:16]).mean()
    loss.backward()
    at.button(key=next(b.key for b in at.button if b.key and b.key.endswith("_all"))).click().run()
    assert format_tensor(twin[2].bias.grad) in _dot(at)


def test_choosing_a_preset_writes_the_lesson_link():
    at = open_page(PAGE)
    at.selectbox(key="ag_preset").set_value("accumulate").run()
    assert_clean(at)
    assert at.query_params["code"].startswith("w = torch.tensor(3.0")
    assert at.query_params["backward"] == "3" and at.query_params["retain"] == "1"


def test_no_grad_knowledge_check_shows_pytorchs_refusal():
    at = open_page(PAGE)
    options = at.radio(key="kc_ag_no_grad_update_choice").options
    at.radio(key="kc_ag_no_grad_update_choice").set_value(options[0]).run()
    at.button(key="kc_ag_no_grad_update_commit").click().run()
    assert_clean(at)
    assert "leaf Variable that requires grad" not in shown_text(at), "a wrong answer: try again first"
    at.button(key="kc_ag_no_grad_update_show").click().run()
    assert_clean(at)
    assert "leaf Variable that requires grad" in shown_text(at)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_every_preset_opens_from_its_lesson_link(preset):
    link = TABLE.write(preset_settings(preset))
    at = open_page(PAGE, query=link)
    assert_clean(at)
    assert at.get("graphviz_chart"), preset.key
    assert "unexpected error" not in shown_text(at)


HOME = "app_pages/home/page.py"


def _via_sidebar(at, page: str):
    """What a sidebar click does: another page, with a bare URL."""
    for name in list(at.query_params):
        del at.query_params[name]
    at.switch_page(page)
    return at.run()


def _away_and_back(at):
    _via_sidebar(at, HOME)      # whether the home page is clean is its own tests' business
    return _via_sidebar(at, PAGE)


def test_the_widgets_follow_the_settings_table():
    at = open_page(PAGE)
    assert_clean(at)
    code = at.text_area(key="ag_code")
    assert (code.label, code.help) == (TABLE["code"].label, TABLE["code"].help)
    assert code.max_chars == TABLE["code"].max_len
    backward = at.number_input(key="ag_backward")
    assert (backward.label, backward.help) == (TABLE["backward"].label, TABLE["backward"].help)
    assert (backward.min, backward.max) == (TABLE["backward"].lo, TABLE["backward"].hi)
    for name in ("retain", "zero", "saved"):
        toggle = at.toggle(key=f"ag_{name}")
        assert (toggle.label, toggle.help) == (TABLE[name].label, TABLE[name].help)
    layout = at.segmented_control(key="ag_layout")
    assert (layout.label, layout.help) == (TABLE["layout"].label, TABLE["layout"].help)
    assert list(layout.options) == ["top to bottom", "left to right"]


def test_a_typed_program_and_the_step_position_survive_the_sidebar():
    at = open_page(PAGE)
    typed = "w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2 +\n"   # still being fixed
    at.text_area(key="ag_code").input(typed).run()
    at.number_input(key="ag_backward").set_value(2).run()
    at.toggle(key="ag_retain").set_value(True).run()
    assert_clean(at)
    assert "not valid Python" in shown_text(at)

    back = _away_and_back(at)
    assert_clean(back)
    assert back.text_area(key="ag_code").value == typed
    assert back.number_input(key="ag_backward").value == 2
    assert back.toggle(key="ag_retain").value is True
    assert back.query_params["code"] == typed and back.query_params["backward"] == "2"

    # A program that runs: step twice through backward(), leave, come back: still at step 2.
    back.text_area(key="ag_code").input("w = torch.tensor(3.0, requires_grad=True)\nL = w ** 2\n").run()
    back.number_input(key="ag_backward").set_value(1).run()
    for _ in range(2):
        next(b for b in back.button if b.label == "Next node").click()
        back.run()
    slider = next(s for s in back.slider if s.label == "Nodes run by the engine")
    assert slider.value == 2
    again = _away_and_back(back)
    assert_clean(again)
    slider = next(s for s in again.slider if s.label == "Nodes run by the engine")
    assert slider.value == 2
    assert "Step 2 of" in shown_text(again)


def test_an_example_replacing_an_own_program_says_so_and_can_be_undone():
    at = open_page(PAGE)
    mine = "w = torch.tensor(5.0, requires_grad=True)\nL = w ** 3\n"
    at.text_area(key="ag_code").input(mine).run()
    at.number_input(key="ag_backward").set_value(2).run()
    at.selectbox(key="ag_preset").set_value("polynomial").run()
    assert_clean(at)
    assert at.text_area(key="ag_code").value.startswith("x = torch.tensor(2.0")
    assert any("Your own program (2 lines) was replaced" in i.value for i in at.info)
    at.button(key="ag_undo").click().run()
    assert_clean(at)
    assert at.text_area(key="ag_code").value == mine
    assert at.number_input(key="ag_backward").value == 2
    assert not any("was replaced" in i.value for i in at.info)


def test_switching_between_examples_discards_nothing_worth_a_notice():
    at = open_page(PAGE)
    at.selectbox(key="ag_preset").set_value("polynomial").run()
    at.selectbox(key="ag_preset").set_value("accumulate").run()
    assert_clean(at)
    assert not any("was replaced" in i.value for i in at.info)


def test_a_lesson_link_replacing_an_own_program_offers_it_back():
    at = open_page(PAGE)
    mine = "v = torch.tensor([1.0, 2.0], requires_grad=True)\nL = (v * v).sum()\n"
    at.text_area(key="ag_code").input(mine).run()
    at.query_params["code"] = "x = torch.tensor(2.0, requires_grad=True)\ny = x * 4"
    at.run()
    assert_clean(at)
    assert at.text_area(key="ag_code").value.startswith("x = torch.tensor(2.0")
    assert any("replaced by the lesson link" in i.value for i in at.info)
    at.button(key="ag_undo").click().run()
    assert at.text_area(key="ag_code").value == mine


def test_following_lesson_steps_is_not_reported_as_lost_work():
    at = open_page(PAGE, query={"code": "x = torch.tensor(2.0, requires_grad=True)\ny = x * 4"})
    at.query_params["code"] = "x = torch.tensor(2.0, requires_grad=True)\ny = x * 5"
    at.run()
    assert_clean(at)
    assert not any("was replaced" in i.value for i in at.info)


def test_a_python_error_is_named_as_pythons_and_no_stray_node_is_drawn():
    """Issue 27: a NameError was shown as "NameError from PyTorch" over a lone "output" box
    and "set Call backward() to 1 or more" (it was 1: the program stopped first)."""
    code = "w = torch.tensor(3.0, requires_grad=True)\nL = w * q\n"
    at = open_page(PAGE, query={"code": code})
    assert_clean(at)
    text = shown_text(at)
    assert "NameError from Python:" in text
    assert "from PyTorch" not in text
    assert "set *Call backward()* to 1 or more" not in text
    assert not at.get("graphviz_chart")
    assert any("stopped at line 2" in i.value for i in at.info), [i.value for i in at.info]


def test_a_program_that_stops_after_recording_shows_that_graph_and_which_line_stopped_it():
    code = "w = torch.tensor(3.0, requires_grad=True)\nb = w * 2\nL = b.view(2)\n"
    at = open_page(PAGE, query={"code": code})
    assert_clean(at)
    text = shown_text(at)
    assert "RuntimeError from PyTorch:" in text
    assert "MulBackward0" in _dot(at)
    notes = [i.value for i in at.info if "stopped at line 3" in i.value]
    assert notes and "no backward() ran" in notes[0], [i.value for i in at.info]
    assert "set *Call backward()* to 1 or more" not in text


def test_with_no_backward_call_asked_the_page_says_how_to_ask_for_one():
    at = open_page(PAGE, query={"backward": "0"})
    assert_clean(at)
    assert any("set *Call backward()* to 1 or more" in i.value for i in at.info)


def test_the_gradients_are_folded_until_the_learner_opens_them():
    """The lesson step's check asks for w.grad: the page must not print it under the program
    before the learner has predicted it (issue 27); it is one click away, folded."""
    step_link = {"code": "x = torch.tensor(2.0)\nw = torch.tensor(3.0, requires_grad=True)\n"
                         "b = torch.tensor(1.0, requires_grad=True)\ny = w * x + b\nL = (y - 10) ** 2",
                 "backward": "1"}
    at = open_page(PAGE, query=step_link)
    assert_clean(at)
    folded = [e for e in at.expander if "gradients after the run" in e.label]
    assert len(folded) == 1
    answer = f"w.grad = {str(_lesson_grads()[0])}"      # as print(w.grad) writes it
    inside = " ".join(code_blocks(folded[0]))
    assert answer in inside
    outside = [c for c in code_blocks(at) if answer in c]
    assert outside == [c for c in code_blocks(folded[0]) if answer in c]
    assert not any(answer in m.value for m in at.markdown)


def test_a_press_faster_than_the_sliders_redraw_steps_from_the_servers_position(presses_sent_last):
    """N, N on the keyboard faster than the slider redraws: the browser sends the second press
    with the slider still at the step before (what it last drew). Both presses count, and Back
    steps back from the step on screen, not from the slider's stale value."""
    at = open_page(PAGE)

    def press(label: str, stale_slider: int | None = None) -> None:
        if stale_slider is not None:
            next(s for s in at.slider if s.label == "Nodes run by the engine") \
                .set_value(stale_slider)
        button = next(b for b in at.button if b.label == label or b.key.endswith("_back")
                      and label == "Back")
        button.click()
        at.run()

    press("Next node")
    press("Next node", stale_slider=0)       # the slider had not drawn step 1 yet
    assert_clean(at)
    assert "Step 2 of" in shown_text(at)
    press("Next node", stale_slider=1)
    assert "Step 3 of" in shown_text(at)
    press("Back", stale_slider=2)
    assert "Step 2 of" in shown_text(at)
    assert next(s for s in at.slider if s.label == "Nodes run by the engine").value == 2
