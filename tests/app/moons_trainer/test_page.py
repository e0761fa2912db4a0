"""The moons trainer page through the real router: controls, lesson links, uploads, navigation."""
from __future__ import annotations

import dataclasses
import io
import re
import zipfile

import numpy as np
import pytest
import torch

from app_pages.moons_trainer import live_canvas
from tests.app.apptest import assert_clean, live_view, open_page, settle, shown_text
from workbench.moons_trainer.checkpoints import safetensors_metadata, state_dict_pt, state_dict_safetensors
from workbench.moons_trainer.network import dequantised_maps
from workbench.moons_trainer.settings import PRESET
from workbench.moons_trainer.training import TrainingSession

PAGE = "app_pages/moons_trainer/page.py"
QUICK = {"n": "300", "epochs": "3"}


def test_opens_on_the_lessons_assignment():
    at = open_page(PAGE)
    assert_clean(at)
    assert at.selectbox(key="mt_dataset").value == "moons"
    assert at.number_input(key="mt_n").value == PRESET.n
    assert at.text_input(key="mt_hidden").value == "64,32"
    assert at.number_input(key="mt_lr").value == pytest.approx(PRESET.lr)
    header, blobs = live_view(at)
    assert header["frame"]["status"].startswith("Epoch 0 / 50 ")
    # The frame route's protocol, from the Python constants (tests/unit/test_live_protocol.py).
    assert header["protocol"] == live_canvas.protocol()
    groups = {g["name"]: g for g in header["scene"]["groups"]}
    assert set(groups) == {"train", "val"}, "test points only on request"
    session = at.session_state["learner::moons_trainer"].session
    assert blobs["train_xy"].reshape(-1, 2).tolist() == session.split.x_train.astype("float32").tolist()
    grid, points = session.live_probabilities(48, with_test=False)
    assert (blobs["grid"] == grid).all() and (blobs["point_probability"] == points).all()
    expected = torch.sigmoid(session.model.eval()(session.x_train[:5])).detach()
    assert blobs["point_probability"][:5].tolist() == (expected * 255).round().int().tolist()
    assert at.button(key="mt_play").disabled is False


def test_lesson_link_sets_the_controls_and_bad_values_are_named():
    at = open_page(PAGE, {"dataset": "circles", "hidden": "16,8", "act": "tanh", "epochs": "7",
                          "n": "lots", "lr": "5"})
    assert_clean(at)
    assert at.selectbox(key="mt_dataset").value == "circles"
    assert at.text_input(key="mt_hidden").value == "16,8"
    assert at.selectbox(key="mt_act").value == "Tanh"
    assert at.number_input(key="mt_epochs").value == 7
    assert at.number_input(key="mt_lr").value == 1.0                   # clamped
    assert any("`n=lots` was ignored" in w.value for w in at.warning)
    assert at.number_input(key="mt_n").value == PRESET.n
    assert at.query_params["dataset"] == "circles"


def test_hidden_controls_use_the_links_values():
    at = open_page(PAGE, {"batch": "32", "hide": "batch,opt"})
    assert_clean(at)
    keys = {w.key for w in at.number_input} | {w.key for w in at.selectbox}
    assert "mt_batch" not in keys and "mt_opt" not in keys
    session = at.session_state["learner::moons_trainer"].session
    assert session.settings.batch == 32 and session.settings.opt == PRESET.opt
    assert at.query_params["batch"] == "32"


def test_step_trains_one_epoch_shows_results_and_publishes_the_model():
    at = open_page(PAGE, QUICK)
    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    assert live_view(at)[0]["frame"]["epoch"] == 1
    text = shown_text(at)
    assert "Test accuracy" in text and "Best possible" in text and "Bayes-optimal" in text
    assert "Test predictions are identical" in text
    shared = at.session_state["learner::shared_model"]
    assert shared.ready and shared.features.dtype == torch.float32 and shared.features.shape[1] == 2
    assert shared.labels.shape == (shared.features.shape[0],)


def test_step_trains_its_epoch_at_once_whatever_the_speed(monkeypatch):
    """Speed paces Play only: a clock that never allows a step would hold a paced Step forever."""
    from workbench.common.jobs import SCHEDULER
    from workbench.moons_trainer.pace import Pace

    asked = []
    monkeypatch.setattr(Pace, "allowed", lambda self, *args: asked.append(args) or 0)
    at = open_page(PAGE, {**QUICK, "speed": "1"})
    try:
        settle(at.button(key="mt_step").click().run(), timeout=20)
    finally:                     # a held Step must not outlive its test
        for owner in SCHEDULER.owners():
            SCHEDULER.stop(owner, wait=1.0)
    assert_clean(at)
    assert live_view(at)[0]["frame"]["epoch"] == 1 and not asked


