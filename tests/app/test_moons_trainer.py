"""The moons trainer page through the real router: controls, lesson links, uploads, navigation."""
from __future__ import annotations

import dataclasses
import io
import os

import pytest
import torch

from tests.app.apptest import assert_clean, open_page, shown_text
from workbench.moons.checkpoints import state_dict_pt, state_dict_safetensors
from workbench.moons.settings import PRESET
from workbench.moons.training import TrainingSession

PAGE = "app_pages/moons_trainer/page.py"
QUICK = {"n": "300", "epochs": "3"}


def test_opens_on_the_lessons_assignment():
    at = open_page(PAGE)
    assert_clean(at)
    assert at.selectbox(key="mt_dataset").value == "moons"
    assert at.number_input(key="mt_n").value == PRESET.n
    assert at.text_input(key="mt_hidden").value == "64,32"
    assert at.number_input(key="mt_lr").value == pytest.approx(PRESET.lr)
    figures = at.get("plotly_chart")
    assert figures, "the boundary figure is drawn"
    assert "Epoch 0" in figures[0].proto.spec
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
    at.button(key="mt_step").click().run()
    assert_clean(at)
    assert "Epoch 1" in at.get("plotly_chart")[0].proto.spec
    text = shown_text(at)
    assert "Test accuracy" in text and "Best possible" in text and "Bayes-optimal" in text
    assert "Test predictions are identical" in text
    shared = at.session_state["learner::shared_model"]
    assert shared.ready and shared.features.dtype == torch.float32 and shared.features.shape[1] == 2
    assert shared.labels.shape == (shared.features.shape[0],)


def test_play_trains_a_slice_and_pause_stops():
    at = open_page(PAGE, {"n": "300", "epochs": "500"})     # longer than one frame's slice
    at.button(key="mt_play").click().run()
    assert_clean(at)
    state = at.session_state["learner::moons_trainer"]
    assert state.session.steps > 0
    at.button(key="mt_pause").click().run()
    assert state.running is False
    steps = state.session.steps
    at.run()
    assert state.session.steps == steps


def test_a_bad_hidden_layer_text_is_explained_and_the_last_good_one_kept():
    at = open_page(PAGE, QUICK)
    at.text_input(key="mt_hidden").input("64,abc").run()
    assert_clean(at)
    assert any("64,abc" in e.value for e in at.error)
    assert at.session_state["learner::moons_trainer"].session.settings.hidden == (64, 32)


def test_changing_a_setting_starts_a_fresh_run_and_updates_the_link():
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
    assert all(torch.equal(a, b) for a, b in zip(before, session.model.parameters(), strict=True))


def test_a_malicious_upload_is_refused_and_never_runs(tmp_path):
    canary = tmp_path / "canary"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {canary}",))

    buffer = io.BytesIO()
    torch.save({"net.0.weight": Payload()}, buffer)
    at = open_page(PAGE, QUICK)
    at = _upload(at, "evil.pt", buffer.getvalue())
    assert_clean(at)
    assert "The file holds more than plain tensors" in shown_text(at)
    assert not canary.exists()


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
    at.button(key="mt_step").click().run()
    at.button(key="mt_step").click().run()
    state = at.session_state["learner::moons_trainer"]
    assert state.session.done
    at.number_input(key="mt_epochs").set_value(4).run()
    assert state.session.epoch == 2 and not state.session.done
    at.button(key="mt_step").click().run()
    at.button(key="mt_step").click().run()
    assert_clean(at)
    straight = TrainingSession(state.session.settings)
    straight.run_to_end()
    assert straight.history.val_loss == state.session.history.val_loss


def test_an_empty_hidden_list_is_a_linear_model_that_trains():
    at = open_page(PAGE, {"hidden": "", "dataset": "xor", "n": "200", "epochs": "2"})
    at.button(key="mt_step").click().run()
    assert_clean(at)
    session = at.session_state["learner::moons_trainer"].session
    assert session.settings.hidden == () and session.epoch == 1
    assert [tuple(p.shape) for p in session.model.parameters()] == [(1, 2), (1,)]


def test_the_best_possible_boundary_can_be_drawn_on_the_figure():
    at = open_page(PAGE, QUICK)
    assert "best possible boundary" not in at.get("plotly_chart")[0].proto.spec
    at.toggle(key="mt_show_bayes").set_value(True).run()
    assert_clean(at)
    assert "best possible boundary" in at.get("plotly_chart")[0].proto.spec


def test_each_lazy_tab_draws_when_opened_and_keeps_the_upload_and_check_drawn():
    at = open_page(PAGE, QUICK)
    assert at.file_uploader(key="mt_upload") is not None
    for tab, marker in (("Model", "parameters"), ("Code", "The whole pipeline for the current settings"),
                        ("Pitfall lab", "Run both side by side"), ("Check yourself", "zero_grad")):
        at.session_state["mt_tabs"] = tab
        at.run()
        assert_clean(at)
        assert marker in shown_text(at) or any(marker in b.label for b in at.button), tab
        assert at.file_uploader(key="mt_upload") is not None


def test_the_widgets_follow_the_settings_table():
    from workbench.moons.settings import TABLE

    at = open_page(PAGE)
    assert_clean(at)
    widgets = {w.key: w for kind in ("selectbox", "number_input", "slider", "text_input")
               for w in at.get(kind) if w.key and w.key.startswith("mt_")}
    for p in TABLE.params:
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
    at.button(key="mt_step").click().run()
    at.button(key="mt_step").click().run()
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
    assert "Epoch 2" in at.get("plotly_chart")[0].proto.spec
    assert at.toggle(key="mt_show_bayes").value is True            # the view comes back too
    assert "best possible boundary" in at.get("plotly_chart")[0].proto.spec
    assert not any("discarded" in w.value for w in at.warning)


def test_a_setting_change_says_which_run_it_discarded_until_the_next_action():
    at = open_page(PAGE, QUICK)
    at.button(key="mt_step").click().run()
    at.number_input(key="mt_lr").set_value(0.01).run()
    assert_clean(at)
    notice = ("The run at epoch 1 was discarded: the learning rate changed from 0.003 to 0.01 "
              "(a new run starts from fresh weights).")
    assert [w.value for w in at.warning] == [notice]
    at.run()
    at.selectbox(key="mt_act").select("GELU").run()     # an untrained run: nothing more to say
    assert [w.value for w in at.warning] == [notice]
    at.button(key="mt_step").click().run()
    assert_clean(at)
    assert not any("discarded" in w.value for w in at.warning)


def test_more_epochs_or_an_untrained_run_discard_nothing():
    at = open_page(PAGE, QUICK)
    at.number_input(key="mt_lr").set_value(0.01).run()
    assert not any("discarded" in w.value for w in at.warning)
    at.button(key="mt_step").click().run()
    at.number_input(key="mt_epochs").set_value(6).run()
    assert_clean(at)
    assert not any("discarded" in w.value for w in at.warning)
    assert at.session_state["learner::moons_trainer"].session.epoch == 1
