"""Two runs side by side on the moons trainer, through the real router: Pin, change a setting,
train, compare; a `vs=` link opens a comparison and Play trains both runs."""
from __future__ import annotations

import base64
import dataclasses
import json

import numpy as np
import torch
from torch import nn

from tests.app.apptest import assert_clean, code_blocks, live_view, open_page, settle
from tests.app.apptest import shown_text as shown_markdown
from tests.markdown_payloads import visible_text
from workbench.moons_trainer.settings import PRESET
from workbench.moons_trainer.training import TrainingSession

PAGE = "app_pages/moons_trainer/page.py"
QUICK = {"n": "300", "epochs": "3", "speed": "max"}
SETTINGS = dataclasses.replace(PRESET, n=300, epochs=3, speed="max")


def shown_text(at) -> str:
    """The page's text as a reader sees it (the sentences escape Markdown)."""
    return visible_text(shown_markdown(at))


def _me(at):
    return at.session_state["learner::moons_trainer"]


def _table(at) -> dict[str, dict[str, str]]:
    """The comparison's table: {run: {column: cell}}."""
    tables = [t.value for t in at.get("table") if "val loss before training" in t.value.columns]
    assert len(tables) == 1, f"{len(tables)} comparison tables"
    return tables[0].to_dict(orient="index")


def _loss_before_training(settings) -> float:
    """PyTorch's BCE of a fresh run's untouched model on the validation split."""
    run = TrainingSession(settings)
    with torch.no_grad():
        return nn.functional.binary_cross_entropy_with_logits(run.model.eval()(run.x_val), run.y_val).item()


def _trained(settings) -> TrainingSession:
    run = TrainingSession(settings)
    run.run_to_end()
    return run


def _array(value) -> np.ndarray:
    """A Plotly figure's array: a list, or Plotly's typed array ({dtype, bdata, shape})."""
    if isinstance(value, dict):
        shape = tuple(int(n) for n in str(value["shape"]).split(","))
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).reshape(shape)
    return np.asarray(value)


def _percent(value: float) -> str:
    return f"{100 * value:.2f}%"


def test_pin_change_the_optimizer_train_and_compare():
    at = open_page(PAGE, QUICK)
    assert at.button(key="mt_pin").disabled, "nothing trained yet: nothing to pin"
    settle(at.button(key="mt_play").click().run())
    assert_clean(at)
    at.button(key="mt_pin").click().run()
    assert_clean(at)
    me = _me(at)
    assert me.pinned is not None and me.pinned.epoch == 3 and me.session.epoch == 0
    assert "Pinned the run at epoch 3" in shown_text(at)
    at.selectbox(key="mt_opt").set_value("SGD").run()
    settle(at.button(key="mt_play").click().run())
    assert_clean(at)

    pinned, now = _trained(SETTINGS), _trained(dataclasses.replace(SETTINGS, opt="SGD"))
    text = shown_text(at)
    assert "Two runs side by side" in text
    assert "What differs: the optimizer changed from AdamW to SGD." in text
    assert "Both runs start from the same initial weights and train on the same data" in text
    lower, higher = sorted([("The pinned run (AdamW)", pinned.history.val_loss[-1]),
                            ("This run (SGD)", now.history.val_loss[-1])], key=lambda r: r[1])
    assert f"{lower[0]} reached the lower validation loss after 3 epochs each: {lower[1]:.4f}" in text
    rows = _table(at)
    assert set(rows) == {"pinned: AdamW", "now: SGD"}
    first = f"{_loss_before_training(SETTINGS):.6f}"
    assert rows["pinned: AdamW"]["val loss before training"] == first
    assert rows["now: SGD"]["val loss before training"] == first
    assert rows["pinned: AdamW"]["test accuracy"] == _percent(pinned.test_report().accuracy)
    assert rows["now: SGD"]["test accuracy"] == _percent(now.test_report().accuracy)
    assert rows["now: SGD"]["best possible (Bayes)"] == _percent(now.test_report().bayes_accuracy)
    # Both boundaries side by side, each the picture of its own run's weights.
    pictures = {}
    for chart in at.get("plotly_chart"):
        figure = json.loads(chart.proto.spec)
        pictures[figure["layout"]["title"]["text"]] = _array(figure["data"][0]["z"])
    for title, run in (("pinned: AdamW · epoch 3", pinned), ("now: SGD · epoch 3", now)):
        grid, _ = run.live_probabilities(48, with_test=False)
        assert np.allclose(pictures[title], grid.reshape(48, 48) / 255), title
    # The curves overlay the pinned run's; the address bar names the comparison.
    overlay = live_view(at)[0]["frame"]["pinned"]
    assert (overlay["label"], overlay["now_label"]) == ("pinned: AdamW", "now: SGD")
    assert overlay["history"]["val_loss"] == [round(v, 5) for v in pinned.history.val_loss]
    assert at.query_params["vs"] == "opt:AdamW" and at.query_params["opt"] == "SGD"
    # Pinning the SGD run instead keeps the AdamW run in memory, with a way back.
    at.button(key="mt_pin").click().run()
    at.run()
    assert_clean(at)
    assert _me(at).pinned.settings.opt == "SGD" and _me(at).previous.settings.opt == "AdamW"
    assert "The run pinned before (at epoch 3) is kept in memory" in shown_text(at)