def test_play_trains_in_the_background_and_pause_stops_it():
    from components.state import session_id
    from workbench.common.jobs import SCHEDULER

    at = open_page(PAGE, {"n": "300", "epochs": "500"})     # far longer than this test
    at.button(key="mt_play").click().run()
    assert_clean(at)
    state = at.session_state["learner::moons_trainer"]
    owner = at.session_state["learner::session_id"]
    job = SCHEDULER.job(owner)
    assert state.running and job is not None
    while job.slices < 3:                       # the page's script is not what trains
        assert not job.finished.wait(0.02), job.error
    assert state.session.steps > 0
    at.button(key="mt_pause").click().run()
    assert state.running is False and SCHEDULER.job(owner) is None
    assert job.finished.wait(1.0), "the slice under way ends, and no other starts"
    steps = state.session.steps
    at.run()
    assert state.session.steps == steps
    del session_id


def test_a_bad_hidden_layer_text_is_explained_and_the_last_good_one_kept():
    at = open_page(PAGE, QUICK)
    at.text_input(key="mt_hidden").input("64,abc").run()
    assert_clean(at)
    assert any("64,abc" in e.value for e in at.error)
    assert at.session_state["learner::moons_trainer"].session.settings.hidden == (64, 32)


def test_changing_the_activation_starts_a_fresh_run_and_updates_the_link():
    at = open_page(PAGE, QUICK)
    at.selectbox(key="mt_act").select("GELU").run()
    assert_clean(at)
    assert at.query_params["act"] == "GELU"
    assert at.session_state["learner::moons_trainer"].session.settings.act == "GELU"


def _upload(at, name: str, data: bytes):
    at.file_uploader(key="mt_upload").set_value((name, data, "application/octet-stream"))
    return at.run()


@pytest.mark.parametrize("save, name", [(state_dict_pt, "weights.pt"),
                                        (state_dict_safetensors, "weights.safetensors")])
def test_uploading_a_matching_state_dict_loads_it(save, name):
    at = open_page(PAGE, QUICK)
    settings = at.session_state["learner::moons_trainer"].session.settings
    donor = TrainingSession(settings)
    donor.run_to_end()
    at = _upload(at, name, save(donor.model))
    assert_clean(at)
    session = at.session_state["learner::moons_trainer"].session
    for a, b in zip(session.model.parameters(), donor.model.parameters(), strict=True):
        assert torch.equal(a, b)
    assert f"{100 * donor.test_report().accuracy:.2f}%" in shown_text(at)


def test_uploading_another_architecture_is_refused_and_changes_nothing():
    at = open_page(PAGE, QUICK)
    session = at.session_state["learner::moons_trainer"].session
    before = [p.clone() for p in session.model.parameters()]
    other = TrainingSession(dataclasses.replace(session.settings, hidden=(8,)))
    at = _upload(at, "other.pt", state_dict_pt(other.model))
    assert_clean(at)
    assert "The checkpoint does not fit this model" in shown_text(at)
    assert "pick the input features" not in shown_text(at)
    assert all(torch.equal(a, b) for a, b in zip(before, session.model.parameters(), strict=True))


def test_a_checkpoint_trained_on_other_input_features_says_which():
    at = open_page(PAGE, QUICK)
    session = at.session_state["learner::moons_trainer"].session
    other = TrainingSession(dataclasses.replace(session.settings, features=("x1", "x2", "sin_x1")))
    at = _upload(at, "features.pt", state_dict_pt(other.model))
    assert_clean(at)
    shown = shown_text(at)
    assert "The checkpoint does not fit this model" in shown
    assert "pick the input features it was trained with: its first layer takes 3, the page's model 2" in shown


def test_the_pages_own_download_for_other_features_of_the_same_shape_is_refused_by_name():
    at = open_page(PAGE, QUICK)
    session = at.session_state["learner::moons_trainer"].session
    squares = dataclasses.replace(session.settings, features=("x1_sq", "x2_sq"))
    other = TrainingSession(squares)
    data = state_dict_safetensors(other.model, safetensors_metadata(squares.architecture,
                                                                     squares.features))
    at = _upload(at, "squares.safetensors", data)
    assert_clean(at)
    shown = shown_text(at)
    assert "The checkpoint was trained on other input features" in shown
    assert "pick the input features x₁², x₂² (features=x1_sq,x2_sq)" in shown


def test_a_crafted_pickle_is_refused_on_the_page_never_an_unexpected_error():
    """A pickle whose persistent id is an int: torch's loader raised AssertionError, which went
    past the upload's handler to the router's guard. It is a refusal that says what is wrong.
    (The malicious-pickle upload is tested once, in tests/unit/moons_trainer/test_checkpoints.py.)"""
    base = io.BytesIO()
    torch.save({}, base)
    source = zipfile.ZipFile(io.BytesIO(base.getvalue()))
    crafted = io.BytesIO()
    with zipfile.ZipFile(crafted, "w", zipfile.ZIP_STORED) as archive:
        for info in source.infolist():
            archive.writestr(info.filename, b"\x80\x02}X\x01\x00\x00\x00kK\x00Qs."
                             if info.filename.endswith("/data.pkl") else source.read(info))
    at = open_page(PAGE, QUICK)
    at = _upload(at, "crafted.pt", crafted.getvalue())
    assert_clean(at)
    assert "Not a readable .pt file" in shown_text(at)
    assert "persistent id" in shown_text(at)


