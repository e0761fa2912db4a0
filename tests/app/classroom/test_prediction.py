"""Predict, then run, through the router: the teacher writes a question on the Class page,
learners see it on whatever page they are on and vote once, the votes stay hidden (on the
teacher's board and on learners' screens) until the teacher reveals them, and the distribution
is shown after, beside what the experiment showed (the teacher's mark, or what PyTorch computes
for a built-in check). Teacher and learners are separate AppTests on the temporary store.
AppTest fires no `run_every` timer: pages are run again explicitly, as the timers would.
"""
from __future__ import annotations

import pytest

from app_pages.navigation import HOME
from components import class_prediction
from components.plain_text import md
from tests.app.apptest import assert_clean, open_page, shown_text
from tests.app.classroom.test_page import _start_class
from workbench.classroom.catalog import all_checks
from workbench.classroom.predictions import question_link_param, validate_question
from workbench.common.device_checks import DEVICE_MISMATCH as CHECK

HOSTILE_QUESTION = "Is <b>x.t()</b> **contiguous**? [click](javascript:alert(1))"
OPTIONS = ("Yes", "No: its strides are swapped", "<img src=x onerror=alert(1)>")


@pytest.fixture(autouse=True)
def fresh_shared_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each AppTest run reads the class's prediction fresh (a server shares it for 0.5 s)."""
    monkeypatch.setattr(class_prediction._CURRENT, "max_age", 0.0)


def _write_question(teacher, text: str, options: tuple[str, ...], mark: str) -> None:
    teacher.text_area(key="class_prediction_question").set_value(text)
    for number, option in enumerate(options):
        teacher.text_input(key=f"class_prediction_option_{number}").set_value(option)
    teacher.selectbox(key="class_prediction_mark").set_value(mark)
    teacher.button(key="FormSubmitter:class_prediction_form-Pose to the class").click().run()
    assert_clean(teacher)


def _learner(code: str, page: str | None = None):
    learner = open_page(page, query={"class": code})
    assert_clean(learner)
    assert f"In class {code}" in shown_text(learner)
    return learner


def _tables(at) -> list[dict]:
    return [t.value.to_dict("records") for t in at.get("table")
            if "votes" in t.value.columns]


def _vote(learner, index: int) -> None:
    radio = next(r for r in learner.radio if r.key.startswith("class_prediction_choice_"))
    radio.set_value(index).run()
    next(b for b in learner.button if b.key.startswith("class_prediction_vote_")).click().run()
    assert_clean(learner)


def test_a_teachers_question_is_voted_on_hidden_then_revealed_beside_the_mark():
    teacher, code = _start_class()
    first, second, third = _learner(code), _learner(code, HOME.script), _learner(code)
    _write_question(teacher, HOSTILE_QUESTION, OPTIONS, "Option 2")
    text = shown_text(teacher)
    assert md("Is <b>x.t()</b> **contiguous**? [click](javascript:alert(1))") in text
    assert "**0** voted" in text

    for learner, index in ((first, 1), (second, 1), (third, 0)):
        learner.run()                                       # the prediction fragment's timer
        assert md(HOSTILE_QUESTION) in shown_text(learner)
        radio = next(r for r in learner.radio if r.key.startswith("class_prediction_choice_"))
        assert list(radio.options) == [md(o) for o in OPTIONS]      # escaped, as typed
        _vote(learner, index)
        assert f"Your vote: **{md(OPTIONS[index])}**" in shown_text(learner)
        assert "locked in" in shown_text(learner)
        assert not any(r.key and r.key.startswith("class_prediction_choice_") for r in learner.radio)

    teacher.run()
    assert "**3** voted" in shown_text(teacher)
    assert not _tables(teacher) and not _tables(first), "votes shown before the reveal"

    teacher.button(key="class_prediction_reveal_class").click().run()
    assert_clean(teacher)
    rows = _tables(teacher)[0]
    assert [(r["option"], r["votes"], r["share"], r["the experiment showed"]) for r in rows] == [
        (md(OPTIONS[0]), 1, "33%", ""), (md(OPTIONS[1]), 2, "67%", "✓"), (md(OPTIONS[2]), 0, "0%", "")]
    assert md("2 of 3 (67%) predicted it; most of the class predicted it.") in shown_text(teacher)

    third.run()
    assert_clean(third)
    text = shown_text(third)
    assert "Votes are locked" in text and "Your vote: Yes." in text
    mine = _tables(third)[0]
    assert [r["votes"] for r in mine] == [1, 2, 0] and mine[0]["your vote"] == "✓"
    assert not any(b.key and b.key.startswith("class_prediction_vote_") for b in third.button)


