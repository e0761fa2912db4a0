"""The moons trainer's pitfall lab, model tab and loss/hook panels through the router."""
from __future__ import annotations

import torch

from tests.app.apptest import assert_clean, open_page, shown_text
from workbench.moons_trainer.losses import large_logit_rows
from workbench.moons_trainer.pitfalls import PITFALLS

PAGE = "app_pages/moons_trainer/page.py"
QUICK = {"n": "300", "epochs": "2"}


def table_with(at, column: str):
    """The page's dataframe that has this column."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_the_pitfall_lab_lists_the_ten_pitfalls_by_number_and_pitfall_1_takes_an_optimizer():
    at = open_page(PAGE, QUICK)
    at.session_state["mt_tabs"] = "Pitfall lab"
    at.run()
    radio = at.radio(key="mt_pitfall")
    assert list(radio.options) == [p.label for p in PITFALLS]
    assert [p.number for p in PITFALLS] == list(range(1, 11))
    opt = at.radio(key="mt_pitfall_opt")
    opt.set_value("SGD").run()
    at.button(key="mt_pitfall_run").click().run()
    assert_clean(at)
    assert "With SGD the loss explodes" in shown_text(at)
    at.radio(key="mt_pitfall_opt").set_value("AdamW").run()
    assert "With SGD the loss explodes" not in shown_text(at)     # each optimizer its own result


def test_pitfall_10_shows_the_silent_gradient_and_pytorchs_version_counter_error():
    at = open_page(PAGE, QUICK)
    at.session_state["mt_tabs"] = "Pitfall lab"
    at.run()
    at.radio(key="mt_pitfall").set_value("data_mutation").run()
    at.button(key="mt_pitfall_run").click().run()
    assert_clean(at)
    text = shown_text(at)
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    loss = net(torch.ones(1, 2)).sum()
    with torch.no_grad():
        net[1].weight.mul_(0.5)
    expected = ""
    try:
        loss.backward()
    except RuntimeError as exc:
        expected = str(exc).split(":")[0]       # PyTorch's words, without the tensor's details
    assert expected and expected in text and "No error, but at the first step" in text


def test_the_model_tab_collapses_identity_layers_and_lists_softmax():
    at = open_page(PAGE, {**QUICK, "act": "identity"})
    at.session_state["mt_tabs"] = "Model"
    at.run()
    assert_clean(at)
    text = shown_text(at)
    assert "multiply out to **one**" in text and "straight line" in text
    table = table_with(at, "element-wise")
    assert "Softmax" in set(table["activation"]) and "Identity" in set(table["activation"])


def test_the_identity_note_calls_the_boundary_straight_only_for_the_coordinates():
    """Issue 44: with x₁² (or x₂², x₁x₂, sin) among the features an Identity network is linear in
    the features, not on the plane: the note says which, from the run's features."""
    for features, shape in (("x1", "is a straight line, however"),
                            ("x1,x2,x1_sq", "is a straight line in the input features (x₁, x₂, x₁²), "
                                            "drawn on the plane as the curve they make")):
        at = open_page(PAGE, {**QUICK, "act": "identity", "features": features})
        at.session_state["mt_tabs"] = "Model"
        at.run()
        assert_clean(at)
        notes = [i.value for i in at.info if "multiply out to **one**" in i.value]
        assert len(notes) == 1 and shape in notes[0], (features, notes)


def test_the_loss_and_hook_panels_draw_pytorchs_numbers():
    at = open_page(PAGE, QUICK)
    at.session_state["mt_tabs"] = "Losses & hooks"      # a lazy tab: its content runs when open
    at.run()
    assert_clean(at)
    table = table_with(at, "BCELoss(sigmoid(z))")
    rows = large_logit_rows()
    assert list(table["BCEWithLogitsLoss(z)"]) == [f"{r.with_logits:.9g}" for r in rows]
    assert any("(clamped)" in v for v in table["BCELoss(sigmoid(z))"])
    # The caption's counts are PyTorch's: float32 sigmoid exactly 0 or 1, and of those the
    # rows whose label makes BCELoss take log(0).
    p = torch.sigmoid(torch.tensor([r.z for r in rows]))
    exact = (p == 0) | (p == 1)
    wrong_side = exact & (p != torch.tensor([r.target for r in rows]))
    assert f"({int(exact.sum())} of these {len(rows)} rows)" in shown_text(at)
    assert f"other class ({int(wrong_side.sum())} of them)" in shown_text(at)
    assert {m.label for m in at.metric} >= {"BCEWithLogitsLoss", "MSELoss", "HuberLoss (delta=1)"}
    hooks = table_with(at, "hook on the model")
    assert list(hooks["hook on the model"]) == [1, 0]
    at.session_state["mt_tabs"] = "Check yourself"
    at.run()
    assert "Which of `model(x)` and `model.forward(x)` runs it?" in shown_text(at)


def test_a_pitfall_is_trained_once_for_the_whole_class_and_each_learner_sees_that_run(monkeypatch):
    """Seeded runs: the second learner's Run shows the first learner's result without training
    again, and that result is what a fresh run_pitfall gives."""
    from app_pages.moons_trainer import pitfalls as lab_page
    from workbench.moons_trainer import pitfalls as lab

    trained = []
    monkeypatch.setattr(lab_page, "run_pitfall",
                        lambda *args, **kwargs: trained.append(args[0]) or lab.run_pitfall(*args, **kwargs))
    lab_page._shared_run.clear()
    shown = []
    for _learner in range(2):
        at = open_page(PAGE, QUICK)
        at.session_state["mt_tabs"] = "Pitfall lab"
        at.run()
        at.radio(key="mt_pitfall").set_value("sigmoid_before_bce").run()
        at.button(key="mt_pitfall_run").click().run()
        assert_clean(at)
        shown.append(next(line for line in shown_text(at).splitlines() if "What happened." in line))
    assert trained == ["sigmoid_before_bce"] and shown[0] == shown[1]
    assert lab.run_pitfall("sigmoid_before_bce").finding in shown[0]
    lab_page._shared_run.clear()
