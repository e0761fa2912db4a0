"""The moons trainer on drawn data ("Your own points") through the real router: a link with the
points trains, too few points give the drawing alone and say how many more, and points the live
view sends become the settings, the link and a new run."""
from __future__ import annotations

from tests.app.apptest import assert_clean, live_view, open_page, settle, shown_text
from tests.unit.moons_trainer.test_data_drawn import DRAWING
from workbench.moons_trainer.codegen import moons_script
from workbench.moons_trainer.settings import TABLE
from workbench.moons_trainer.training import TrainingSession

PAGE = "app_pages/moons_trainer/page.py"
POINTS = TABLE["points"]
LINK = {"dataset": "drawn", "points": DRAWING, "epochs": "3", "batch": "8"}


def learner(at):
    return at.session_state["learner::moons_trainer"]


def test_a_link_with_drawn_points_trains_on_them():
    at = open_page(PAGE, LINK)
    assert_clean(at)
    assert at.selectbox(key="mt_dataset").value == "drawn"
    assert at.number_input(key="mt_n").disabled and at.slider(key="mt_noise").disabled
    assert at.toggle(key="mt_show_bayes").disabled
    header, blobs = live_view(at)
    draw = header["scene"]["draw"]
    assert draw["text"] == DRAWING and draw["editable"] and draw["max"] == 300
    assert draw["points"] == [list(p) for p in POINTS.parse(DRAWING)]
    # Every drawn point is on the plane, the test split's too.
    assert {g["name"] for g in header["scene"]["groups"]} == {"train", "val", "test"}
    drawn = sum(len(blobs[f"{name}_y"]) for name in ("train", "val", "test"))
    assert drawn == 20 and len(blobs["point_probability"]) == 20
    assert header["scene"]["extent"] == [-3.0, 3.0, -3.0, 3.0]
    assert header["scene"]["bayes_accuracy"] is None
    assert "Drawn points: 20 points (10 of class 0, 10 of class 1)" in str(
        [e.label for e in at.expander])

    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    session = learner(at).session
    assert session.epoch == 1 and session.settings.points == POINTS.parse(DRAWING)
    text = shown_text(at)
    assert "Best possible: unknown" in text and "Test accuracy" in text
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Best possible"] == "unknown" and metrics["Gap"] == "unknown"
    # The same settings, trained here by PyTorch, give the accuracy the page shows.
    again = TrainingSession(session.settings)
    again.step_epoch()
    assert metrics["Test accuracy"] == f"{100 * again.test_report().accuracy:.2f}%"
    assert at.query_params["points"] == DRAWING and at.query_params["dataset"] == "drawn"
    assert "POINTS = [" in moons_script(session.settings)


def test_too_few_points_show_the_drawing_alone_and_say_how_many_more():
    at = open_page(PAGE, {"dataset": "drawn", "points": "0:1,1_2,2~1:-1,-1"})
    assert_clean(at)
    warnings = [w.value for w in at.warning]
    assert any("Draw at least 7 points of each class to train: you have 2 of class 0 and 1 of "
               "class 1, so add 5 more of class 0 and 6 more of class 1" in w for w in warnings)
    header, blobs = live_view(at)
    assert header["frame"]["status"].startswith("No run yet: 2 of class 0 and 1 of class 1 drawn")
    assert header["scene"]["draw"]["points"] == [[1.0, 1.0, 0], [2.0, 2.0, 0], [-1.0, -1.0, 1]]
    assert header["scene"]["groups"] == [] and set(blobs["grid"].tolist()) == {128}
    # Nothing to train: the playback row is there (so the plane will not move when a run starts),
    # every control grey, Play saying why.
    row = {b.key: b for b in at.button if b.key in ("mt_play", "mt_step", "mt_reset", "mt_pin")}
    assert set(row) == {"mt_play", "mt_step", "mt_reset", "mt_pin"}
    assert all(b.disabled for b in row.values())
    assert row["mt_play"].help.startswith("No run yet: 2 of class 0 and 1 of class 1 drawn")
    assert all(t.disabled for t in at.toggle if t.key in ("mt_show_test", "mt_show_bayes"))
    assert learner(at).session is None and learner(at).board is not None
    # An empty drawing too: the page opens on the plane, ready to draw.
    at = open_page(PAGE, {"dataset": "drawn"})
    assert_clean(at)
    assert any("you have 0 of class 0 and 0 of class 1" in w.value for w in at.warning)
    assert "No points yet." in shown_text(at)