def test_knowledge_check_reveals_what_pytorch_computes():
    at = open_page(PAGE, QUICK)
    at.radio(key="kc_mt_zero_grad_choice").set_value(at.radio(key="kc_mt_zero_grad_choice").options[0])
    at.run()
    at.button(key="kc_mt_zero_grad_commit").click().run()
    assert_clean(at)
    assert "Right:" in shown_text(at)


def test_pitfall_lab_shows_pytorchs_error_for_float_targets():
    at = open_page(PAGE, QUICK)
    at.session_state["mt_tabs"] = "Pitfall lab"      # a lazy tab: its content runs when open
    at.run()
    at.radio(key="mt_pitfall").set_value("float_targets").run()
    at.button(key="mt_pitfall_run").click().run()
    assert_clean(at)
    assert "expected target dtype to be Long" in shown_text(at)


def test_raising_epochs_continues_the_run_exactly():
    at = open_page(PAGE, {"n": "300", "epochs": "2"})
    settle(at.button(key="mt_step").click().run())
    settle(at.button(key="mt_step").click().run())
    state = at.session_state["learner::moons_trainer"]
    assert state.session.done
    at.number_input(key="mt_epochs").set_value(4).run()
    assert state.session.epoch == 2 and not state.session.done
    settle(at.button(key="mt_step").click().run())
    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    straight = TrainingSession(state.session.settings)
    straight.run_to_end()
    assert straight.history.val_loss == state.session.history.val_loss


def test_an_empty_hidden_list_is_a_linear_model_that_trains():
    at = open_page(PAGE, {"hidden": "", "dataset": "xor", "n": "200", "epochs": "2"})
    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    session = at.session_state["learner::moons_trainer"].session
    assert session.settings.hidden == () and session.epoch == 1
    assert [tuple(p.shape) for p in session.model.parameters()] == [(1, 2), (1,)]


def test_the_best_possible_boundary_can_be_drawn_on_the_figure():
    at = open_page(PAGE, QUICK)
    assert "bayes" not in live_view(at)[1]
    at.toggle(key="mt_show_bayes").set_value(True).run()
    assert_clean(at)
    session = at.session_state["learner::moons_trainer"].session
    assert (live_view(at)[1]["bayes"] == session.bayes_grid(48).astype("float32").ravel()).all()


def test_each_lazy_tab_draws_when_opened_and_keeps_the_upload_and_check_drawn():
    at = open_page(PAGE, QUICK)
    assert at.file_uploader(key="mt_upload") is not None
    for tab, marker in (("Model", "parameters"), ("Losses & hooks", "BCEWithLogitsLoss"),
                        ("Weights & gradients", "Nothing recorded yet"),
                        ("Code", "The whole pipeline for the current settings"),
                        ("Pitfall lab", "Run both side by side"), ("Check yourself", "zero_grad")):
        at.session_state["mt_tabs"] = tab
        at.run()
        assert_clean(at)
        assert marker in shown_text(at) or any(marker in b.label for b in at.button), tab
        assert at.file_uploader(key="mt_upload") is not None


def test_the_tabs_figures_tell_their_curves_apart_by_more_than_colour():
    """Not by colour alone (WCAG 1.4.1): within a figure, no two legend entries share both a line
    dash and a marker symbol (the live view's points are checked in the browser)."""
    import json

    at = open_page(PAGE, QUICK)
    for tab, key in (("Model", "mt_activation"), ("Losses & hooks", "mt_loss_curves")):
        at.session_state["mt_tabs"] = tab
        at.run()
        assert_clean(at)
        chart = next(c for c in at.get("plotly_chart") if key in c.proto.id)
        traces = [t for t in json.loads(chart.proto.spec)["data"] if t.get("showlegend", True)]
        looks = [(t.get("line", {}).get("dash", "solid"), t.get("marker", {}).get("symbol", "circle"))
                 for t in traces]
        assert len(traces) >= 2 and len(set(looks)) == len(looks), (key, looks)


def test_the_widgets_follow_the_settings_table():
    from workbench.moons_trainer.settings import TABLE

    at = open_page(PAGE)
    assert_clean(at)
    kinds = ("selectbox", "number_input", "slider", "text_input", "segmented_control", "toggle",
             "button_group")
    widgets = {w.key: w for kind in kinds
               for w in at.get(kind) if w.key and w.key.startswith("mt_")}
    for p in TABLE.params:
        if p.kind == "plane":           # drawn points: the live view's plane is their widget
            assert "mt_" + p.name not in widgets
            continue
        widget = widgets["mt_" + p.name]
        assert widget.label == p.label, p.name
        assert widget.help == p.help, p.name
        if hasattr(p, "lo") and p.kind in ("number", "slider"):
            assert (widget.min, widget.max) == (p.lo, p.hi), p.name
    assert at.selectbox(key="mt_dataset").format_func("moons") == "Two moons"
    assert at.slider(key="mt_noise").step == 0.01


def test_the_lesson_preset_puts_the_assignment_back():
    at = open_page(PAGE, {"dataset": "spiral", "lr": "0.1", "hidden": "8"})
    at.button(key="mt_preset").click().run()
    assert_clean(at)
    assert at.session_state["learner::moons_trainer"].session.settings == PRESET
    assert at.text_input(key="mt_hidden").value == "64,32"
    assert "dataset" not in at.query_params and "lr" not in at.query_params


