"""Pacing and the report through the router (issue 45): the teacher closes a check, times it,
resets it, and sees who has not answered; a learner's check says it is closed (no commit), counts
the timer down, and asks again after a reset; an answer that reaches a check closed meanwhile is
refused on the check itself; the teacher's report panel shows the checks the class got most wrong
first and offers both downloads.

Teacher and learners are separate AppTests (sessions) on the temporary SQLite store that
tests/conftest.py configures; AppTest fires no `run_every` timer, so a page is run again
explicitly where a timer would.
"""
from __future__ import annotations

from components.class_session import class_store
from components.plain_text import md
from tests.app.apptest import assert_clean, shown_text
from tests.app.classroom.test_roster import _learner
from tests.app.classroom.test_teacher_flows import _start_class
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK

COMMIT = f"kc_{CHECK.key}_commit"
CHOICE = f"kc_{CHECK.key}_choice"


def _keys(at) -> set[str]:
    return {b.key for b in at.button if b.key}


def _pick(teacher) -> None:
    teacher.selectbox(key="class_pace_check").set_value(CHECK.key).run()
    assert_clean(teacher)


def test_a_closed_check_shows_closed_to_learners_and_opens_again():
    teacher, code, key = _start_class()
    learner = _learner(code)
    assert COMMIT in _keys(learner)
    _pick(teacher)
    assert "Open" in shown_text(teacher)
    teacher.button(key="class_pace_close").click().run()
    assert_clean(teacher)
    assert "Closed" in shown_text(teacher) and "class_pace_open" in _keys(teacher)
    learner.run()                                 # as the follow fragment's timer would
    assert_clean(learner)
    assert "closed this question" in shown_text(learner)
    assert COMMIT not in _keys(learner)
    assert learner.radio(key=CHOICE).disabled
    teacher.button(key="class_pace_open").click().run()
    learner.run()
    assert_clean(learner)
    assert COMMIT in _keys(learner) and "closed this question" not in shown_text(learner)


def test_an_answer_sent_after_the_check_closed_is_refused_on_the_check():
    teacher, code, key = _start_class()
    learner = _learner(code)
    learner.radio(key=CHOICE).set_value(CHECK.options[0]).run()
    class_store().pace_check(code, key, CHECK.key, closed=True)
    learner.button(key=COMMIT).click().run()      # the page had not seen it close yet
    assert_clean(learner)
    text = shown_text(learner)
    assert "it is not on your teacher's board" in text
    assert class_store().tallies(code, key) == []


def test_a_timer_counts_down_on_the_learners_check():
    teacher, code, key = _start_class()
    learner = _learner(code)
    _pick(teacher)
    teacher.selectbox(key="class_pace_seconds").set_value(120).run()
    teacher.button(key="class_pace_timed").click().run()
    assert_clean(teacher)
    assert md("Open for 2 min.") in shown_text(teacher)
    learner.run()
    assert_clean(learner)
    countdown = learner.get("bidi_component")
    sent = [c for c in countdown if "countdown" in str(c.proto)]
    assert sent, "no countdown on the learner's check"
    assert COMMIT in _keys(learner)               # still open while the timer runs


def test_a_reset_deletes_the_answers_and_asks_the_learner_again():
    teacher, code, key = _start_class()
    learner = _learner(code)
    learner.radio(key=CHOICE).set_value(CHECK.options[0]).run()
    learner.button(key=COMMIT).click().run()
    assert class_store().tallies(code, key)[0].answered == 1
    _pick(teacher)
    teacher.button(key="class_pace_reset").click().run()     # not ticked: refused, nothing lost
    assert "first" in shown_text(teacher)
    assert class_store().tallies(code, key)[0].answered == 1
    teacher.checkbox(key="class_pace_reset_sure").check().run()
    teacher.button(key="class_pace_reset").click().run()
    assert_clean(teacher)
    assert md("Reset: 1 answer(s) deleted") in shown_text(teacher)
    assert class_store().tallies(code, key) == []
    learner.run()
    assert_clean(learner)
    assert "reset this question" in shown_text(learner) and COMMIT in _keys(learner)
    learner.radio(key=f"{CHOICE}_1").set_value(CHECK.options[1]).run()
    learner.button(key=COMMIT).click().run()
    tally = class_store().tallies(code, key)[0]
    assert tally.counts == {CHECK.options[1]: 1}


def test_the_board_names_who_has_not_answered_unless_names_are_hidden():
    teacher, code, key = _start_class()
    ada, bo = _learner(code), _learner(code)
    ada_name = class_store().roster(code, key)[0].nickname
    bo_name = class_store().roster(code, key)[1].nickname
    ada.radio(key=CHOICE).set_value(CHECK.options[0]).run()
    ada.button(key=COMMIT).click().run()
    teacher.run()
    assert_clean(teacher)
    assert f"Not answered yet (1): {bo_name}." in shown_text(teacher)
    assert ada_name not in shown_text(teacher).split("Not answered yet", 1)[1].split(".", 1)[0]
    class_store().set_class_options(code, key, hide_names=True)
    teacher.run()
    assert "**1** present learner(s) have not answered yet." in shown_text(teacher)
    del bo


def test_the_report_panel_lists_the_most_wrong_check_first_with_both_downloads():
    teacher, code, key = _start_class()
    learner = _learner(code)
    truth = CHECK.answer().correct_option
    wrong = next(option for option in CHECK.options if option != truth)
    learner.radio(key=CHOICE).set_value(wrong).run()
    learner.button(key=COMMIT).click().run()
    teacher.run()
    assert_clean(teacher)
    checks = next(d.value for d in teacher.dataframe if "chose what PyTorch computes" in d.value.columns)
    row = checks.iloc[0]
    assert row["question"] == CHECK.question and row["chose what PyTorch computes"] == "0%"
    assert row["PyTorch computes"] == truth
    labels = {b.proto.label for b in teacher.get("download_button")}
    assert {"Download the report (HTML, to print)", "Download the report (CSV)"} <= labels
    assert "on this server's own disk" in shown_text(teacher)     # the SQLite default

