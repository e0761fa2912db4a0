"""The autograd page through the real router, in Streamlit's AppTest."""
from __future__ import annotations

import pytest
import torch

from tests.app.apptest import assert_clean, open_page, shown_text
from workbench.autograd.graph import format_tensor
from workbench.autograd.session import PRESETS, SCHEMA, preset_settings

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
    assert "leaf Variable that requires grad" in shown_text(at)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_every_preset_opens_from_its_lesson_link(preset):
    link = SCHEMA.write(preset_settings(preset))
    at = open_page(PAGE, query=link)
    assert_clean(at)
    assert at.get("graphviz_chart"), preset.key
    assert "unexpected error" not in shown_text(at)