def test_a_trained_run_and_its_settings_survive_a_visit_to_another_page():
    at = open_page(PAGE, {"dataset": "spiral", "n": "300", "epochs": "5"})
    at.number_input(key="mt_lr").set_value(0.01).run()
    settle(at.button(key="mt_step").click().run())
    settle(at.button(key="mt_step").click().run())
    at.toggle(key="mt_show_bayes").set_value(True).run()
    state = at.session_state["learner::moons_trainer"]
    session, boundary = state.session, state.session.grid(12)
    assert session.epoch == 2
    # The sidebar's links carry no query string: Home, then the trainer by a bare URL.
    at.switch_page("app_pages/home/page.py")
    at.query_params.clear()
    at.run()
    at.switch_page(PAGE)
    at.query_params.clear()
    at.run()
    assert_clean(at)
    assert state.session is session and session.epoch == 2
    assert (session.grid(12) == boundary).all()
    assert at.selectbox(key="mt_dataset").value == "spiral"
    assert at.number_input(key="mt_lr").value == pytest.approx(0.01)
    assert at.number_input(key="mt_n").value == 300
    assert at.query_params["dataset"] == "spiral" and at.query_params["lr"] == "0.01"
    header, blobs = live_view(at)
    assert header["frame"]["epoch"] == 2 and header["frame"]["history"]["epoch"] == [1, 2]
    assert at.toggle(key="mt_show_bayes").value is True            # the view comes back too
    assert "bayes" in blobs
    assert not any("new run" in w.value for w in [*at.warning, *at.info])


def test_a_learning_rate_change_carries_on_with_the_same_weights_and_says_so():
    at = open_page(PAGE, QUICK)
    settle(at.button(key="mt_step").click().run())
    state = at.session_state["learner::moons_trainer"]
    session = state.session
    weights = [p.clone() for p in session.model.parameters()]
    steps = session.steps
    at.number_input(key="mt_lr").set_value(0.01).run()
    assert_clean(at)
    assert state.session is session and session.epoch == 1
    assert all(torch.equal(a, b) for a, b in zip(weights, session.model.parameters(), strict=True))
    assert [g["lr"] for g in session.optimizer.param_groups] == [0.01]
    notice = ("The run carries on from epoch 1 with its weights and curves: learning rate "
              f"0.003 \u2192 0.01 from optimizer step {steps + 1:,}.")
    assert [i.value for i in at.info] == [notice]
    assert live_view(at)[0]["frame"]["changes"][0]["short"] == "lr 0.01"
    at.selectbox(key="mt_opt").select("SGD").run()
    assert state.session is session and isinstance(session.optimizer, torch.optim.SGD)
    assert "SGD starts with fresh state" in at.info[0].value
    assert not session.optimizer.state, "the new optimizer has no momentum yet"


def test_a_data_change_starts_a_new_run_and_the_old_one_can_come_back():
    at = open_page(PAGE, QUICK)
    settle(at.button(key="mt_step").click().run())
    state = at.session_state["learner::moons_trainer"]
    old = state.session
    at.selectbox(key="mt_act").select("GELU").run()
    assert_clean(at)
    assert state.session is not old and state.session.epoch == 0
    assert "A new run started from fresh weights: the activation changed from ReLU to GELU" \
        in shown_text(at)
    assert "The run at epoch 1 was set aside, not lost: it is kept in memory" in shown_text(at)
    assert "*Back to the run* brings it back" in shown_text(at)
    at.button(key="mt_back_to_previous").click().run()
    assert_clean(at)
    assert state.session is old and at.selectbox(key="mt_act").value == "ReLU"
    assert at.query_params.get("act") in (None, "ReLU")
    assert "Back to the run at epoch 1" in shown_text(at)
    at.run()
    assert state.session is old, "going back is not a setting change of its own"
    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    assert "kept in memory" not in shown_text(at), "the next action clears the notice"


def test_more_epochs_or_an_untrained_run_discard_nothing():
    at = open_page(PAGE, QUICK)
    at.selectbox(key="mt_act").select("GELU").run()
    assert "new run" not in shown_text(at)
    settle(at.button(key="mt_step").click().run())
    at.number_input(key="mt_epochs").set_value(6).run()
    assert_clean(at)
    assert "new run" not in shown_text(at)
    assert at.session_state["learner::moons_trainer"].session.epoch == 1


def test_the_lesson_preset_after_a_trained_run_starts_fresh_at_epoch_zero_and_keeps_the_run():
    """Before, the preset only seeded the widgets: a run differing from it in learning rate or
    epochs carried on, and a finished 80-epoch run read "Epoch 80 / 50" with every button off."""
    at = open_page(PAGE, {"lr": "0.01", "epochs": "2"})
    settle(at.button(key="mt_step").click().run())
    state = at.session_state["learner::moons_trainer"]
    old = state.session
    at.button(key="mt_preset").click().run()
    assert_clean(at)
    assert state.session is not old and state.session.epoch == 0 and state.session.steps == 0
    assert state.session.settings == PRESET
    assert live_view(at)[0]["frame"]["status"].startswith(f"Epoch 0 / {PRESET.epochs} ")
    assert at.button(key="mt_play").disabled is False
    assert "the lesson preset starts at epoch 0" in shown_text(at)
    at.button(key="mt_back_to_previous").click().run()
    assert state.session is old and old.epoch == 1
    assert at.number_input(key="mt_lr").value == pytest.approx(0.01)


