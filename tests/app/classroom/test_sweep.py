"""The class as one experiment through the router: the teacher's sweep panel (the form read
through the settings table, the heatmap, its table, an untrained cell said so) and a learner's
cell notice (their page opens their cell and says which; a changed setting is their own run).

Teacher and learners are separate AppTests on the temporary SQLite store tests/conftest.py
configures; AppTest does not fire `run_every` timers, so pages are run again where one would.
"""
from __future__ import annotations

from app_pages.navigation import CLASS_PAGE
from components.class_session import class_store
from components.plain_text import md
from tests.app.apptest import assert_clean, code_blocks, open_page, settle, shown_text
from workbench.classroom import sweep_store

BASE = "/moons_trainer?n=200&epochs=2&batch=32&speed=max"
SUBMIT = "FormSubmitter:sweep_form-Start the sweep"


def _start_class():
    teacher = open_page(CLASS_PAGE.script)
    teacher.button(key="class_start").click().run()
    link = next(m for m in code_blocks(teacher) if "teacher=" in m)
    code = link.split("class=", 1)[1].split("&", 1)[0]
    return teacher, code, link.rsplit("teacher=", 1)[1]


def _start_sweep(teacher, first=("lr", "0.01 0.1 1"), second=("hidden", "4 8 16")):
    teacher.text_input(key="sweep_base").input(BASE)
    teacher.selectbox(key="sweep_setting_1").set_value(first[0])
    teacher.text_input(key="sweep_values_1").input(first[1])
    teacher.selectbox(key="sweep_setting_2").set_value(second[0])
    teacher.text_input(key="sweep_values_2").input(second[1])
    teacher.button(key=SUBMIT).click().run()
    assert_clean(teacher)


def _table(at):
    return next(frame for frame in at.dataframe if "state" in frame.value.columns).value


def test_a_sweep_sends_each_learner_to_their_cell_and_the_heatmap_fills_in():
    teacher, code, key = _start_class()
    learners = [open_page(query={"class": code}) for _ in range(2)]
    _start_sweep(teacher)
    text = shown_text(teacher)
    assert md("Sweep 1: Learning rate x Hidden layer widths, 9 cells; 0 of 9 trained; 0 run(s) kept; "
              "2 learner(s)") in text
    table = _table(teacher)
    assert len(table) == 9 and set(table["state"]) == {"not trained yet"}
    assert list(table["lr"][:4]) == ["0.01", "0.01", "0.01", "0.1"]
    sent = class_store().current_send(code)
    assert sweep_store.is_sweep_send(sent.link)

    first, second = learners
    for learner in learners:
        learner.run()                                 # the follow fragment's tick
        assert_clean(learner)
    assert md("Your cell: lr 0.01 x hidden 4 (1 of 9).") in shown_text(first)
    assert md("Your cell: lr 0.01 x hidden 8 (2 of 9).") in shown_text(second)
    assert first.query_params["lr"] in ("0.01", ["0.01"]) and first.text_input(key="mt_hidden").value == "4"

    settle(first.button(key="mt_play").click().run())
    assert_clean(first)
    said = shown_text(first)
    assert md("Kept for your sweep cell, lr 0.01 x hidden 4 (1 of 9)") in said
    board = sweep_store.sweep_board(class_store(), code, teacher_key=key)
    posted = class_store().challenge_board(code, teacher_key=key).runs[0]
    assert board.results[0].accuracies == (posted.test_accuracy,)
    assert len(board.results[0].losses[0]) == 2          # one validation loss per epoch

    teacher.run()                                        # the watch saw the digest move
    assert_clean(teacher)
    table = _table(teacher)
    assert table["state"][0] == "trained"
    assert table["test accuracy %"][0] == round(100 * posted.test_accuracy, 2)
    assert table["experiment"][0].endswith(board.results[0].cell.link)
    assert list(table["state"][1:]) == ["not trained yet"] * 8
    assert md("1 of 9 trained; 1 run(s) kept") in shown_text(teacher)
    heatmaps = [c for c in teacher.get("plotly_chart")]
    assert len(heatmaps) >= 2


def test_a_learner_who_changes_a_setting_trains_their_own_run_not_the_cells():
    teacher, code, key = _start_class()
    learner = open_page(query={"class": code})
    _start_sweep(teacher)
    learner.run()
    learner.number_input(key="mt_lr").set_value(0.02).run()
    assert_clean(learner)
    assert "The settings on screen are not your cell's" in shown_text(learner)
    assert learner.button(key="mt_sweep_open_cell")
    settle(learner.button(key="mt_play").click().run())
    assert md("Not kept for your sweep cell, lr 0.01 x hidden 4 (1 of 9)") in shown_text(learner)
    assert len(class_store().challenge_board(code, teacher_key=key).runs) == 1
    assert sweep_store.sweep_board(class_store(), code, teacher_key=key).trained == 0
    learner.button(key="mt_sweep_open_cell").click().run()
    assert_clean(learner)
    assert md("Your cell: lr 0.01 x hidden 4 (1 of 9).") + "** Press Play" in shown_text(learner)


def test_a_grid_the_settings_table_refuses_is_said_and_nothing_starts():
    teacher, code, key = _start_class()
    _start_sweep(teacher, first=("lr", "0.1 3"))
    assert "is outside what the trainer takes" in " ".join(e.value for e in teacher.error)
    assert sweep_store.sweep_board(class_store(), code, teacher_key=key) is None
    assert class_store().current_send(code).number == 0


def test_a_learner_sees_no_cell_without_a_sweep_and_a_teacher_ends_it():
    teacher, code, key = _start_class()
    learner = open_page("app_pages/moons_trainer/page.py", query={"class": code})
    assert_clean(learner)
    assert "Your cell" not in shown_text(learner)
    _start_sweep(teacher, second=("(none)", ""))
    assert md("3 cells") in shown_text(teacher)
    teacher.button(key="sweep_end").click().run()
    assert_clean(teacher)
    assert sweep_store.sweep_board(class_store(), code, teacher_key=key) is None
    learner.run()
    assert "Your cell" not in shown_text(learner)


def test_the_projected_sweep_has_its_heatmap_and_a_data_table_for_a_screen_reader():
    teacher, code, key = _start_class()
    learner = class_store().join(code, "Ada")
    _start_sweep(teacher)
    cell = sweep_store.my_cell(class_store(), code, learner.token).cell
    sweep_store.keep_run(class_store(), code, learner.token, cell.link, 0.8125, [0.6, 0.4])
    projected = open_page(CLASS_PAGE.script, query={"class": code, "teacher": key, "present": "1"})
    assert_clean(projected)
    labels = [e.label for e in projected.expander]
    assert f"Data table: {md('Class sweep: test accuracy over the grid')}" in labels, labels
    table = _table(projected)
    assert table["test accuracy %"][0] == 81.25 and table["state"][1] == "not trained yet"


def test_a_learner_who_joins_during_a_sweep_is_taken_to_the_least_filled_cell():
    teacher, code, key = _start_class()
    early = [class_store().join(code, name) for name in ("Ada", "Bo")]
    _start_sweep(teacher, second=("(none)", ""))                  # 3 cells; cells 1, 2 taken
    assert [sweep_store.my_cell(class_store(), code, m.token).cell.number for m in early] == [1, 2]
    late = open_page(query={"class": code})
    late.run()                                                    # the follow fragment's tick
    assert_clean(late)
    assert md("Your cell: lr 1 (3 of 3).") in shown_text(late)