def test_the_code_panel_trains_both_runs():
    at = open_page(PAGE, {**QUICK, "opt": "SGD", "vs": "opt:AdamW"})
    at.session_state["mt_tabs"] = "Code"
    at.run()
    assert_clean(at)
    script = "\n".join(code_blocks(at))
    assert "def train(" in script and "'pinned: AdamW': dict(" in script and "'now: SGD': dict(" in script


def test_a_comparison_link_trains_both_runs_from_the_same_start():
    at = open_page(PAGE, {**QUICK, "opt": "AdamW", "vs": "opt:SGD"})
    assert_clean(at)
    me = _me(at)
    assert me.pinned is not None and me.pinned.settings.opt == "SGD" and me.pinned.epoch == 0
    assert me.session.settings.opt == "AdamW"
    text = shown_text(at)
    assert "Train the pinned run (SGD) and this run (AdamW) to compare" in text
    assert live_view(at)[0]["frame"]["status"].endswith("· pinned run: epoch 0 / 3")
    settle(at.button(key="mt_play").click().run())
    assert_clean(at)
    assert me.pinned.epoch == 3 and me.session.epoch == 3
    assert "· pinned run: epoch 3 / 3" in live_view(at)[0]["frame"]["status"]
    # Trained beside the other, each run is the run it would be alone.
    pinned = _trained(dataclasses.replace(SETTINGS, opt="SGD"))
    assert me.pinned.history == pinned.history
    assert me.session.history == _trained(SETTINGS).history
    rows = _table(at)
    assert set(rows) == {"pinned: SGD", "now: AdamW"}
    first = f"{_loss_before_training(SETTINGS):.6f}"
    assert {row["val loss before training"] for row in rows.values()} == {first}
    assert rows["pinned: SGD"]["epochs trained"] == "3"
    assert rows["pinned: SGD"]["test accuracy"] == _percent(pinned.test_report().accuracy)
    assert at.query_params["vs"] == "opt:SGD"


def test_reset_starts_both_runs_of_a_link_again():
    at = open_page(PAGE, {**QUICK, "vs": "opt:SGD"})
    settle(at.button(key="mt_step").click().run())
    assert _me(at).pinned.epoch == 1 and _me(at).session.epoch == 1, "Step: one epoch of each"
    at.button(key="mt_reset").click().run()
    assert_clean(at)
    assert _me(at).pinned.epoch == 0 and _me(at).session.epoch == 0


def test_a_bad_comparison_link_is_named_and_opens_none():
    at = open_page(PAGE, {**QUICK, "vs": "optimizer:SGD"})
    assert_clean(at)
    assert any("`vs=optimizer:SGD` was ignored" in w.value and "not a moons trainer setting" in w.value
               for w in at.warning)
    assert _me(at).pinned is None
    assert "vs" not in at.query_params
    assert "Two runs side by side" not in shown_text(at)