def test_epochs_below_the_trained_epochs_is_refused_and_the_link_keeps_the_run():
    at = open_page(PAGE, {"n": "300", "epochs": "3"})
    for _ in range(3):
        settle(at.button(key="mt_step").click().run())
    state = at.session_state["learner::moons_trainer"]
    session = state.session
    assert session.done and session.epoch == 3
    at.number_input(key="mt_epochs").set_value(2).run()
    assert_clean(at)
    assert at.number_input(key="mt_epochs").value == 3
    assert state.session is session and session.settings.epochs == 3
    assert at.query_params["epochs"] == "3", "the link reproduces the run on screen"
    assert live_view(at)[0]["frame"]["status"].startswith("Epoch 3 / 3 ")
    assert [w.value for w in at.warning] == [
        "Epochs cannot go below the 3 epochs this run has trained: 2 was refused and Epochs "
        "stays at 3. For a shorter run, press Reset (a fresh model at epoch 0), then lower Epochs."]
    # Raising it is still a continuation, and lowering it to the trained epochs is allowed.
    at.number_input(key="mt_epochs").set_value(5).run()
    assert state.session is session and session.settings.epochs == 5 and not at.warning
    at.number_input(key="mt_epochs").set_value(3).run()
    assert state.session is session and session.done and not at.warning


def test_a_link_asking_for_fewer_epochs_than_trained_opens_a_fresh_run_of_that_link():
    at = open_page(PAGE, {"n": "300", "epochs": "3"})
    for _ in range(3):
        settle(at.button(key="mt_step").click().run())
    state = at.session_state["learner::moons_trainer"]
    old = state.session
    at.query_params["epochs"] = "2"
    at.switch_page(PAGE)
    at.run()
    assert_clean(at)
    assert state.session is not old and state.session.epoch == 0
    assert state.session.settings.epochs == 2 and at.number_input(key="mt_epochs").value == 2
    assert live_view(at)[0]["frame"]["status"].startswith("Epoch 0 / 2 ")
    assert "Epochs 2 is below the 3 epochs the run had trained" in shown_text(at)
    assert state.previous is old


def _end_note(at) -> str:
    return " ".join(m.value for m in at.get("markdown") if "Finished" in m.value or "Stopped" in m.value)


def test_a_finished_run_says_so_beside_its_buttons_with_what_to_do_next():
    at = open_page(PAGE, {"n": "300", "epochs": "2"})
    settle(at.button(key="mt_step").click().run())
    assert _end_note(at) == "", "not finished after one of two epochs"
    assert live_view(at)[0]["frame"]["end_note"] == ""
    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    assert at.button(key="mt_play").disabled and at.button(key="mt_step").disabled
    note = _end_note(at)
    assert "**Finished**: 2 of 2 epochs" in note and "Raise **Epochs**" in note
    # The live view announces the same note to a screen reader, as plain text.
    frame = live_view(at)[0]["frame"]
    assert frame["end_note"].startswith("Finished: 2 of 2 epochs. Raise Epochs to carry on")
    assert frame["playing"] is False
    at.number_input(key="mt_epochs").set_value(3).run()
    assert _end_note(at) == "" and at.button(key="mt_play").disabled is False
    assert live_view(at)[0]["frame"]["end_note"] == ""


def test_the_speed_is_a_link_setting_and_a_change_mid_run_keeps_the_run():
    at = open_page(PAGE, {"n": "300", "epochs": "3", "speed": "max"})
    assert at.segmented_control(key="mt_speed").value == "max"
    settle(at.button(key="mt_step").click().run())
    state = at.session_state["learner::moons_trainer"]
    session = state.session
    at.segmented_control(key="mt_speed").set_value("1").run()
    assert_clean(at)
    assert state.session is session and session.settings.epochs_per_second == 1.0
    assert at.query_params["speed"] == "1"
    assert not at.info, "a pace is not a change to the run: nothing to announce"


def test_the_network_view_is_a_link_setting_sent_in_the_frames_and_keeps_the_run():
    """net=1 sends the network's scene and picture with the frame (96 unit maps of 12 x 12 as
    uint8 for the preset's widths, the 2,208 weights, the 97 biases); turning it off mid-run
    keeps the run and sends none."""
    at = open_page(PAGE, {"n": "300", "epochs": "3", "net": "1"})
    assert_clean(at)
    assert at.toggle(key="mt_net").value is True
    header, blobs = live_view(at)
    assert header["scene"]["network"]["widths"] == [2, 64, 32, 1]
    assert header["frame"]["network"]["serial"] >= 1
    assert blobs["unit_maps"].size == 96 * 144 and blobs["weights"].size == 2 * 64 + 64 * 32 + 32
    assert blobs["biases"].size == 97 and blobs["input_maps"].size == 2 * 144
    settle(at.button(key="mt_step").click().run())
    state = at.session_state["learner::moons_trainer"]
    session = state.session
    at.toggle(key="mt_net").set_value(False).run()
    assert_clean(at)
    assert state.session is session and session.epoch == 1
    assert "net" not in at.query_params
    header, blobs = live_view(at)
    assert "network" not in header["frame"] and "unit_maps" not in blobs
    assert (header.get("scene") or {}).get("network") is None