def test_points_the_view_sends_become_the_settings_the_link_and_a_new_run():
    at = open_page(PAGE, LINK)
    settle(at.button(key="mt_step").click().run())
    trained = learner(at).session
    assert trained.epoch == 1
    more = POINTS.parse(DRAWING + "_2,-2")
    learner(at).drawn_request = more                # what points_sent keeps from the view
    at.run()
    assert_clean(at)
    session = learner(at).session
    assert session is not trained and session.settings.points == more and session.epoch == 0
    assert at.query_params["points"] == POINTS.format(more)
    assert "A new run started from fresh weights: the drawn points changed from 20 points (10 of " \
           "class 0, 10 of class 1) to 21 points (10 of class 0, 11 of class 1)" in shown_text(at)
    assert learner(at).previous is trained, "the trained run is kept, with a way back"
    # Removing points until a class is short: the drawing alone, and the link still has them.
    few = tuple(p for p in more if p[2] == 0) + tuple(p for p in more if p[2] == 1)[:3]
    learner(at).drawn_request = few
    at.run()
    assert_clean(at)
    assert at.query_params["points"] == POINTS.format(few)
    assert live_view(at)[0]["frame"]["status"].startswith("No run yet: 10 of class 0 and 3 of class 1")


def test_a_link_can_fix_the_points():
    at = open_page(PAGE, {**LINK, "hide": "points"})
    assert_clean(at)
    assert live_view(at)[0]["scene"]["draw"]["editable"] is False
    assert "This link fixes them." in shown_text(at)
    assert any("**This link fixes** Drawn points **20 points**" in i.value for i in at.info)


def test_the_drawing_is_kept_when_another_dataset_is_picked():
    at = open_page(PAGE, LINK)
    at.selectbox(key="mt_dataset").set_value("moons").run()
    assert_clean(at)
    session = learner(at).session
    assert session.settings.dataset == "moons" and session.bayes_test_accuracy is not None
    assert "draw" not in live_view(at)[0]["scene"] or live_view(at)[0]["scene"]["draw"] is None
    at.selectbox(key="mt_dataset").set_value("drawn").run()
    assert_clean(at)
    assert learner(at).session.settings.points == POINTS.parse(DRAWING)


def test_the_lesson_preset_keeps_the_drawing_for_later():
    at = open_page(PAGE, LINK)
    at.button(key="mt_preset").click().run()
    assert_clean(at)
    settings = learner(at).session.settings
    assert settings.dataset == "moons" and settings.points == POINTS.parse(DRAWING)
    assert at.query_params["points"] == DRAWING and "dataset" not in at.query_params
    at.selectbox(key="mt_dataset").set_value("drawn").run()
    assert_clean(at)
    assert learner(at).session.settings.points == POINTS.parse(DRAWING)


def test_the_network_view_and_the_other_views_take_drawn_points():
    at = open_page(PAGE, {**LINK, "net": "1", "discrete": "1", "features": "x1,x2,x1_sq"})
    assert_clean(at)
    header, _ = live_view(at)
    assert header["scene"]["network"]["widths"] == [3, 64, 32, 1]
    settle(at.button(key="mt_step").click().run())
    assert_clean(at)
    for tab in ("Model", "Losses & hooks", "Weights & gradients", "Code"):
        at.session_state["mt_tabs"] = tab
        at.run()
        assert_clean(at, tab)
    assert "POINTS = [" in shown_text(at), "the Code tab's script pastes the drawing"


def test_draw_on_these_points_turns_the_generated_data_into_a_drawing():
    at = open_page(PAGE, {"dataset": "spiral", "n": "600", "epochs": "3"})
    generated = learner(at).session.data
    at.button(key="mt_draw_these").click().run()
    assert_clean(at)
    settings = learner(at).session.settings
    assert settings.dataset == "drawn" and 250 <= len(settings.points) <= 300
    # Each drawn point is one of the spiral's, on the drawing's grid (within half a step).
    spiral = {(round(float(x), 6), round(float(y), 6)): int(c)
              for (x, y), c in zip(generated.features, generated.labels, strict=True)}
    for x, y, c in settings.points:
        near = [v for (gx, gy), v in spiral.items() if abs(gx - x) <= 0.025 and abs(gy - y) <= 0.025]
        assert c in near, (x, y, c)
    assert at.query_params["dataset"] == "drawn"
    assert len(at.query_params["points"]) < 4000
    assert not [b for b in at.button if b.key == "mt_draw_these"], "only under a generated dataset"