def test_a_learner_cannot_vote_twice_even_from_a_new_session():
    teacher, code = _start_class()
    learner = _learner(code)
    _write_question(teacher, "Will the loss go down?", ("Yes", "No"), "Option 1")
    learner.run()
    _vote(learner, 0)
    # The same learner's seat in a second session (a reload: the store is asked for the vote).
    token = learner.session_state["learner::class_seat"].membership.token
    prediction = class_prediction.prediction_store.current(
        class_prediction.class_store(), code, token=token)
    with pytest.raises(class_prediction.ClassError, match="voted already"):
        class_prediction.prediction_store.vote(class_prediction.class_store(), code, token,
                                               prediction.id, 1)
    learner.session_state[class_prediction.MY_VOTES] = {}      # as a fresh session knows nothing
    learner.run()
    assert_clean(learner)
    assert "Your vote: **Yes**" in shown_text(learner)
    teacher.run()
    assert "**1** voted" in shown_text(teacher)


def test_a_bad_question_is_refused_with_its_reason_and_nothing_is_posed():
    teacher, code = _start_class()
    learner = _learner(code)
    _write_question(teacher, "Which one?", ("Same", "ｓａｍｅ"), "No right answer (an opinion poll)")
    assert md("Options 1 and 2 are the same (“ｓａｍｅ”)") in shown_text(teacher)
    assert "No prediction is open" in shown_text(teacher)
    learner.run()
    assert "Your teacher asks you to predict" not in shown_text(learner)


def test_a_built_in_check_is_revealed_beside_what_pytorch_computes():
    teacher, code = _start_class()
    learner = _learner(code)
    teacher.segmented_control(key="class_prediction_mode").set_value(class_prediction.CHECK).run()
    teacher.selectbox(key="class_prediction_check").set_value(CHECK.key).run()
    teacher.button(key="class_prediction_pose_check").click().run()
    assert_clean(teacher)
    learner.run()
    truth = CHECK.answer().correct_option
    wrong = next(i for i, o in enumerate(CHECK.options) if o != truth)
    _vote(learner, wrong)
    teacher.button(key="class_prediction_reveal_class").click().run()
    assert_clean(teacher)
    text = shown_text(teacher)
    assert "PyTorch computed it just now" in text and md(truth) in text
    rows = _tables(teacher)[0]
    assert [r["option"] for r in rows if r["the experiment showed"]] == [md(truth)]
    assert md("0 of 1 (0%) predicted it") in text
    assert all_checks()[CHECK.key].question in text


def test_a_question_link_fills_a_teachers_form_and_a_learner_cannot_pose_it():
    question = validate_question("Is x.t() contiguous?", ["Yes", "No"], 1)
    link = {"question": question_link_param(question)}
    outsider = open_page("app_pages/classroom/page.py", query=link)
    assert_clean(outsider)
    assert "A learner cannot pose questions" in shown_text(outsider)
    assert not [t for t in outsider.text_area if t.key == "class_prediction_question"]
    outsider.button(key="class_start").click().run()        # the link's question waits for it
    assert_clean(outsider)
    assert outsider.text_area(key="class_prediction_question").value == "Is x.t() contiguous?"

    teacher, code = _start_class()
    teacher.query_params["question"] = link["question"]
    teacher.run()
    assert_clean(teacher)
    assert teacher.text_area(key="class_prediction_question").value == "Is x.t() contiguous?"
    assert teacher.text_input(key="class_prediction_option_1").value == "No"
    assert teacher.selectbox(key="class_prediction_mark").value == "Option 2"

    damaged = open_page("app_pages/classroom/page.py", query={"question": "%%%"})
    assert_clean(damaged)
    assert "damaged" in shown_text(damaged) or "not JSON" in shown_text(damaged)


def test_the_teacher_poses_and_reveals_on_a_tool_page():
    teacher, code = _start_class()
    learner = _learner(code)
    teacher.switch_page("app_pages/tensor_inspector/page.py").run()
    assert_clean(teacher)
    _write_question(teacher, "Is x.t() contiguous?", ("Yes", "No"), "Option 2")
    assert "**0** voted" in shown_text(teacher)
    learner.run()
    _vote(learner, 1)
    teacher.run()
    assert "**1** voted" in shown_text(teacher) and not _tables(teacher)
    teacher.button(key="class_prediction_reveal_page").click().run()
    assert_clean(teacher)
    assert [r["votes"] for r in _tables(teacher)[0]] == [0, 1]
    assert md("1 of 1 (100%) predicted it; most of the class predicted it.") in shown_text(teacher)
    teacher.button(key="class_prediction_close_page").click().run()
    learner.run()
    assert "Your teacher asks you to predict" not in shown_text(learner)