def test_a_link_with_hidden_controls_names_what_it_fixed_under_the_title():
    """Issue 27: a shared link that hides controls says on the first screen what it fixed."""
    at = open_page(PAGE, query={"act": "tanh", "hidden": "16,16", "lr": "0.01",
                                "hide": "act,hidden,lr"})
    assert_clean(at)
    # md() escapes Markdown's punctuation (16\,16): compare the text as it reads.
    notes = [i.value.replace("\\", "") for i in at.info
             if i.value.startswith("**This link fixes**")]
    assert notes == ["**This link fixes** Hidden layer widths **16,16** · Activation **Tanh** · "
                     "Learning rate **0.01**"], [i.value for i in at.info]
    plain = open_page(PAGE, query={"act": "tanh"})
    assert not [i for i in plain.info if i.value.startswith("**This link fixes**")]


def test_the_weights_and_gradients_tab_draws_each_layer_and_says_whether_the_gradient_vanishes():
    """The vanishing-gradients lesson's links, shortened: two epochs, then the tab."""
    import json

    from workbench.lessons.catalog import VANISHING_SIGMOID
    from workbench.moons_trainer.layer_history import gradient_verdict, verdict_sentence

    for act, box in (("Sigmoid", "warning"), ("ReLU", "success")):
        at = open_page(PAGE, {**VANISHING_SIGMOID, "act": act, "n": "300", "epochs": "2"})
        settle(at.button(key="mt_step").click().run())
        settle(at.button(key="mt_step").click().run())
        at.session_state["mt_tabs"] = "Weights & gradients"
        at.run()
        assert_clean(at)
        session = at.session_state["learner::moons_trainer"].session
        history = session.layer_history
        assert history.epochs == [1, 2] and history.layers == 5
        charts = {c.proto.id: c for c in at.get("plotly_chart")}
        for layer in range(history.layers):
            found = [c for key, c in charts.items() if f"mt_wg_layer{layer}" in key]
            assert len(found) == 1, layer
            traces = json.loads(found[0].proto.spec)["data"]
            assert [t["type"] for t in traces] == ["heatmap", "heatmap"]
            assert traces[0]["x"] == [1, 2]
            # The gradient axis reads in powers of ten: 1e-6, not a log10 exponent or 1e-06.
            ticks = json.loads(found[0].proto.spec)["layout"]["yaxis2"]["ticktext"]
            assert ticks and all(re.fullmatch(r"[1-9]e-?[1-9]\d*|1e0", t) for t in ticks), ticks
        verdict = gradient_verdict(history)
        said = verdict_sentence(verdict, session.settings.opt)
        assert said in [b.value for b in getattr(at, box)], act
        assert verdict.vanishing == (act == "Sigmoid")
        assert "last batch of each epoch" in shown_text(at)


def test_with_l1_the_weights_and_gradients_tab_judges_the_data_loss_gradient():
    """Issue 44: the vanishing-gradient link with reg=L1&reg_rate=0.01 sits at 50%; .grad holds
    0.01 x sign(w) in every layer, and the tab said "without vanishing". It judges the data
    loss's gradient alone now, says so, and shows that gradient in the table."""
    from workbench.lessons.catalog import VANISHING_SIGMOID
    from workbench.moons_trainer.layer_history import gradient_verdict, verdict_sentence

    at = open_page(PAGE, {**VANISHING_SIGMOID, "reg": "L1", "reg_rate": "0.01", "n": "300",
                          "epochs": "2"})
    settle(at.button(key="mt_step").click().run())
    settle(at.button(key="mt_step").click().run())
    at.session_state["mt_tabs"] = "Weights & gradients"
    at.run()
    assert_clean(at)
    session = at.session_state["learner::moons_trainer"].session
    verdict = gradient_verdict(session.layer_history)
    assert verdict.vanishing and verdict.penalised
    assert verdict_sentence(verdict, session.settings.opt) in [w.value for w in at.warning]
    assert not [s for s in at.success if "without vanishing" in s.value]
    assert "data loss's gradient alone" in shown_text(at)