def test_another_width_is_said_to_start_from_other_weights_and_unpin_ends_it():
    at = open_page(PAGE, {**QUICK, "hidden": "16", "vs": "hidden:8"})
    settle(at.button(key="mt_play").click().run())
    assert_clean(at)
    text = shown_text(at)
    assert "The runs start from different initial weights (the layers' shapes differ" in text
    assert "Both runs start from the same initial weights" not in text
    at.button(key="mt_unpin").click().run()
    at.run()
    assert_clean(at)
    assert _me(at).pinned is None and "vs" not in at.query_params
    assert "Two runs side by side" not in shown_text(at)
    assert _me(at).session.epoch == 3, "unpinning keeps the run on screen"
    # ... and the pinned run is kept, with a way back to it.
    assert "Unpinned the run at epoch 3: it is kept in memory" in shown_text(at)
    at.button(key="mt_back_to_previous").click().run()
    assert_clean(at)
    assert _me(at).session.settings.hidden == (8,) and at.text_input(key="mt_hidden").value == "8"


def test_the_frame_route_sends_a_links_pinned_curves_when_they_change():
    """While Play trains both runs the view's frames come by the frame route: the pinned run's
    curves come with a frame when they gained an epoch, not with every frame."""
    from components.binary_payload import unpack

    at = open_page(PAGE, {**QUICK, "vs": "opt:SGD"})
    settle(at.button(key="mt_play").click().run())
    assert_clean(at)
    me = _me(at)
    assert me.frames is not None, "the playing run's view asked the frame route"
    first = unpack(me.frames.produce(0))[0]["frame"]
    assert first["pinned"]["label"] == "pinned: SGD"
    assert first["pinned"]["history"]["epoch"] == [1, 2, 3]
    assert "pinned" not in unpack(me.frames.produce(3))[0]["frame"], "nothing new: not sent again"


def test_step_waits_for_a_pinned_run_that_lags_without_training_on(monkeypatch):
    """A pinned run that could not catch up within a slice (a busy server) catches up in the
    next ones, while the learner's run stays at the end of its stepped epoch."""
    from app_pages.moons_trainer import live
    from workbench.moons_trainer import compare

    slices = []

    def one_slice_short(pinned, session, seconds):
        if session.epoch == 1 and "behind" not in slices:
            slices.append("behind")
            return True                 # the stepped epoch is done, the pinned run's is not
        slices.append(pinned.epoch)
        return compare.keep_pace(pinned, session, seconds)

    monkeypatch.setattr(live, "keep_pace", one_slice_short)
    at = open_page(PAGE, {**QUICK, "vs": "opt:SGD"})
    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    assert "behind" in slices and slices[-1] != "behind", slices
    assert _me(at).session.epoch == 1 and _me(at).pinned.epoch == 1


def test_a_fresh_run_names_the_run_set_aside_and_pins_it_beside_the_new_one():
    """Changing the input features must start a fresh run: the notice says which run was set
    aside and offers both ways back, Back (swap it in) and Pin (keep it beside the new one)."""
    at = open_page(PAGE, QUICK)
    settle(at.button(key="mt_play").click().run())
    old = _me(at).session
    assert old.epoch == 3
    at.button_group(key="mt_features").select("x1_x2").run()
    assert_clean(at)
    me = _me(at)
    assert me.session is not old and me.session.epoch == 0 and me.previous is old
    text = shown_text(at)
    assert "the input features changed from x₁, x₂ to x₁, x₂, x₁x₂" in text
    assert "The run at epoch 3 was set aside, not lost" in text
    assert at.button(key="mt_back_to_previous").label == "Back to the run at epoch 3"
    at.button(key="mt_pin_previous").click().run()
    assert_clean(at)
    assert me.pinned is old and me.previous is None and me.session.epoch == 0
    assert "Pinned the run at epoch 3 beside the new run" in shown_text(at)
    settle(at.button(key="mt_play").click().run())
    assert_clean(at)
    assert me.pinned is old and old.epoch == 3 and me.session.epoch == 3
    text = shown_text(at)
    assert "Two runs side by side" in text
    assert "the input features changed from x₁, x₂ to x₁, x₂, x₁x₂" in text


def test_an_untrained_run_replaced_offers_no_way_back():
    at = open_page(PAGE, QUICK)
    at.button_group(key="mt_features").select("x1_x2").run()
    assert_clean(at)
    assert "set aside" not in shown_text(at)
    assert not [b for b in at.button if b.key in ("mt_back_to_previous", "mt_pin_previous")]