def test_input_features_are_a_link_setting_the_first_layer_and_the_network_view_follow():
    """features=x1_sq,x2_sq: the model's first module computes the squares, the first Linear
    takes two of them, and the network view's input column shows their maps. Picking one more
    starts a new run and says why; emptying the picks keeps the last one."""
    at = open_page(PAGE, {"dataset": "circles", "n": "300", "epochs": "3", "hidden": "",
                          "features": "x1_sq,x2_sq", "net": "1"})
    assert_clean(at)
    state = at.session_state["learner::moons_trainer"]
    session = state.session
    assert session.settings.features == ("x1_sq", "x2_sq")
    assert session.model.net[0].in_features == 2
    assert torch.equal(session.model.features(session.x_test), session.x_test ** 2)
    assert at.button_group(key="mt_features").value == ["x1_sq", "x2_sq"]
    header, blobs = live_view(at)
    scene = header["scene"]["network"]
    assert scene["widths"] == [2, 1] and scene["input_names"] == ["x₁²", "x₂²"]
    assert scene["input_words"] == ["x₁² of the standardised coordinates",
                                    "x₂² of the standardised coordinates"]
    side = scene["resolution"]
    grid = session.network_grid(side).cpu().numpy()
    low, high = blobs["input_range"][:2], blobs["input_range"][2:]
    maps = dequantised_maps(blobs["input_maps"].reshape(2, side * side), low, high)
    assert np.allclose(maps, (grid ** 2).T, atol=float((high - low).max()) / 500)

    settle(at.button(key="mt_step").click().run())
    assert session.epoch == 1
    at.button_group(key="mt_features").select("sin_x1").run()
    assert_clean(at)
    assert state.session is not session
    assert state.session.settings.features == ("x1_sq", "x2_sq", "sin_x1")
    assert state.session.model.net[0].in_features == 3
    assert at.query_params["features"] == "x1_sq,x2_sq,sin_x1"
    assert "the input features changed from x₁², x₂² to x₁², x₂², sin x₁" in shown_text(at)

    session = state.session
    at.button_group(key="mt_features").set_value([]).run()
    assert_clean(at)
    assert state.session is session
    assert at.button_group(key="mt_features").value == ["x1_sq", "x2_sq", "sin_x1"]
    assert any("at least one is needed" in i.value for i in at.info)


def test_regularization_changes_mid_run_keep_the_weights_and_are_marked():
    """L1 picked after an epoch: the same run goes on (as in TensorFlow Playground), the change
    is named, and the rate, disabled without a penalty, becomes usable."""
    at = open_page(PAGE, {"n": "300", "epochs": "3"})
    assert at.number_input(key="mt_reg_rate").disabled
    settle(at.button(key="mt_step").click().run())
    state = at.session_state["learner::moons_trainer"]
    session = state.session
    at.segmented_control(key="mt_reg").set_value("L1").run()
    assert_clean(at)
    assert state.session is session and session.epoch == 1
    assert session.settings.reg == "L1" and at.query_params["reg"] == "L1"
    assert [c.field for c in session.changes] == ["reg"]
    assert "regularization none → L1 from optimizer step" in shown_text(at)
    assert not at.number_input(key="mt_reg_rate").disabled


def test_discretize_output_is_a_link_setting_of_the_view_that_keeps_the_run():
    at = open_page(PAGE, {"n": "300", "epochs": "3"})
    header, _ = live_view(at)
    assert header["scene"]["discretize"] is False
    settle(at.button(key="mt_step").click().run())
    state = at.session_state["learner::moons_trainer"]
    session = state.session
    at.toggle(key="mt_discrete").set_value(True).run()
    assert_clean(at)
    assert state.session is session and session.epoch == 1 and session.changes == []
    assert at.query_params["discrete"] == "1"
    header, _ = live_view(at)
    assert header["scene"]["discretize"] is True


def test_the_replay_slider_shows_a_finished_epoch_and_goes_back_to_now():
    """Three epochs trained, epoch 1 replayed: the frame is the picture of a run stopped at epoch
    1 (recomputed from its weights), marked on the curves; "now" shows the model as it is."""
    at = open_page(PAGE, {"n": "300", "epochs": "3", "net": "1"})
    assert not [s for s in at.select_slider if s.key == "mt_replay"], "nothing to replay yet"
    at.button(key="mt_play").click().run()
    settle(at)
    state = at.session_state["learner::moons_trainer"]
    session = state.session
    assert session.epoch == 3 and not state.running
    replay = at.select_slider(key="mt_replay")
    assert replay.options == ["0", "1", "2", "3", "now"] and replay.value == -1
    # The help says what the record holds (replay.py's kept_words; both ways in test_replay.py).
    assert replay.help.startswith("Every finished epoch's weights are kept (epochs 0 to 3: ")
    replay.set_value(1).run()
    assert_clean(at)
    header, blobs = live_view(at)
    stopped = TrainingSession(dataclasses.replace(session.settings, epochs=1))
    stopped.run_to_end()
    assert np.array_equal(blobs["grid"], stopped.snapshot(live_canvas.RESOLUTION).grid)
    assert header["frame"]["replay_epoch"] == 1 and header["frame"]["epoch"] == 1
    assert header["frame"]["status"].startswith("Replaying · Epoch 1 / 3")
    assert header["frame"]["network"]["epoch"] == 1
    assert session.epoch == 3, "replaying trains nothing"

    at.select_slider(key="mt_replay").set_value(-1).run()
    header, blobs = live_view(at)
    assert "replay_epoch" not in header["frame"] and header["frame"]["epoch"] == 3
    assert np.array_equal(blobs["grid"], session.snapshot(live_canvas.RESOLUTION).grid)


# ---- regression (dataset=plane, multigauss): MSE and R², the output value, the noise's ceiling-------

def test_a_regression_link_trains_with_mse_and_shows_r_squared_and_no_accuracy():
    at = open_page(PAGE, {"dataset": "plane", "epochs": "3"})
    assert_clean(at)
    assert at.selectbox(key="mt_dataset").value == "plane"
    assert at.toggle(key="mt_show_bayes").disabled
    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    assert at.button(key="mt_pin").disabled, "no comparison with a regression run"
    header, blobs = live_view(at)
    assert header["frame"]["epoch"] == 1 and header["scene"]["regression"] is True
    session = at.session_state["learner::moons_trainer"].session
    report = session.test_report()
    text = shown_text(at)
    assert "Test MSE" in text and f"{report.mse:.4f}" in text
    assert "Test R²" in text and f"{report.r2:.3f}" in text
    # The noise's ceiling (issue 44 item 7): the best possible predictor's R² on the same points.
    assert f"R² {report.best_r2:.3f}" in text and f"MSE **{report.best_mse:.4f}**" in text
    assert "no ceiling" not in text.lower() and report.best_r2 < 0.9
    assert header["scene"]["best_r2"] == report.best_r2
    assert "Test accuracy" not in text and "Bayes-optimal" not in text and "Test F1" not in text
    assert "Test outputs are identical" in text
    # Points: their targets, and the sign as their colour; the grid: the output value.
    targets = session.split.y_train.astype("float32")
    assert (blobs["train_t"] == targets).all() and (blobs["train_y"] == (targets >= 0)).all()
    out = session.model.eval()(session.x_train[:5]).detach()
    expected = ((out.clamp(-1, 1) + 1) / 2 * 255).round().int()
    assert blobs["point_probability"][:5].tolist() == expected.tolist()
    # Not handed to the other tools, whose data are classes.
    assert not at.session_state["learner::shared_model"].ready


@pytest.mark.parametrize("dataset", ["plane", "multigauss"])
def test_every_tab_opens_cleanly_on_a_regression_dataset(dataset):
    at = open_page(PAGE, {"dataset": dataset, "n": "300", "epochs": "2"})
    settle(at.button(key="mt_step").click().run())
    for tab, marker in (("Checkpoints", None), ("Model", "parameters"), ("Losses & hooks", "MSELoss"),
                        ("Weights & gradients", None), ("Code", "test MSE and R²"),
                        ("Pitfall lab", "Run both side by side"), ("Check yourself", "zero_grad")):
        at.session_state["mt_tabs"] = tab
        at.run()
        assert_clean(at)
        if marker:
            assert marker in shown_text(at) or any(marker in b.label for b in at.button), tab
    assert "Draw on these points" not in [b.label for b in at.button]


def test_a_pinned_run_is_not_compared_with_a_regression_run():
    at = open_page(PAGE, QUICK)
    settle(at.button(key="mt_step").click().run())
    at.button(key="mt_pin").click().run()
    at.run()
    assert_clean(at)
    at.selectbox(key="mt_dataset").set_value("plane").run()
    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    me = at.session_state["learner::moons_trainer"]
    assert me.pinned is not None and not me.pinned.settings.regression and me.session.settings.regression
    text = shown_text(at)
    assert any("Comparisons are for classification runs" in i.value for i in at.info)
    assert "Two runs side by side" not in text
    header, _ = live_view(at)
    assert not header["frame"].get("pinned")
    at.session_state["mt_tabs"] = "Code"
    at.run()
    assert_clean(at)
    assert "test MSE and R²" in shown_text(at) and "Both runs of the comparison" not in shown_text(at)


@pytest.mark.parametrize("params", [{"vs": "dataset:plane"}, {"dataset": "plane", "vs": "opt:SGD"}])
def test_a_comparison_link_with_a_regression_run_says_it_is_not_compared(params):
    at = open_page(PAGE, {**params, "n": "300", "epochs": "2"})
    assert_clean(at)
    settle(at.button(key="mt_play").click().run(), timeout=30)
    at.run()
    assert_clean(at)
    me = at.session_state["learner::moons_trainer"]
    assert me.pinned is not None and me.session.epoch == 2
    assert any("Comparisons are for classification runs" in i.value for i in at.info)
    assert "Two runs side by side" not in shown_text(at)
    at.session_state["mt_tabs"] = "Code"
    at.run()
    assert_clean(at)
    assert "Both runs of the comparison" not in shown_text(at)


def test_a_linear_regression_model_is_described_without_a_boundary():
    at = open_page(PAGE, {"dataset": "plane", "act": "Identity", "n": "300", "epochs": "2"})
    at.session_state["mt_tabs"] = "Model"
    at.run()
    assert_clean(at)
    note = next(i.value for i in at.info if "multiply out" in i.value)
    assert "`output = x @ W.T + b`" in note and "the output is a linear function of x" in note
    assert "boundary" not in note and "logit" not in note
